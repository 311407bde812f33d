//! A `protobuf` sink whose writer schema is given as a file (`value:
//! protobuf:FILE.proto` or `protobuf:FILE.proto:pkg.Msg`): the file is compiled
//! with protox (as `tail` and `schema` compile registered `.proto` text), its
//! text registered as is with the message's full name as `messageType`, and
//! every row written as that message (the file's first message by default),
//! framed with the message's index path (formats §2: `[0]`, `[1, 0]`, …).
//!
//! Fields are matched to columns by name, at every nesting level, with the
//! conversions of the derived sink (`proto_writer`): integers into any integer
//! field (a value that does not fit fails its row), `float32` into `float` or
//! `double`, text into `string` or an enum (by symbol), binary into `bytes`,
//! decimals, dates and times into `string` as the JSON sinks write them,
//! timestamps into `google.protobuf.Timestamp`, JSON text into
//! `google.protobuf.Value` / `Struct` / `ListValue`, any of these into its
//! wrapper message, structs into messages, lists into repeated fields and maps
//! into map fields. Columns the message does not name are left out, fields no
//! column holds are left unset (every Protobuf field has a default) except a
//! proto2 `required` one, which is refused.
//!
//! Imports: the well-known `google/protobuf/*.proto` files are built in; any
//! other import is read beside the file (`io::proto_imports`), compiled with it,
//! and registered as a reference (see [`ProtoFileSchema::references`]).

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema};
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};

use crate::engine::columnar::reserved::JSON_KEY;
use crate::engine::columnarschema::avro_writer::payload_fields;
use crate::engine::columnarschema::proto_arrow::{JSON_MESSAGES, WRAPPERS};
use crate::engine::columnarschema::proto_writer::{TIMESTAMP, proto_messages_named};
use crate::engine::schema::framing;
use crate::engine::schema::protobuf::{MAIN_FILE, ProtoSchema, encode_message, message_index_path};

/// A `.proto` writer schema read from a file.
#[derive(Debug)]
pub struct ProtoFileSchema {
    /// The text registered: the file exactly as given.
    pub registered: String,
    /// The registered `messageType`: the message's full name.
    pub message_type: String,
    message: MessageDescriptor,
    path: Vec<i32>,
    /// The imported files (import path, text), dependencies first.
    imports: Vec<(String, String)>,
}

/// A file a schema file imports, as registered (see [`ProtoFileSchema::references`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedFile {
    /// The import path: the reference's `name` and its subject.
    pub name: String,
    pub text: String,
    /// The import paths it names in turn (well-known files left out).
    pub imports: Vec<String>,
}

/// The non-well-known imports of a `.proto` text, each once, in order.
fn direct_imports(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for import in proto_imports(text) {
        if !is_well_known(&import) && !names.contains(&import) {
            names.push(import);
        }
    }
    names
}

impl ProtoFileSchema {
    /// Compiles a schema file's text, its imports taken from `imports` (import
    /// path → text, as read beside the file), and picks `message` (a full name),
    /// or the file's first message.
    pub fn parse(
        text: &str,
        message: Option<&str>,
        imports: &[(String, String)],
    ) -> Result<Self, String> {
        for import in proto_imports(text) {
            if !is_well_known(&import) && !imports.iter().any(|(n, _)| *n == import) {
                return Err(format!(
                    "imports {import}: the file was not read (imports resolve relative to the schema file's directory)"
                ));
            }
        }
        let schema = ProtoSchema::parse(text, imports).map_err(|e| e.to_string())?;
        let message = schema.message(message).map_err(|e| e.to_string())?;
        if message.parent_file().name() != MAIN_FILE {
            return Err(format!(
                "message {} is not defined in the file",
                message.full_name()
            ));
        }
        Ok(ProtoFileSchema {
            registered: text.to_owned(),
            message_type: message.full_name().to_owned(),
            path: message_index_path(&message),
            message,
            imports: imports.to_vec(),
        })
    }

