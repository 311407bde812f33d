//! Avro reader/writer resolution (the Avro specification's rules), walked by hand so
//! that every reason a reader cannot read a writer's data is listed rather than the
//! first one (apache-avro's checker stops at one and ignores aliases). The decoder asks
//! it before resolving a body onto a reader schema, `schema check` for compatibility.

use std::collections::HashSet;

use apache_avro::Schema;
use apache_avro::schema::{NamesRef, ResolvedSchema};

use super::AvroSchema;
use crate::engine::schema::error::{SchemaError, SchemaResult};

/// Joins a dot path.
fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}

/// Every reason `r` cannot read what `w` wrote.
pub fn problems(w: &AvroSchema, r: &AvroSchema) -> SchemaResult<Vec<String>> {
    let w_all: Vec<&Schema> = w.references.iter().chain([&w.schema]).collect();
    let r_all: Vec<&Schema> = r.references.iter().chain([&r.schema]).collect();
    let w_names = ResolvedSchema::new_with_schemata(w_all)
        .map_err(|e| SchemaError::invalid(format!("invalid Avro schema: {e}")))?;
    let r_names = ResolvedSchema::new_with_schemata(r_all)
        .map_err(|e| SchemaError::invalid(format!("invalid Avro schema: {e}")))?;
    let mut walker = Walker {
        writer_names: w_names.get_names(),
        reader_names: r_names.get_names(),
        seen: HashSet::new(),
        out: Vec::new(),
    };
    walker.walk(&w.schema, &r.schema, "");
    Ok(walker.out)
}

struct Walker<'a, 's> {
    writer_names: &'a NamesRef<'s>,
    reader_names: &'a NamesRef<'s>,
    seen: HashSet<(String, String)>,
    out: Vec<String>,
}

/// The type a logical type is carried by (what resolution compares).
fn base_name(s: &Schema) -> String {
    match s {
        Schema::Null => "null",
        Schema::Boolean => "boolean",
        Schema::Int | Schema::Date | Schema::TimeMillis => "int",
        Schema::Long
        | Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => "long",
        Schema::Float => "float",
        Schema::Double => "double",
        Schema::Bytes | Schema::BigDecimal => "bytes",
        Schema::String => "string",
        Schema::Uuid(_) => "string",
        Schema::Decimal(d) => match &d.inner {
            apache_avro::schema::InnerDecimalSchema::Bytes => "bytes",
            apache_avro::schema::InnerDecimalSchema::Fixed(_) => "fixed",
        },
        Schema::Array(_) => "array",
        Schema::Map(_) => "map",
        Schema::Union(_) => "union",
        Schema::Record(r) => return format!("record {}", r.name.fullname(None)),
        Schema::Enum(e) => return format!("enum {}", e.name.fullname(None)),
        Schema::Fixed(f) | Schema::Duration(f) => {
            return format!("fixed {}", f.name.fullname(None));
        }
        Schema::Ref { name } => return name.fullname(None),
    }
    .to_string()
}

fn promotable(writer: &str, reader: &str) -> bool {
    writer == reader
        || matches!(
            (writer, reader),
            ("int", "long" | "float" | "double")
                | ("long", "float" | "double")
                | ("float", "double")
                | ("string", "bytes")
                | ("bytes", "string")
        )
}

