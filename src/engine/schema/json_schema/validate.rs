//! Validation over the compiled index: the first failing leaf keyword is the error, with
//! the instance path where it failed. Successful subschemas report which properties and
//! items they evaluated, for `unevaluatedProperties` and `unevaluatedItems`.

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

use serde_json::Value;

use super::compile::{Compiled, DynamicRef, Keywords, Node, NodeId};
use super::draft::Draft;
use super::uri::escape_token;
use super::value::{compare, is_integer, is_multiple_of, json_equal, json_hash};

/// Evaluation deeper than this (a value nested too deeply, or `$ref`s that loop without
/// descending into the value) stops with an error instead of exhausting the stack.
pub const MAX_EVALUATION_DEPTH: usize = 1024;

/// How deep evaluation goes on the caller's stack (whatever its size, 2 MiB for Tokio's
/// and the test threads); deeper, it starts again on a thread with [`DEEP_STACK`].
const SHALLOW_DEPTH: usize = 96;
const DEEP_STACK: usize = 64 << 20;

/// The first failure: its message and the JSON pointer of the value that failed.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub path: String,
}

/// Where in the instance the evaluation is: a chain through the evaluation's frames.
#[derive(Clone, Copy)]
enum Step<'p> {
    Root,
    Key(&'p str, &'p Step<'p>),
    Index(usize, &'p Step<'p>),
}

impl Step<'_> {
    fn render(&self) -> String {
        let mut tokens = Vec::new();
        let mut at = self;
        loop {
            match at {
                Step::Root => break,
                Step::Key(k, up) => {
                    tokens.push(escape_token(k));
                    at = up;
                }
                Step::Index(i, up) => {
                    tokens.push(i.to_string());
                    at = up;
                }
            }
        }
        tokens.iter().rev().map(|t| format!("/{t}")).collect()
    }
}

/// What a successful subschema evaluated of an object or an array.
#[derive(Default)]
struct Evaluated<'v> {
    all_properties: bool,
    properties: HashSet<&'v str>,
    all_items: bool,
    items_prefix: usize,
    items: HashSet<usize>,
}

impl<'v> Evaluated<'v> {
    fn merge(&mut self, other: Evaluated<'v>) {
        self.all_properties |= other.all_properties;
        self.properties.extend(other.properties);
        self.all_items |= other.all_items;
        self.items_prefix = self.items_prefix.max(other.items_prefix);
        self.items.extend(other.items);
    }

    fn has_item(&self, i: usize) -> bool {
        self.all_items || i < self.items_prefix || self.items.contains(&i)
    }
}

type Outcome<'v> = Result<Evaluated<'v>, Failure>;

pub struct Evaluator<'c> {
    compiled: &'c Compiled,
    /// The schema resources entered, outermost first: the dynamic scope.
    scope: Vec<usize>,
    depth: usize,
    limit: usize,
    /// The first place evaluation hit `limit`.
    too_deep_at: Option<Failure>,
}

/// Validates `value`: on the caller's stack, and only when that is not deep enough, on a
/// thread of its own with a large stack (values and `$ref` chains that deep are rare).
pub fn validate(compiled: &Compiled, value: &Value) -> Result<(), Failure> {
    let mut shallow = Evaluator::new(compiled, SHALLOW_DEPTH);
    let outcome = shallow.eval(0, value, &Step::Root).map(|_| ());
    if shallow.too_deep_at.is_none() {
        return outcome;
    }
    std::thread::scope(|scope| {
        let deep = std::thread::Builder::new()
            .name("json-schema-deep".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, || {
                let mut deep = Evaluator::new(compiled, MAX_EVALUATION_DEPTH);
                let outcome = deep.eval(0, value, &Step::Root).map(|_| ());
                // A branch cut off by the limit may have turned an `anyOf` or a `not`;
                // then no verdict is trusted but the limit's.
                match deep.too_deep_at.take() {
                    Some(failure) => Err(failure),
                    None => outcome,
                }
            });
        match deep {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(Failure {
                    message: "the validation thread failed".into(),
                    path: String::new(),
                })
            }),
            Err(_) => Err(shallow.too_deep_at.take().unwrap_or_else(|| Failure {
                message: "no thread to validate a deeply nested value".into(),
                path: String::new(),
            })),
        }
    })
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn type_matches(name: &str, value: &Value, draft: Draft) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => is_integer(value, draft),
        _ => false,
    }
}

impl<'c> Evaluator<'c> {
    fn new(compiled: &'c Compiled, limit: usize) -> Self {
        Evaluator {
            compiled,
            scope: Vec::new(),
            depth: 0,
            limit,
            too_deep_at: None,
        }
    }

