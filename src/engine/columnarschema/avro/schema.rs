//! An Avro schema parsed from its JSON text into a compact tree the mapper and the
//! decoder walk: primitives, logical types (checked against their base type and
//! ignored when invalid, as the Avro specification says), and named types
//! (records, enums, fixed) kept in an arena so recursive references are indices.

use std::collections::HashMap;

use serde_json::Value;

/// A type inside a schema. Named types are indices into [`AvroSchema::named`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AvroType {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Date,
    TimeMillis,
    TimeMicros,
    TimestampMillis,
    TimestampMicros,
    LocalTimestampMillis,
    LocalTimestampMicros,
    /// string `uuid`
    Uuid,
    /// bytes `decimal(precision, scale)`
    Decimal {
        precision: usize,
        scale: usize,
    },
    Array(Box<AvroType>),
    Map(Box<AvroType>),
    Union(Vec<AvroType>),
    Named(usize),
}

/// A record field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub ty: AvroType,
}

/// A named type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamedType {
    Record {
        name: String,
        fields: Vec<FieldDef>,
    },
    Enum {
        name: String,
        symbols: Vec<String>,
    },
    Fixed {
        name: String,
        size: usize,
        /// `decimal(precision, scale)` on this fixed.
        decimal: Option<(usize, usize)>,
    },
}

impl NamedType {
    pub fn name(&self) -> &str {
        match self {
            NamedType::Record { name, .. }
            | NamedType::Enum { name, .. }
            | NamedType::Fixed { name, .. } => name,
        }
    }
}

/// A parsed schema: the arena of named types and the root type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroSchema {
    pub named: Vec<NamedType>,
    pub root: AvroType,
}

/// A schema text that is not a valid Avro schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

fn err<T>(m: impl Into<String>) -> Result<T, SchemaError> {
    Err(SchemaError(m.into()))
}

impl AvroSchema {
    /// Parses a schema text.
    pub fn parse(text: &str) -> Result<Self, SchemaError> {
        Self::parse_with_references(&[], text)
    }

    /// Parses referenced schemas first (their named types become visible), then the main text.
    pub fn parse_with_references(references: &[&str], text: &str) -> Result<Self, SchemaError> {
        let mut p = Parser::default();
        for r in references {
            let v: Value = serde_json::from_str(r)
                .map_err(|e| SchemaError(format!("reference is not JSON: {e}")))?;
            p.parse(&v, "")?;
        }
        let v: Value =
            serde_json::from_str(text).map_err(|e| SchemaError(format!("not JSON: {e}")))?;
        let root = p.parse(&v, "")?;
        let schema = AvroSchema {
            named: p.named.into_iter().map(|n| n.expect("defined")).collect(),
            root,
        };
        Shape::default().check(&schema)?;
        Ok(schema)
    }

    pub fn named(&self, index: usize) -> &NamedType {
        &self.named[index]
    }
}

/// Types nest at most this deep (a record's field, an array's items, a union's
/// branch: one level each). Decoding walks the type tree recursively, and a debug
/// build spends several KiB of stack per level; real schemas nest a few levels.
pub const MAX_AVRO_DEPTH: usize = 32;

/// A schema expands to at most this many type nodes once named types are
/// substituted: a record used twice by a record used twice by … doubles per
/// level, so a few hundred bytes of schema could otherwise stand for billions
/// of columns (the Avro cousin of a YAML alias bomb).
pub const MAX_AVRO_EXPANDED_TYPES: u64 = 100_000;

/// Height and expanded size of the type tree, memoised per named record so the
/// walk is linear in the schema text. A reference back to a record being
/// walked (a recursive type) ends the walk there: its values are decoded as
/// JSON text with a depth limit of their own.
#[derive(Default)]
struct Shape {
    records: HashMap<usize, (usize, u64)>,
    walking: Vec<usize>,
}

