//! A schema and its references compiled into an index of nodes: every `$id`, anchor and
//! JSON pointer is located first, then each schema location reached from the root
//! becomes one node, compiled once, with `$ref`s as node ids, so recursive schemas are
//! a cycle in the index and not an endless compilation. Nothing is fetched: a reference
//! outside the given documents and the drafts' meta-schemas is an error.

use std::collections::{HashMap, VecDeque};

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::draft::{Draft, meta_schema_draft};
use super::format;
use super::pattern;
use super::uri::{
    DEFAULT_BASE, escape_token, percent_decode, pointer_tokens, resolve, split_fragment,
};

pub type NodeId = usize;

/// One compiled schema location.
#[derive(Debug)]
pub enum Node {
    Bool(bool),
    /// A `$ref` to a draft's meta-schema: the instance must be a schema of that draft.
    Meta(Draft),
    Schema(Box<Keywords>),
}

/// A `$dynamicRef` (2020-12) or `$recursiveRef` (2019-09): the static target, and the
/// nodes of the resources that may take its place from the dynamic scope.
#[derive(Debug)]
pub struct DynamicRef {
    pub target: NodeId,
    pub recursive: bool,
    pub candidates: Vec<(usize, NodeId)>,
}

#[derive(Debug, Default)]
pub struct Keywords {
    pub draft: Option<Draft>,
    pub resource: usize,
    /// Up to draft 7 a `$ref` is the whole schema.
    pub ref_only: bool,
    pub reference: Option<NodeId>,
    pub dynamic_ref: Option<DynamicRef>,
    pub types: Option<Vec<String>>,
    pub enumeration: Option<Vec<Value>>,
    pub constant: Option<Value>,
    pub multiple_of: Option<Number>,
    /// The limit, and whether it is exclusive (draft 4's boolean form or the numeric one).
    pub maximum: Vec<(Number, bool)>,
    pub minimum: Vec<(Number, bool)>,
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub pattern: Option<(String, Regex)>,
    pub format: Option<(String, format::Check)>,
    /// Drafts 6 and 7 assert `contentEncoding` and `contentMediaType`, as the crate did.
    pub content_encoding: Option<String>,
    pub content_media_type: Option<String>,
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub contains: Option<NodeId>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub max_items: Option<u64>,
    pub min_items: Option<u64>,
    pub unique_items: bool,
    pub properties: Vec<(String, NodeId)>,
    pub pattern_properties: Vec<(Regex, NodeId)>,
    pub additional_properties: Option<NodeId>,
    pub required: Vec<String>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, NodeId)>,
    pub property_names: Option<NodeId>,
    pub max_properties: Option<u64>,
    pub min_properties: Option<u64>,
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    pub condition: Option<(NodeId, Option<NodeId>, Option<NodeId>)>,
    pub unevaluated_properties: Option<NodeId>,
    pub unevaluated_items: Option<NodeId>,
}

impl Keywords {
    pub fn draft(&self) -> Draft {
        self.draft.unwrap_or(Draft::Draft202012)
    }
}

/// The compiled index; node 0 is the root.
#[derive(Debug)]
pub struct Compiled {
    pub nodes: Vec<Node>,
    /// The text of each `not` schema, for its error.
    pub texts: HashMap<NodeId, String>,
}

/// A document: the root schema or one of its references.
pub struct Document {
    /// The reference's name; `None` for the root.
    pub name: Option<String>,
    pub value: Value,
    pub base: String,
    pub draft: Draft,
}

type Location = (usize, String);

#[derive(Default)]
struct Index {
    /// Resource URIs (no fragment) to their location.
    resources: HashMap<String, Location>,
    /// (resource URI, anchor) to the location: `$anchor`, `$dynamicAnchor`, `#name` ids.
    anchors: HashMap<(String, String), Location>,
    dynamic_anchors: HashMap<String, Vec<(String, Location)>>,
    /// The base URI and draft in effect at every schema location.
    scopes: HashMap<Location, (String, Draft)>,
}

