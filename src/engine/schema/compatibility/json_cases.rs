//! The JSON Schema verdict table: each row is one rule of the Confluent registry's JSON
//! Schema checker (strict policy): the difference type it reports (or the compatible
//! change it allows), a previous and a candidate schema, and the verdict at BACKWARD
//! (or the level named). An incompatible row names the difference type that must be
//! listed.

use super::{Level, SchemaText, check};
use crate::engine::schema::registry::SchemaType;

struct Row {
    rule: &'static str,
    level: Level,
    previous: &'static str,
    candidate: &'static str,
    references: Vec<(String, String)>,
    fails_with: Option<&'static str>,
}

fn b(
    rule: &'static str,
    previous: &'static str,
    candidate: &'static str,
    fails_with: Option<&'static str>,
) -> Row {
    Row {
        rule,
        level: Level::Backward,
        previous,
        candidate,
        references: Vec::new(),
        fails_with,
    }
}

fn at(level: Level, mut r: Row) -> Row {
    r.level = level;
    r
}

const OPEN: &str = r#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
const CLOSED: &str =
    r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#;

/// Long because it is the table of cases, one row each.
fn rows() -> Vec<Row> {
    vec![
        b("no change", OPEN, OPEN, None),
        b(
            "DESCRIPTION_CHANGED and TITLE_CHANGED are compatible",
            r#"{"type":"string","title":"x","description":"old"}"#,
            r#"{"type":"string","title":"y","description":"new"}"#,
            None,
        ),
        b(
            "TYPE_CHANGED: string -> integer",
            r#"{"type":"string"}"#,
            r#"{"type":"integer"}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "TYPE_CHANGED: object -> array",
            r#"{"type":"object"}"#,
            r#"{"type":"array"}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "TYPE_EXTENDED: integer -> number",
            r#"{"type":"integer"}"#,
            r#"{"type":"number"}"#,
            None,
        ),
        b(
            "TYPE_NARROWED: number -> integer",
            r#"{"type":"number"}"#,
            r#"{"type":"integer"}"#,
            Some("TYPE_NARROWED"),
        ),
        b(
            "SUM_TYPE_EXTENDED: string -> [string, null]",
            r#"{"type":"string"}"#,
            r#"{"type":["string","null"]}"#,
            None,
        ),
        b(
            "a union read by one of its branches: [string, null] -> string is TYPE_CHANGED",
            r#"{"type":["string","null"]}"#,
            r#"{"type":"string"}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "SUM_TYPE_EXTENDED: a type list grows",
            r#"{"type":["string","null"]}"#,
            r#"{"type":["string","null","integer"]}"#,
            None,
        ),
        b(
            "SUM_TYPE_NARROWED: a type list shrinks",
            r#"{"type":["string","integer","null"]}"#,
            r#"{"type":["string","null"]}"#,
            Some("SUM_TYPE_NARROWED"),
        ),
        b(
            "the empty schema read as a string: TYPE_CHANGED",
            r#"{}"#,
            r#"{"type":"string"}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "a reader of true/{} accepts anything",
            r#"{"type":"string","maxLength":3}"#,
            r#"true"#,
            None,
        ),
        b(
            "a writer of false wrote nothing",
            r#"false"#,
            r#"{"type":"string"}"#,
            None,
        ),
        b(
            "MAX_LENGTH_ADDED",
            r#"{"type":"string"}"#,
            r#"{"type":"string","maxLength":10}"#,
            Some("MAX_LENGTH_ADDED"),
        ),
        b(
            "MAX_LENGTH_INCREASED is compatible",
            r#"{"type":"string","maxLength":5}"#,
            r#"{"type":"string","maxLength":10}"#,
            None,
        ),
        b(
            "MAX_LENGTH_DECREASED",
            r#"{"type":"string","maxLength":10}"#,
            r#"{"type":"string","maxLength":5}"#,
            Some("MAX_LENGTH_DECREASED"),
        ),
        b(
            "MIN_LENGTH_INCREASED",
            r#"{"type":"string","minLength":1}"#,
            r#"{"type":"string","minLength":2}"#,
            Some("MIN_LENGTH_INCREASED"),
        ),
        b(
            "MIN_LENGTH_REMOVED is compatible",
            r#"{"type":"string","minLength":1}"#,
            r#"{"type":"string"}"#,
            None,
        ),
        b(
            "PATTERN_ADDED",
            r#"{"type":"string"}"#,
            r#"{"type":"string","pattern":"^a"}"#,
            Some("PATTERN_ADDED"),
        ),
        b(
            "PATTERN_REMOVED is compatible",
            r#"{"type":"string","pattern":"^a"}"#,
            r#"{"type":"string"}"#,
            None,
        ),
        b(
            "PATTERN_CHANGED",
            r#"{"type":"string","pattern":"^a"}"#,
            r#"{"type":"string","pattern":"^b"}"#,
            Some("PATTERN_CHANGED"),
        ),
        b(
            "MAXIMUM_DECREASED",
            r#"{"type":"number","maximum":10}"#,
            r#"{"type":"number","maximum":5}"#,
            Some("MAXIMUM_DECREASED"),
        ),
        b(
            "MAXIMUM_INCREASED is compatible",
            r#"{"type":"number","maximum":5}"#,
            r#"{"type":"number","maximum":10}"#,
            None,
        ),
        b(
            "MINIMUM_ADDED",
            r#"{"type":"integer"}"#,
            r#"{"type":"integer","minimum":0}"#,
            Some("MINIMUM_ADDED"),
        ),
        b(
            "MINIMUM_INCREASED",
            r#"{"type":"integer","minimum":0}"#,
            r#"{"type":"integer","minimum":1}"#,
            Some("MINIMUM_INCREASED"),
        ),
        b(
            "EXCLUSIVE_MINIMUM_REMOVED is compatible",
            r#"{"type":"number","exclusiveMinimum":0}"#,
            r#"{"type":"number"}"#,
            None,
        ),
        b(
            "EXCLUSIVE_MAXIMUM_ADDED",
            r#"{"type":"number"}"#,
            r#"{"type":"number","exclusiveMaximum":100}"#,
            Some("EXCLUSIVE_MAXIMUM_ADDED"),
        ),
        b(
            "MULTIPLE_OF_EXPANDED: 2 -> 4",
            r#"{"type":"integer","multipleOf":2}"#,
            r#"{"type":"integer","multipleOf":4}"#,
            Some("MULTIPLE_OF_EXPANDED"),
        ),
        b(
            "MULTIPLE_OF_REDUCED is compatible: 4 -> 2",
            r#"{"type":"integer","multipleOf":4}"#,
            r#"{"type":"integer","multipleOf":2}"#,
            None,
        ),
        b(
            "ENUM_ARRAY_EXTENDED is compatible",
            r#"{"enum":["a","b"]}"#,
            r#"{"enum":["a","b","c"]}"#,
            None,
        ),
        b(
            "ENUM_ARRAY_NARROWED",
            r#"{"enum":["a","b","c"]}"#,
            r#"{"enum":["a","b"]}"#,
            Some("ENUM_ARRAY_NARROWED"),
        ),
        b(
            "ENUM_ARRAY_CHANGED",
            r#"{"enum":["a","b"]}"#,
            r#"{"enum":["a","c"]}"#,
            Some("ENUM_ARRAY_CHANGED"),
        ),
        b(
            "an enum inside a typed schema narrows: the implied allOf [string, enum] loses its match (COMBINED_TYPE_SUBSCHEMAS_CHANGED)",
            r#"{"type":"string","enum":["a","b"]}"#,
            r#"{"type":"string","enum":["a"]}"#,
            Some("COMBINED_TYPE_SUBSCHEMAS_CHANGED"),
        ),
        b(
            "an enum inside a typed schema may grow",
            r#"{"type":"string","enum":["a","b"]}"#,
            r#"{"type":"string","enum":["a","b","c"]}"#,
            None,
        ),
        b(
            "const changed: ENUM_ARRAY_CHANGED",
            r#"{"const":1}"#,
            r#"{"const":2}"#,
            Some("ENUM_ARRAY_CHANGED"),
        ),
        b(
            "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (the writer may have sent any value)",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#,
            Some("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"),
        ),
        b(
            "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL is compatible",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{}}}"#,
            None,
        ),
        b(
            "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}"#,
            Some("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"),
        ),
        b(
            "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL is compatible",
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#,
            OPEN,
            None,
        ),
        b(
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible",
            CLOSED,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}"#,
            None,
        ),
        b(
            "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
            CLOSED,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}"#,
            Some("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"),
        ),
        b(
            "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible",
            CLOSED,
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","default":0}},"required":["b"],"additionalProperties":false}"#,
            None,
        ),
        b(
            "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}"#,
            CLOSED,
            Some("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
        ),
        b(
            "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL is compatible",
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":false},"additionalProperties":false}"#,
            CLOSED,
            None,
        ),
        b(
            "ADDITIONAL_PROPERTIES_REMOVED: open -> closed",
            OPEN,
            CLOSED,
            Some("ADDITIONAL_PROPERTIES_REMOVED"),
        ),
        b(
            "ADDITIONAL_PROPERTIES_ADDED is compatible: closed -> open",
            CLOSED,
            OPEN,
            None,
        ),
        b(
            "ADDITIONAL_PROPERTIES_NARROWED: open -> a schema",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}"#,
            Some("ADDITIONAL_PROPERTIES_NARROWED"),
        ),
        b(
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL is compatible",
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#,
            r#"{"type":"object","properties":{"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#,
            None,
        ),
        b(
            "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#,
            r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}"#,
            Some("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"),
        ),
        b(
            "a patternProperties schema covers a removed property",
            r#"{"type":"object","properties":{"x_a":{"type":"string"}},"patternProperties":{"^x_":{"type":"string"}}}"#,
            r#"{"type":"object","patternProperties":{"^x_":{"type":"string"}}}"#,
            None,
        ),
        b(
            "REQUIRED_ATTRIBUTE_ADDED: an existing property becomes required",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#,
            Some("REQUIRED_ATTRIBUTE_ADDED"),
        ),
        b(
            "REQUIRED_ATTRIBUTE_REMOVED is compatible",
            r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#,
            OPEN,
            None,
        ),
        b(
            "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED is compatible",
            OPEN,
            r#"{"type":"object","properties":{"a":{"type":"string","default":""}},"required":["a"]}"#,
            None,
        ),
        b(
            "a nested property's TYPE_CHANGED",
            r#"{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"integer"}}}}}"#,
            r#"{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"string"}}}}}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "MAX_PROPERTIES_DECREASED",
            r#"{"type":"object","maxProperties":5}"#,
            r#"{"type":"object","maxProperties":3}"#,
            Some("MAX_PROPERTIES_DECREASED"),
        ),
        b(
            "DEPENDENCY_ARRAY_EXTENDED",
            r#"{"type":"object","dependencies":{"a":["b"]}}"#,
            r#"{"type":"object","dependencies":{"a":["b","c"]}}"#,
            Some("DEPENDENCY_ARRAY_EXTENDED"),
        ),
        b(
            "DEPENDENCY_ARRAY_REMOVED is compatible",
            r#"{"type":"object","dependencies":{"a":["b"]}}"#,
            r#"{"type":"object"}"#,
            None,
        ),
        b(
            "array items TYPE_CHANGED",
            r#"{"type":"array","items":{"type":"string"}}"#,
            r#"{"type":"array","items":{"type":"integer"}}"#,
            Some("TYPE_CHANGED"),
        ),
        b(
            "array items SUM_TYPE_EXTENDED is compatible",
            r#"{"type":"array","items":{"type":"string"}}"#,
            r#"{"type":"array","items":{"type":["string","null"]}}"#,
            None,
        ),
        b(
            "SCHEMA_ADDED: items constrained where the writer had none",
            r#"{"type":"array"}"#,
            r#"{"type":"array","items":{"type":"string"}}"#,
            Some("SCHEMA_ADDED"),
        ),
        b(
            "MIN_ITEMS_INCREASED",
            r#"{"type":"array","minItems":1}"#,
            r#"{"type":"array","minItems":2}"#,
            Some("MIN_ITEMS_INCREASED"),
        ),
        b(
            "MAX_ITEMS_REMOVED is compatible",
            r#"{"type":"array","maxItems":3}"#,
            r#"{"type":"array"}"#,
            None,
        ),
        b(
            "UNIQUE_ITEMS_ADDED",
            r#"{"type":"array"}"#,
            r#"{"type":"array","uniqueItems":true}"#,
            Some("UNIQUE_ITEMS_ADDED"),
        ),
        b(
            "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL is compatible",
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false}"#,
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}"#,
            None,
        ),
        b(
            "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}]}"#,
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}]}"#,
            Some("ITEM_ADDED_TO_OPEN_CONTENT_MODEL"),
        ),
        b(
            "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}"#,
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false}"#,
            Some("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
        ),
        b(
            "ADDITIONAL_ITEMS_REMOVED: additionalItems false read without tuple items too",
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"string"}}"#,
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"string"},"additionalItems":false}"#,
            Some("ADDITIONAL_ITEMS_REMOVED"),
        ),
        b(
            "oneOf SUM_TYPE_EXTENDED is compatible",
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            r#"{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}"#,
            None,
        ),
        b(
            "oneOf SUM_TYPE_NARROWED",
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            r#"{"oneOf":[{"type":"string"}]}"#,
            Some("SUM_TYPE_NARROWED"),
        ),
        b(
            "COMBINED_TYPE_SUBSCHEMAS_CHANGED: a branch no longer matched",
            r#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#,
            r#"{"anyOf":[{"type":"string"},{"type":"boolean"}]}"#,
            Some("COMBINED_TYPE_SUBSCHEMAS_CHANGED"),
        ),
        b(
            "allOf PRODUCT_TYPE_EXTENDED",
            r#"{"allOf":[{"type":"object"}]}"#,
            r#"{"allOf":[{"type":"object"},{"required":["a"]}]}"#,
            Some("PRODUCT_TYPE_EXTENDED"),
        ),
        b(
            "allOf PRODUCT_TYPE_NARROWED is compatible",
            r#"{"allOf":[{"type":"object"},{"required":["a"]}]}"#,
            r#"{"allOf":[{"type":"object"}]}"#,
            None,
        ),
        b(
            "COMBINED_TYPE_CHANGED: anyOf -> oneOf",
            r#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#,
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            Some("COMBINED_TYPE_CHANGED"),
        ),
        b(
            "COMBINED_TYPE_EXTENDED is compatible: oneOf -> anyOf",
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            r#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#,
            None,
        ),
        b(
            "a plain writer read by a oneOf with a matching branch: SUM_TYPE_EXTENDED",
            r#"{"type":"string"}"#,
            r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
            None,
        ),
        b(
            "NOT_TYPE_EXTENDED: the reader excludes more",
            r#"{"not":{"type":"string"}}"#,
            r#"{"not":{"type":["string","integer"]}}"#,
            Some("NOT_TYPE_EXTENDED"),
        ),
        b(
            "NOT_TYPE_NARROWED is compatible: the reader excludes less",
            r#"{"not":{"type":["string","integer"]}}"#,
            r#"{"not":{"type":"string"}}"#,
            None,
        ),
        b(
            "a local $ref is followed: TYPE_CHANGED inside a definition",
            r##"{"type":"object","properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"integer"}}}"##,
            r##"{"type":"object","properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"string"}}}"##,
            Some("TYPE_CHANGED"),
        ),
        b(
            "a $ref and its inline form are the same schema",
            r##"{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"integer"}}}"##,
            r#"{"type":"object","properties":{"p":{"type":"integer"}}}"#,
            None,
        ),
        b(
            "a recursive $ref compares without looping",
            r##"{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}}"##,
            r##"{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}},"additionalProperties":true}"##,
            None,
        ),
        Row {
            rule: "a $ref into a schema reference is followed: MAXIMUM_DECREASED there",
            level: Level::Backward,
            previous: r#"{"type":"object","properties":{"p":{"$ref":"price.json"}}}"#,
            candidate: r#"{"type":"object","properties":{"p":{"$ref":"price2.json"}}}"#,
            references: vec![
                (
                    "price.json".into(),
                    r#"{"type":"number","maximum":100}"#.into(),
                ),
                (
                    "price2.json".into(),
                    r#"{"type":"number","maximum":10}"#.into(),
                ),
            ],
            fails_with: Some("MAXIMUM_DECREASED"),
        },
        at(
            Level::Forward,
            b(
                "FORWARD: a property added to an open model is removed for the old reader (compatible)",
                OPEN,
                r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#,
                None,
            ),
        ),
        at(
            Level::Forward,
            b(
                "FORWARD: ENUM_ARRAY_EXTENDED read by the previous is ENUM_ARRAY_NARROWED",
                r#"{"enum":["a","b"]}"#,
                r#"{"enum":["a","b","c"]}"#,
                Some("ENUM_ARRAY_NARROWED"),
            ),
        ),
        at(
            Level::Full,
            b(
                "FULL: MAX_LENGTH_INCREASED fails forward",
                r#"{"type":"string","maxLength":5}"#,
                r#"{"type":"string","maxLength":10}"#,
                Some("MAX_LENGTH_DECREASED"),
            ),
        ),
    ]
}

