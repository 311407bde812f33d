//! Protobuf compatibility by the rules of the Confluent registry's Protobuf checker
//! (its `SchemaDiff`): the writer's file is the "original", the reader's the "update";
//! messages are matched by name (top level and nested), fields by number, and only
//! the changes that checker counts as incompatible are listed. Scalars are compared
//! by the protobuf compatibility groups (int32/int64/uint32/uint64/bool/enum;
//! sint32/sint64; string/bytes; fixed32/sfixed32; fixed64/sfixed64; float; double),
//! not by wire type alone, so int32 -> sint32 or fixed32 -> float fails. A message
//! type named by a field is followed into imported files (schema references).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use prost_reflect::{
    Cardinality, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor, Syntax,
};

use super::SchemaText;
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::protobuf::{MAIN_FILE, ProtoSchema};

fn parse(text: SchemaText<'_>, which: &str) -> SchemaResult<ProtoSchema> {
    ProtoSchema::parse(text.text, text.references)
        .map_err(|e| SchemaError::invalid(format!("invalid {which} Protobuf schema: {e}")))
}

pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    backward: bool,
) -> SchemaResult<Vec<String>> {
    let p = parse(previous, "previous")?;
    let c = parse(candidate, "candidate")?;
    // Backward: the candidate reads what the previous wrote; forward: the reverse.
    let (writer, reader) = if backward { (&p, &c) } else { (&c, &p) };
    let mut diff = Diff::default();
    if writer.file.package_name() != reader.file.package_name() {
        diff.push(format!(
            "package changed from `{}` to `{}` (PACKAGE_CHANGED)",
            writer.file.package_name(),
            reader.file.package_name()
        ));
    }
    diff.types(
        writer.file.messages().collect(),
        reader.file.messages().collect(),
    );
    if let Some(e) = diff.too_deep {
        return Err(SchemaError::invalid(e));
    }
    let mut seen = HashSet::new();
    diff.out.retain(|m| seen.insert(m.clone()));
    Ok(diff.out)
}

#[derive(Default)]
struct Diff {
    out: Vec<String>,
    /// Writer messages being compared (a recursive type is compared once per path).
    stack: BTreeSet<String>,
    /// Set when message types nest deeper than [`MAX_DEPTH`]: no verdict then.
    too_deep: Option<String>,
}

/// Bounds the recursion through message types declared in other files.
const MAX_DEPTH: usize = 100;

/// The label as the `.proto` text spells it (Confluent compares labels of the source,
/// where a proto3 field without a label and a oneof member have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Optional,
    Required,
    Repeated,
}

fn label(f: &FieldDescriptor) -> Option<Label> {
    if f.is_map() {
        None
    } else if f.is_list() {
        Some(Label::Repeated)
    } else if f.cardinality() == Cardinality::Required {
        Some(Label::Required)
    } else if real_oneof(f).is_some() {
        None
    } else if f.parent_file().syntax() == Syntax::Proto2
        || f.field_descriptor_proto().proto3_optional()
    {
        Some(Label::Optional)
    } else {
        None
    }
}

fn real_oneof(f: &FieldDescriptor) -> Option<OneofDescriptor> {
    f.containing_oneof().filter(|o| !o.is_synthetic())
}

/// What a field (or a map key/value) holds, for the kind comparison.
enum Type {
    Scalar(String, Group),
    Message(MessageDescriptor),
    Map(Box<Type>, Box<Type>),
}

/// The Confluent scalar groups (protobuf's "updating a message type" rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    GeneralNumber,
    SignedNumber,
    StringOrBytes,
    Fixed32,
    Fixed64,
    Float,
    Double,
}

impl Group {
    fn numeric(self) -> bool {
        self != Group::StringOrBytes
    }
}

fn enum_type(e: &EnumDescriptor) -> Type {
    Type::Scalar(format!("enum {}", e.full_name()), Group::GeneralNumber)
}

