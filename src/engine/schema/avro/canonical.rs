//! The registered text of an Avro schema (decision D1, "the Go form"): the Avro
//! parsing canonical form — full names, only `name`/`type`/`fields`/`symbols`/
//! `items`/`values`/`size`, in that order, no whitespace — that **keeps** the
//! logical-type attributes krabka-streams-go (hamba/avro `Schema.String()`) keeps:
//!
//! * `logicalType` on a primitive when the pair is one of string `uuid`, int `date` /
//!   `time-millis`, long `time-micros` / `timestamp-millis` / `timestamp-micros` /
//!   `local-timestamp-millis` / `local-timestamp-micros`; other pairs are dropped;
//! * bytes or fixed `decimal` with `"precision":P` and `"scale":S` (scale only when > 0),
//!   only when valid (P > 0, 0 ≤ S ≤ P, and for fixed P ≤ ⌊log10(2^(8·size−1))⌋);
//! * fixed(12) `duration`.
//!
//! Without logical types the text equals Java's parsing canonical form, so both
//! libraries reach the same registry id and version. The input must already have
//! been validated by the Avro parser; this module only prints.

use std::collections::HashSet;

use serde_json::Value;

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

/// The Go-form canonical text of a schema given as JSON text.
pub fn canonical_text(schema_json: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(schema_json).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut defined = HashSet::new();
    write_schema(&value, "", &mut defined, &mut out)?;
    Ok(out)
}

/// The attributes of a schema's JSON that its canonical form does not carry (`default`,
/// `doc`, `aliases`, `order`, custom properties), sorted: what a registry holding the
/// canonical form does not know (a reader evolving from it has no defaults, for one).
pub fn dropped_attributes(schema_json: &str) -> Result<Vec<String>, String> {
    let value: Value = serde_json::from_str(schema_json).map_err(|e| e.to_string())?;
    let mut out = std::collections::BTreeSet::new();
    collect_dropped(&value, &mut out, 0);
    Ok(out.into_iter().collect())
}

const KEPT: [&str; 11] = [
    "type",
    "name",
    "namespace",
    "fields",
    "symbols",
    "items",
    "values",
    "size",
    "logicalType",
    "precision",
    "scale",
];

