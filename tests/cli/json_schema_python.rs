//! Our JSON Schema validator against Python's `jsonschema` (the test venv's, 4.26): every
//! schema below, in every draft it belongs to, over every value of a shared pool, must get
//! the same verdict (valid or not) from both.
//!
//! Left out on purpose, because the two differ by design: `format` in drafts 4-7 (we
//! assert it as the `jsonschema` crate did; Python only annotates without a format
//! checker), `dependencies` after draft 7 (we keep applying it, as the crate did),
//! `multipleOf` with decimals that binary floats cannot divide exactly (we decide on the
//! decimals: 0.3 is a multiple of 0.1; Python's float division says no) and `\d`/`\w`
//! over non-ASCII text (ECMA-262 classes are ASCII; Python's are Unicode).

use serde_json::{Value, json};

use krabka_streams::engine::schema::json_schema::JsonSchema;

use crate::support::venv_python;

const DRAFTS: [&str; 5] = [
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// Schemas with the first and last draft (indexes into [`DRAFTS`]) they are written for.
fn schemas() -> Vec<(usize, usize, Value)> {
    let all = |s: Value| (0, 4, s);
    let from = |d: usize, s: Value| (d, 4, s);
    let upto = |d: usize, s: Value| (0, d, s);
    vec![
        all(json!({})),
        all(json!({"type": "integer"})),
        all(json!({"type": "number"})),
        all(json!({"type": ["string", "null"]})),
        all(json!({"type": ["array", "object"]})),
        all(json!({"type": "boolean"})),
        all(json!({"enum": [1, "a", null, [1], {"a": 1}]})),
        from(1, json!({"const": 1})),
        from(1, json!({"const": {"a": 1}})),
        from(1, json!({"const": [1, 1]})),
        all(json!({"multipleOf": 2})),
        all(json!({"multipleOf": 0.5})),
        all(json!({"multipleOf": 2.5})),
        all(json!({"minimum": 1, "maximum": 3})),
        from(1, json!({"exclusiveMinimum": 0, "exclusiveMaximum": 10})),
        upto(
            0,
            json!({"minimum": 1, "exclusiveMinimum": true, "maximum": 3, "exclusiveMaximum": true}),
        ),
        all(json!({"minLength": 2, "maxLength": 3})),
        all(json!({"pattern": "^a"})),
        all(json!({"pattern": "b+c?$"})),
        all(json!({"pattern": "^[a-c]{2,}$"})),
        all(json!({"minItems": 1, "maxItems": 2})),
        all(json!({"uniqueItems": true})),
        all(json!({"items": {"type": "integer"}})),
        upto(
            3,
            json!({"items": [{"type": "integer"}], "additionalItems": false}),
        ),
        upto(
            3,
            json!({"items": [{}, {"type": "string"}], "additionalItems": {"type": "integer"}}),
        ),
        from(
            4,
            json!({"prefixItems": [{"type": "integer"}], "items": false}),
        ),
        from(
            4,
            json!({"prefixItems": [{}, {"type": "string"}], "items": {"type": "integer"}}),
        ),
        from(1, json!({"contains": {"type": "string"}})),
        from(
            3,
            json!({"contains": {"type": "integer"}, "minContains": 2}),
        ),
        from(
            3,
            json!({"contains": {"type": "integer"}, "maxContains": 1}),
        ),
        from(3, json!({"contains": {"const": 1}, "minContains": 0})),
        all(json!({"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}})),
        all(json!({"patternProperties": {"^x-": {"type": "integer"}, "o": {"type": "string"}}})),
        all(json!({"properties": {"a": {}}, "additionalProperties": false})),
        all(
            json!({"properties": {"a": {}}, "patternProperties": {"^f": {}}, "additionalProperties": {"type": "integer"}}),
        ),
        all(json!({"required": ["a"]})),
        all(json!({"required": ["a", "b"]})),
        from(1, json!({"propertyNames": {"maxLength": 1}})),
        from(1, json!({"propertyNames": false})),
        all(json!({"minProperties": 1, "maxProperties": 1})),
        upto(2, json!({"dependencies": {"a": ["b"]}})),
        upto(
            2,
            json!({"dependencies": {"a": {"required": ["b"]}, "b": {"properties": {"a": {"type": "string"}}}}}),
        ),
        from(3, json!({"dependentRequired": {"a": ["b"]}})),
        from(3, json!({"dependentSchemas": {"a": {"required": ["b"]}}})),
        all(json!({"allOf": [{"type": "number"}, {"minimum": 2}]})),
        all(json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 2}]})),
        all(json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]})),
        all(json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})),
        all(json!({"not": {"type": ["object", "array"]}})),
        from(
            2,
            json!({"if": {"type": "integer"}, "then": {"minimum": 1}, "else": {"type": "string"}}),
        ),
        from(
            2,
            json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        ),
        from(2, json!({"else": {"type": "null"}})),
        from(1, json!({"items": false})),
        from(1, json!({"properties": {"a": false}})),
        from(1, json!({"anyOf": [false, true]})),
        from(1, json!({"not": true})),
        upto(
            2,
            json!({"definitions": {"i": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/i"}}}),
        ),
        upto(
            2,
            json!({"definitions": {"i": {"type": "integer"}}, "$ref": "#/definitions/i", "type": "string"}),
        ),
        from(
            3,
            json!({"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i", "minimum": 2}),
        ),
        from(
            3,
            json!({"$defs": {"n": {"type": ["object", "integer"], "additionalProperties": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}),
        ),
        all(json!({"properties": {"a": {"$ref": "#"}}, "type": "object", "maxProperties": 2})),
        from(
            1,
            json!({"$id": "http://example.com/root", "definitions": {"s": {"$id": "s.json", "type": "string"}}, "items": {"$ref": "s.json"}}),
        ),
        from(
            3,
            json!({"$defs": {"a": {"$anchor": "A", "type": "integer"}}, "items": {"$ref": "#A"}}),
        ),
        from(
            3,
            json!({"properties": {"a": true}, "unevaluatedProperties": false}),
        ),
        from(
            3,
            json!({"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}),
        ),
        from(
            3,
            json!({"anyOf": [{"properties": {"a": true}}, {"properties": {"b": true}, "required": ["b"]}], "unevaluatedProperties": false}),
        ),
        from(
            3,
            json!({"if": {"required": ["a"]}, "then": {"properties": {"b": true}}, "else": {"properties": {"x-y": true}}, "unevaluatedProperties": {"type": "string"}}),
        ),
        from(
            3,
            json!({"allOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"properties": {"foo": true}}}, "unevaluatedProperties": false}),
        ),
        from(3, json!({"unevaluatedItems": false})),
        (
            3,
            3,
            json!({"allOf": [{"items": [true]}], "unevaluatedItems": false}),
        ),
        from(
            4,
            json!({"allOf": [{"prefixItems": [true]}], "unevaluatedItems": false}),
        ),
        from(
            4,
            json!({"prefixItems": [true], "unevaluatedItems": {"type": "string"}}),
        ),
        from(
            4,
            json!({"contains": {"type": "string"}, "unevaluatedItems": false}),
        ),
        (
            3,
            3,
            json!({"$recursiveAnchor": true, "type": ["object", "integer"], "additionalProperties": {"$recursiveRef": "#"}}),
        ),
        from(
            4,
            json!({"$dynamicAnchor": "n", "type": ["object", "integer"], "additionalProperties": {"$dynamicRef": "#n"}}),
        ),
        from(3, json!({"format": "date"})),
        from(3, json!({"format": "email", "type": "string"})),
    ]
}

fn pool() -> Vec<Value> {
    serde_json::from_str(
        r#"[null, true, false, 0, 1, -1, 1.0, 2.5, 3, 10, 100, -0.5, 5.0, 7.5,
            "", "a", "abc", "héllo", "aaaa", "bbc", "💩💩", "2024-02-29",
            [], [1], [1, 2], [1, 1], [1, "a"], ["a", "b", "c"], [1, 1.0], [null, "a"],
            [{"a": 1}, {"a": 1.0}], [[1], [1]], [1, 2, 3, 4], ["a", 1, 2],
            {}, {"a": 1}, {"a": "x"}, {"a": 1, "b": 2}, {"b": 2}, {"a": 1, "b": "x"},
            {"foo": "bar", "x-y": 1}, {"a": {"a": {"a": 1}}}, {"a": {"b": "c"}},
            {"x-a": 1, "o": "s"}, {"a": "x", "b": "y", "c": "z"}]"#,
    )
    .unwrap()
}

const PYTHON: &str = r#"
import json, sys
import jsonschema
cases = json.load(open(sys.argv[1]))
out = []
for case in cases:
    cls = jsonschema.validators.validator_for(case["schema"])
    v = cls(case["schema"])
    out.append([v.is_valid(i) for i in case["values"]])
print(json.dumps(out))
"#;

#[test]
fn our_verdicts_equal_python_jsonschema_over_every_draft() {
    let pool = pool();
    let mut cases = Vec::new();
    for (first, last, schema) in schemas() {
        for draft in &DRAFTS[first..=last] {
            let mut schema = schema.clone();
            schema["$schema"] = json!(draft);
            cases.push(json!({"schema": schema, "values": pool}));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let python = venv_python(PYTHON, &[&file]);
    let mut pairs = 0;
    let mut differences = Vec::new();
    // `JSON_SCHEMA_VERDICTS_OUT=FILE`: every pair's verdict and message, one a line, to
    // compare with another implementation's.
    let mut dump = String::new();
    for (case, verdicts) in cases.iter().zip(python.as_array().unwrap()) {
        let text = case["schema"].to_string();
        let ours = JsonSchema::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        for (value, theirs) in pool.iter().zip(verdicts.as_array().unwrap()) {
            pairs += 1;
            let verdict = ours.validate(value);
            let valid = verdict.is_ok();
            let message = verdict.err().map_or("OK".to_string(), |e| e.to_string());
            dump.push_str(&format!("{}\t{value}\t{message}\n", case["schema"]));
            if Some(valid) != theirs.as_bool() {
                differences.push(format!(
                    "{text} over {value}: ours {valid}, python {theirs}"
                ));
            }
        }
    }
    if let Some(path) = std::env::var_os("JSON_SCHEMA_VERDICTS_OUT") {
        std::fs::write(path, dump).unwrap();
    }
    eprintln!("{pairs} (schema, value) pairs compared with Python's jsonschema");
    assert!(pairs >= 5_000, "{pairs} pairs");
    assert!(
        differences.is_empty(),
        "{} of {pairs} verdicts differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
