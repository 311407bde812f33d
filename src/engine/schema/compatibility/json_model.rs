//! JSON Schema read as the typed schemas the compatibility rules speak about (the
//! classes of the loader Confluent's checker runs on): `true`/`{}` is the empty schema,
//! `false` accepts nothing, `type: [a, b]` is `anyOf` of one typed schema per entry,
//! an object schema with several keyword groups (a type, `enum`, `const`, `not`,
//! `allOf`/`anyOf`/`oneOf`) is an implied `allOf` of them, and without `type` the
//! keywords present imply the type. A `$ref` is followed within its document (JSON
//! pointer or `$anchor`) or into a schema reference named by its URI; an unresolved
//! one is an error, never skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::SchemaText;
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::json_schema::JsonSchema;

/// The main schema (document 0) and its references (documents 1..).
pub struct Docs {
    docs: Vec<(String, Value)>,
}

/// Which keywords of a schema object a node stands for: the whole object, or one
/// part of an implied `allOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Whole,
    Type(&'static str),
    TypeUnion,
    Enum,
    Const,
    Not,
    AllOf,
    AnyOf,
    OneOf,
}

/// A schema node: a value inside one document, seen through a [`View`].
#[derive(Debug, Clone, Copy)]
pub struct Loc<'a> {
    doc: usize,
    v: &'a Value,
    view: View,
}

impl Loc<'_> {
    /// Identity for cycle detection (the node's address and view).
    pub fn id(&self) -> usize {
        let view = match self.view {
            View::Whole => 0,
            View::Type(t) => 1 + TYPES.iter().position(|x| *x == t).unwrap_or(0),
            View::TypeUnion => 10,
            View::Enum => 11,
            View::Const => 12,
            View::Not => 13,
            View::AllOf => 14,
            View::AnyOf => 15,
            View::OneOf => 16,
        };
        (self.v as *const Value as usize) * 32 + view
    }
}

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "null", "object", "array",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    All,
    Any,
    One,
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Criterion::All => "allOf",
            Criterion::Any => "anyOf",
            Criterion::One => "oneOf",
        })
    }
}

pub struct Combined<'a> {
    pub criterion: Criterion,
    pub subs: Vec<Loc<'a>>,
}

pub struct Str {
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub pattern: Option<String>,
}

pub struct Number {
    pub maximum: Option<f64>,
    pub minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub multiple_of: Option<f64>,
    pub integer: bool,
}

pub struct Object<'a> {
    pub properties: Vec<(String, Loc<'a>)>,
    pub required: BTreeSet<String>,
    pub additional_permitted: bool,
    pub additional: Option<Loc<'a>>,
    patterns: Vec<(String, Loc<'a>)>,
    pub dep_arrays: BTreeMap<String, BTreeSet<String>>,
    pub dep_schemas: BTreeMap<String, Loc<'a>>,
    pub unevaluated: Option<Loc<'a>>,
    unevaluated_class: Option<&'static str>,
    pub max_properties: Option<u64>,
    pub min_properties: Option<u64>,
}

pub struct Array<'a> {
    pub items: Option<Loc<'a>>,
    pub tuple: Vec<Loc<'a>>,
    pub additional_permitted: bool,
    pub additional: Option<Loc<'a>>,
    pub unevaluated: Option<Loc<'a>>,
    unevaluated_class: Option<&'static str>,
    pub max_items: Option<u64>,
    pub min_items: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_contains: Option<u64>,
    pub unique: bool,
}