    fn eval<'v>(&mut self, id: NodeId, value: &'v Value, at: &Step<'_>) -> Outcome<'v> {
        let fail = |message: String| {
            Err(Failure {
                message,
                path: at.render(),
            })
        };
        if self.depth >= self.limit {
            let failure = Failure {
                message: format!(
                    "the evaluation is nested deeper than {} levels (a value nested too deeply or a $ref that loops)",
                    self.limit
                ),
                path: at.render(),
            };
            if self.too_deep_at.is_none() {
                self.too_deep_at = Some(Failure {
                    message: failure.message.clone(),
                    path: failure.path.clone(),
                });
            }
            return Err(failure);
        }
        let compiled = self.compiled;
        match &compiled.nodes[id] {
            Node::Bool(true) => Ok(Evaluated::default()),
            Node::Bool(false) => fail(format!("False schema does not allow {}", short(value))),
            Node::Meta(draft) => match super::check::check(value, *draft) {
                Ok(()) => Ok(Evaluated::default()),
                Err(e) => fail(format!("{} is not a valid schema: {e}", short(value))),
            },
            Node::Schema(k) => {
                let entered = self.scope.last() != Some(&k.resource);
                if entered {
                    self.scope.push(k.resource);
                }
                self.depth += 1;
                let outcome = self.keywords(k, value, at);
                self.depth -= 1;
                if entered {
                    self.scope.pop();
                }
                outcome
            }
        }
    }

    fn keywords<'v>(&mut self, k: &Keywords, value: &'v Value, at: &Step<'_>) -> Outcome<'v> {
        if k.ref_only {
            return self.eval(k.reference.unwrap_or(0), value, at);
        }
        let fail = |message: String| {
            Err(Failure {
                message,
                path: at.render(),
            })
        };
        if let Some(message) = leaf_failure(k, value) {
            return fail(message);
        }
        let mut evaluated = Evaluated::default();
        if let Some(r) = k.reference {
            evaluated.merge(self.eval(r, value, at)?);
        }
        if let Some(d) = &k.dynamic_ref {
            let target = self.dynamic_target(d);
            evaluated.merge(self.eval(target, value, at)?);
        }
        for &s in &k.all_of {
            evaluated.merge(self.eval(s, value, at)?);
        }
        if !k.any_of.is_empty() {
            let mut any = false;
            for &s in &k.any_of {
                if let Ok(e) = self.eval(s, value, at) {
                    any = true;
                    evaluated.merge(e);
                }
            }
            if !any {
                return fail(message(
                    "is not valid under any of the schemas listed in the 'anyOf' keyword",
                    value,
                ));
            }
        }
        if !k.one_of.is_empty() {
            let mut valid = None;
            for &s in &k.one_of {
                if let Ok(e) = self.eval(s, value, at) {
                    if valid.is_some() {
                        return fail(message(
                            "is valid under more than one of the schemas listed in the 'oneOf' keyword",
                            value,
                        ));
                    }
                    valid = Some(e);
                }
            }
            match valid {
                Some(e) => evaluated.merge(e),
                None => {
                    return fail(message(
                        "is not valid under any of the schemas listed in the 'oneOf' keyword",
                        value,
                    ));
                }
            }
        }
        if let Some(n) = k.not
            && self.eval(n, value, at).is_ok()
        {
            let schema = self
                .compiled
                .texts
                .get(&n)
                .map_or("the 'not' schema", String::as_str);
            return fail(format!("{schema} is not allowed for {}", short(value)));
        }
        if let Some((cond, then, otherwise)) = k.condition {
            match self.eval(cond, value, at) {
                Ok(e) => {
                    evaluated.merge(e);
                    if let Some(t) = then {
                        evaluated.merge(self.eval(t, value, at)?);
                    }
                }
                Err(_) => {
                    if let Some(o) = otherwise {
                        evaluated.merge(self.eval(o, value, at)?);
                    }
                }
            }
        }
        match value {
            Value::Array(items) => self.array(k, items, value, at, &mut evaluated)?,
            Value::Object(map) => self.object(k, map, value, at, &mut evaluated)?,
            _ => {}
        }
        Ok(evaluated)
    }

    fn refuses_all(&self, id: NodeId) -> bool {
        matches!(self.compiled.nodes[id], Node::Bool(false))
    }

