//! The schema itself checked against its draft, keyword by keyword, as the drafts'
//! meta-schemas would (the `jsonschema` crate validated every schema against its
//! meta-schema): `{"type": 5}`, `{"minLength": -1}` or `{"required": "a"}` are refused.

use serde_json::{Map, Value};

use super::draft::Draft;
use super::uri::escape_token;
use super::value::{is_integer, json_equal};

/// Schemas nested deeper than this are refused (serde_json stops text at 128 levels; this
/// bounds schemas built some other way).
pub const MAX_SCHEMA_DEPTH: usize = 256;

/// `Err(why)` when `schema` is not a schema of `draft`.
pub fn check(schema: &Value, draft: Draft) -> Result<(), String> {
    Checker { draft }.schema(schema, "", 0)
}

struct Checker {
    draft: Draft,
}

const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

fn fail<T>(path: &str, keyword: &str, why: &str, value: &Value) -> Result<T, String> {
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    };
    Err(format!("{keyword:?}{at} {why}, not {value}"))
}

impl Checker {
    fn schema(&self, value: &Value, path: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "the schema is nested deeper than {MAX_SCHEMA_DEPTH} levels"
            ));
        }
        match value {
            Value::Bool(_) if self.draft >= Draft::Draft6 => Ok(()),
            Value::Object(map) => {
                let draft = match (map.get("$schema").and_then(Value::as_str), depth) {
                    (Some(uri), d) if d > 0 && map.contains_key(self.draft.id_keyword()) => {
                        Draft::from_uri(uri).unwrap_or(self.draft)
                    }
                    _ => self.draft,
                };
                Checker { draft }.object(map, path, depth)
            }
            other => {
                let what = if self.draft >= Draft::Draft6 {
                    "must be a schema (an object or a boolean)"
                } else {
                    "must be a schema (an object)"
                };
                let at = if path.is_empty() { "the root" } else { path };
                Err(format!("{at} {what}, not {other}"))
            }
        }
    }

    fn sub(
        &self,
        map: &Map<String, Value>,
        key: &str,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        match map.get(key) {
            Some(v) => self.schema(v, &format!("{path}/{}", escape_token(key)), depth + 1),
            None => Ok(()),
        }
    }

    fn schema_map(&self, value: &Value, key: &str, path: &str, depth: usize) -> Result<(), String> {
        let Some(map) = value.as_object() else {
            return fail(path, key, "must be an object of schemas", value);
        };
        for (name, v) in map {
            self.schema(
                v,
                &format!("{path}/{key}/{}", escape_token(name)),
                depth + 1,
            )?;
        }
        Ok(())
    }

    fn schema_array(
        &self,
        value: &Value,
        key: &str,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        match value.as_array() {
            Some(items) if !items.is_empty() => {
                for (i, v) in items.iter().enumerate() {
                    self.schema(v, &format!("{path}/{key}/{i}"), depth + 1)?;
                }
                Ok(())
            }
            _ => fail(path, key, "must be a non-empty array of schemas", value),
        }
    }

    fn count(&self, value: &Value, key: &str, path: &str) -> Result<(), String> {
        let ok = match self.draft {
            // Draft 4 reads `integer` strictly: 1.0 is not one.
            Draft::Draft4 => value.is_u64(),
            _ => is_integer(value, self.draft) && value.as_f64().is_some_and(|f| f >= 0.0),
        };
        if ok {
            Ok(())
        } else {
            fail(path, key, "must be a non-negative integer", value)
        }
    }

    fn strings(&self, value: &Value, key: &str, path: &str, non_empty: bool) -> Result<(), String> {
        let why = if non_empty {
            "must be a non-empty array of unique strings"
        } else {
            "must be an array of unique strings"
        };
        let Some(items) = value.as_array() else {
            return fail(path, key, why, value);
        };
        if (non_empty && items.is_empty()) || !items.iter().all(Value::is_string) || !unique(items)
        {
            return fail(path, key, why, value);
        }
        Ok(())
    }

    fn object(&self, map: &Map<String, Value>, path: &str, depth: usize) -> Result<(), String> {
        let d = self.draft;
        let string = |key: &str| shaped(map, path, key, Value::is_string, "must be a string");
        let boolean = |key: &str| shaped(map, path, key, Value::is_boolean, "must be a boolean");
        for key in [
            "$schema",
            "$ref",
            "title",
            "description",
            "format",
            "$comment",
        ] {
            string(key)?;
        }
        string(d.id_keyword())?;
        if d >= Draft::Draft201909 {
            for key in [
                "$anchor",
                "$recursiveRef",
                "$dynamicRef",
                "$dynamicAnchor",
                "contentEncoding",
                "contentMediaType",
            ] {
                string(key)?;
            }
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(name)) = map.get(key)
                    && !anchor_name_ok(name, d)
                {
                    return fail(path, key, "must be a plain name", &map[key]);
                }
            }
            // 2020-12's meta-schema keeps `$recursiveAnchor` only as an anchor name.
            if d == Draft::Draft201909 {
                boolean("$recursiveAnchor")?;
            } else if let Some(v) = map.get("$recursiveAnchor")
                && !v.as_str().is_some_and(|n| anchor_name_ok(n, d))
            {
                return fail(path, "$recursiveAnchor", "must be a plain name", v);
            }
            if let Some(id) = map.get("$id").and_then(Value::as_str)
                && let Some((_, fragment)) = id.split_once('#')
                && !fragment.is_empty()
            {
                return fail(path, "$id", "must not have a fragment", &map["$id"]);
            }
            if let Some(v) = map.get("$vocabulary")
                && !v
                    .as_object()
                    .is_some_and(|m| m.values().all(Value::is_boolean))
            {
                return fail(path, "$vocabulary", "must be an object of booleans", v);
            }
        }
        if d >= Draft::Draft7 {
            for key in ["readOnly", "writeOnly", "deprecated"] {
                boolean(key)?;
            }
        }
        if let Some(v) = map.get("examples")
            && d >= Draft::Draft6
            && !v.is_array()
        {
            return fail(path, "examples", "must be an array", v);
        }
        self.validation(map, path)?;
        self.applicators(map, path, depth)
    }

    /// The validation vocabulary's keywords.
    fn validation(&self, map: &Map<String, Value>, path: &str) -> Result<(), String> {
        let d = self.draft;
        let boolean = |key: &str| shaped(map, path, key, Value::is_boolean, "must be a boolean");
        let number = |key: &str| shaped(map, path, key, Value::is_number, "must be a number");
        if let Some(v) = map.get("type") {
            let name_ok = |t: &Value| t.as_str().is_some_and(|s| TYPES.contains(&s));
            let ok = match v {
                Value::Array(items) => {
                    !items.is_empty() && items.iter().all(name_ok) && unique(items)
                }
                t => name_ok(t),
            };
            if !ok {
                return fail(
                    path,
                    "type",
                    "must be a type name or a non-empty array of unique type names",
                    v,
                );
            }
        }
        // Every draft's meta-schema allows an empty `enum` or repeated values in one as the
        // crate did; only the array is required.
        if let Some(v) = map.get("enum")
            && !v.is_array()
        {
            return fail(path, "enum", "must be an array", v);
        }
        if let Some(v) = map.get("multipleOf")
            && !v.as_f64().is_some_and(|f| f > 0.0)
        {
            return fail(path, "multipleOf", "must be a number above 0", v);
        }
        number("maximum")?;
        number("minimum")?;
        for key in ["exclusiveMaximum", "exclusiveMinimum"] {
            if d == Draft::Draft4 {
                boolean(key)?;
            } else {
                number(key)?;
            }
        }
        for key in [
            "maxLength",
            "minLength",
            "maxItems",
            "minItems",
            "maxProperties",
            "minProperties",
        ] {
            if let Some(v) = map.get(key) {
                self.count(v, key, path)?;
            }
        }
        if d >= Draft::Draft201909 {
            for key in ["maxContains", "minContains"] {
                if let Some(v) = map.get(key) {
                    self.count(v, key, path)?;
                }
            }
        }
        if let Some(v) = map.get("pattern") {
            let Some(p) = v.as_str() else {
                return fail(path, "pattern", "must be a string", v);
            };
            super::pattern::compile(p).map_err(|e| format!("\"pattern\"{}: {e}", at(path)))?;
        }
        boolean("uniqueItems")?;
        if let Some(v) = map.get("required") {
            self.strings(v, "required", path, d == Draft::Draft4)?;
        }
        Ok(())
    }

    /// The keywords holding subschemas, each checked in turn.
    fn applicators(
        &self,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        let d = self.draft;
        for key in ["properties", "patternProperties", "definitions"] {
            if let Some(v) = map.get(key) {
                self.schema_map(v, key, path, depth)?;
            }
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for p in patterns.keys() {
                super::pattern::compile(p)
                    .map_err(|e| format!("\"patternProperties\"{}: {e}", at(path)))?;
            }
        }
        if let Some(v) = map.get("dependencies") {
            let Some(deps) = v.as_object() else {
                return fail(path, "dependencies", "must be an object", v);
            };
            for (name, dep) in deps {
                if dep.is_array() {
                    self.strings(dep, "dependencies", path, d == Draft::Draft4)?;
                } else {
                    self.schema(
                        dep,
                        &format!("{path}/dependencies/{}", escape_token(name)),
                        depth + 1,
                    )?;
                }
            }
        }
        let additional: &[&str] = if d <= Draft::Draft201909 {
            &["additionalProperties", "additionalItems"]
        } else {
            &["additionalProperties"]
        };
        for &key in additional {
            match map.get(key) {
                Some(Value::Bool(_)) => {}
                Some(_) => self.sub(map, key, path, depth)?,
                None => {}
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(v) = map.get(key) {
                self.schema_array(v, key, path, depth)?;
            }
        }
        self.sub(map, "not", path, depth)?;
        match map.get("items") {
            Some(v @ Value::Array(items)) if d <= Draft::Draft201909 => {
                for (i, item) in items.iter().enumerate() {
                    self.schema(item, &format!("{path}/items/{i}"), depth + 1)?;
                }
                if items.is_empty() {
                    return fail(
                        path,
                        "items",
                        "must be a schema or a non-empty array of schemas",
                        v,
                    );
                }
            }
            Some(_) => self.sub(map, "items", path, depth)?,
            None => {}
        }
        if d >= Draft::Draft6 {
            self.sub(map, "contains", path, depth)?;
            self.sub(map, "propertyNames", path, depth)?;
        }
        if d >= Draft::Draft7 {
            for key in ["if", "then", "else"] {
                self.sub(map, key, path, depth)?;
            }
        }
        if d >= Draft::Draft201909 {
            for key in ["$defs", "dependentSchemas"] {
                if let Some(v) = map.get(key) {
                    self.schema_map(v, key, path, depth)?;
                }
            }
            for key in ["unevaluatedProperties", "unevaluatedItems", "contentSchema"] {
                self.sub(map, key, path, depth)?;
            }
            if let Some(v) = map.get("dependentRequired") {
                let Some(deps) = v.as_object() else {
                    return fail(path, "dependentRequired", "must be an object", v);
                };
                for dep in deps.values() {
                    self.strings(dep, "dependentRequired", path, false)?;
                }
            }
        }
        if d >= Draft::Draft202012
            && let Some(v) = map.get("prefixItems")
        {
            self.schema_array(v, "prefixItems", path, depth)?;
        }
        Ok(())
    }
}

/// `Err` when `map[key]` is there and not of the shape `ok` accepts.
fn shaped(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    ok: fn(&Value) -> bool,
    why: &str,
) -> Result<(), String> {
    match map.get(key) {
        Some(v) if !ok(v) => fail(path, key, why, v),
        _ => Ok(()),
    }
}

fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    }
}

fn anchor_name_ok(name: &str, draft: Draft) -> bool {
    let mut chars = name.chars();
    let first_ok = match chars.next() {
        Some(c) => c.is_ascii_alphabetic() || (draft >= Draft::Draft202012 && c == '_'),
        None => false,
    };
    first_ok
        && chars.all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '.' | '_')
                || (draft == Draft::Draft201909 && c == ':')
        })
}

fn unique(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, a)| items[..i].iter().all(|b| !json_equal(a, b)))
}
