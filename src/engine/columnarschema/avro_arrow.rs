//! Avro → Arrow (semantics §3): nullable only through a union with null; top-level record
//! fields become columns, any other top-level type one column `value`.

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::Schema as Avro;
use apache_avro::schema::{InnerDecimalSchema, NamesRef, ResolvedSchema, UuidSchema};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};

use crate::engine::schema::avro::AvroSchema;

const UTC: &str = "UTC";

/// The Arrow schema of an Avro schema.
pub fn avro_to_arrow(schema: &AvroSchema) -> Result<Schema, String> {
    let all: Vec<&Avro> = schema.references.iter().chain([&schema.schema]).collect();
    let resolved = ResolvedSchema::new_with_schemata(all).map_err(|e| e.to_string())?;
    let mut m = Mapper {
        names: resolved.get_names(),
        path: Vec::new(),
    };
    let top = m.deref(&schema.schema);
    let fields = match top {
        Avro::Record(r) => {
            m.path.push(r.name.fullname(None));
            let out = r
                .fields
                .iter()
                .map(|f| m.field(&f.name, &f.schema))
                .collect::<Result<Vec<_>, _>>()?;
            m.path.pop();
            out
        }
        _ => vec![m.field("value", &schema.schema)?],
    };
    Ok(Schema::new(fields))
}

struct Mapper<'a, 's> {
    names: &'a NamesRef<'s>,
    /// Records on the current path: a reference back to one is recursive.
    path: Vec<String>,
}

fn meta(pairs: &[(&str, String)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

impl<'a, 's> Mapper<'a, 's> {
    fn deref<'x>(&self, s: &'x Avro) -> &'x Avro
    where
        'a: 'x,
        's: 'x,
    {
        match s {
            Avro::Ref { name } => self.names.get(name).copied().unwrap_or(s),
            other => other,
        }
    }

    fn field(&mut self, name: &str, s: &Avro) -> Result<Field, String> {
        if let Avro::Union(u) = self.deref(s) {
            let non_null: Vec<&Avro> = u
                .variants()
                .iter()
                .filter(|v| !matches!(v, Avro::Null))
                .collect();
            return match non_null.as_slice() {
                [] => Err(format!("Avro field has only null branches: {name}")),
                [one] => {
                    let f = self.field(name, one)?;
                    Ok(f.with_nullable(u.variants().len() > 1))
                }
                many => {
                    let mut children = Vec::new();
                    let mut seen = std::collections::HashSet::new();
                    for b in many {
                        let bname = self.branch_name(b);
                        if !seen.insert(bname.clone()) {
                            return Err(format!("Avro union branch names collide in field {name}"));
                        }
                        children.push(self.field(&bname, b)?.with_nullable(true));
                    }
                    let nullable = many.len() < u.variants().len();
                    Ok(
                        Field::new(name, DataType::Struct(Fields::from(children)), nullable)
                            .with_metadata(meta(&[("krabka.avro.union", "true".into())])),
                    )
                }
            };
        }
        let (dt, md) = self.data_type(name, s)?;
        Ok(Field::new(name, dt, false).with_metadata(md))
    }

    fn branch_name(&self, s: &Avro) -> String {
        match self.deref(s) {
            Avro::Record(r) => r.name.fullname(None),
            Avro::Enum(e) => e.name.fullname(None),
            Avro::Fixed(f) => f.name.fullname(None),
            other => format!("{:?}", apache_avro::schema::SchemaKind::from(other)).to_lowercase(),
        }
    }

    fn data_type(
        &mut self,
        name: &str,
        s: &Avro,
    ) -> Result<(DataType, HashMap<String, String>), String> {
        if let Avro::Ref { name: n } = s
            && self.path.contains(&n.fullname(None))
        {
            return Ok((DataType::Utf8, meta(&[("krabka.json", "true".into())])));
        }
        let none = HashMap::new();
        Ok(match self.deref(s) {
            Avro::Null => return Err(format!("Avro field has only null branches: {name}")),
            Avro::Boolean => (DataType::Boolean, none),
            Avro::Int => (DataType::Int32, none),
            Avro::Long => (DataType::Int64, none),
            Avro::Float => (DataType::Float32, none),
            Avro::Double => (DataType::Float64, none),
            Avro::Bytes => (DataType::Binary, none),
            Avro::String => (DataType::Utf8, none),
            Avro::Date => (DataType::Date32, none),
            Avro::TimeMillis => (DataType::Time32(TimeUnit::Millisecond), none),
            Avro::TimeMicros => (DataType::Time64(TimeUnit::Microsecond), none),
            Avro::TimestampMillis => (
                DataType::Timestamp(TimeUnit::Millisecond, Some(UTC.into())),
                none,
            ),
            Avro::TimestampMicros => (
                DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
                none,
            ),
            Avro::LocalTimestampMillis => (DataType::Timestamp(TimeUnit::Millisecond, None), none),
            Avro::LocalTimestampMicros => (DataType::Timestamp(TimeUnit::Microsecond, None), none),
            Avro::Decimal(d) => {
                let (p, sc) = (d.precision, d.scale as i8);
                let dt = if p <= 38 {
                    DataType::Decimal128(p as u8, sc)
                } else if p <= 76 {
                    DataType::Decimal256(p as u8, sc)
                } else {
                    return Err(format!(
                        "Avro decimal precision above 76 is unsupported in field {name}: {p}"
                    ));
                };
                let _ = matches!(d.inner, InnerDecimalSchema::Bytes);
                (dt, none)
            }
            Avro::Uuid(UuidSchema::String) => (
                DataType::Utf8,
                meta(&[("krabka.avro.logical", "uuid".into())]),
            ),
            Avro::Fixed(f) | Avro::Duration(f) | Avro::Uuid(UuidSchema::Fixed(f)) => (
                DataType::FixedSizeBinary(f.size as i32),
                meta(&[("krabka.avro.fixed", f.name.fullname(None))]),
            ),
            Avro::Enum(e) => (
                DataType::Utf8,
                meta(&[
                    ("krabka.avro.enum", e.name.fullname(None)),
                    ("krabka.avro.enum.symbols", e.symbols.join(",")),
                ]),
            ),
            Avro::Array(a) => {
                let item = self.field("item", &a.items)?;
                (DataType::List(Arc::new(item)), none)
            }
            Avro::Map(m) => {
                let value = self.field("value", &m.types)?;
                let entries = Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", DataType::Utf8, false),
                        value,
                    ])),
                    false,
                );
                (DataType::Map(Arc::new(entries), false), none)
            }
            Avro::Record(r) => {
                let full = r.name.fullname(None);
                if self.path.contains(&full) {
                    return Ok((DataType::Utf8, meta(&[("krabka.json", "true".into())])));
                }
                self.path.push(full);
                let children = r
                    .fields
                    .iter()
                    .map(|f| self.field(&f.name, &f.schema))
                    .collect::<Result<Vec<_>, _>>();
                self.path.pop();
                (DataType::Struct(Fields::from(children?)), none)
            }
            other => {
                return Err(format!(
                    "unsupported Avro schema {:?} in field {name}",
                    apache_avro::schema::SchemaKind::from(other)
                ));
            }
        })
    }
}
