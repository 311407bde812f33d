//! JSON Schema → Arrow (behaviour §3, `JSONRowBridgeFromJSONSchema`): top-level
//! `properties` in declared order, `required` names non-nullable, local `$ref` resolved.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, Schema};
use serde_json::Value;

/// The Arrow schema of a JSON Schema.
pub fn json_schema_to_arrow(schema: &Value) -> Result<Schema, String> {
    let root = resolve(schema, schema)?;
    let (first, nullable) = first_type(root);
    if first.as_deref() != Some("object") {
        let (dt, md) = column_type(root, first.as_deref());
        return Ok(Schema::new(vec![
            Field::new("value", dt, nullable).with_metadata(md),
        ]));
    }
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("object JSON Schema has no properties")?;
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Vec::new();
    for (name, prop) in props {
        let prop = resolve(prop, schema)?;
        let (first, _) = first_type(prop);
        let (dt, md) = column_type(prop, first.as_deref());
        fields.push(Field::new(name, dt, !required.contains(&name.as_str())).with_metadata(md));
    }
    Ok(Schema::new(fields))
}

fn resolve<'a>(v: &'a Value, root: &'a Value) -> Result<&'a Value, String> {
    let mut current = v;
    for _ in 0..32 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                current = r
                    .strip_prefix('#')
                    .and_then(|p| root.pointer(p))
                    .ok_or_else(|| format!("unresolved JSON Schema reference {r}"))?;
            }
            None => return Ok(current),
        }
    }
    Ok(current)
}

/// The first non-null type and whether `null` is listed.
fn first_type(v: &Value) -> (Option<String>, bool) {
    match v.get("type") {
        Some(Value::String(t)) => ((t != "null").then(|| t.clone()), t == "null"),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            (
                names.iter().find(|t| **t != "null").map(|t| t.to_string()),
                names.contains(&"null"),
            )
        }
        _ => (None, false),
    }
}

fn column_type(v: &Value, first: Option<&str>) -> (DataType, HashMap<String, String>) {
    let mut md = HashMap::new();
    let dt = match first {
        Some("integer") => DataType::Int64,
        Some("number") => DataType::Float64,
        Some("boolean") => DataType::Boolean,
        Some("object" | "array") => {
            md.insert("krabka.json".into(), "true".into());
            DataType::Utf8
        }
        Some("string") if v.get("contentEncoding").and_then(Value::as_str) == Some("base64") => {
            md.insert("krabka.binary".into(), "true".into());
            DataType::Binary
        }
        _ => DataType::Utf8,
    };
    (dt, md)
}
