//! The Protobuf verdict table: each row is one rule of the Confluent registry's Protobuf
//! checker (the difference type it reports, or "compatible" for the changes that checker
//! allows), a previous and a candidate schema, and whether BACKWARD (or the level named)
//! accepts it. An incompatible row also names the difference type the listing must show.

use super::{Level, SchemaText, check};
use crate::engine::schema::registry::SchemaType;

struct Row {
    rule: &'static str,
    level: Level,
    previous: String,
    candidate: String,
    previous_refs: Vec<(String, String)>,
    candidate_refs: Vec<(String, String)>,
    /// `None`: compatible; `Some(tag)`: incompatible and the tag is listed.
    fails_with: Option<&'static str>,
}

fn p3(body: &str) -> String {
    format!("syntax = \"proto3\";\npackage t;\n{body}")
}

fn p2(body: &str) -> String {
    format!("syntax = \"proto2\";\npackage t;\n{body}")
}

fn row(
    rule: &'static str,
    previous: String,
    candidate: String,
    fails_with: Option<&'static str>,
) -> Row {
    Row {
        rule,
        level: Level::Backward,
        previous,
        candidate,
        previous_refs: Vec::new(),
        candidate_refs: Vec::new(),
        fails_with,
    }
}

/// One field `T f = 1;` in message M, before and after.
fn field(rule: &'static str, before: &str, after: &str, fails_with: Option<&'static str>) -> Row {
    let extra = "message Sub { string s = 1; } enum Color { RED = 0; GREEN = 1; }";
    row(
        rule,
        p3(&format!("message M {{ {before} = 1; }} {extra}")),
        p3(&format!("message M {{ {after} = 1; }} {extra}")),
        fails_with,
    )
}

const IMPORT_V1: &str =
    "syntax = \"proto3\";\npackage dep;\nmessage Home { int32 id = 1; bool on = 2; }";
const IMPORT_V2_COMPATIBLE: &str = "syntax = \"proto3\";\npackage dep;\nmessage Home { int32 id = 1; bool on = 2; string name = 3; }";
const IMPORT_V2_SCALAR_CHANGED: &str =
    "syntax = \"proto3\";\npackage dep;\nmessage Home { string id = 1; bool on = 2; }";

fn with_import(
    rule: &'static str,
    dep_before: &str,
    dep_after: &str,
    fails_with: Option<&'static str>,
) -> Row {
    let main = p3("import \"dep.proto\";\nmessage M { dep.Home home = 1; }");
    Row {
        rule,
        level: Level::Backward,
        previous: main.clone(),
        candidate: main,
        previous_refs: vec![("dep.proto".into(), dep_before.into())],
        candidate_refs: vec![("dep.proto".into(), dep_after.into())],
        fails_with,
    }
}