fn type_of(f: &FieldDescriptor) -> Type {
    if f.is_map()
        && let Kind::Message(entry) = f.kind()
    {
        return Type::Map(
            Box::new(type_of(&entry.map_entry_key_field())),
            Box::new(type_of(&entry.map_entry_value_field())),
        );
    }
    let scalar = |name: &str, g| Type::Scalar(name.to_string(), g);
    match f.kind() {
        Kind::Message(m) => Type::Message(m),
        Kind::Enum(e) => enum_type(&e),
        Kind::Int32 => scalar("int32", Group::GeneralNumber),
        Kind::Int64 => scalar("int64", Group::GeneralNumber),
        Kind::Uint32 => scalar("uint32", Group::GeneralNumber),
        Kind::Uint64 => scalar("uint64", Group::GeneralNumber),
        Kind::Bool => scalar("bool", Group::GeneralNumber),
        Kind::Sint32 => scalar("sint32", Group::SignedNumber),
        Kind::Sint64 => scalar("sint64", Group::SignedNumber),
        Kind::String => scalar("string", Group::StringOrBytes),
        Kind::Bytes => scalar("bytes", Group::StringOrBytes),
        Kind::Fixed32 => scalar("fixed32", Group::Fixed32),
        Kind::Sfixed32 => scalar("sfixed32", Group::Fixed32),
        Kind::Fixed64 => scalar("fixed64", Group::Fixed64),
        Kind::Sfixed64 => scalar("sfixed64", Group::Fixed64),
        Kind::Float => scalar("float", Group::Float),
        Kind::Double => scalar("double", Group::Double),
    }
}

fn kind_name(t: &Type) -> &'static str {
    match t {
        Type::Scalar(..) => "scalar",
        Type::Message(_) => "message",
        Type::Map(..) => "map",
    }
}

/// The name of a message inside its package (what Confluent matches on, so a type
/// moved to an import under another package is still "the same" type).
fn local_name(m: &MessageDescriptor) -> String {
    let pkg = m.package_name();
    match m.full_name().strip_prefix(&format!("{pkg}.")) {
        Some(local) if !pkg.is_empty() => local.to_string(),
        _ => m.full_name().to_string(),
    }
}

/// Both types come from the same file text (the main file, or one import): their
/// messages are compared where they are declared, not again through each field.
fn same_source(w: &MessageDescriptor, r: &MessageDescriptor) -> bool {
    let (wf, rf) = (w.parent_file(), r.parent_file());
    if wf.name() == MAIN_FILE && rf.name() == MAIN_FILE {
        return true;
    }
    wf.name() == rf.name() && wf.file_descriptor_proto() == rf.file_descriptor_proto()
}

fn is_incompatible(found: &[String]) -> bool {
    !found.is_empty()
}

impl Diff {
    fn push(&mut self, m: String) {
        self.out.push(m);
    }

    /// Messages of one scope (a file's top level or a message's nested types), matched
    /// by name. Enums added, removed or changed are all compatible for Confluent.
    fn types(&mut self, writer: Vec<MessageDescriptor>, reader: Vec<MessageDescriptor>) {
        let by_name = |v: Vec<MessageDescriptor>| -> BTreeMap<String, MessageDescriptor> {
            v.into_iter()
                .filter(|m| !m.is_map_entry())
                .map(|m| (m.name().to_string(), m))
                .collect()
        };
        let (w, r) = (by_name(writer), by_name(reader));
        for (name, wm) in &w {
            match r.get(name) {
                None => self.push(format!(
                    "message {} is absent from the reader (MESSAGE_REMOVED)",
                    wm.full_name()
                )),
                Some(rm) => self.message(wm, rm),
            }
        }
    }

    fn message(&mut self, w: &MessageDescriptor, r: &MessageDescriptor) {
        if self.stack.len() >= MAX_DEPTH {
            self.too_deep.get_or_insert_with(|| {
                format!(
                    "the Protobuf compatibility check refuses message types nested deeper than {MAX_DEPTH} levels (at {})",
                    w.full_name()
                )
            });
            return;
        }
        if self.stack.insert(w.full_name().to_string()) {
            self.fields(w, r);
            self.stack.remove(w.full_name());
        }
        self.types(w.child_messages().collect(), r.child_messages().collect());
    }