    /// What registers before the file itself: every imported file, each after
    /// the files it imports, under the subject named by its import path (the
    /// Confluent serializers' default reference subject naming), with the names
    /// of the files it imports in turn.
    pub fn references(&self) -> Vec<ImportedFile> {
        self.imports
            .iter()
            .map(|(name, text)| ImportedFile {
                name: name.clone(),
                text: text.clone(),
                imports: direct_imports(text),
            })
            .collect()
    }

    /// The import paths the file itself names (its direct references).
    pub fn direct_references(&self) -> Vec<String> {
        direct_imports(&self.registered)
    }

    /// Whether batches of `input` (payload columns) can be written as the message.
    pub fn check(&self, input: &Schema) -> Result<(), String> {
        let fields: Vec<Field> = payload_fields(input).into_iter().map(|(_, f)| f).collect();
        let mut problems = Vec::new();
        check_message(&fields, &self.message, "", &mut problems);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the sink's columns cannot be written as message {}: {}",
                self.message_type,
                problems.join("; ")
            ))
        }
    }

    /// Every row's framed value (`id`, the message-index path, the body).
    pub fn values(&self, id: u32, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        self.check(&batch.schema())?;
        let columns = payload_fields(&batch.schema());
        proto_messages_named(batch, &columns, &self.message)?
            .iter()
            .map(|m| {
                let body = encode_message(m).map_err(|e| e.to_string())?;
                framing::encode_protobuf(id, &self.path, &body).map_err(|e| e.to_string())
            })
            .collect()
    }
}

/// The files a `.proto` text imports (`import "a.proto";`, `import public …`).
pub fn proto_imports(text: &str) -> Vec<String> {
    text.split(';')
        .filter_map(|statement| {
            let code: String = statement
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join(" ");
            // A statement after a message starts with that message's closing brace.
            let code = code.trim_start_matches(|c: char| c == '}' || c.is_whitespace());
            let rest = code.strip_prefix("import")?;
            let quoted = rest.split('"').nth(1)?;
            Some(quoted.to_owned())
        })
        .collect()
}

/// A well-known `google/protobuf/*.proto` file: built into every Protobuf
/// compiler, never registered as a reference.
pub fn is_well_known(import: &str) -> bool {
    import.starts_with("google/protobuf/")
}

fn check_message(fields: &[Field], m: &MessageDescriptor, at: &str, problems: &mut Vec<String>) {
    for fd in m.fields() {
        let name = format!("{at}{}", fd.name());
        match fields.iter().find(|f| f.name() == fd.name()) {
            Some(f) => {
                if let Err(e) = field_accepts(f, &fd, &name, problems) {
                    problems.push(e);
                }
            }
            None if fd.cardinality() == Cardinality::Required => problems.push(format!(
                "field {name} is required and no column of the sink holds it"
            )),
            None => {}
        }
    }
}

fn field_accepts(
    f: &Field,
    fd: &FieldDescriptor,
    name: &str,
    problems: &mut Vec<String>,
) -> Result<(), String> {
    let refuse = |what: &str| {
        format!(
            "field {name} ({what}) cannot hold column {} ({})",
            f.name(),
            f.data_type()
        )
    };
    if fd.is_map() {
        let (DataType::Map(entries, _), Kind::Message(entry)) = (f.data_type(), fd.kind()) else {
            return Err(refuse("a map"));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(refuse("a map"));
        };
        single_accepts(&kv[0], &entry.map_entry_key_field().kind(), name, problems)
            .map_err(|what| refuse(&format!("a map with {what} keys")))?;
        return single_accepts(
            &kv[1],
            &entry.map_entry_value_field().kind(),
            name,
            problems,
        )
        .map_err(|what| refuse(&format!("a map of {what}")));
    }
    if fd.is_list() {
        let (DataType::List(item) | DataType::LargeList(item)) = f.data_type() else {
            return Err(refuse("repeated"));
        };
        return single_accepts(item, &fd.kind(), name, problems)
            .map_err(|what| refuse(&format!("repeated {what}")));
    }
    single_accepts(f, &fd.kind(), name, problems).map_err(|what| refuse(&what))
}