impl<'s> Walker<'_, 's> {
    fn deref<'x>(&self, s: &'x Schema, names: &'x NamesRef<'s>) -> &'x Schema
    where
        's: 'x,
    {
        match s {
            Schema::Ref { name } => names.get(name).copied().unwrap_or(s),
            other => other,
        }
    }

    fn at(path: &str) -> String {
        if path.is_empty() {
            "the top-level schema".into()
        } else {
            path.to_string()
        }
    }

    /// Whether the reader can read what the writer wrote, without recording anything.
    fn matches(&self, w: &Schema, r: &Schema) -> bool {
        let w = self.deref(w, self.writer_names);
        let r = self.deref(r, self.reader_names);
        match (w, r) {
            (Schema::Record(a), Schema::Record(b)) => {
                a.name.name() == b.name.name()
                    || b.aliases
                        .iter()
                        .flatten()
                        .any(|x| x.name() == a.name.name())
            }
            (Schema::Enum(a), Schema::Enum(b)) => a.name.name() == b.name.name(),
            (Schema::Fixed(a), Schema::Fixed(b)) => {
                a.name.name() == b.name.name() && a.size == b.size
            }
            (Schema::Union(_), _) | (_, Schema::Union(_)) => false,
            (Schema::Array(_), Schema::Array(_)) | (Schema::Map(_), Schema::Map(_)) => true,
            _ => promotable(&base_name(w), &base_name(r)),
        }
    }

    fn walk(&mut self, w: &Schema, r: &Schema, path: &str) {
        let w = self.deref(w, self.writer_names);
        let r = self.deref(r, self.reader_names);
        match (w, r) {
            (Schema::Union(wu), _) => {
                for branch in wu.variants() {
                    if let Schema::Union(ru) = r {
                        if !ru.variants().iter().any(|rb| self.matches(branch, rb)) {
                            self.out.push(format!(
                                "{}: the writer union branch {} is missing from the reader union",
                                Self::at(path),
                                base_name(self.deref(branch, self.writer_names))
                            ));
                        } else if let Some(rb) =
                            ru.variants().iter().find(|rb| self.matches(branch, rb))
                        {
                            self.walk(branch, rb, path);
                        }
                    } else {
                        self.walk(branch, r, path);
                    }
                }
            }
            (_, Schema::Union(ru)) => match ru.variants().iter().find(|rb| self.matches(w, rb)) {
                Some(rb) => self.walk(w, rb, path),
                None => self.out.push(format!(
                    "{}: the writer type {} matches no branch of the reader union",
                    Self::at(path),
                    base_name(w)
                )),
            },
            (Schema::Record(wr), Schema::Record(rr)) => {
                if !self.matches(w, r) {
                    self.out.push(format!(
                        "{}: record name changed from {} to {}",
                        Self::at(path),
                        wr.name.fullname(None),
                        rr.name.fullname(None)
                    ));
                    return;
                }
                let key = (wr.name.fullname(None), rr.name.fullname(None));
                if !self.seen.insert(key) {
                    return;
                }
                for rf in &rr.fields {
                    let found = wr
                        .fields
                        .iter()
                        .find(|wf| wf.name == rf.name || rf.aliases.contains(&wf.name));
                    let fpath = join(path, &rf.name);
                    match found {
                        Some(wf) => self.walk(&wf.schema, &rf.schema, &fpath),
                        None if rf.default.is_some() => {}
                        None => self.out.push(format!(
                            "{fpath} has no default and is absent from the writer"
                        )),
                    }
                }
            }
            (Schema::Enum(we), Schema::Enum(re)) => {
                if we.name.name() != re.name.name() {
                    self.out.push(format!(
                        "{}: enum name changed from {} to {}",
                        Self::at(path),
                        we.name.fullname(None),
                        re.name.fullname(None)
                    ));
                    return;
                }
                let missing: Vec<&String> = we
                    .symbols
                    .iter()
                    .filter(|s| !re.symbols.contains(s))
                    .collect();
                if !missing.is_empty() && re.default.is_none() {
                    self.out.push(format!(
                        "{}: enum symbols {} are missing from the reader (which has no default)",
                        Self::at(path),
                        missing
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            (Schema::Array(wa), Schema::Array(ra)) => {
                self.walk(&wa.items, &ra.items, &join(path, "items"))
            }
            (Schema::Map(wm), Schema::Map(rm)) => {
                self.walk(&wm.types, &rm.types, &join(path, "values"))
            }
            (Schema::Fixed(wf), Schema::Fixed(rf)) => {
                if wf.size != rf.size || wf.name.name() != rf.name.name() {
                    self.out.push(format!(
                        "{}: fixed {}({}) cannot be read as fixed {}({})",
                        Self::at(path),
                        wf.name.fullname(None),
                        wf.size,
                        rf.name.fullname(None),
                        rf.size
                    ));
                }
            }
            _ => {
                let (wn, rn) = (base_name(w), base_name(r));
                if !promotable(&wn, &rn) {
                    self.out.push(format!(
                        "{}: type changed from {wn} to {rn}",
                        Self::at(path)
                    ));
                }
            }
        }
    }
}