pub enum Typed<'a> {
    False,
    Empty,
    Null,
    Boolean,
    String(Str),
    Number(Number),
    Enum(Vec<Value>),
    Const(Value),
    Not(Loc<'a>),
    Combined(Combined<'a>),
    Object(Object<'a>),
    Array(Array<'a>),
}

impl Typed<'_> {
    /// The class as a reader of messages says it (`integer` for an integer number).
    pub fn describe(&self) -> &'static str {
        match self {
            Typed::Number(n) if n.integer => "integer",
            Typed::Empty => "empty schema",
            Typed::False => "false schema",
            other => other.class(),
        }
    }

    /// The schema class: two schemas of different classes are a type change.
    pub fn class(&self) -> &'static str {
        match self {
            Typed::False => "false",
            Typed::Empty => "empty",
            Typed::Null => "null",
            Typed::Boolean => "boolean",
            Typed::String(_) => "string",
            Typed::Number(_) => "number",
            Typed::Enum(_) => "enum",
            Typed::Const(_) => "const",
            Typed::Not(_) => "not",
            Typed::Combined(_) => "combined schema",
            Typed::Object(_) => "object",
            Typed::Array(_) => "array",
        }
    }
}

impl<'a> Object<'a> {
    pub fn property(&self, name: &str) -> Option<Loc<'a>> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, l)| *l)
    }

    /// Fully open: any property may appear with any value.
    pub fn is_open(&self) -> bool {
        self.additional_permitted
            && self.additional.is_none()
            && self.patterns.is_empty()
            && matches!(self.unevaluated_class, None | Some("empty"))
    }

    /// The schema a property not declared here must match (pattern properties first,
    /// then `additionalProperties`, then `unevaluatedProperties`), if the content
    /// model is partially open.
    pub fn partial_schema(&self, name: &str) -> SchemaResult<Option<Loc<'a>>> {
        for (pattern, schema) in &self.patterns {
            let re = regex::Regex::new(pattern).map_err(|e| {
                SchemaError::invalid(format!(
                    "JSON Schema patternProperties pattern {pattern:?} is not supported: {e}"
                ))
            })?;
            if re.is_match(name) {
                return Ok(Some(*schema));
            }
        }
        if self.additional.is_some() {
            return Ok(self.additional);
        }
        if self.additional_permitted
            && !matches!(self.unevaluated_class, None | Some("false") | Some("empty"))
        {
            return Ok(self.unevaluated);
        }
        Ok(None)
    }
}

impl<'a> Array<'a> {
    pub fn is_open(&self) -> bool {
        self.additional_permitted
            && self.additional.is_none()
            && matches!(self.unevaluated_class, None | Some("empty"))
    }

    pub fn partial_schema(&self) -> Option<Loc<'a>> {
        if self.additional.is_some() {
            return self.additional;
        }
        if self.additional_permitted
            && !matches!(self.unevaluated_class, None | Some("false") | Some("empty"))
        {
            return self.unevaluated;
        }
        None
    }
}

fn invalid(which: &str, e: impl fmt::Display) -> SchemaError {
    SchemaError::invalid(format!("invalid {which} JSON Schema: {e}"))
}

fn uint(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// A subschema position that may hold `true` meaning "no constraint".
fn constraint(v: Option<&Value>) -> Option<&Value> {
    v.filter(|x| **x != Value::Bool(true))
}

const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "propertyNames",
];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

impl Docs {
    /// Parses and validates the schema (the serde's own parser, with its references),
    /// keeping every document for `$ref`.
    pub fn parse(text: SchemaText<'_>, which: &str) -> SchemaResult<Docs> {
        JsonSchema::parse_with_references(text.text, text.references)
            .map_err(|e| invalid(which, e))?;
        let mut docs = vec![(
            String::new(),
            serde_json::from_str::<Value>(text.text).map_err(|e| invalid(which, e))?,
        )];
        for (name, ref_text) in text.references {
            let v: Value = serde_json::from_str(ref_text)
                .map_err(|e| invalid(which, format!("reference {name} is not JSON: {e}")))?;
            docs.push((name.clone(), v));
        }
        Ok(Docs { docs })
    }