/// Whether a singular field of `kind` can hold `f`; `Err` names the kind.
fn single_accepts(
    f: &Field,
    kind: &Kind,
    name: &str,
    problems: &mut Vec<String>,
) -> Result<(), String> {
    use DataType as D;
    let dt = f.data_type();
    let integer = dt.is_integer();
    let text = matches!(dt, D::Utf8 | D::LargeUtf8 | D::Utf8View);
    let ok = match kind {
        Kind::Message(m) if m.full_name() == TIMESTAMP => matches!(dt, D::Timestamp(..)),
        Kind::Message(m) if JSON_MESSAGES.contains(&m.full_name()) => {
            f.metadata().get(JSON_KEY).is_some_and(|v| v == "true")
                || matches!(dt, D::Utf8 | D::LargeUtf8)
        }
        Kind::Message(m) if WRAPPERS.contains(&m.full_name()) => {
            let inner = m.get_field(1).map(|i| i.kind());
            return match inner {
                Some(inner) => single_accepts(f, &inner, name, problems),
                None => Err(m.full_name().to_owned()),
            };
        }
        Kind::Message(m) => match dt {
            D::Struct(children) => {
                let children: Vec<Field> = children.iter().map(|c| c.as_ref().clone()).collect();
                check_message(&children, m, &format!("{name}."), problems);
                true
            }
            _ => false,
        },
        Kind::Bool => matches!(dt, D::Boolean),
        Kind::Int32
        | Kind::Sint32
        | Kind::Sfixed32
        | Kind::Int64
        | Kind::Sint64
        | Kind::Sfixed64
        | Kind::Uint32
        | Kind::Fixed32
        | Kind::Uint64
        | Kind::Fixed64 => integer,
        Kind::Float => matches!(dt, D::Float16 | D::Float32),
        Kind::Double => matches!(dt, D::Float32 | D::Float64),
        Kind::String => {
            text || matches!(
                dt,
                D::Decimal128(..)
                    | D::Decimal256(..)
                    | D::Date32
                    | D::Date64
                    | D::Time32(_)
                    | D::Time64(_)
            )
        }
        Kind::Bytes => matches!(
            dt,
            D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_)
        ),
        Kind::Enum(_) => matches!(dt, D::Utf8 | D::LargeUtf8),
    };
    if ok {
        Ok(())
    } else {
        Err(match kind {
            Kind::Message(m) => m.full_name().to_owned(),
            Kind::Enum(e) => format!("enum {}", e.full_name()),
            other => format!("{other:?}").to_lowercase(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Decimal128Array, StringArray};

    use super::*;
    use crate::engine::schema::protobuf::decode_body;

    const FILE: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Other { string x = 1; }

message Total {
  int64 n = 1;
  string user = 2;
  string total_eur = 3; // decimal text
  optional string region = 4;
  Status status = 5;
  message Inner { string y = 1; }
}

enum Status { NEW = 0; PAID = 1; }
"#;

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("user", DataType::Utf8, false),
            Field::new("total_eur", DataType::Decimal128(12, 2), false),
            Field::new("n", DataType::Int32, false),
            Field::new("status", DataType::Utf8, false),
            Field::new("dropped", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec!["alice"])) as ArrayRef,
                Arc::new(
                    Decimal128Array::from(vec![27_000])
                        .with_precision_and_scale(12, 2)
                        .unwrap(),
                ),
                Arc::new(arrow_array::Int32Array::from(vec![2])),
                Arc::new(StringArray::from(vec!["PAID"])),
                Arc::new(StringArray::from(vec![Some("x")])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn columns_fill_the_fields_of_their_name_in_the_named_message_framed_with_its_index_path() {
        let file = ProtoFileSchema::parse(FILE, Some("shop.Total"), &[]).unwrap();
        assert_eq!(file.message_type, "shop.Total");
        let value = &file.values(7, &batch()).unwrap()[0];
        let frame = framing::decode_protobuf(value).unwrap();
        assert_eq!(frame.schema_id, 7);
        assert_eq!(frame.message_indexes.as_deref().unwrap_or(&[0]), &[1]);
        let json = decode_body(&file.message, frame.body).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"n": "2", "user": "alice", "total_eur": "270.00", "status": "PAID"})
        );
        // The first message by default; a nested one by its full name.
        assert_eq!(
            ProtoFileSchema::parse(FILE, None, &[])
                .unwrap()
                .message_type,
            "shop.Other"
        );
        let inner = ProtoFileSchema::parse(FILE, Some("shop.Total.Inner"), &[]).unwrap();
        assert_eq!(inner.path, [1, 0]);
    }

    #[test]
    fn a_column_a_field_cannot_hold_a_required_field_and_an_import_not_read_is_refused_by_name() {
        let file =
            ProtoFileSchema::parse(&FILE.replace("int64 n", "bytes n"), Some("shop.Total"), &[])
                .unwrap();
        let e = file.check(&batch().schema()).unwrap_err();
        assert!(
            e.contains("message shop.Total: field n (bytes) cannot hold column n (Int32)"),
            "{e}"
        );
        let proto2 = "syntax = \"proto2\";\nmessage M { required string user = 1; required int64 region = 2; }";
        let e = ProtoFileSchema::parse(proto2, None, &[])
            .unwrap()
            .check(&batch().schema())
            .unwrap_err();
        assert!(
            e.contains("field region is required and no column of the sink holds it"),
            "{e}"
        );
        let e = ProtoFileSchema::parse(
            "syntax = \"proto3\";\nimport \"common.proto\";\nmessage M {}",
            None,
            &[],
        )
        .unwrap_err();
        assert!(
            e.starts_with("imports common.proto: the file was not read"),
            "{e}"
        );
        assert_eq!(
            proto_imports(
                "import \"a.proto\";\nmessage M { int32 x = 1; }\nimport public \"b.proto\"; // c\n"
            ),
            ["a.proto", "b.proto"]
        );
        let e = ProtoFileSchema::parse(FILE, Some("google.protobuf.Timestamp"), &[]).unwrap_err();
        assert!(e.contains("not defined in the file"), "{e}");
        let e = ProtoFileSchema::parse(FILE, Some("shop.Nope"), &[]).unwrap_err();
        assert!(e.contains("shop.Nope"), "{e}");
    }
}