impl Shape {
    fn check(&mut self, schema: &AvroSchema) -> Result<(), SchemaError> {
        let (_, size) = self.walk(schema, &schema.root, 1)?;
        if size > MAX_AVRO_EXPANDED_TYPES {
            return err(format!(
                "the Avro schema expands to more than {MAX_AVRO_EXPANDED_TYPES} types"
            ));
        }
        Ok(())
    }

    /// (height below `ty`, expanded size of `ty`), failing past the limits.
    fn walk(
        &mut self,
        schema: &AvroSchema,
        ty: &AvroType,
        depth: usize,
    ) -> Result<(usize, u64), SchemaError> {
        if depth > MAX_AVRO_DEPTH {
            return err(format!(
                "the Avro schema nests types more than {MAX_AVRO_DEPTH} deep"
            ));
        }
        let children: Vec<&AvroType> = match ty {
            AvroType::Array(inner) | AvroType::Map(inner) => vec![inner],
            AvroType::Union(branches) => branches.iter().collect(),
            AvroType::Named(i) => {
                let NamedType::Record { fields, .. } = schema.named(*i) else {
                    return Ok((0, 1));
                };
                if self.walking.contains(i) {
                    return Ok((0, 1));
                }
                if let Some(&(height, size)) = self.records.get(i) {
                    if depth + height > MAX_AVRO_DEPTH {
                        return err(format!(
                            "the Avro schema nests types more than {MAX_AVRO_DEPTH} deep"
                        ));
                    }
                    return Ok((height, size));
                }
                self.walking.push(*i);
                let shape = self.children(schema, fields.iter().map(|f| &f.ty), depth);
                self.walking.pop();
                let shape = shape?;
                self.records.insert(*i, shape);
                return Ok(shape);
            }
            _ => return Ok((0, 1)),
        };
        self.children(schema, children.into_iter(), depth)
    }

    fn children<'a>(
        &mut self,
        schema: &AvroSchema,
        children: impl Iterator<Item = &'a AvroType>,
        depth: usize,
    ) -> Result<(usize, u64), SchemaError> {
        let (mut height, mut size) = (0usize, 1u64);
        for child in children {
            let (h, s) = self.walk(schema, child, depth + 1)?;
            height = height.max(h + 1);
            size = size.saturating_add(s);
            if size > MAX_AVRO_EXPANDED_TYPES {
                return err(format!(
                    "the Avro schema expands to more than {MAX_AVRO_EXPANDED_TYPES} types"
                ));
            }
        }
        Ok((height, size))
    }
}

#[derive(Default)]
struct Parser {
    named: Vec<Option<NamedType>>,
    by_name: HashMap<String, usize>,
    /// How deep the JSON being parsed is, bounded by [`MAX_AVRO_DEPTH`].
    depth: usize,
}

fn full_name(name: &str, namespace: Option<&str>, enclosing: &str) -> String {
    if name.contains('.') {
        return name.to_string();
    }
    let ns = namespace.unwrap_or(enclosing);
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}.{name}")
    }
}

fn namespace_of(full: &str) -> &str {
    full.rfind('.').map_or("", |i| &full[..i])
}