    fn dynamic_target(&self, d: &DynamicRef) -> NodeId {
        if d.candidates.is_empty() {
            return d.target;
        }
        let find = |resource: &usize| {
            d.candidates
                .iter()
                .find(|(r, _)| r == resource)
                .map(|(_, n)| *n)
        };
        if d.recursive {
            // 2019-09: outwards from the innermost resource while each declares
            // `$recursiveAnchor: true`; the last of them is the target.
            let mut target = d.target;
            for r in self.scope.iter().rev() {
                match find(r) {
                    Some(n) => target = n,
                    None => break,
                }
            }
            target
        } else {
            // 2020-12: the outermost resource in the dynamic scope with the anchor.
            self.scope.iter().find_map(find).unwrap_or(d.target)
        }
    }

    fn array<'v>(
        &mut self,
        k: &Keywords,
        items: &'v [Value],
        value: &Value,
        at: &Step<'_>,
        evaluated: &mut Evaluated<'v>,
    ) -> Result<(), Failure> {
        let fail = |message: String| Failure {
            message,
            path: at.render(),
        };
        if let Some(message) = array_failure(k, items, value) {
            return Err(fail(message));
        }
        for (i, (&s, item)) in k.prefix_items.iter().zip(items).enumerate() {
            self.eval(s, item, &Step::Index(i, at))?;
        }
        evaluated.items_prefix = evaluated
            .items_prefix
            .max(k.prefix_items.len().min(items.len()));
        if let Some(s) = k.items {
            let extra = items.len().saturating_sub(k.prefix_items.len());
            // `additionalItems: false` (2019-09 and older) names what it refuses, as the
            // crate did; 2020-12's `items: false` is a false schema like any other.
            if extra > 0
                && !k.prefix_items.is_empty()
                && k.draft() <= Draft::Draft201909
                && self.refuses_all(s)
            {
                let listed: Vec<String> = items[k.prefix_items.len()..].iter().map(short).collect();
                return Err(fail(unexpected("Additional items", listed)));
            }
            for (i, item) in items.iter().enumerate().skip(k.prefix_items.len()) {
                self.eval(s, item, &Step::Index(i, at))?;
            }
            evaluated.all_items = true;
        }
        if let Some(c) = k.contains {
            let mut matched = 0u64;
            for (i, item) in items.iter().enumerate() {
                if self.eval(c, item, &Step::Index(i, at)).is_ok() {
                    matched += 1;
                    if k.draft() >= Draft::Draft202012 {
                        evaluated.items.insert(i);
                    }
                }
            }
            let min = k.min_contains.unwrap_or(1);
            if matched < min {
                return Err(if k.min_contains.is_some() {
                    fail(format!(
                        "{} contains fewer than {} valid under the 'contains' schema",
                        short(value),
                        counted(min, "item", "items")
                    ))
                } else {
                    fail(format!(
                        "None of {} are valid under the given schema",
                        short(value)
                    ))
                });
            }
            if let Some(max) = k.max_contains
                && matched > max
            {
                return Err(fail(format!(
                    "{} contains more than {} valid under the 'contains' schema",
                    short(value),
                    counted(max, "item", "items")
                )));
            }
        }
        if let Some(u) = k.unevaluated_items {
            if self.refuses_all(u) {
                let listed: Vec<String> = (0..items.len())
                    .filter(|&i| !evaluated.has_item(i))
                    .map(|i| format!("'{}'", short(&items[i])))
                    .collect();
                if !listed.is_empty() {
                    return Err(fail(unexpected("Unevaluated items", listed)));
                }
            }
            for (i, item) in items.iter().enumerate() {
                if !evaluated.has_item(i) {
                    self.eval(u, item, &Step::Index(i, at)).map_err(|e| {
                        if matches!(self.compiled.nodes[u], Node::Bool(false)) {
                            Failure {
                                message: format!(
                                    "Unevaluated items are not allowed ({} was unexpected)",
                                    short(item)
                                ),
                                path: at.render(),
                            }
                        } else {
                            e
                        }
                    })?;
                }
            }
            evaluated.all_items = true;
        }
        Ok(())
    }

    fn object<'v>(
        &mut self,
        k: &Keywords,
        map: &'v serde_json::Map<String, Value>,
        value: &'v Value,
        at: &Step<'_>,
        evaluated: &mut Evaluated<'v>,
    ) -> Result<(), Failure> {
        let fail = |message: String| Failure {
            message,
            path: at.render(),
        };
        if let Some(message) = object_failure(k, map, value) {
            return Err(fail(message));
        }
        for (name, s) in &k.dependent_schemas {
            if map.contains_key(name) {
                evaluated.merge(self.eval(*s, value, at)?);
            }
        }
        if let Some(p) = k.property_names {
            for key in map.keys() {
                let name = Value::String(key.clone());
                self.eval(p, &name, at).map_err(|e| Failure {
                    message: format!("property name {key:?} is invalid: {}", e.message),
                    path: at.render(),
                })?;
            }
        }
        let mut matched: HashSet<&str> = HashSet::new();
        for (name, s) in &k.properties {
            if let Some((key, v)) = map.get_key_value(name) {
                self.eval(*s, v, &Step::Key(key, at))?;
                matched.insert(key.as_str());
            }
        }
        if !k.pattern_properties.is_empty() {
            for (key, v) in map {
                for (re, s) in &k.pattern_properties {
                    if re.is_match(key) {
                        self.eval(*s, v, &Step::Key(key, at))?;
                        matched.insert(key.as_str());
                    }
                }
            }
        }
        if let Some(s) = k.additional_properties {
            let refuse_all = matches!(self.compiled.nodes[s], Node::Bool(false));
            for (key, v) in map {
                if matched.contains(key.as_str()) {
                    continue;
                }
                if refuse_all {
                    let extra: Vec<String> = map
                        .keys()
                        .filter(|k| !matched.contains(k.as_str()))
                        .map(|k| format!("'{k}'"))
                        .collect();
                    return Err(fail(unexpected("Additional properties", extra)));
                }
                self.eval(s, v, &Step::Key(key, at))?;
            }
            evaluated.all_properties = true;
        }
        evaluated.properties.extend(matched);
        if let Some(u) = k.unevaluated_properties {
            let refuse_all = matches!(self.compiled.nodes[u], Node::Bool(false));
            for (key, v) in map {
                if evaluated.all_properties || evaluated.properties.contains(key.as_str()) {
                    continue;
                }
                if refuse_all {
                    let listed: Vec<String> = map
                        .keys()
                        .filter(|k| !evaluated.properties.contains(k.as_str()))
                        .map(|k| format!("'{k}'"))
                        .collect();
                    return Err(fail(unexpected("Unevaluated properties", listed)));
                }
                self.eval(u, v, &Step::Key(key, at))?;
            }
            evaluated.all_properties = true;
        }
        Ok(())
    }
}