#[test]
fn json_schema_verdicts_follow_the_confluent_checker_rules() {
    let rows = rows();
    assert!(rows.len() >= 40, "the table holds {} rows", rows.len());
    let mut wrong = Vec::new();
    for r in &rows {
        let t = |text| SchemaText {
            schema_type: SchemaType::Json,
            text,
            references: &r.references,
        };
        let found = check(t(r.previous), t(r.candidate), r.level)
            .unwrap_or_else(|e| panic!("{}: {e}", r.rule))
            .incompatibilities;
        let ok = match r.fails_with {
            None => found.is_empty(),
            Some(tag) => found.iter().any(|m| m.ends_with(&format!("({tag})"))),
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
fn json_schema_entries_name_the_path_and_direction() {
    let t = |text| SchemaText {
        schema_type: SchemaType::Json,
        text,
        references: &[],
    };
    let prev = r#"{"type":"object","properties":{"a":{"type":"string","maxLength":10}},"additionalProperties":false}"#;
    let cand = r#"{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"additionalProperties":false}"#;
    let found = check(t(prev), t(cand), Level::Full)
        .unwrap()
        .incompatibilities;
    assert_eq!(
        found,
        vec![
            "BACKWARD: #/properties/a/maxLength: maxLength fell from 10 to 5 (MAX_LENGTH_DECREASED)"
        ]
    );
}

#[test]
fn an_unresolvable_ref_or_invalid_schema_is_an_error_not_a_verdict() {
    let t = |text| SchemaText {
        schema_type: SchemaType::Json,
        text,
        references: &[],
    };
    let ok = r#"{"type":"string"}"#;
    let e = check(t(ok), t(r#"{"type":"wat"}"#), Level::Backward).unwrap_err();
    assert!(
        e.to_string().contains("candidate") || e.to_string().contains("wat"),
        "{e}"
    );
    let e = check(
        t(ok),
        t(r##"{"type":"object","properties":{"p":{"$ref":"#/definitions/missing"}}}"##),
        Level::Backward,
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
}

#[test]
fn a_ref_chain_is_followed_deep_and_refused_past_the_bound_not_overflowed() {
    // n definitions, each holding the next: deeper than any one document can nest.
    let chain = |n: usize, leaf: &str| {
        let mut defs = serde_json::Map::new();
        for i in 0..n {
            let next = if i + 1 == n {
                serde_json::json!({ "type": leaf })
            } else {
                serde_json::json!({ "type": "object", "properties": { "x": { "$ref": format!("#/definitions/d{}", i + 1) } } })
            };
            defs.insert(format!("d{i}"), next);
        }
        serde_json::json!({ "$ref": "#/definitions/d0", "definitions": defs }).to_string()
    };
    let t = |text| SchemaText {
        schema_type: SchemaType::Json,
        text,
        references: &[],
    };
    let (a, b) = (chain(400, "integer"), chain(400, "string"));
    let found = check(t(&a), t(&b), Level::Backward)
        .unwrap()
        .incompatibilities;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("(TYPE_CHANGED)"), "{found:?}");
    let (a, b) = (chain(1500, "integer"), chain(1500, "string"));
    let e = check(t(&a), t(&b), Level::Backward).unwrap_err();
    assert!(e.to_string().contains("nested deeper than 1000"), "{e}");
}