fn int_attr(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

impl Parser {
    fn lookup(&self, name: &str, enclosing: &str) -> Option<usize> {
        let qualified = full_name(name, None, enclosing);
        self.by_name
            .get(&qualified)
            .or_else(|| self.by_name.get(name))
            .copied()
    }

    fn declare(&mut self, full: String) -> Result<usize, SchemaError> {
        if self.by_name.contains_key(&full) {
            return err(format!("the name {full} is defined twice"));
        }
        let index = self.named.len();
        self.named.push(None);
        self.by_name.insert(full, index);
        Ok(index)
    }

    fn parse(&mut self, v: &Value, ns: &str) -> Result<AvroType, SchemaError> {
        // A type written `{"type": {"type": …}}` takes two levels here for one
        // type level, so the JSON may nest twice as deep as the types.
        if self.depth >= 2 * MAX_AVRO_DEPTH {
            return err(format!(
                "the Avro schema nests types more than {MAX_AVRO_DEPTH} deep"
            ));
        }
        self.depth += 1;
        let parsed = self.parse_value(v, ns);
        self.depth -= 1;
        parsed
    }

    fn parse_value(&mut self, v: &Value, ns: &str) -> Result<AvroType, SchemaError> {
        match v {
            Value::String(name) => self.primitive_or_ref(name, ns),
            Value::Array(branches) => {
                let mut out = Vec::with_capacity(branches.len());
                for b in branches {
                    let t = self.parse(b, ns)?;
                    if matches!(t, AvroType::Union(_)) {
                        return err("a union cannot directly contain a union");
                    }
                    out.push(t);
                }
                Ok(AvroType::Union(out))
            }
            Value::Object(obj) => {
                let Some(type_value) = obj.get("type") else {
                    return err("a schema object has no type");
                };
                let Value::String(type_name) = type_value else {
                    // {"type": {...}} or {"type": [...]} wraps another schema.
                    return self.parse(type_value, ns);
                };
                let logical = obj.get("logicalType").and_then(Value::as_str);
                match type_name.as_str() {
                    "record" | "error" => self.record(v, ns),
                    "enum" => self.enumeration(v, ns),
                    "fixed" => self.fixed(v, ns, logical),
                    "array" => {
                        let items = obj
                            .get("items")
                            .ok_or(SchemaError("array has no items".into()))?;
                        Ok(AvroType::Array(Box::new(self.parse(items, ns)?)))
                    }
                    "map" => {
                        let values = obj
                            .get("values")
                            .ok_or(SchemaError("map has no values".into()))?;
                        Ok(AvroType::Map(Box::new(self.parse(values, ns)?)))
                    }
                    prim => {
                        let base = self.primitive_or_ref(prim, ns)?;
                        Ok(apply_logical(base, logical, v))
                    }
                }
            }
            other => err(format!("unsupported Avro schema {other}")),
        }
    }

    fn primitive_or_ref(&mut self, name: &str, ns: &str) -> Result<AvroType, SchemaError> {
        Ok(match name {
            "null" => AvroType::Null,
            "boolean" => AvroType::Boolean,
            "int" => AvroType::Int,
            "long" => AvroType::Long,
            "float" => AvroType::Float,
            "double" => AvroType::Double,
            "bytes" => AvroType::Bytes,
            "string" => AvroType::String,
            other => match self.lookup(other, ns) {
                Some(i) => AvroType::Named(i),
                None => return err(format!("unknown Avro type {other}")),
            },
        })
    }

    fn name_of(&self, v: &Value, ns: &str) -> Result<String, SchemaError> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or(SchemaError("a named type has no name".into()))?;
        Ok(full_name(
            name,
            v.get("namespace").and_then(Value::as_str),
            ns,
        ))
    }

    fn record(&mut self, v: &Value, ns: &str) -> Result<AvroType, SchemaError> {
        let full = self.name_of(v, ns)?;
        let index = self.declare(full.clone())?;
        let inner_ns = namespace_of(&full).to_string();
        let Some(Value::Array(fields)) = v.get("fields") else {
            return err(format!("record {full} has no fields array"));
        };
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or(SchemaError(format!("a field of record {full} has no name")))?;
            let t = f.get("type").ok_or(SchemaError(format!(
                "field {name} of record {full} has no type"
            )))?;
            let ty = self.parse(t, &inner_ns)?;
            out.push(FieldDef {
                name: name.to_string(),
                ty,
            });
        }
        self.named[index] = Some(NamedType::Record {
            name: full,
            fields: out,
        });
        Ok(AvroType::Named(index))
    }

    fn enumeration(&mut self, v: &Value, ns: &str) -> Result<AvroType, SchemaError> {
        let full = self.name_of(v, ns)?;
        let index = self.declare(full.clone())?;
        let symbols = v
            .get("symbols")
            .and_then(Value::as_array)
            .ok_or(SchemaError(format!("enum {full} has no symbols")))?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_string)
                    .ok_or(SchemaError(format!("enum {full} has a non-string symbol")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.named[index] = Some(NamedType::Enum {
            name: full,
            symbols,
        });
        Ok(AvroType::Named(index))
    }

    fn fixed(
        &mut self,
        v: &Value,
        ns: &str,
        logical: Option<&str>,
    ) -> Result<AvroType, SchemaError> {
        let full = self.name_of(v, ns)?;
        let size = int_attr(v, "size")
            .filter(|s| *s >= 0)
            .ok_or(SchemaError(format!("fixed {full} has no valid size")))?
            as usize;
        let decimal = match logical {
            Some("decimal") => decimal_attrs(v).filter(|(p, _)| {
                // The precision must fit the fixed size (two's complement).
                let max_digits = if size == 0 {
                    0.0
                } else {
                    ((8 * size - 1) as f64 * 2f64.log10()).floor()
                };
                (*p as f64) <= max_digits
            }),
            _ => None,
        };
        let index = self.declare(full.clone())?;
        self.named[index] = Some(NamedType::Fixed {
            name: full,
            size,
            decimal,
        });
        Ok(AvroType::Named(index))
    }
}