/// `uniqueItems` by JSON equality, comparing only items whose hashes agree.
fn unique(items: &[Value]) -> bool {
    let mut buckets: HashMap<u64, Vec<&Value>> = HashMap::new();
    for item in items {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        json_hash(item, &mut h);
        let bucket = buckets.entry(h.finish()).or_default();
        if bucket.iter().any(|other| json_equal(other, item)) {
            return false;
        }
        bucket.push(item);
    }
    true
}

/// Why a string fails `contentEncoding` (base64) or `contentMediaType`
/// (application/json); other encodings and media types are not checked.
fn content_failure(k: &Keywords, text: &str) -> Option<String> {
    use base64::Engine as _;
    let decoded;
    let mut body = text.as_bytes();
    if let Some(encoding) = &k.content_encoding
        && encoding.eq_ignore_ascii_case("base64")
    {
        match base64::engine::general_purpose::STANDARD.decode(text) {
            Ok(bytes) => {
                decoded = bytes;
                body = &decoded;
            }
            Err(_) => {
                return Some(format!(
                    "is not compliant with {encoding:?} content encoding"
                ));
            }
        }
    }
    match &k.content_media_type {
        Some(media) if media.eq_ignore_ascii_case("application/json") => {
            match serde_json::from_slice::<Value>(body) {
                Ok(_) => None,
                Err(_) => Some(format!("is not compliant with {media:?} media type")),
            }
        }
        _ => None,
    }
}

