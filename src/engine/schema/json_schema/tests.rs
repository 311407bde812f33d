//! The JSON Schema validator by keyword group, its errors and its limits.

use super::*;
use serde_json::json;

#[test]
fn the_draft_comes_from_dollar_schema_and_defaults_to_2020_12() {
    assert_eq!(draft_of(&json!({})), Draft::Draft202012);
    assert_eq!(
        draft_of(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
        Draft::Draft7
    );
    assert_eq!(
        draft_of(&json!({"$schema": "http://json-schema.org/draft-04/schema#"})),
        Draft::Draft4
    );
}

#[test]
fn validation_failures_name_the_first_cause() {
    let s = JsonSchema::parse(
        r#"{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}"#,
    )
    .unwrap();
    s.validate(&json!({"id": "a"})).unwrap();
    let e = s.validate(&json!({"id": 5})).unwrap_err().to_string();
    assert!(e.starts_with("JSON Schema validation failed: "), "{e}");
    assert!(e.contains("/id"), "{e}");
}

#[test]
fn references_resolve_by_name_without_network_access() {
    let common = r#"{"type":"object","required":["iso"],"properties":{"iso":{"type":"string"}}}"#;
    let s = JsonSchema::parse_with_references(
        r#"{"type":"object","properties":{"country":{"$ref":"common.json"}}}"#,
        &[("common.json".into(), common.into())],
    )
    .unwrap();
    s.validate(&json!({"country": {"iso": "NL"}})).unwrap();
    assert!(s.validate(&json!({"country": {}})).is_err());
}

#[test]
fn invalid_schemas_are_refused() {
    assert!(
        JsonSchema::parse("{")
            .unwrap_err()
            .to_string()
            .starts_with("invalid JSON Schema: ")
    );
    assert!(JsonSchema::parse(r#"{"type": 5}"#).is_err());
    assert_eq!(
        JsonSchema::parse("5").unwrap_err().to_string(),
        "invalid JSON Schema"
    );
}

#[cfg(test)]
mod hostile_tests {
    use super::*;

    fn nested_properties(depth: usize) -> String {
        let mut text = String::from(r#"{"type":"integer"}"#);
        for _ in 0..depth {
            text = format!(r#"{{"type":"object","properties":{{"a":{text}}}}}"#);
        }
        text
    }

    #[test]
    fn a_schema_nested_past_the_json_depth_limit_is_a_clear_error() {
        let err = JsonSchema::parse(&nested_properties(5_000))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("invalid JSON Schema"), "{err}");
        assert!(err.contains("recursion limit"), "{err}");
    }

    #[test]
    fn the_deepest_schema_json_allows_compiles_and_validates_on_a_small_stack() {
        // 60 levels of properties are 120 JSON levels, under serde_json's 128.
        let schema = JsonSchema::parse(&nested_properties(60)).unwrap();
        let mut value = serde_json::json!(1);
        for _ in 0..60 {
            value = serde_json::json!({ "a": value });
        }
        schema.validate(&value).unwrap();
    }

    #[test]
    fn a_deeply_nested_value_is_a_decode_error() {
        let body = "[".repeat(100_000) + &"]".repeat(100_000);
        let err = decode_body(body.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("recursion limit"), "{err}");
    }
}

#[cfg(test)]
mod keywords {
    use super::*;
    use serde_json::json;

    const D4: &str = "http://json-schema.org/draft-04/schema#";
    const D6: &str = "http://json-schema.org/draft-06/schema#";
    const D7: &str = "http://json-schema.org/draft-07/schema#";
    const D2019: &str = "https://json-schema.org/draft/2019-09/schema";

    fn schema(s: Value) -> JsonSchema {
        JsonSchema::parse(&s.to_string()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn with(draft: &str, mut s: Value) -> JsonSchema {
        s["$schema"] = json!(draft);
        schema(s)
    }

    fn ok(s: &JsonSchema, v: Value) -> bool {
        s.validate(&v).is_ok()
    }

    fn error(s: &JsonSchema, v: Value) -> String {
        s.validate(&v).unwrap_err().to_string()
    }

    #[test]
    fn type_counts_integers_by_value_after_draft_4_and_by_spelling_in_it() {
        let s = schema(json!({"type": "integer"}));
        assert!(ok(&s, json!(1)) && ok(&s, json!(1.0)) && !ok(&s, json!(1.5)));
        assert!(!ok(&s, json!("1")) && !ok(&s, json!(true)));
        let d4 = with(D4, json!({"type": "integer"}));
        assert!(ok(&d4, json!(1)) && !ok(&d4, json!(1.0)));
        let many = schema(json!({"type": ["string", "null"]}));
        assert!(ok(&many, json!(null)) && ok(&many, json!("a")) && !ok(&many, json!(1)));
        assert_eq!(
            error(&many, json!(1)),
            r#"JSON Schema validation failed: 1 is not of types "null", "string""#
        );
    }

    #[test]
    fn enum_and_const_compare_numbers_by_value() {
        let e = schema(json!({"enum": [1, "a", {"x": [1]}]}));
        assert!(ok(&e, json!(1.0)) && ok(&e, json!({"x": [1.0]})) && !ok(&e, json!("b")));
        let c = schema(json!({"const": {"a": 1, "b": 2}}));
        assert!(ok(&c, json!({"b": 2, "a": 1})) && !ok(&c, json!({"a": 1})));
        assert!(!ok(&schema(json!({"const": false})), json!(0)));
        assert!(!ok(&schema(json!({"const": 1})), json!(true)));
    }

    #[test]
    fn numeric_limits_and_their_draft_4_boolean_exclusivity() {
        let s = schema(json!({"minimum": 1, "exclusiveMaximum": 3}));
        assert!(
            ok(&s, json!(1)) && ok(&s, json!(2.99)) && !ok(&s, json!(3)) && !ok(&s, json!(0.5))
        );
        let d4 = with(D4, json!({"maximum": 3, "exclusiveMaximum": true}));
        assert!(ok(&d4, json!(2)) && !ok(&d4, json!(3)));
        assert!(
            JsonSchema::parse(&json!({"$schema": D4, "exclusiveMaximum": 3}).to_string()).is_err()
        );
        assert!(JsonSchema::parse(&json!({"exclusiveMaximum": true}).to_string()).is_err());
        let big = schema(json!({"maximum": 18446744073709551615u64}));
        assert!(ok(&big, json!(18446744073709551615u64)) && !ok(&big, json!(1.9e19)));
        assert!(ok(
            &schema(json!({"minimum": -9007199254740993i64})),
            json!(-9007199254740992i64)
        ));
    }

    #[test]
    fn multiple_of_is_exact_for_integers_and_decimals() {
        let s = schema(json!({"multipleOf": 0.01}));
        assert!(ok(&s, json!(19.99)) && ok(&s, json!(4)) && !ok(&s, json!(0.001)));
        let i = schema(json!({"multipleOf": 3}));
        assert!(ok(&i, json!(9)) && !ok(&i, json!(10)));
        assert!(ok(&i, json!(18446744073709551612u64)) && !ok(&i, json!(18446744073709551614u64)));
        assert!(ok(&schema(json!({"multipleOf": 0.0001})), json!(0.0075)));
        assert!(!ok(
            &schema(json!({"multipleOf": 0.123456789})),
            json!(1e308)
        ));
        assert!(JsonSchema::parse(r#"{"multipleOf": 0}"#).is_err());
    }

    #[test]
    fn string_lengths_count_code_points_and_patterns_follow_ecma() {
        let s = schema(json!({"minLength": 2, "maxLength": 3}));
        assert!(ok(&s, json!("💩💩")) && !ok(&s, json!("💩")) && !ok(&s, json!("abcd")));
        assert!(ok(&s, json!(5)));
        let p = schema(json!({"pattern": "^\\d+$"}));
        assert!(ok(&p, json!("123")) && !ok(&p, json!("١٢٣")));
        assert!(ok(&schema(json!({"pattern": "a"})), json!("bab")));
        assert!(ok(&schema(json!({"pattern": "^\\w$"})), json!("a")));
        assert!(!ok(&schema(json!({"pattern": "^\\w$"})), json!("é")));
        assert_eq!(
            error(&p, json!("x")),
            r#"JSON Schema validation failed: "x" does not match "^\\d+$""#
        );
    }

    #[test]
    fn patterns_regex_cannot_run_are_refused_at_parse() {
        for pattern in ["a(?=b)", "(?<!a)b", "(a)\\1", "(?<n>a)\\k<n>"] {
            let e = JsonSchema::parse(&json!({"pattern": pattern}).to_string())
                .err()
                .unwrap_or_else(|| panic!("{pattern} accepted"))
                .to_string();
            assert!(
                e.starts_with("invalid JSON Schema: ") && e.contains("pattern"),
                "{e}"
            );
        }
        let e = JsonSchema::parse(&json!({"patternProperties": {"(?!x)": {}}}).to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("patternProperties") && e.contains("lookahead"),
            "{e}"
        );
        let huge = "(a{1000}){1000}".to_string();
        assert!(JsonSchema::parse(&json!({"pattern": huge}).to_string()).is_err());
    }

    #[test]
    fn arrays_by_draft_items_prefix_items_contains_and_unique_items() {
        let tuple = with(
            D7,
            json!({"items": [{"type": "integer"}], "additionalItems": false}),
        );
        assert!(ok(&tuple, json!([1])) && !ok(&tuple, json!([1, 2])) && !ok(&tuple, json!(["a"])));
        let prefix =
            schema(json!({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}));
        assert!(ok(&prefix, json!([1, "a", "b"])) && !ok(&prefix, json!([1, 2])));
        assert!(JsonSchema::parse(r#"{"items": [{}]}"#).is_err());
        let c = schema(json!({"contains": {"const": 1}, "minContains": 2, "maxContains": 3}));
        assert!(
            ok(&c, json!([1, 1.0, 2])) && !ok(&c, json!([1, 2])) && !ok(&c, json!([1, 1, 1, 1]))
        );
        let u = schema(json!({"uniqueItems": true, "maxItems": 3, "minItems": 1}));
        assert!(ok(&u, json!([1, "1", [1]])) && !ok(&u, json!([1, 1.0])));
        assert!(!ok(&u, json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}])) && !ok(&u, json!([])));
        let many: Vec<Value> = (0..20_000).map(|i| json!(i)).collect();
        assert!(ok(
            &schema(json!({"uniqueItems": true})),
            Value::Array(many)
        ));
        assert_eq!(
            error(&tuple, json!(["a"])),
            r#"JSON Schema validation failed: "a" is not of type "integer" at /0"#
        );
    }

    #[test]
    fn objects_properties_patterns_additional_and_names() {
        let s = schema(json!({
            "properties": {"a": {"type": "integer"}},
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": false,
            "required": ["a"],
            "minProperties": 1,
            "maxProperties": 2,
            "propertyNames": {"maxLength": 3}
        }));
        assert!(ok(&s, json!({"a": 1, "x-b": "c"})));
        assert!(!ok(&s, json!({"a": 1, "x-b": 2})) && !ok(&s, json!({"x-b": "c"})));
        assert_eq!(
            error(&s, json!({"a": 1, "b": 2})),
            "JSON Schema validation failed: Additional properties are not allowed ('b' was unexpected)"
        );
        assert_eq!(
            error(&s, json!({"x-b": "c"})),
            r#"JSON Schema validation failed: "a" is a required property"#
        );
        assert!(error(&s, json!({"a": 1, "x-bcd": "c"})).contains("property name"));
        let nested =
            schema(json!({"properties": {"a/b": {"properties": {"~c": {"type": "string"}}}}}));
        assert_eq!(
            error(&nested, json!({"a/b": {"~c": 1}})),
            r#"JSON Schema validation failed: 1 is not of type "string" at /a~1b/~0c"#
        );
    }

    #[test]
    fn dependencies_by_draft() {
        let d7 = with(
            D7,
            json!({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}),
        );
        assert!(ok(&d7, json!({"a": 1, "b": 2})) && !ok(&d7, json!({"a": 1})));
        assert!(!ok(&d7, json!({"c": 1})) && ok(&d7, json!({"c": 1, "d": 1})));
        let new =
            schema(json!({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": false}}));
        assert!(
            !ok(&new, json!({"a": 1})) && !ok(&new, json!({"c": 1})) && ok(&new, json!({"b": 1}))
        );
    }

    #[test]
    fn combinators_and_conditions() {
        let any = schema(json!({"anyOf": [{"type": "string"}, {"minimum": 2}]}));
        assert!(ok(&any, json!("a")) && ok(&any, json!(3)) && !ok(&any, json!(1)));
        assert!(error(&any, json!(1)).contains("'anyOf'"));
        let one = schema(json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}));
        assert!(ok(&one, json!(1)) && ok(&one, json!(2.5)) && !ok(&one, json!(3)));
        assert!(error(&one, json!(3)).contains("more than one"));
        let all = schema(json!({"allOf": [{"type": "integer"}, {"minimum": 2}]}));
        assert!(ok(&all, json!(2)) && !ok(&all, json!(1)));
        assert!(!ok(&schema(json!({"not": {"type": "null"}})), json!(null)));
        let cond = schema(
            json!({"if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"maximum": 3}}),
        );
        assert!(
            ok(&cond, json!(12))
                && !ok(&cond, json!(11))
                && ok(&cond, json!(2))
                && !ok(&cond, json!(5))
        );
        assert!(ok(&with(D6, json!({"if": false, "then": false})), json!(1)));
        let f = schema(json!(false));
        assert_eq!(
            error(&f, json!(1)),
            "JSON Schema validation failed: False schema does not allow 1"
        );
    }

    #[test]
    fn unevaluated_keywords_see_through_applicators_and_refs() {
        let s = schema(json!({
            "$defs": {"b": {"properties": {"b": true}}},
            "properties": {"a": true},
            "allOf": [{"$ref": "#/$defs/b"}],
            "anyOf": [{"properties": {"c": true}}, {"properties": {"d": true}}],
            "if": {"properties": {"e": {"const": 1}}, "required": ["e"]},
            "then": {"properties": {"f": true}},
            "unevaluatedProperties": false
        }));
        assert!(ok(&s, json!({"a": 1, "b": 1, "c": 1, "d": 1})));
        assert!(ok(&s, json!({"e": 1, "f": 1})) && !ok(&s, json!({"e": 2, "f": 1})));
        assert_eq!(
            error(&s, json!({"g": 1})),
            "JSON Schema validation failed: Unevaluated properties are not allowed ('g' was unexpected)"
        );
        let items = schema(json!({
            "prefixItems": [true],
            "contains": {"type": "string"},
            "unevaluatedItems": {"type": "integer"}
        }));
        assert!(ok(&items, json!([null, "a", 2])) && !ok(&items, json!([null, "a", null])));
        let old = with(D2019, json!({"items": [true], "unevaluatedItems": false}));
        assert!(ok(&old, json!([1])) && !ok(&old, json!([1, 2])));
    }

    #[test]
    fn refs_ids_anchors_and_escaped_pointers() {
        let s = schema(json!({
            "$id": "http://example.com/root.json",
            "$defs": {
                "a~b/c%": {"type": "integer"},
                "other": {"$id": "other.json", "$defs": {"x": {"$anchor": "X", "type": "string"}}}
            },
            "properties": {
                "p": {"$ref": "#/$defs/a~0b~1c%25"},
                "q": {"$ref": "other.json#X"},
                "r": {"$ref": "http://example.com/other.json#/$defs/x"}
            }
        }));
        assert!(ok(&s, json!({"p": 1, "q": "a", "r": "b"})));
        assert!(!ok(&s, json!({"p": "a"})) && !ok(&s, json!({"q": 1})) && !ok(&s, json!({"r": 1})));
        let d7 = with(
            D7,
            json!({"definitions": {"a": {"$id": "#foo", "type": "integer"}}, "$ref": "#foo"}),
        );
        assert!(ok(&d7, json!(1)) && !ok(&d7, json!("a")));
        let d4 = with(
            D4,
            json!({"definitions": {"a": {"id": "#foo", "type": "integer"}}, "properties": {"x": {"$ref": "#foo"}}}),
        );
        assert!(!ok(&d4, json!({"x": "a"})));
        // Up to draft 7 a $ref hides the keywords beside it; later drafts apply both.
        assert!(ok(
            &with(
                D7,
                json!({"$ref": "#/definitions/a", "definitions": {"a": {}}, "type": "string"})
            ),
            json!(1)
        ));
        assert!(!ok(
            &schema(json!({"$ref": "#/$defs/a", "$defs": {"a": {}}, "type": "string"})),
            json!(1)
        ));
    }

    #[test]
    fn unresolvable_refs_are_refused_and_meta_schemas_are_known() {
        for r in [
            "#/$defs/missing",
            "#nope",
            "http://example.com/x.json",
            "other.json",
        ] {
            let e = JsonSchema::parse(&json!({"$ref": r}).to_string())
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.starts_with("invalid JSON Schema: ") && e.contains("cannot resolve"),
                "{e}"
            );
        }
        let meta = schema(json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}));
        assert!(ok(&meta, json!({"type": "string"})) && !ok(&meta, json!({"type": 5})));
        let d7 = with(
            D7,
            json!({"properties": {"s": {"$ref": "http://json-schema.org/draft-07/schema#"}}}),
        );
        assert!(
            ok(&d7, json!({"s": {"minLength": 1}})) && !ok(&d7, json!({"s": {"minLength": -1}}))
        );
    }

    #[test]
    fn references_are_served_at_their_names_and_checked_when_used() {
        let refs = vec![
            (
                "common.json".to_string(),
                r#"{"type": "string"}"#.to_string(),
            ),
            (
                "urn:example:n".to_string(),
                r#"{"type": "number"}"#.to_string(),
            ),
            ("unused.json".to_string(), r#"{"type": 5}"#.to_string()),
            ("bad.json".to_string(), r#"{"minLength": -1}"#.to_string()),
        ];
        let s = JsonSchema::parse_with_references(
            r#"{"properties": {"a": {"$ref": "common.json"}, "b": {"$ref": "urn:example:n"}}}"#,
            &refs,
        )
        .unwrap();
        assert!(ok(&s, json!({"a": "x", "b": 1})) && !ok(&s, json!({"b": "x"})));
        let e = JsonSchema::parse_with_references(r#"{"$ref": "bad.json"}"#, &refs)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid JSON Schema reference bad.json: "),
            "{e}"
        );
        let e = JsonSchema::parse_with_references("{}", &[("x".into(), "{".into())])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("invalid JSON Schema reference x: "), "{e}");
    }

    #[test]
    fn dynamic_and_recursive_refs_follow_the_dynamic_scope() {
        let tree = r##"{"$id": "http://example.com/tree", "$dynamicAnchor": "node", "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}}}"##;
        let strict = JsonSchema::parse_with_references(
            r##"{"$id": "http://example.com/strict", "$dynamicAnchor": "node", "$ref": "tree",
                "unevaluatedProperties": false}"##,
            &[("http://example.com/tree".into(), tree.into())],
        )
        .unwrap();
        assert!(ok(&strict, json!({"kids": [{"kids": []}]})));
        assert!(!ok(&strict, json!({"kids": [{"kids": [], "extra": 1}]})));
        let r = with(
            D2019,
            json!({
                "$id": "http://example.com/r", "$recursiveAnchor": true,
                "type": "object", "additionalProperties": {"$recursiveRef": "#"}
            }),
        );
        assert!(ok(&r, json!({"a": {"b": {}}})) && !ok(&r, json!({"a": {"b": 1}})));
    }

    #[test]
    fn formats_assert_in_drafts_4_to_7_and_annotate_after() {
        let d7 = with(D7, json!({"format": "date"}));
        assert!(ok(&d7, json!("2024-02-29")) && !ok(&d7, json!("2023-02-29")) && ok(&d7, json!(5)));
        assert!(error(&d7, json!("x")).contains(r#"is not a "date""#));
        let ip = with(D4, json!({"format": "ipv4"}));
        assert!(ok(&ip, json!("10.0.0.1")) && !ok(&ip, json!("10.0.0.01")));
        let unknown = with(D7, json!({"format": "no-such-format"}));
        assert!(ok(&unknown, json!("anything")));
        let new = schema(json!({"format": "date"}));
        assert!(ok(&new, json!("not a date")));
        let content = with(
            D7,
            json!({"contentEncoding": "base64", "contentMediaType": "application/json"}),
        );
        assert!(
            ok(&content, json!("eyJhIjoxfQ=="))
                && !ok(&content, json!("e30"))
                && !ok(&content, json!("bm90IGpzb24="))
        );
    }

    #[test]
    fn schemas_that_are_not_schemas_of_their_draft_are_refused() {
        let bad = [
            json!({"type": 5}),
            json!({"type": "strin"}),
            json!({"type": []}),
            json!({"minLength": -1}),
            json!({"minLength": 1.5}),
            json!({"maxItems": "1"}),
            json!({"required": "a"}),
            json!({"required": ["a", "a"]}),
            json!({"enum": 1}),
            json!({"properties": {"a": 1}}),
            json!({"properties": []}),
            json!({"allOf": []}),
            json!({"anyOf": {}}),
            json!({"not": 1}),
            json!({"uniqueItems": 1}),
            json!({"pattern": 1}),
            json!({"pattern": "("}),
            json!({"$ref": 1}),
            json!({"$anchor": "1a"}),
            json!({"$id": "x#frag"}),
            json!({"dependentRequired": {"a": "b"}}),
            json!({"title": 1}),
            json!({"$schema": D4, "properties": {"a": true}}),
            json!({"$schema": D4, "required": []}),
            json!({"$schema": D4, "minLength": 1.0}),
        ];
        for s in bad {
            let e = JsonSchema::parse(&s.to_string())
                .err()
                .unwrap_or_else(|| panic!("{s} accepted"))
                .to_string();
            assert!(e.starts_with("invalid JSON Schema: "), "{s}: {e}");
        }
        for good in [
            json!({"minLength": 1.0}),
            json!({"required": []}),
            json!({"x-custom": {"type": 5}}),
        ] {
            schema(good);
        }
    }
}

#[cfg(test)]
mod limits {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ref_that_loops_in_place_is_an_error_not_a_hang() {
        let s = JsonSchema::parse(r##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}"##).unwrap();
        let e = s.validate(&json!(1)).unwrap_err().to_string();
        assert!(e.contains("nested deeper than"), "{e}");
    }

    #[test]
    fn a_value_built_deeper_than_json_text_allows_is_an_error() {
        let s = JsonSchema::parse(
            r##"{"$defs": {"n": {"items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}"##,
        )
        .unwrap();
        let mut v = json!(1);
        for _ in 0..10_000 {
            v = Value::Array(vec![v]);
        }
        let e = s.validate(&v).unwrap_err().to_string();
        assert!(e.contains("nested deeper than"), "{e}");
        // The value's own drop recursion is not ours to test; leak it off the stack.
        std::mem::forget(v);
    }

    #[test]
    fn a_recursive_schema_validates_deep_legitimate_values() {
        let s = JsonSchema::parse(r##"{"type": "object", "properties": {"next": {"$ref": "#"}}}"##)
            .unwrap();
        let mut v = json!({});
        for _ in 0..60 {
            v = json!({ "next": v });
        }
        s.validate(&v).unwrap();
    }
}