/// Subschema keywords of a draft: (keyword, shape) where the shape is 's' a schema, 'm' an
/// object of schemas, 'a' an array of schemas, 'i' items (schema or array), 'd'
/// dependencies (schema or array of names).
fn subschema_keywords(draft: Draft) -> Vec<(&'static str, char)> {
    let mut k = vec![
        ("properties", 'm'),
        ("patternProperties", 'm'),
        ("definitions", 'm'),
        ("additionalProperties", 's'),
        ("allOf", 'a'),
        ("anyOf", 'a'),
        ("oneOf", 'a'),
        ("not", 's'),
    ];
    if draft <= Draft::Draft201909 {
        k.extend([("items", 'i'), ("additionalItems", 's')]);
    } else {
        k.extend([("items", 's'), ("prefixItems", 'a')]);
    }
    // `dependencies` stays in force after draft 7, as the `jsonschema` crate kept it.
    k.push(("dependencies", 'd'));
    if draft >= Draft::Draft6 {
        k.extend([("contains", 's'), ("propertyNames", 's')]);
    }
    if draft >= Draft::Draft7 {
        k.extend([("if", 's'), ("then", 's'), ("else", 's')]);
    }
    if draft >= Draft::Draft201909 {
        k.extend([
            ("$defs", 'm'),
            ("dependentSchemas", 'm'),
            ("unevaluatedProperties", 's'),
            ("unevaluatedItems", 's'),
            ("contentSchema", 's'),
        ]);
    }
    k
}

fn children(map: &Map<String, Value>, draft: Draft) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (key, shape) in subschema_keywords(draft) {
        let Some(v) = map.get(key) else { continue };
        match (shape, v) {
            ('m', Value::Object(m)) => {
                for (name, s) in m {
                    out.push((format!("{key}/{}", escape_token(name)), s));
                }
            }
            ('d', Value::Object(m)) => {
                for (name, s) in m {
                    if s.is_object() || s.is_boolean() {
                        out.push((format!("{key}/{}", escape_token(name)), s));
                    }
                }
            }
            ('a' | 'i', Value::Array(items)) => {
                for (i, s) in items.iter().enumerate() {
                    out.push((format!("{key}/{i}"), s));
                }
            }
            ('s' | 'i', v) => out.push((key.to_string(), v)),
            _ => {}
        }
    }
    out
}

/// The draft of a subschema: its own `$schema` counts where it starts a resource.
fn draft_here(map: &Map<String, Value>, outer: Draft, is_root: bool) -> Draft {
    match map.get("$schema").and_then(Value::as_str) {
        Some(uri) if is_root || map.contains_key(outer.id_keyword()) => {
            Draft::from_uri(uri).unwrap_or(outer)
        }
        _ => outer,
    }
}

impl Index {
    fn walk(
        &mut self,
        doc: usize,
        value: &Value,
        pointer: String,
        base: String,
        draft: Draft,
    ) -> Result<(), String> {
        // Iterative, so that the depth of a schema never becomes the depth of our stack.
        let mut stack = vec![(value, pointer, base, draft, true)];
        while let Some((value, pointer, mut base, draft, is_root)) = stack.pop() {
            let loc = (doc, pointer.clone());
            let Value::Object(map) = value else {
                self.scopes.insert(loc, (base, draft));
                continue;
            };
            let draft = draft_here(map, draft, is_root);
            let ref_only = draft.ref_overrides_siblings() && map.contains_key("$ref");
            if let Some(id) = map
                .get(draft.id_keyword())
                .and_then(Value::as_str)
                .filter(|_| !ref_only)
            {
                let resolved = resolve(&base, id);
                let (uri, fragment) = split_fragment(&resolved);
                if !fragment.is_empty() && draft <= Draft::Draft7 {
                    self.anchors
                        .insert((uri.to_string(), fragment.to_string()), loc.clone());
                }
                if !id.starts_with('#') {
                    base = uri.to_string();
                    self.resources.entry(base.clone()).or_insert(loc.clone());
                }
            }
            if draft >= Draft::Draft201909
                && let Some(name) = map.get("$anchor").and_then(Value::as_str)
            {
                self.anchors
                    .insert((base.clone(), name.to_string()), loc.clone());
            }
            if draft >= Draft::Draft202012
                && let Some(name) = map.get("$dynamicAnchor").and_then(Value::as_str)
            {
                self.anchors
                    .entry((base.clone(), name.to_string()))
                    .or_insert(loc.clone());
                self.dynamic_anchors
                    .entry(name.to_string())
                    .or_default()
                    .push((base.clone(), loc.clone()));
            }
            self.scopes.insert(loc, (base.clone(), draft));
            // Beside a `$ref` (up to draft 7) the keywords do not apply, but the
            // identifiers in `definitions` still name their schemas.
            for (suffix, child) in children(map, draft) {
                stack.push((
                    child,
                    format!("{pointer}/{suffix}"),
                    base.clone(),
                    draft,
                    false,
                ));
            }
        }
        Ok(())
    }