/// The keywords that look at the value alone: the first one failing says why. Kept out
/// of the recursive frames, whose size bounds how deep evaluation can go on a stack.
#[inline(never)]
fn leaf_failure(k: &Keywords, value: &Value) -> Option<String> {
    let draft = k.draft();
    if let Some(types) = &k.types
        && !types.iter().any(|t| type_matches(t, value, draft))
    {
        let names: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
        let noun = if names.len() == 1 { "type" } else { "types" };
        // Sorted, as the `jsonschema` crate named them.
        let mut names = names;
        names.sort();
        return Some(format!(
            "{} is not of {noun} {}",
            short(value),
            names.join(", ")
        ));
    }
    if let Some(options) = &k.enumeration
        && !options.iter().any(|o| json_equal(o, value))
    {
        return Some(format!(
            "{} is not one of {}",
            short(value),
            candidates(options)
        ));
    }
    if let Some(expected) = &k.constant
        && !json_equal(expected, value)
    {
        return Some(format!("{} was expected", short(expected)));
    }
    match value {
        Value::Number(n) => {
            if let Some(m) = &k.multiple_of
                && !is_multiple_of(n, m)
            {
                return Some(format!("{n} is not a multiple of {m}"));
            }
            for (limit, exclusive) in &k.maximum {
                let o = compare(n, limit);
                let bad = o.is_none_or(|o| o.is_gt() || (*exclusive && o.is_eq()));
                if bad {
                    let how = if *exclusive {
                        "greater than or equal to"
                    } else {
                        "greater than"
                    };
                    return Some(format!("{n} is {how} the maximum of {limit}"));
                }
            }
            for (limit, exclusive) in &k.minimum {
                let o = compare(n, limit);
                let bad = o.is_none_or(|o| o.is_lt() || (*exclusive && o.is_eq()));
                if bad {
                    let how = if *exclusive {
                        "less than or equal to"
                    } else {
                        "less than"
                    };
                    return Some(format!("{n} is {how} the minimum of {limit}"));
                }
            }
        }
        Value::String(s) => {
            if k.max_length.is_some() || k.min_length.is_some() {
                let chars = s.chars().count() as u64;
                if k.max_length.is_some_and(|m| chars > m) {
                    return Some(format!(
                        "{} is longer than {}",
                        short(value),
                        counted(k.max_length.unwrap(), "character", "characters")
                    ));
                }
                if k.min_length.is_some_and(|m| chars < m) {
                    return Some(format!(
                        "{} is shorter than {}",
                        short(value),
                        counted(k.min_length.unwrap(), "character", "characters")
                    ));
                }
            }
            if let Some((text, re)) = &k.pattern
                && !re.is_match(s)
            {
                return Some(format!("{} does not match {text:?}", short(value)));
            }
            if let Some(why) = content_failure(k, s) {
                return Some(format!("{} {why}", short(value)));
            }
            if let Some((name, check)) = &k.format
                && !check(s)
            {
                return Some(format!("{} is not a {name:?}", short(value)));
            }
        }
        _ => {}
    }
    None
}

#[cold]
#[inline(never)]
fn message(what: &str, value: &Value) -> String {
    format!("{} {what}", short(value))
}

#[inline(never)]
fn array_failure(k: &Keywords, items: &[Value], value: &Value) -> Option<String> {
    let n = items.len() as u64;
    if k.max_items.is_some_and(|m| n > m) {
        return Some(format!(
            "{} has more than {}",
            short(value),
            counted(k.max_items.unwrap(), "item", "items")
        ));
    }
    if k.min_items.is_some_and(|m| n < m) {
        return Some(format!(
            "{} has less than {}",
            short(value),
            counted(k.min_items.unwrap(), "item", "items")
        ));
    }
    if k.unique_items && !unique(items) {
        return Some(format!("{} has non-unique elements", short(value)));
    }
    None
}

#[inline(never)]
fn object_failure(
    k: &Keywords,
    map: &serde_json::Map<String, Value>,
    value: &Value,
) -> Option<String> {
    let n = map.len() as u64;
    if k.max_properties.is_some_and(|m| n > m) {
        return Some(format!(
            "{} has more than {}",
            short(value),
            counted(k.max_properties.unwrap(), "property", "properties")
        ));
    }
    if k.min_properties.is_some_and(|m| n < m) {
        return Some(format!(
            "{} has less than {}",
            short(value),
            counted(k.min_properties.unwrap(), "property", "properties")
        ));
    }
    for name in &k.required {
        if !map.contains_key(name) {
            return Some(format!("{name:?} is a required property"));
        }
    }
    for (name, needs) in &k.dependent_required {
        if map.contains_key(name)
            && let Some(missing) = needs.iter().find(|m| !map.contains_key(*m))
        {
            return Some(format!("{missing:?} is a required property"));
        }
    }
    None
}

/// `1 item`, `2 items`.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `Additional properties are not allowed ('a', 'b' were unexpected)`.
fn unexpected(what: &str, listed: Vec<String>) -> String {
    let verb = if listed.len() == 1 { "was" } else { "were" };
    format!(
        "{what} are not allowed ({} {verb} unexpected)",
        listed.join(", ")
    )
}

/// `1, "a" or 3 other candidates`, as the `jsonschema` crate listed `enum` values.
fn candidates(options: &[Value]) -> String {
    match options {
        [] => "no value".to_string(),
        [one] => short(one),
        [a, b] => format!("{} or {}", short(a), short(b)),
        [a, b, rest @ ..] => {
            let noun = if rest.len() == 1 {
                "candidate"
            } else {
                "candidates"
            };
            format!("{}, {} or {} other {noun}", short(a), short(b), rest.len())
        }
    }
}
