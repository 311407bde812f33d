//! JSON Schema compatibility: a reader must accept every instance the writer accepts.
//! Checked structurally over `type`, `required`, `properties`, `additionalProperties`
//! and `items` (dot paths; properties in sorted order), with the messages of
//! semantics §2: `narrows type from [w] to [r]`, `became required`, `is no longer allowed`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{SchemaText, join};
use crate::engine::schema::error::{SchemaError, SchemaResult};

const ALL_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

fn parse(text: SchemaText<'_>, which: &str) -> SchemaResult<Value> {
    let v: Value = serde_json::from_str(text.text)
        .map_err(|e| SchemaError::invalid(format!("invalid {which} JSON Schema: {e}")))?;
    crate::engine::schema::json_schema::JsonSchema::parse_with_references(
        text.text,
        text.references,
    )
    .map_err(|e| SchemaError::invalid(format!("invalid {which} JSON Schema: {e}")))?;
    Ok(v)
}

pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    backward: bool,
) -> SchemaResult<Vec<String>> {
    let p = parse(previous, "previous")?;
    let c = parse(candidate, "candidate")?;
    let (w, r) = if backward { (&p, &c) } else { (&c, &p) };
    let mut out = Vec::new();
    walk(w, r, "", w, r, &mut out);
    Ok(out)
}

/// Follows a local `$ref` (`#/…`) within its own document.
fn deref<'a>(v: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = v;
    for _ in 0..32 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match root.pointer(&r[1..]) {
                Some(t) => current = t,
                None => return current,
            },
            _ => return current,
        }
    }
    current
}

/// The accepted types; `integer` is implied by `number`.
fn types(v: &Value) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = match v.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => match v {
            Value::Bool(false) => BTreeSet::new(),
            _ => ALL_TYPES.iter().map(|t| t.to_string()).collect(),
        },
    };
    if set.contains("number") {
        set.insert("integer".into());
    }
    set
}

fn display(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

fn required(v: &Value) -> BTreeSet<String> {
    v.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn walk(w: &Value, r: &Value, path: &str, w_root: &Value, r_root: &Value, out: &mut Vec<String>) {
    let w = deref(w, w_root);
    let r = deref(r, r_root);
    let shown = if path.is_empty() { "$" } else { path };
    let (wt, rt) = (types(w), types(r));
    if !wt.is_subset(&rt) {
        let mut wt_shown = wt.clone();
        let mut rt_shown = rt.clone();
        if !w
            .get("type")
            .is_some_and(|t| t.to_string().contains("integer"))
            && wt.contains("number")
        {
            wt_shown.remove("integer");
        }
        if !r
            .get("type")
            .is_some_and(|t| t.to_string().contains("integer"))
            && rt.contains("number")
        {
            rt_shown.remove("integer");
        }
        out.push(format!(
            "{shown} narrows type from [{}] to [{}]",
            display(&wt_shown),
            display(&rt_shown)
        ));
    }
    let (wreq, rreq) = (required(w), required(r));
    for name in rreq.difference(&wreq) {
        out.push(format!("{} became required", join(path, name)));
    }
    let empty = serde_json::Map::new();
    let wprops = w
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let rprops = r
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let closed = r.get("additionalProperties") == Some(&Value::Bool(false));
    let mut names: Vec<&String> = wprops.keys().chain(rprops.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let p = join(path, name);
        match (wprops.get(name), rprops.get(name)) {
            (Some(ws), Some(rs)) => {
                if *rs == Value::Bool(false) {
                    out.push(format!("{p} is no longer allowed"));
                } else {
                    walk(ws, rs, &p, w_root, r_root, out);
                }
            }
            (Some(_), None) if closed => out.push(format!("{p} is no longer allowed")),
            _ => {}
        }
    }
    if let (Some(wi), Some(ri)) = (w.get("items"), r.get("items"))
        && wi.is_object()
        && ri.is_object()
    {
        walk(wi, ri, &join(path, "items"), w_root, r_root, out);
    }
}