#[cfg(test)]
mod import_tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray, StructArray};
    use arrow_schema::Fields;

    use super::*;
    use crate::engine::schema::protobuf::decode_body;

    const MONEY: &str = "syntax = \"proto3\";\npackage common;\nimport \"google/protobuf/timestamp.proto\";\nmessage Money { string currency = 1; int64 units = 2; }\n";
    const ORDER: &str = "syntax = \"proto3\";\npackage shop;\nimport \"common/money.proto\";\nmessage Order { string user = 1; common.Money price = 2; }\n";

    #[test]
    fn a_message_of_an_imported_file_is_a_field_and_the_import_is_a_reference_by_its_path() {
        let imports = [("common/money.proto".to_owned(), MONEY.to_owned())];
        let file = ProtoFileSchema::parse(ORDER, None, &imports).unwrap();
        assert_eq!(file.message_type, "shop.Order");
        assert_eq!(file.direct_references(), ["common/money.proto"]);
        assert_eq!(
            file.references(),
            [ImportedFile {
                name: "common/money.proto".into(),
                text: MONEY.into(),
                imports: vec![],
            }]
        );
        let price = Fields::from(vec![
            Field::new("currency", DataType::Utf8, false),
            Field::new("units", DataType::Int64, false),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("user", DataType::Utf8, false),
                Field::new("price", DataType::Struct(price.clone()), false),
            ])),
            vec![
                Arc::new(StringArray::from(vec!["ann"])) as ArrayRef,
                Arc::new(StructArray::new(
                    price,
                    vec![
                        Arc::new(StringArray::from(vec!["EUR"])) as ArrayRef,
                        Arc::new(Int64Array::from(vec![250])),
                    ],
                    None,
                )),
            ],
        )
        .unwrap();
        let value = &file.values(3, &batch).unwrap()[0];
        let frame = framing::decode_protobuf(value).unwrap();
        assert_eq!(
            decode_body(&file.message, frame.body).unwrap(),
            serde_json::json!({"user": "ann", "price": {"currency": "EUR", "units": "250"}})
        );
    }
}