/// Long because it is the table of cases, one row each.
fn rows() -> Vec<Row> {
    let mut rows = vec![
        field("no change", "int32 a", "int32 a", None),
        field(
            "FIELD_NAME_CHANGED is compatible",
            "int32 a",
            "int32 renamed",
            None,
        ),
        field(
            "GENERAL_NUMBER group: int32 -> int64",
            "int32 a",
            "int64 a",
            None,
        ),
        field(
            "GENERAL_NUMBER group: int32 -> uint64",
            "int32 a",
            "uint64 a",
            None,
        ),
        field(
            "GENERAL_NUMBER group: uint32 -> bool",
            "uint32 a",
            "bool a",
            None,
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: int32 -> sint32 (same wire type, other group)",
            "int32 a",
            "sint32 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: sint64 -> int64",
            "sint64 a",
            "int64 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "SIGNED_NUMBER group: sint32 -> sint64",
            "sint32 a",
            "sint64 a",
            None,
        ),
        field(
            "FIXED32 group: fixed32 -> sfixed32",
            "fixed32 a",
            "sfixed32 a",
            None,
        ),
        field(
            "FIXED64 group: fixed64 -> sfixed64",
            "fixed64 a",
            "sfixed64 a",
            None,
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: fixed32 -> float (same wire type)",
            "fixed32 a",
            "float a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: fixed64 -> double (same wire type)",
            "fixed64 a",
            "double a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: float -> double",
            "float a",
            "double a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: fixed32 -> fixed64",
            "fixed32 a",
            "fixed64 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: int64 -> fixed64",
            "int64 a",
            "fixed64 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "STRING_OR_BYTES group: string -> bytes",
            "string a",
            "bytes a",
            None,
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: string -> int32",
            "string a",
            "int32 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_KIND_CHANGED: string -> message (same wire type)",
            "string a",
            "Sub a",
            Some("FIELD_KIND_CHANGED"),
        ),
        field(
            "FIELD_KIND_CHANGED: message -> bytes",
            "Sub a",
            "bytes a",
            Some("FIELD_KIND_CHANGED"),
        ),
        field(
            "enum is a GENERAL_NUMBER scalar: int32 -> enum",
            "int32 a",
            "Color a",
            None,
        ),
        field(
            "FIELD_SCALAR_KIND_CHANGED: enum -> sint32",
            "Color a",
            "sint32 a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "FIELD_KIND_CHANGED: enum -> message",
            "Color a",
            "Sub a",
            Some("FIELD_KIND_CHANGED"),
        ),
        field(
            "FIELD_NUMERIC_LABEL_CHANGED: optional int32 -> repeated int32",
            "optional int32 a",
            "repeated int32 a",
            Some("FIELD_NUMERIC_LABEL_CHANGED"),
        ),
        field(
            "FIELD_STRING_OR_BYTES_LABEL_CHANGED is compatible: optional string -> repeated",
            "optional string a",
            "repeated string a",
            None,
        ),
        field(
            "label change of a message field is compatible",
            "optional Sub a",
            "repeated Sub a",
            None,
        ),
        field(
            "an unlabelled proto3 scalar has no label to change: int32 -> repeated int32",
            "int32 a",
            "repeated int32 a",
            None,
        ),
        field(
            "FIELD_KIND_CHANGED: map -> message",
            "map<string, int32> a",
            "Sub a",
            Some("FIELD_KIND_CHANGED"),
        ),
        field(
            "map value FIELD_SCALAR_KIND_CHANGED: int32 -> string",
            "map<string, int32> a",
            "map<string, string> a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "map key FIELD_SCALAR_KIND_CHANGED: string -> int32",
            "map<string, int32> a",
            "map<int32, int32> a",
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        field(
            "map value in one group: int32 -> int64",
            "map<string, int32> a",
            "map<string, int64> a",
            None,
        ),
        row(
            "FIELD_ADDED is compatible",
            p3("message M { int32 a = 1; }"),
            p3("message M { int32 a = 1; string b = 2; }"),
            None,
        ),
        row(
            "FIELD_REMOVED is compatible",
            p3("message M { int32 a = 1; string b = 2; }"),
            p3("message M { int32 a = 1; }"),
            None,
        ),
        row(
            "field number reused with another type group: FIELD_SCALAR_KIND_CHANGED",
            p3("message M { int32 a = 1; }"),
            p3("message M { reserved 2; string b = 1; }"),
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        row(
            "field number reused with a message type: FIELD_KIND_CHANGED",
            p3("message M { int64 a = 1; } message N { int32 x = 1; }"),
            p3("message M { N b = 1; } message N { int32 x = 1; }"),
            Some("FIELD_KIND_CHANGED"),
        ),
        row(
            "changed field number: FIELD_REMOVED + FIELD_ADDED, compatible",
            p3("message M { int32 a = 1; }"),
            p3("message M { int32 a = 2; }"),
            None,
        ),
        row(
            "FIELD_NAMED_TYPE_CHANGED: the field names another message",
            p3("message M { A f = 1; } message A { int32 x = 1; } message B { int32 x = 1; }"),
            p3("message M { B f = 1; } message A { int32 x = 1; } message B { int32 x = 1; }"),
            Some("FIELD_NAMED_TYPE_CHANGED"),
        ),
        row(
            "MESSAGE_REMOVED",
            p3("message M { int32 a = 1; } message Gone { int32 b = 1; }"),
            p3("message M { int32 a = 1; }"),
            Some("MESSAGE_REMOVED"),
        ),
        row(
            "MESSAGE_ADDED is compatible",
            p3("message M { int32 a = 1; }"),
            p3("message M { int32 a = 1; } message New { int32 b = 1; }"),
            None,
        ),
        row(
            "MESSAGE_MOVED (reordered) is compatible",
            p3("message A { int32 a = 1; } message B { int32 b = 1; }"),
            p3("message B { int32 b = 1; } message A { int32 a = 1; }"),
            None,
        ),
        row(
            "PACKAGE_CHANGED",
            "syntax = \"proto3\";\npackage a;\nmessage M { int32 a = 1; }".into(),
            "syntax = \"proto3\";\npackage b;\nmessage M { int32 a = 1; }".into(),
            Some("PACKAGE_CHANGED"),
        ),
        row(
            "nested MESSAGE_REMOVED",
            p3("message M { message In { int32 x = 1; } In i = 1; }"),
            p3("message M { message Other { int32 x = 1; } Other i = 1; }"),
            Some("MESSAGE_REMOVED"),
        ),
        row(
            "nested message FIELD_SCALAR_KIND_CHANGED",
            p3("message M { message In { int32 x = 1; } In i = 1; }"),
            p3("message M { message In { string x = 1; } In i = 1; }"),
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        row(
            "nested message field added is compatible",
            p3("message M { message In { int32 x = 1; } In i = 1; }"),
            p3("message M { message In { int32 x = 1; int32 y = 2; } In i = 1; }"),
            None,
        ),
        row(
            "ENUM_CONST_ADDED is compatible",
            p3("enum E { A = 0; } message M { E e = 1; }"),
            p3("enum E { A = 0; B = 1; } message M { E e = 1; }"),
            None,
        ),
        row(
            "ENUM_CONST_REMOVED is compatible",
            p3("enum E { A = 0; B = 1; } message M { E e = 1; }"),
            p3("enum E { A = 0; } message M { E e = 1; }"),
            None,
        ),
        row(
            "ENUM_CONST_CHANGED (renamed) is compatible",
            p3("enum E { A = 0; B = 1; } message M { E e = 1; }"),
            p3("enum E { A = 0; C = 1; } message M { E e = 1; }"),
            None,
        ),
        row(
            "ENUM_REMOVED (unused) is compatible",
            p3("enum E { A = 0; } message M { int32 a = 1; }"),
            p3("message M { int32 a = 1; }"),
            None,
        ),
        row(
            "REQUIRED_FIELD_ADDED",
            p2("message M { optional int32 a = 1; }"),
            p2("message M { optional int32 a = 1; required int32 b = 2; }"),
            Some("REQUIRED_FIELD_ADDED"),
        ),
        row(
            "REQUIRED_FIELD_REMOVED",
            p2("message M { optional int32 a = 1; required int32 b = 2; }"),
            p2("message M { optional int32 a = 1; }"),
            Some("REQUIRED_FIELD_REMOVED"),
        ),
        row(
            "FIELD_NUMERIC_LABEL_CHANGED: proto2 optional -> required",
            p2("message M { optional int32 a = 1; }"),
            p2("message M { required int32 a = 1; }"),
            Some("FIELD_NUMERIC_LABEL_CHANGED"),
        ),
        row(
            "ONEOF_ADDED moving one field into a new oneof is compatible",
            p3("message M { int32 a = 1; int32 b = 2; }"),
            p3("message M { int32 a = 1; oneof o { int32 b = 2; string c = 3; } }"),
            None,
        ),
        row(
            "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
            p3("message M { int32 a = 1; int32 b = 2; }"),
            p3("message M { oneof o { int32 a = 1; int32 b = 2; } }"),
            Some("MULTIPLE_FIELDS_MOVED_TO_ONEOF"),
        ),
        row(
            "FIELD_MOVED_TO_EXISTING_ONEOF",
            p3("message M { int32 a = 1; oneof o { int32 b = 2; } }"),
            p3("message M { oneof o { int32 a = 1; int32 b = 2; } }"),
            Some("FIELD_MOVED_TO_EXISTING_ONEOF"),
        ),
        row(
            "FIELD_MOVED_TO_EXISTING_ONEOF: merging two oneofs",
            p3("message M { oneof x { int32 a = 1; } oneof y { int32 b = 2; } }"),
            p3("message M { oneof z { int32 a = 1; int32 b = 2; } }"),
            Some("FIELD_MOVED_TO_EXISTING_ONEOF"),
        ),
        row(
            "ONEOF_FIELD_ADDED is compatible",
            p3("message M { oneof o { int32 a = 1; } }"),
            p3("message M { oneof o { int32 a = 1; string b = 2; } }"),
            None,
        ),
        row(
            "ONEOF_FIELD_REMOVED",
            p3("message M { oneof o { int32 a = 1; string b = 2; } }"),
            p3("message M { oneof o { int32 a = 1; } }"),
            Some("ONEOF_FIELD_REMOVED"),
        ),
        row(
            "ONEOF_REMOVED with every member is compatible",
            p3("message M { int32 k = 9; oneof o { int32 a = 1; string b = 2; } }"),
            p3("message M { int32 k = 9; }"),
            None,
        ),
        row(
            "oneof renamed with identical fields is compatible",
            p3("message M { oneof old { int32 a = 1; string b = 2; } }"),
            p3("message M { oneof new { int32 a = 1; string b = 2; } }"),
            None,
        ),
        row(
            "ONEOF_FIELD_MOVED_TO_TOP_LEVEL is compatible",
            p3("message M { oneof o { int32 a = 1; string b = 2; } }"),
            p3("message M { oneof o { int32 a = 1; } string b = 2; }"),
            None,
        ),
        row(
            "type change hidden by a oneof move: FIELD_SCALAR_KIND_CHANGED",
            p3("message M { oneof o { int32 a = 1; string b = 2; } }"),
            p3("message M { oneof o { int32 a = 1; } int32 b = 2; }"),
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        row(
            "a recursive message compares without looping",
            p3("message Node { int32 v = 1; Node next = 2; }"),
            p3("message Node { int32 v = 1; Node next = 2; string tag = 3; }"),
            None,
        ),
        row(
            "a change inside a recursive message is found",
            p3("message Node { int32 v = 1; Node next = 2; }"),
            p3("message Node { sint32 v = 1; Node next = 2; }"),
            Some("FIELD_SCALAR_KIND_CHANGED"),
        ),
        with_import(
            "imported message: compatible change (field added)",
            IMPORT_V1,
            IMPORT_V2_COMPATIBLE,
            None,
        ),
        with_import(
            "imported message: FIELD_SCALAR_KIND_CHANGED makes FIELD_NAMED_TYPE_CHANGED",
            IMPORT_V1,
            IMPORT_V2_SCALAR_CHANGED,
            Some("FIELD_NAMED_TYPE_CHANGED"),
        ),
        Row {
            rule: "moving a message into an import: MESSAGE_REMOVED",
            level: Level::Backward,
            previous: p3(
                "message M { Home home = 1; } message Home { int32 id = 1; bool on = 2; }",
            ),
            candidate: p3("import \"dep.proto\";\nmessage M { dep.Home home = 1; }"),
            previous_refs: Vec::new(),
            candidate_refs: vec![("dep.proto".into(), IMPORT_V1.into())],
            fails_with: Some("MESSAGE_REMOVED"),
        },
        Row {
            rule: "moving a message out of an import is compatible",
            level: Level::Backward,
            previous: p3("import \"dep.proto\";\nmessage M { dep.Home home = 1; }"),
            candidate: p3(
                "message M { Home home = 1; } message Home { int32 id = 1; bool on = 2; }",
            ),
            previous_refs: vec![("dep.proto".into(), IMPORT_V1.into())],
            candidate_refs: Vec::new(),
            fails_with: None,
        },
    ];
    // Directions: FORWARD swaps writer and reader, FULL needs both.
    let mut forward = row(
        "FORWARD: ONEOF_FIELD_ADDED read by the previous is ONEOF_FIELD_REMOVED",
        p3("message M { oneof o { int32 a = 1; } }"),
        p3("message M { oneof o { int32 a = 1; string b = 2; } }"),
        Some("ONEOF_FIELD_REMOVED"),
    );
    forward.level = Level::Forward;
    rows.push(forward);
    let mut forward_ok = row(
        "FORWARD: removing an optional field is compatible",
        p3("message M { int32 a = 1; string b = 2; }"),
        p3("message M { int32 a = 1; }"),
        None,
    );
    forward_ok.level = Level::Forward;
    rows.push(forward_ok);
    let mut full = row(
        "FULL: REQUIRED_FIELD_REMOVED fails both ways",
        p2("message M { required int32 a = 1; optional int32 b = 2; }"),
        p2("message M { optional int32 b = 2; }"),
        Some("REQUIRED_FIELD_REMOVED"),
    );
    full.level = Level::Full;
    rows.push(full);
    rows
}

#[test]
fn protobuf_verdicts_follow_the_confluent_checker_rules() {
    let rows = rows();
    assert!(rows.len() >= 40, "the table holds {} rows", rows.len());
    let mut wrong = Vec::new();
    for r in &rows {
        let found = check(
            SchemaText {
                schema_type: SchemaType::Protobuf,
                text: &r.previous,
                references: &r.previous_refs,
            },
            SchemaText {
                schema_type: SchemaType::Protobuf,
                text: &r.candidate,
                references: &r.candidate_refs,
            },
            r.level,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", r.rule))
        .incompatibilities;
        let ok = match r.fails_with {
            None => found.is_empty(),
            Some(tag) => found.iter().any(|m| m.contains(&format!("({tag})"))),
        };
        if !ok {
            wrong.push(format!("{} ({}): got {found:?}", r.rule, r.level));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn full_lists_each_direction_once_with_its_prefix() {
    let prev = p2("message M { required int32 a = 1; optional int32 b = 2; }");
    let cand = p2("message M { optional int32 b = 2; required int64 c = 3; }");
    let t = |text| SchemaText {
        schema_type: SchemaType::Protobuf,
        text,
        references: &[],
    };
    let found = check(t(&prev), t(&cand), Level::Full)
        .unwrap()
        .incompatibilities;
    assert_eq!(
        found,
        vec![
            "BACKWARD: t.M field 1 (a) is required by the writer and absent from the reader (REQUIRED_FIELD_REMOVED)",
            "BACKWARD: t.M.c is required but absent from the writer (REQUIRED_FIELD_ADDED)",
            "FORWARD: t.M.a is required but absent from the writer (REQUIRED_FIELD_ADDED)",
            "FORWARD: t.M field 3 (c) is required by the writer and absent from the reader (REQUIRED_FIELD_REMOVED)",
        ]
    );
}