    pub fn root(&self) -> Loc<'_> {
        Loc {
            doc: 0,
            v: &self.docs[0].1,
            view: View::Whole,
        }
    }

    /// Follows `$ref` until a schema without one (bounded: a loop of bare references
    /// is an error).
    pub fn deref<'a>(&'a self, mut l: Loc<'a>) -> SchemaResult<Loc<'a>> {
        for _ in 0..64 {
            if l.view != View::Whole {
                return Ok(l);
            }
            let Some(r) = l.v.get("$ref") else {
                return Ok(l);
            };
            let r = r
                .as_str()
                .ok_or_else(|| SchemaError::invalid("JSON Schema $ref is not a string"))?;
            l = self.resolve(l.doc, r)?;
        }
        Err(SchemaError::invalid(
            "JSON Schema $ref chain does not end (a reference loop)",
        ))
    }

    fn resolve<'a>(&'a self, from: usize, r: &str) -> SchemaResult<Loc<'a>> {
        let unresolved = || SchemaError::invalid(format!("unresolved JSON Schema reference {r}"));
        let (base, fragment) = r.split_once('#').unwrap_or((r, ""));
        let doc = if base.is_empty() {
            from
        } else {
            self.docs
                .iter()
                .position(|(name, v)| {
                    let id = v.get("$id").and_then(Value::as_str).unwrap_or("");
                    let same = |a: &str| {
                        !a.is_empty()
                            && (a == base
                                || base.ends_with(&format!("/{a}"))
                                || a.ends_with(&format!("/{base}")))
                    };
                    same(name) || same(id.split('#').next().unwrap_or(""))
                })
                .ok_or_else(unresolved)?
        };
        let root = &self.docs[doc].1;
        let v = if fragment.is_empty() {
            root
        } else if fragment.starts_with('/') {
            let decoded = percent_decode(fragment);
            root.pointer(&decoded).ok_or_else(unresolved)?
        } else {
            find_anchor(root, fragment, 0).ok_or_else(unresolved)?
        };
        Ok(Loc {
            doc,
            v,
            view: View::Whole,
        })
    }

    pub fn has_default(&self, l: Option<Loc<'_>>) -> SchemaResult<bool> {
        match l {
            None => Ok(false),
            Some(l) => {
                Ok(l.v.get("default").is_some() || self.deref(l)?.v.get("default").is_some())
            }
        }
    }

    /// The typed schema of a node (already dereferenced).
    pub fn typed<'a>(&'a self, l: Loc<'a>) -> SchemaResult<Typed<'a>> {
        let v = l.v;
        let obj = match v {
            Value::Bool(true) => return Ok(Typed::Empty),
            Value::Bool(false) => return Ok(Typed::False),
            Value::Object(o) => o,
            other => {
                return Err(SchemaError::invalid(format!(
                    "JSON Schema node is neither an object nor a boolean: {other}"
                )));
            }
        };
        let at = |view| Loc {
            doc: l.doc,
            v,
            view,
        };
        let child = |x: &'a Value| Loc {
            doc: l.doc,
            v: x,
            view: View::Whole,
        };
        match l.view {
            View::Whole => {
                let mut parts = Vec::new();
                match obj.get("type") {
                    Some(Value::String(t)) => parts.push(at(View::Type(type_name(t)?))),
                    Some(Value::Array(ts)) if ts.len() == 1 => {
                        let t = ts[0].as_str().ok_or_else(|| bad_type(&ts[0]))?;
                        parts.push(at(View::Type(type_name(t)?)));
                    }
                    Some(Value::Array(ts)) if !ts.is_empty() => parts.push(at(View::TypeUnion)),
                    Some(Value::Array(_)) | None => {
                        let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
                        for (keys, t) in [
                            (OBJECT_KEYWORDS, "object"),
                            (ARRAY_KEYWORDS, "array"),
                            (STRING_KEYWORDS, "string"),
                            (NUMBER_KEYWORDS, "number"),
                        ] {
                            if has(keys) {
                                parts.push(at(View::Type(t)));
                            }
                        }
                    }
                    Some(other) => return Err(bad_type(other)),
                }
                for (key, view) in [
                    ("enum", View::Enum),
                    ("const", View::Const),
                    ("not", View::Not),
                    ("allOf", View::AllOf),
                    ("anyOf", View::AnyOf),
                    ("oneOf", View::OneOf),
                ] {
                    if obj.contains_key(key) {
                        parts.push(at(view));
                    }
                }
                match parts.len() {
                    0 => Ok(Typed::Empty),
                    1 => self.typed(parts[0]),
                    _ => Ok(Typed::Combined(Combined {
                        criterion: Criterion::All,
                        subs: parts,
                    })),
                }
            }
            View::TypeUnion => {
                let ts = obj["type"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                let mut subs = Vec::new();
                for t in ts {
                    let t = t.as_str().ok_or_else(|| bad_type(t))?;
                    let view = View::Type(type_name(t)?);
                    if !subs.iter().any(|s: &Loc<'_>| s.view == view) {
                        subs.push(at(view));
                    }
                }
                Ok(Typed::Combined(Combined {
                    criterion: Criterion::Any,
                    subs,
                }))
            }
            View::Enum => match &obj["enum"] {
                Value::Array(values) => Ok(Typed::Enum(values.clone())),
                other => Err(SchemaError::invalid(format!(
                    "JSON Schema enum is not an array: {other}"
                ))),
            },
            View::Const => Ok(Typed::Const(obj["const"].clone())),
            View::Not => Ok(Typed::Not(child(&obj["not"]))),
            View::AllOf | View::AnyOf | View::OneOf => {
                let (key, criterion) = match l.view {
                    View::AllOf => ("allOf", Criterion::All),
                    View::AnyOf => ("anyOf", Criterion::Any),
                    _ => ("oneOf", Criterion::One),
                };
                let list = obj[key].as_array().ok_or_else(|| {
                    SchemaError::invalid(format!("JSON Schema {key} is not an array"))
                })?;
                // Equal subschemas count once.
                let mut subs: Vec<Loc<'a>> = Vec::new();
                for s in list {
                    if !subs.iter().any(|x| x.v == s) {
                        subs.push(child(s));
                    }
                }
                Ok(Typed::Combined(Combined { criterion, subs }))
            }
            View::Type(t) => self.typed_as(l, obj, t),
        }
    }

    /// Reads one schema object as the given type. Long because it has one arm per type with
    /// the keywords that type takes.
    fn typed_as<'a>(
        &'a self,
        l: Loc<'a>,
        obj: &'a serde_json::Map<String, Value>,
        t: &'static str,
    ) -> SchemaResult<Typed<'a>> {
        let v = l.v;
        let child = |x: &'a Value| Loc {
            doc: l.doc,
            v: x,
            view: View::Whole,
        };
        let class_of = |x: Option<Loc<'a>>| -> SchemaResult<Option<&'static str>> {
            match x {
                None => Ok(None),
                Some(x) => Ok(Some(self.typed(self.deref(x)?)?.class())),
            }
        };
        Ok(match t {
            "null" => Typed::Null,
            "boolean" => Typed::Boolean,
            "string" => Typed::String(Str {
                max_length: uint(v, "maxLength"),
                min_length: uint(v, "minLength"),
                pattern: v.get("pattern").and_then(Value::as_str).map(String::from),
            }),
            "number" | "integer" => {
                let mut n = Number {
                    maximum: num(v, "maximum"),
                    minimum: num(v, "minimum"),
                    exclusive_maximum: num(v, "exclusiveMaximum"),
                    exclusive_minimum: num(v, "exclusiveMinimum"),
                    multiple_of: num(v, "multipleOf"),
                    integer: t == "integer",
                };
                // Draft 4 spells exclusivity as a flag on maximum/minimum.
                if v.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
                    n.exclusive_maximum = n.maximum.take();
                }
                if v.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
                    n.exclusive_minimum = n.minimum.take();
                }
                Typed::Number(n)
            }
            "object" => {
                let properties = obj
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|m| m.iter().map(|(k, s)| (k.clone(), child(s))).collect())
                    .unwrap_or_default();
                let required = obj
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                let (additional_permitted, additional) = match obj.get("additionalProperties") {
                    None | Some(Value::Bool(true)) => (true, None),
                    Some(Value::Bool(false)) => (false, None),
                    Some(s) => (true, Some(child(s))),
                };
                let patterns = obj
                    .get("patternProperties")
                    .and_then(Value::as_object)
                    .map(|m| m.iter().map(|(k, s)| (k.clone(), child(s))).collect())
                    .unwrap_or_default();
                let mut dep_arrays = BTreeMap::new();
                let mut dep_schemas = BTreeMap::new();
                for key in ["dependencies", "dependentRequired", "dependentSchemas"] {
                    for (k, dv) in obj
                        .get(key)
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        match dv {
                            Value::Array(a) => {
                                dep_arrays.insert(
                                    k.clone(),
                                    a.iter()
                                        .filter_map(|x| x.as_str().map(String::from))
                                        .collect(),
                                );
                            }
                            s => {
                                dep_schemas.insert(k.clone(), child(s));
                            }
                        }
                    }
                }
                let unevaluated = obj.get("unevaluatedProperties").map(child);
                Typed::Object(Object {
                    properties,
                    required,
                    additional_permitted,
                    additional,
                    patterns,
                    dep_arrays,
                    dep_schemas,
                    unevaluated_class: class_of(unevaluated)?,
                    unevaluated,
                    max_properties: uint(v, "maxProperties"),
                    min_properties: uint(v, "minProperties"),
                })
            }
            "array" => {
                let prefix = obj.get("prefixItems").and_then(Value::as_array);
                let (items, tuple, additional_raw) = match (prefix, obj.get("items")) {
                    (Some(p), items) => (None, p.iter().map(child).collect(), items),
                    (None, Some(Value::Array(t))) => (
                        None,
                        t.iter().map(child).collect(),
                        obj.get("additionalItems"),
                    ),
                    (None, items) => (
                        constraint(items).map(child),
                        Vec::new(),
                        obj.get("additionalItems"),
                    ),
                };
                let (additional_permitted, additional) = match additional_raw {
                    None | Some(Value::Bool(true)) => (true, None),
                    Some(Value::Bool(false)) => (false, None),
                    Some(s) => (true, Some(child(s))),
                };
                let unevaluated = obj.get("unevaluatedItems").map(child);
                Typed::Array(Array {
                    items,
                    tuple,
                    additional_permitted,
                    additional,
                    unevaluated_class: class_of(unevaluated)?,
                    unevaluated,
                    max_items: uint(v, "maxItems"),
                    min_items: uint(v, "minItems"),
                    max_contains: uint(v, "maxContains"),
                    min_contains: uint(v, "minContains"),
                    unique: v.get("uniqueItems") == Some(&Value::Bool(true)),
                })
            }
            other => return Err(bad_type(&Value::String(other.to_string()))),
        })
    }
}

fn type_name(t: &str) -> SchemaResult<&'static str> {
    TYPES
        .iter()
        .find(|x| **x == t)
        .copied()
        .ok_or_else(|| bad_type(&Value::String(t.to_string())))
}

fn bad_type(v: &Value) -> SchemaError {
    SchemaError::invalid(format!("JSON Schema type {v} is not a JSON Schema type"))
}

/// `%25` and friends in a JSON pointer fragment.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The subschema carrying `$anchor: name` (or a draft-7 `$id: "#name"`).
fn find_anchor<'a>(v: &'a Value, name: &str, depth: usize) -> Option<&'a Value> {
    if depth > 64 {
        return None;
    }
    match v {
        Value::Object(o) => {
            if o.get("$anchor").and_then(Value::as_str) == Some(name)
                || o.get("$id").and_then(Value::as_str) == Some(&format!("#{name}"))
            {
                return Some(v);
            }
            o.values().find_map(|x| find_anchor(x, name, depth + 1))
        }
        Value::Array(a) => a.iter().find_map(|x| find_anchor(x, name, depth + 1)),
        _ => None,
    }
}