    fn fields(&mut self, w: &MessageDescriptor, r: &MessageDescriptor) {
        let msg = w.full_name();
        let wf: BTreeMap<u32, FieldDescriptor> = w.fields().map(|f| (f.number(), f)).collect();
        let rf: BTreeMap<u32, FieldDescriptor> = r.fields().map(|f| (f.number(), f)).collect();
        let oneof_of = |f: &FieldDescriptor| real_oneof(f).map(|o| o.name().to_string());
        // A writer oneof whose name is gone and none of whose members survive was deleted
        // whole: its members' removal is not reported one by one.
        let reader_oneofs: BTreeSet<String> = r
            .oneofs()
            .filter(|o| !o.is_synthetic())
            .map(|o| o.name().to_string())
            .collect();
        let deleted: BTreeSet<String> = w
            .oneofs()
            .filter(|o| !o.is_synthetic() && !reader_oneofs.contains(o.name()))
            .filter(|o| o.fields().all(|f| !rf.contains_key(&f.number())))
            .map(|o| o.name().to_string())
            .collect();
        // A reader oneof gathering writer fields from more than one origin (a writer oneof
        // or an independent field) makes fields exclusive that old data set together.
        for o in r.oneofs().filter(|o| !o.is_synthetic()) {
            let mut origins = BTreeSet::new();
            let mut top_level_moved_in = 0;
            for f in o.fields() {
                if let Some(old) = wf.get(&f.number()) {
                    match oneof_of(old) {
                        Some(name) => origins.insert(format!("oneof {name}")),
                        None => {
                            top_level_moved_in += 1;
                            origins.insert(format!("field {}", f.number()))
                        }
                    };
                }
            }
            if origins.len() > 1 {
                let what = if top_level_moved_in > 1 {
                    "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
                } else {
                    "FIELD_MOVED_TO_EXISTING_ONEOF"
                };
                let list: Vec<String> = origins.into_iter().collect();
                self.push(format!(
                    "{msg} oneof {} makes writer fields exclusive that were independent ({}) ({what})",
                    o.name(),
                    list.join(", ")
                ));
            }
        }
        let numbers: BTreeSet<u32> = wf.keys().chain(rf.keys()).copied().collect();
        for n in numbers {
            match (wf.get(&n), rf.get(&n)) {
                (Some(old), None) => match oneof_of(old) {
                    Some(o) if !deleted.contains(&o) => self.push(format!(
                        "{msg} field {n} ({}) of oneof {o} is absent from the reader (ONEOF_FIELD_REMOVED)",
                        old.name()
                    )),
                    Some(_) => {}
                    None if old.cardinality() == Cardinality::Required => self.push(format!(
                        "{msg} field {n} ({}) is required by the writer and absent from the reader (REQUIRED_FIELD_REMOVED)",
                        old.name()
                    )),
                    None => {}
                },
                (None, Some(new)) => {
                    if oneof_of(new).is_none() && new.cardinality() == Cardinality::Required {
                        self.push(format!(
                            "{}.{} is required but absent from the writer (REQUIRED_FIELD_ADDED)",
                            r.full_name(),
                            new.name()
                        ));
                    }
                }
                (Some(old), Some(new)) => {
                    let at = format!("{msg} field {n}");
                    self.labels_and_types(&at, label(old), label(new), type_of(old), type_of(new));
                }
                (None, None) => {}
            }
        }
    }

    fn labels_and_types(
        &mut self,
        at: &str,
        wl: Option<Label>,
        rl: Option<Label>,
        wt: Type,
        rt: Type,
    ) {
        match (wt, rt) {
            (Type::Scalar(wn, wg), Type::Scalar(rn, rg)) => {
                if wg != rg {
                    self.push(format!(
                        "{at} changed type from {wn} to {rn} (FIELD_SCALAR_KIND_CHANGED)"
                    ));
                } else if let (Some(a), Some(b)) = (wl, rl)
                    && a != b
                    && wg.numeric()
                {
                    self.push(format!(
                        "{at} changed label from {} to {} (FIELD_NUMERIC_LABEL_CHANGED)",
                        format!("{a:?}").to_lowercase(),
                        format!("{b:?}").to_lowercase()
                    ));
                }
            }
            (Type::Message(wm), Type::Message(rm)) => self.named_types(at, &wm, &rm),
            (Type::Map(wk, wv), Type::Map(rk, rv)) => {
                self.labels_and_types(&format!("{at} key"), None, None, *wk, *rk);
                self.labels_and_types(&format!("{at} value"), None, None, *wv, *rv);
            }
            (wt, rt) => self.push(format!(
                "{at} changed kind from {} to {} (FIELD_KIND_CHANGED)",
                kind_name(&wt),
                kind_name(&rt)
            )),
        }
    }

    /// Two message types named by one field number: the same name (inside its package)
    /// or incompatible; declared in different files (an import changed or moved), they
    /// are compared member by member.
    fn named_types(&mut self, at: &str, w: &MessageDescriptor, r: &MessageDescriptor) {
        if local_name(w) != local_name(r) {
            self.push(format!(
                "{at} changed message type from {} to {} (FIELD_NAMED_TYPE_CHANGED)",
                w.full_name(),
                r.full_name()
            ));
            return;
        }
        if same_source(w, r) {
            return;
        }
        let mut sub = Diff {
            out: Vec::new(),
            stack: self.stack.clone(),
            too_deep: None,
        };
        sub.message(w, r);
        if let Some(e) = sub.too_deep.take() {
            self.too_deep.get_or_insert(e);
        }
        if is_incompatible(&sub.out) {
            self.out.append(&mut sub.out);
            self.push(format!(
                "{at} message type {} is incompatible between writer and reader (FIELD_NAMED_TYPE_CHANGED)",
                w.full_name()
            ));
        }
    }
}