    /// The base and draft at a location, from the nearest walked location at or above it.
    fn scope(&self, loc: &Location) -> (String, Draft) {
        let mut pointer = loc.1.as_str();
        loop {
            if let Some(s) = self.scopes.get(&(loc.0, pointer.to_string())) {
                return s.clone();
            }
            match pointer.rfind('/') {
                Some(i) => pointer = &pointer[..i],
                None => return (DEFAULT_BASE.to_string(), Draft::Draft202012),
            }
        }
    }
}

enum Target {
    At(Location),
    Meta(Draft),
}

struct Compiler<'d> {
    documents: &'d [Document],
    index: Index,
    nodes: Vec<Node>,
    ids: HashMap<Location, NodeId>,
    queue: VecDeque<(Location, NodeId)>,
    resource_ids: HashMap<String, usize>,
    meta_ids: HashMap<Draft, NodeId>,
    checked: Vec<bool>,
    texts: HashMap<NodeId, String>,
    validation: bool,
    assert_formats: bool,
}

/// Why a schema does not compile, and which reference is at fault (`None`: the root).
pub struct CompileError {
    pub reference: Option<String>,
    pub message: String,
}

impl From<String> for CompileError {
    fn from(message: String) -> Self {
        CompileError {
            reference: None,
            message,
        }
    }
}

/// Compiles `documents[0]` with the others available to its references.
///
/// `vocabularies` are (validation, format assertion): without validation (a custom
/// meta-schema whose `$vocabulary` leaves it out) only applicators apply; with format
/// assertion `format` asserts in 2019-09 and 2020-12 too.
pub fn compile(
    documents: &[Document],
    (validation, assert_formats): (bool, bool),
) -> Result<Compiled, CompileError> {
    let mut index = Index::default();
    for (i, doc) in documents.iter().enumerate() {
        index
            .resources
            .entry(doc.base.clone())
            .or_insert((i, String::new()));
        index.walk(i, &doc.value, String::new(), doc.base.clone(), doc.draft)?;
    }
    let mut c = Compiler {
        documents,
        index,
        nodes: Vec::new(),
        ids: HashMap::new(),
        queue: VecDeque::new(),
        resource_ids: HashMap::new(),
        meta_ids: HashMap::new(),
        // The root is checked before; a reference only once a `$ref` reaches it, so
        // that an unused reference cannot refuse the schema (as with the crate).
        checked: (0..documents.len()).map(|i| i == 0).collect(),
        texts: HashMap::new(),
        validation,
        assert_formats,
    };
    c.node_at((0, String::new()));
    while let Some((loc, id)) = c.queue.pop_front() {
        if !c.checked[loc.0] {
            c.checked[loc.0] = true;
            let doc = &documents[loc.0];
            super::check::check(&doc.value, doc.draft).map_err(|message| CompileError {
                reference: doc.name.clone(),
                message,
            })?;
        }
        c.nodes[id] = c.build(&loc)?;
    }
    Ok(Compiled {
        nodes: c.nodes,
        texts: c.texts,
    })
}