/// Walks only schema positions (not default values, whose keys are data).
fn collect_dropped(v: &Value, out: &mut std::collections::BTreeSet<String>, depth: usize) {
    if depth > 256 {
        return;
    }
    match v {
        Value::Array(branches) => {
            for b in branches {
                collect_dropped(b, out, depth + 1);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                match k.as_str() {
                    "type" | "items" | "values" => collect_dropped(x, out, depth + 1),
                    "fields" => {
                        for f in x.as_array().into_iter().flatten() {
                            if let Some(fo) = f.as_object() {
                                for (fk, fx) in fo {
                                    if fk == "type" {
                                        collect_dropped(fx, out, depth + 1);
                                    } else if fk != "name" {
                                        out.insert(fk.clone());
                                    }
                                }
                            }
                        }
                    }
                    other if !KEPT.contains(&other) => {
                        out.insert(other.to_string());
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn full_name(name: &str, namespace: &str) -> String {
    if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    }
}

/// (full name, namespace for children) of a named type.
fn named(
    obj: &serde_json::Map<String, Value>,
    enclosing: &str,
) -> Result<(String, String), String> {
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or("named Avro type without a name")?;
    if let Some((ns, _)) = name.rsplit_once('.') {
        return Ok((name.to_string(), ns.to_string()));
    }
    let namespace = match obj.get("namespace") {
        Some(Value::String(ns)) => ns.clone(),
        Some(Value::Null) | None => enclosing.to_string(),
        Some(_) => return Err("namespace is not a string".into()),
    };
    Ok((full_name(name, &namespace), namespace))
}

/// A type name used as a reference: qualified by the enclosing namespace when that
/// name is defined, else taken as written (a null-namespace or external name).
fn reference(name: &str, namespace: &str, defined: &HashSet<String>) -> String {
    let qualified = full_name(name, namespace);
    if defined.contains(&qualified) || !defined.contains(name) {
        qualified
    } else {
        name.to_string()
    }
}

fn write_schema(
    v: &Value,
    namespace: &str,
    defined: &mut HashSet<String>,
    out: &mut String,
) -> Result<(), String> {
    match v {
        Value::String(s) if PRIMITIVES.contains(&s.as_str()) => out.push_str(&quoted(s)),
        Value::String(s) => out.push_str(&quoted(&reference(s, namespace, defined))),
        Value::Array(branches) => {
            out.push('[');
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_schema(b, namespace, defined, out)?;
            }
            out.push(']');
        }
        Value::Object(obj) => write_object(obj, namespace, defined, out)?,
        other => return Err(format!("not an Avro schema: {other}")),
    }
    Ok(())
}

/// One schema object in Parsing Canonical Form. Long because it has one arm per Avro
/// type, with the attributes the form keeps for each, in the form's order.
fn write_object(
    obj: &serde_json::Map<String, Value>,
    namespace: &str,
    defined: &mut HashSet<String>,
    out: &mut String,
) -> Result<(), String> {
    let typ = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(nested @ (Value::Array(_) | Value::Object(_))) => {
            return write_schema(nested, namespace, defined, out);
        }
        _ => return Err("Avro schema object without a type".into()),
    };
    let logical = obj.get("logicalType").and_then(Value::as_str);
    match typ {
        "record" | "error" => {
            let (full, ns) = named(obj, namespace)?;
            defined.insert(full.clone());
            out.push_str(&format!(
                "{{\"name\":{},\"type\":{},\"fields\":[",
                quoted(&full),
                quoted(typ)
            ));
            let fields = obj
                .get("fields")
                .and_then(Value::as_array)
                .ok_or("record without fields")?;
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let name = f
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("record field without a name")?;
                out.push_str(&format!("{{\"name\":{},\"type\":", quoted(name)));
                write_schema(
                    f.get("type").ok_or("record field without a type")?,
                    &ns,
                    defined,
                    out,
                )?;
                out.push('}');
            }
            out.push_str("]}");
        }
        "enum" => {
            let (full, _) = named(obj, namespace)?;
            defined.insert(full.clone());
            let symbols: Vec<String> = obj
                .get("symbols")
                .and_then(Value::as_array)
                .ok_or("enum without symbols")?
                .iter()
                .map(|s| s.as_str().map(quoted).ok_or("enum symbol is not a string"))
                .collect::<Result<_, _>>()?;
            out.push_str(&format!(
                "{{\"name\":{},\"type\":\"enum\",\"symbols\":[{}]}}",
                quoted(&full),
                symbols.join(",")
            ));
        }
        "array" => {
            out.push_str("{\"type\":\"array\",\"items\":");
            write_schema(
                obj.get("items").ok_or("array without items")?,
                namespace,
                defined,
                out,
            )?;
            out.push('}');
        }
        "map" => {
            out.push_str("{\"type\":\"map\",\"values\":");
            write_schema(
                obj.get("values").ok_or("map without values")?,
                namespace,
                defined,
                out,
            )?;
            out.push('}');
        }
        "fixed" => {
            let (full, _) = named(obj, namespace)?;
            defined.insert(full.clone());
            let size = obj
                .get("size")
                .and_then(Value::as_u64)
                .ok_or("fixed without an integer size")?;
            let logical = match logical {
                Some("duration") if size == 12 => ",\"logicalType\":\"duration\"".to_string(),
                Some("decimal") => decimal_attributes(obj, Some(size)).unwrap_or_default(),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{{\"name\":{},\"type\":\"fixed\",\"size\":{size}{logical}}}",
                quoted(&full)
            ));
        }
        t if PRIMITIVES.contains(&t) => {
            let kept = match (t, logical) {
                ("string", Some(l @ "uuid"))
                | ("int", Some(l @ ("date" | "time-millis")))
                | (
                    "long",
                    Some(
                        l @ ("time-micros"
                        | "timestamp-millis"
                        | "timestamp-micros"
                        | "local-timestamp-millis"
                        | "local-timestamp-micros"),
                    ),
                ) => Some(format!(",\"logicalType\":{}", quoted(l))),
                ("bytes", Some("decimal")) => decimal_attributes(obj, None),
                _ => None,
            };
            match kept {
                Some(attrs) => out.push_str(&format!("{{\"type\":{}{attrs}}}", quoted(t))),
                None => out.push_str(&quoted(t)),
            }
        }
        other => out.push_str(&quoted(&reference(other, namespace, defined))),
    }
    Ok(())
}

/// `,"logicalType":"decimal","precision":P[,"scale":S]` for a valid decimal, else `None`.
fn decimal_attributes(
    obj: &serde_json::Map<String, Value>,
    fixed_size: Option<u64>,
) -> Option<String> {
    let integer = |key: &str| -> Option<i64> {
        match obj.get(key) {
            None => Some(0),
            Some(v) => v.as_i64().or_else(|| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
        }
    };
    let precision = integer("precision")?;
    let scale = integer("scale")?;
    if precision <= 0 || scale < 0 || scale > precision {
        return None;
    }
    if let Some(size) = fixed_size {
        let max = (std::f64::consts::LOG10_2 * (8.0 * size as f64 - 1.0)).floor() as i64;
        if precision > max {
            return None;
        }
    }
    let scale = if scale > 0 {
        format!(",\"scale\":{scale}")
    } else {
        String::new()
    };
    Some(format!(
        ",\"logicalType\":\"decimal\",\"precision\":{precision}{scale}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORPUS: &str = include_str!("../../../../tests/data/avro-canonical-corpus.json");

    #[test]
    fn dropped_attributes_name_what_the_canonical_form_loses_not_default_values() {
        let text = r#"{"type":"record","name":"R","namespace":"a","doc":"d","x-owner":"me",
            "fields":[{"name":"n","type":"int","default":0,"order":"descending"},
                      {"name":"o","type":["null",{"type":"record","name":"In","aliases":["Old"],
                        "fields":[{"name":"z","type":"string"}]}],"default":null},
                      {"name":"m","type":{"type":"map","values":"long"},"default":{"k":1}}]}"#;
        assert_eq!(
            dropped_attributes(text).unwrap(),
            ["aliases", "default", "doc", "order", "x-owner"]
        );
        assert!(
            dropped_attributes(r#"{"type":"fixed","name":"F","size":4}"#)
                .unwrap()
                .is_empty()
        );
        assert!(dropped_attributes("{").is_err());
    }

    #[test]
    fn the_conformance_corpus_registers_the_go_form() {
        let corpus: Value = serde_json::from_str(CORPUS).unwrap();
        for e in corpus["entries"].as_array().unwrap() {
            let id = e["id"].as_str().unwrap();
            let schema = e["schema"].as_str().unwrap();
            let go = e["go"].as_str().unwrap();
            assert_eq!(canonical_text(schema).unwrap(), go, "{id}");
            if !go.contains("logicalType") {
                assert_eq!(
                    go,
                    e["java"].as_str().unwrap(),
                    "{id}: without logical types Go equals Java"
                );
            }
            // The registered text registers as itself, except where the canonical form
            // loses a reset to the null namespace (a property of the canonical form itself).
            if id != "empty-namespace-resets" {
                assert_eq!(canonical_text(go).unwrap(), go, "{id}: idempotent");
            }
        }
    }
}