/// `precision` > 0 and 0 ≤ `scale` ≤ `precision`, else the logical type is ignored.
fn decimal_attrs(v: &Value) -> Option<(usize, usize)> {
    let p = int_attr(v, "precision")?;
    let s = int_attr(v, "scale").unwrap_or(0);
    (p > 0 && s >= 0 && s <= p).then_some((p as usize, s as usize))
}

fn apply_logical(base: AvroType, logical: Option<&str>, v: &Value) -> AvroType {
    match (logical, &base) {
        (Some("date"), AvroType::Int) => AvroType::Date,
        (Some("time-millis"), AvroType::Int) => AvroType::TimeMillis,
        (Some("time-micros"), AvroType::Long) => AvroType::TimeMicros,
        (Some("timestamp-millis"), AvroType::Long) => AvroType::TimestampMillis,
        (Some("timestamp-micros"), AvroType::Long) => AvroType::TimestampMicros,
        (Some("local-timestamp-millis"), AvroType::Long) => AvroType::LocalTimestampMillis,
        (Some("local-timestamp-micros"), AvroType::Long) => AvroType::LocalTimestampMicros,
        (Some("uuid"), AvroType::String) => AvroType::Uuid,
        (Some("decimal"), AvroType::Bytes) => match decimal_attrs(v) {
            Some((precision, scale)) => AvroType::Decimal { precision, scale },
            None => base,
        },
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_through_namespaces_and_recursion_is_an_index() {
        let s = AvroSchema::parse(
            r#"{"type":"record","name":"Node","namespace":"t","fields":[
                {"name":"v","type":"long"},
                {"name":"next","type":["null","Node"]},
                {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
                {"name":"k2","type":"t.Kind"}]}"#,
        )
        .unwrap();
        let NamedType::Record { name, fields } = s.named(0) else {
            panic!()
        };
        assert_eq!(name, "t.Node");
        assert_eq!(
            fields[1].ty,
            AvroType::Union(vec![AvroType::Null, AvroType::Named(0)])
        );
        assert_eq!(fields[2].ty, fields[3].ty);
        assert_eq!(s.named(1).name(), "t.Kind");
    }

    #[test]
    fn invalid_logical_types_fall_back_to_the_base_type() {
        let s = AvroSchema::parse(r#"{"type":"int","logicalType":"timestamp-millis"}"#).unwrap();
        assert_eq!(s.root, AvroType::Int);
        let s = AvroSchema::parse(
            r#"{"type":"bytes","logicalType":"decimal","precision":4,"scale":5}"#,
        )
        .unwrap();
        assert_eq!(s.root, AvroType::Bytes);
        let s = AvroSchema::parse(
            r#"{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}"#,
        )
        .unwrap();
        assert_eq!(
            s.root,
            AvroType::Decimal {
                precision: 10,
                scale: 2
            }
        );
        assert!(AvroSchema::parse(r#""Nope""#).is_err());
    }
}