impl<'d> Compiler<'d> {
    fn value(&self, loc: &Location) -> Option<&'d Value> {
        let documents: &'d [Document] = self.documents;
        documents[loc.0].value.pointer(&loc.1)
    }

    fn node_at(&mut self, loc: Location) -> NodeId {
        if let Some(&id) = self.ids.get(&loc) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::Bool(true));
        self.ids.insert(loc.clone(), id);
        self.queue.push_back((loc, id));
        id
    }

    fn resource_id(&mut self, base: &str) -> usize {
        let next = self.resource_ids.len();
        *self.resource_ids.entry(base.to_string()).or_insert(next)
    }

    fn locate(&self, base: &str, reference: &str) -> Result<Target, String> {
        let absolute = resolve(base, reference);
        let (uri, fragment) = split_fragment(&absolute);
        let unresolvable = || format!("cannot resolve the reference {reference:?} ({absolute})");
        let fragment = percent_decode(fragment).ok_or_else(unresolvable)?;
        let Some(resource) = self.index.resources.get(uri) else {
            return match meta_schema_draft(uri) {
                Some(d) if fragment.is_empty() => Ok(Target::Meta(d)),
                _ => Err(unresolvable()),
            };
        };
        if fragment.is_empty() {
            return Ok(Target::At(resource.clone()));
        }
        if fragment.starts_with('/') {
            let tokens = pointer_tokens(&fragment).ok_or_else(unresolvable)?;
            let mut pointer = resource.1.clone();
            for t in tokens {
                pointer.push('/');
                pointer.push_str(&escape_token(&t));
            }
            let loc = (resource.0, pointer);
            return match self.value(&loc) {
                Some(_) => Ok(Target::At(loc)),
                None => Err(unresolvable()),
            };
        }
        self.index
            .anchors
            .get(&(uri.to_string(), fragment))
            .cloned()
            .map(Target::At)
            .ok_or_else(unresolvable)
    }

    fn target_node(&mut self, target: Target) -> NodeId {
        match target {
            Target::At(loc) => self.node_at(loc),
            Target::Meta(d) => {
                if let Some(&id) = self.meta_ids.get(&d) {
                    return id;
                }
                let id = self.nodes.len();
                self.nodes.push(Node::Meta(d));
                self.meta_ids.insert(d, id);
                id
            }
        }
    }

    fn child(&mut self, loc: &Location, suffix: &str) -> Option<NodeId> {
        let child = (loc.0, format!("{}/{suffix}", loc.1));
        self.value(&child)?;
        Some(self.node_at(child))
    }

    fn build(&mut self, loc: &Location) -> Result<Node, String> {
        let (base, draft) = self.index.scope(loc);
        let value = self.value(loc).ok_or("a schema location vanished")?;
        let map = match value {
            Value::Bool(b) => return Ok(Node::Bool(*b)),
            Value::Object(map) => map,
            _ => return Ok(Node::Bool(true)),
        };
        let mut k = Keywords {
            draft: Some(draft),
            resource: self.resource_id(&base),
            ..Default::default()
        };
        let at = |key: &str| {
            if loc.1.is_empty() {
                format!("{key:?}")
            } else {
                format!("{key:?} at {}", loc.1)
            }
        };
        if let Some(r) = map.get("$ref").and_then(Value::as_str) {
            let target = self
                .locate(&base, r)
                .map_err(|e| format!("{}: {e}", at("$ref")))?;
            k.reference = Some(self.target_node(target));
            if draft.ref_overrides_siblings() {
                k.ref_only = true;
                return Ok(Node::Schema(Box::new(k)));
            }
        }
        if draft == Draft::Draft202012
            && let Some(r) = map.get("$dynamicRef").and_then(Value::as_str)
        {
            k.dynamic_ref = Some(
                self.dynamic_ref(&base, r)
                    .map_err(|e| format!("{}: {e}", at("$dynamicRef")))?,
            );
        }
        if draft == Draft::Draft201909
            && let Some(r) = map.get("$recursiveRef").and_then(Value::as_str)
        {
            k.dynamic_ref = Some(
                self.recursive_ref(&base, r)
                    .map_err(|e| format!("{}: {e}", at("$recursiveRef")))?,
            );
        }
        if self.validation {
            self.assertions(map, draft, &mut k, loc)?;
        }
        // `format` is a vocabulary of its own, not part of validation.
        if let Some(f) = map.get("format").and_then(Value::as_str) {
            k.format =
                format::checker(f, draft, self.assert_formats).map(|check| (f.to_string(), check));
        }
        self.applicators(map, draft, &mut k, loc);
        Ok(Node::Schema(Box::new(k)))
    }

    fn dynamic_ref(&mut self, base: &str, reference: &str) -> Result<DynamicRef, String> {
        let target = self.locate(base, reference)?;
        let (_, fragment) = split_fragment(reference);
        // Only a reference whose static target declares the same `$dynamicAnchor` is
        // dynamic; any other is a plain `$ref`.
        let bookended = match &target {
            Target::At(loc) => {
                !fragment.is_empty()
                    && !fragment.starts_with('/')
                    && self
                        .value(loc)
                        .and_then(|v| v.get("$dynamicAnchor"))
                        .and_then(Value::as_str)
                        == Some(fragment)
            }
            Target::Meta(_) => false,
        };
        let target = self.target_node(target);
        let mut candidates = Vec::new();
        if bookended {
            let locations = self
                .index
                .dynamic_anchors
                .get(fragment)
                .cloned()
                .unwrap_or_default();
            for (resource, loc) in locations {
                let r = self.resource_id(&resource);
                candidates.push((r, self.node_at(loc)));
            }
        }
        Ok(DynamicRef {
            target,
            recursive: false,
            candidates,
        })
    }

    fn recursive_ref(&mut self, base: &str, reference: &str) -> Result<DynamicRef, String> {
        let target = self.locate(base, reference)?;
        let anchored = |value: Option<&Value>| {
            value.and_then(|v| v.get("$recursiveAnchor")) == Some(&Value::Bool(true))
        };
        let dynamic = matches!(&target, Target::At(loc) if anchored(self.value(loc)));
        let target = self.target_node(target);
        let mut candidates = Vec::new();
        if dynamic {
            let mut resources: Vec<(String, Location)> = self
                .index
                .resources
                .iter()
                .map(|(uri, loc)| (uri.clone(), loc.clone()))
                .collect();
            resources.sort();
            for (uri, loc) in resources {
                if anchored(self.value(&loc)) {
                    let r = self.resource_id(&uri);
                    candidates.push((r, self.node_at(loc)));
                }
            }
        }
        Ok(DynamicRef {
            target,
            recursive: true,
            candidates,
        })
    }

    fn assertions(
        &mut self,
        map: &'d Map<String, Value>,
        draft: Draft,
        k: &mut Keywords,
        loc: &Location,
    ) -> Result<(), String> {
        let count = |key: &str| {
            map.get(key)
                .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
        };
        k.types = match map.get("type") {
            Some(Value::String(t)) => Some(vec![t.clone()]),
            Some(Value::Array(ts)) => Some(
                ts.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
            ),
            _ => None,
        };
        k.enumeration = map.get("enum").and_then(Value::as_array).cloned();
        if draft >= Draft::Draft6 {
            k.constant = map.get("const").cloned();
        }
        k.multiple_of = map.get("multipleOf").and_then(Value::as_number).cloned();
        for (key, exclusive_key, out) in [
            ("maximum", "exclusiveMaximum", &mut k.maximum),
            ("minimum", "exclusiveMinimum", &mut k.minimum),
        ] {
            let limit = map.get(key).and_then(Value::as_number);
            if draft == Draft::Draft4 {
                let exclusive = map.get(exclusive_key) == Some(&Value::Bool(true));
                out.extend(limit.map(|n| (n.clone(), exclusive)));
            } else {
                out.extend(limit.map(|n| (n.clone(), false)));
                out.extend(
                    map.get(exclusive_key)
                        .and_then(Value::as_number)
                        .map(|n| (n.clone(), true)),
                );
            }
        }
        k.max_length = count("maxLength");
        k.min_length = count("minLength");
        if let Some(p) = map.get("pattern").and_then(Value::as_str) {
            let re = pattern::compile(p).map_err(|e| format!("\"pattern\" at {}: {e}", loc.1))?;
            k.pattern = Some((p.to_string(), re));
        }
        if matches!(draft, Draft::Draft6 | Draft::Draft7) {
            let text = |key: &str| map.get(key).and_then(Value::as_str).map(String::from);
            k.content_encoding = text("contentEncoding");
            k.content_media_type = text("contentMediaType");
        }
        k.max_items = count("maxItems");
        k.min_items = count("minItems");
        k.unique_items = map.get("uniqueItems") == Some(&Value::Bool(true));
        if draft >= Draft::Draft201909 {
            k.max_contains = count("maxContains");
            k.min_contains = count("minContains");
        }
        k.max_properties = count("maxProperties");
        k.min_properties = count("minProperties");
        k.required = strings(map.get("required"));
        let mut dependent = Vec::new();
        if let Some(Value::Object(deps)) = map.get("dependencies") {
            dependent.extend(
                deps.iter()
                    .filter(|(_, v)| v.is_array())
                    .map(|(n, v)| (n.clone(), strings(Some(v)))),
            );
        }
        if draft >= Draft::Draft201909
            && let Some(Value::Object(deps)) = map.get("dependentRequired")
        {
            dependent.extend(deps.iter().map(|(n, v)| (n.clone(), strings(Some(v)))));
        }
        k.dependent_required = dependent;
        Ok(())
    }

    fn applicators(
        &mut self,
        map: &'d Map<String, Value>,
        draft: Draft,
        k: &mut Keywords,
        loc: &Location,
    ) {
        let names = |key: &str| -> Vec<String> {
            match map.get(key) {
                Some(Value::Object(m)) => m.keys().cloned().collect(),
                _ => Vec::new(),
            }
        };
        for name in names("properties") {
            let id = self.child(loc, &format!("properties/{}", escape_token(&name)));
            k.properties.extend(id.map(|id| (name, id)));
        }
        for p in names("patternProperties") {
            if let (Ok(re), Some(id)) = (
                pattern::compile(&p),
                self.child(loc, &format!("patternProperties/{}", escape_token(&p))),
            ) {
                k.pattern_properties.push((re, id));
            }
        }
        k.additional_properties = self
            .child(loc, "additionalProperties")
            .filter(|_| map.contains_key("additionalProperties"));
        for dependent_key in ["dependencies", "dependentSchemas"] {
            if dependent_key == "dependentSchemas" && draft < Draft::Draft201909 {
                continue;
            }
            let Some(Value::Object(deps)) = map.get(dependent_key) else {
                continue;
            };
            let schemas: Vec<String> = deps
                .iter()
                .filter(|(_, v)| !v.is_array())
                .map(|(n, _)| n.clone())
                .collect();
            for name in schemas {
                let id = self.child(loc, &format!("{dependent_key}/{}", escape_token(&name)));
                k.dependent_schemas.extend(id.map(|id| (name, id)));
            }
        }
        let list = |c: &mut Self, key: &str| -> Vec<NodeId> {
            let n = map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
            (0..n)
                .filter_map(|i| c.child(loc, &format!("{key}/{i}")))
                .collect()
        };
        k.all_of = list(self, "allOf");
        k.any_of = list(self, "anyOf");
        k.one_of = list(self, "oneOf");
        k.not = self.child(loc, "not");
        if let (Some(id), Some(schema)) = (k.not, map.get("not")) {
            let text = schema.to_string();
            let text = if text.chars().count() > 80 {
                format!("{}...", text.chars().take(77).collect::<String>())
            } else {
                text
            };
            self.texts.insert(id, text);
        }
        match map.get("items") {
            Some(Value::Array(_)) if draft <= Draft::Draft201909 => {
                k.prefix_items = list(self, "items");
                k.items = self.child(loc, "additionalItems");
            }
            Some(_) => {
                k.items = self.child(loc, "items");
                if draft >= Draft::Draft202012 {
                    k.prefix_items = list(self, "prefixItems");
                }
            }
            None if draft >= Draft::Draft202012 => k.prefix_items = list(self, "prefixItems"),
            None => {}
        }
        if draft >= Draft::Draft6 {
            k.contains = self.child(loc, "contains");
            k.property_names = self.child(loc, "propertyNames");
        }
        if draft >= Draft::Draft7
            && let Some(cond) = self.child(loc, "if")
        {
            let then = self.child(loc, "then");
            let otherwise = self.child(loc, "else");
            k.condition = Some((cond, then, otherwise));
        }
        if draft >= Draft::Draft201909 {
            k.unevaluated_properties = self.child(loc, "unevaluatedProperties");
            k.unevaluated_items = self.child(loc, "unevaluatedItems");
        }
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}
