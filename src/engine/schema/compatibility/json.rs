//! JSON Schema compatibility by the rules of the Confluent registry's JSON Schema
//! checker (its `SchemaDiff`, strict policy): the writer's schema is the "original",
//! the reader's the "update". Each schema is first read as the typed schema Confluent's
//! loader builds ([`super::json_model`]): `type` lists become `anyOf`, several keyword
//! groups an implied `allOf`, `$ref` is followed (local pointers and schema references
//! by name). Then the typed schemas are diffed and only the differences that checker
//! does not allow are listed: open/closed/partially open content models, `required`,
//! enums and consts, numeric ranges, string lengths and patterns, array bounds,
//! combined schemas (matched one to one), `not`, and type narrowing. Object and array
//! content models are compared in [`super::json_content`].

use std::collections::HashSet;

use serde_json::Value;

use super::SchemaText;
use super::json_model::{Combined, Criterion, Docs, Loc, Number, Typed};
use crate::engine::schema::error::{SchemaError, SchemaResult};

/// The difference types Confluent's strict policy allows (every other one fails).
const COMPATIBLE: &[&str] = &[
    "ID_CHANGED",
    "DESCRIPTION_CHANGED",
    "TITLE_CHANGED",
    "DEFAULT_CHANGED",
    "SCHEMA_REMOVED",
    "TYPE_EXTENDED",
    "MAX_LENGTH_INCREASED",
    "MAX_LENGTH_REMOVED",
    "MIN_LENGTH_DECREASED",
    "MIN_LENGTH_REMOVED",
    "PATTERN_REMOVED",
    "MAXIMUM_INCREASED",
    "MAXIMUM_REMOVED",
    "MINIMUM_DECREASED",
    "MINIMUM_REMOVED",
    "EXCLUSIVE_MAXIMUM_INCREASED",
    "EXCLUSIVE_MAXIMUM_REMOVED",
    "EXCLUSIVE_MINIMUM_DECREASED",
    "EXCLUSIVE_MINIMUM_REMOVED",
    "MULTIPLE_OF_REDUCED",
    "MULTIPLE_OF_REMOVED",
    "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED",
    "REQUIRED_ATTRIBUTE_REMOVED",
    "DEPENDENCY_ARRAY_NARROWED",
    "DEPENDENCY_ARRAY_REMOVED",
    "DEPENDENCY_SCHEMA_REMOVED",
    "MAX_PROPERTIES_INCREASED",
    "MAX_PROPERTIES_REMOVED",
    "MIN_PROPERTIES_DECREASED",
    "MIN_PROPERTIES_REMOVED",
    "ADDITIONAL_PROPERTIES_ADDED",
    "ADDITIONAL_PROPERTIES_EXTENDED",
    "UNEVALUATED_PROPERTIES_ADDED",
    "UNEVALUATED_PROPERTIES_EXTENDED",
    "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "MAX_ITEMS_INCREASED",
    "MAX_ITEMS_REMOVED",
    "MIN_ITEMS_DECREASED",
    "MIN_ITEMS_REMOVED",
    "MAX_CONTAINS_INCREASED",
    "MAX_CONTAINS_REMOVED",
    "MIN_CONTAINS_DECREASED",
    "MIN_CONTAINS_REMOVED",
    "UNIQUE_ITEMS_REMOVED",
    "ADDITIONAL_ITEMS_ADDED",
    "ADDITIONAL_ITEMS_EXTENDED",
    "UNEVALUATED_ITEMS_ADDED",
    "UNEVALUATED_ITEMS_EXTENDED",
    "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
    "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
    "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "ENUM_ARRAY_EXTENDED",
    "COMBINED_TYPE_EXTENDED",
    "PRODUCT_TYPE_NARROWED",
    "SUM_TYPE_EXTENDED",
    "NOT_TYPE_NARROWED",
];

/// One difference at a path (`#/properties/a`), with what changed.
#[derive(Debug, Clone)]
pub(super) struct Difference {
    pub(super) kind: &'static str,
    pub(super) path: String,
    pub(super) detail: String,
}

pub(super) fn compatible(found: &[Difference]) -> bool {
    found.iter().all(|d| COMPATIBLE.contains(&d.kind))
}

pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    backward: bool,
) -> SchemaResult<Vec<String>> {
    let p = Docs::parse(previous, "previous")?;
    let c = Docs::parse(candidate, "candidate")?;
    // Backward: the candidate reads what the previous wrote; forward: the reverse.
    let (w, r) = if backward { (&p, &c) } else { (&c, &p) };
    let mut diff = Diff {
        w,
        r,
        stack: HashSet::new(),
        steps: 0,
    };
    let found = diff.compare(Some(w.root()), Some(r.root()), "#")?;
    let mut seen = HashSet::new();
    Ok(found
        .into_iter()
        .filter(|d| !COMPATIBLE.contains(&d.kind))
        .map(|d| format!("{}: {} ({})", d.path, d.detail, d.kind))
        .filter(|m| seen.insert(m.clone()))
        .collect())
}

/// Bounds the work on hostile schemas (combined schemas compare every pair).
const MAX_STEPS: usize = 200_000;
/// Bounds the recursion (a `$ref` chain can nest deeper than any one document).
const MAX_DEPTH: usize = 1000;

pub(super) struct Diff<'a> {
    pub(super) w: &'a Docs,
    pub(super) r: &'a Docs,
    /// Pairs being compared: a `$ref` cycle re-entering one is taken as compatible.
    stack: HashSet<(usize, usize)>,
    steps: usize,
}

pub(super) fn d(kind: &'static str, path: &str, detail: impl Into<String>) -> Difference {
    Difference {
        kind,
        path: path.to_string(),
        detail: detail.into(),
    }
}

pub(super) fn sub(path: &str, part: &str) -> String {
    format!("{path}/{part}")
}

impl<'a> Diff<'a> {
    pub(super) fn compare(
        &mut self,
        w: Option<Loc<'a>>,
        r: Option<Loc<'a>>,
        path: &str,
    ) -> SchemaResult<Vec<Difference>> {
        let (w, r) = match (w, r) {
            (None, None) => return Ok(Vec::new()),
            (None, Some(_)) => {
                return Ok(vec![d(
                    "SCHEMA_ADDED",
                    path,
                    "the reader constrains what the writer left unconstrained",
                )]);
            }
            (Some(_), None) => return Ok(vec![d("SCHEMA_REMOVED", path, "")]),
            (Some(w), Some(r)) => (self.w.deref(w)?, self.r.deref(r)?),
        };
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(SchemaError::invalid(format!(
                "the JSON Schema compatibility check gave up after {MAX_STEPS} comparisons at {path}"
            )));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(SchemaError::invalid(format!(
                "the JSON Schema compatibility check refuses schemas nested deeper than {MAX_DEPTH} levels (through $ref) at {path}"
            )));
        }
        let key = (w.id(), r.id());
        if !self.stack.insert(key) {
            return Ok(Vec::new());
        }
        let out = self.types(w, r, path);
        self.stack.remove(&key);
        out
    }

    /// The differences between two typed schemas. Long because it follows the registry
    /// checker's type rules one case after the other, so the two can be read side by side.
    fn types(&mut self, w: Loc<'a>, r: Loc<'a>, path: &str) -> SchemaResult<Vec<Difference>> {
        let wt = self.w.typed(w)?;
        let rt = self.r.typed(r)?;
        let mut out = Vec::new();
        // A plain writer schema read by a union: one branch that accepts it is enough.
        match (&wt, &rt) {
            (t, Typed::Combined(c)) if !matches!(t, Typed::Combined(_)) => {
                if c.subs.len() == 1 {
                    let found = self.compare(Some(w), Some(c.subs[0]), path)?;
                    if compatible(&found) {
                        return Ok(found);
                    }
                } else if c.criterion != Criterion::All {
                    for s in &c.subs {
                        let mut found = self.compare(Some(w), Some(*s), path)?;
                        if compatible(&found) {
                            found.push(d("SUM_TYPE_EXTENDED", path, ""));
                            return Ok(found);
                        }
                    }
                }
            }
            (Typed::Combined(c), t) if !matches!(t, Typed::Combined(_)) => {
                if c.subs.len() == 1 {
                    let found = self.compare(Some(c.subs[0]), Some(r), path)?;
                    if compatible(&found) {
                        return Ok(found);
                    }
                } else if c.criterion == Criterion::All {
                    for s in &c.subs {
                        let mut found = self.compare(Some(*s), Some(r), path)?;
                        if compatible(&found) {
                            found.push(d("PRODUCT_TYPE_NARROWED", path, ""));
                            return Ok(found);
                        }
                    }
                }
            }
            _ => {}
        }
        if wt.class() != rt.class() {
            // Nothing was written (false), or the reader accepts anything (true, {}).
            if matches!(wt, Typed::False) || matches!(rt, Typed::Empty) {
                return Ok(out);
            }
            out.push(d(
                "TYPE_CHANGED",
                path,
                format!(
                    "the writer's {} is read as {}",
                    wt.describe(),
                    rt.describe()
                ),
            ));
            return Ok(out);
        }
        match (wt, rt) {
            (Typed::String(a), Typed::String(b)) => {
                bound(&mut out, path, "maxLength", a.max_length, b.max_length);
                bound(&mut out, path, "minLength", a.min_length, b.min_length);
                match (&a.pattern, &b.pattern) {
                    (None, Some(p)) => out.push(d(
                        "PATTERN_ADDED",
                        &sub(path, "pattern"),
                        format!("the reader adds pattern {p:?}"),
                    )),
                    (Some(x), Some(y)) if x != y => out.push(d(
                        "PATTERN_CHANGED",
                        &sub(path, "pattern"),
                        format!("pattern changed from {x:?} to {y:?}"),
                    )),
                    _ => {}
                }
            }
            (Typed::Number(a), Typed::Number(b)) => numbers(&mut out, path, &a, &b),
            (Typed::Enum(a), Typed::Enum(b)) => {
                let has = |set: &[Value], v: &Value| set.contains(v);
                if a != b {
                    let w_in_r = a.iter().all(|v| has(&b, v));
                    let r_in_w = b.iter().all(|v| has(&a, v));
                    let kind = if w_in_r {
                        "ENUM_ARRAY_EXTENDED"
                    } else if r_in_w {
                        "ENUM_ARRAY_NARROWED"
                    } else {
                        "ENUM_ARRAY_CHANGED"
                    };
                    let missing: Vec<String> = a
                        .iter()
                        .filter(|v| !has(&b, v))
                        .map(|v| v.to_string())
                        .collect();
                    out.push(d(
                        kind,
                        &sub(path, "enum"),
                        format!("the reader lacks the values [{}]", missing.join(", ")),
                    ));
                }
            }
            (Typed::Const(a), Typed::Const(b)) if a != b => {
                out.push(d(
                    "ENUM_ARRAY_CHANGED",
                    &sub(path, "const"),
                    format!("const changed from {a} to {b}"),
                ));
            }
            (Typed::Not(a), Typed::Not(b)) => {
                // Reversed: the reader may exclude less than the writer did.
                let p = sub(path, "not");
                let found = self.compare(Some(b), Some(a), &p)?;
                if compatible(&found) {
                    out.push(d("NOT_TYPE_NARROWED", &p, ""));
                } else {
                    out.push(d(
                        "NOT_TYPE_EXTENDED",
                        &p,
                        "the reader excludes values the writer allowed",
                    ));
                }
            }
            (Typed::Combined(a), Typed::Combined(b)) => self.combined(&mut out, path, &a, &b)?,
            (Typed::Object(a), Typed::Object(b)) => self.objects(&mut out, path, &a, &b)?,
            (Typed::Array(a), Typed::Array(b)) => self.arrays(&mut out, path, &a, &b)?,
            _ => {}
        }
        Ok(out)
    }

    fn combined(
        &mut self,
        out: &mut Vec<Difference>,
        path: &str,
        a: &Combined<'a>,
        b: &Combined<'a>,
    ) -> SchemaResult<()> {
        let single = |c: &Combined<'_>| c.subs.len() == 1;
        if a.criterion != b.criterion {
            let extended = b.criterion == Criterion::Any
                || (single(a) && single(b))
                || (single(a) && b.criterion == Criterion::One)
                || (single(b) && a.criterion == Criterion::All);
            if !extended {
                out.push(d(
                    "COMBINED_TYPE_CHANGED",
                    path,
                    format!("{} became {}", a.criterion, b.criterion),
                ));
                return Ok(());
            }
            out.push(d("COMBINED_TYPE_EXTENDED", path, ""));
        }
        let (wn, rn) = (a.subs.len(), b.subs.len());
        if wn < rn {
            let kind = if b.criterion == Criterion::All {
                "PRODUCT_TYPE_EXTENDED"
            } else {
                "SUM_TYPE_EXTENDED"
            };
            out.push(d(
                kind,
                path,
                format!("{} grew from {wn} to {rn} schemas", b.criterion),
            ));
        } else if wn > rn {
            let kind = if a.criterion == Criterion::All {
                "PRODUCT_TYPE_NARROWED"
            } else {
                "SUM_TYPE_NARROWED"
            };
            out.push(d(
                kind,
                path,
                format!("{} shrank from {wn} to {rn} schemas", a.criterion),
            ));
        }
        // Every compatible (writer branch, reader branch) pair, then a maximum one-to-one
        // matching; it must cover the smaller side.
        let mut edges: Vec<Vec<(usize, Vec<Difference>)>> = Vec::with_capacity(wn);
        for (i, ws) in a.subs.iter().enumerate() {
            let p = sub(path, &format!("{}/{i}", a.criterion));
            let mut row = Vec::new();
            for (j, rs) in b.subs.iter().enumerate() {
                let found = self.compare(Some(*ws), Some(*rs), &p)?;
                if compatible(&found) {
                    row.push((j, found));
                }
            }
            edges.push(row);
        }
        let matching = max_matching(&edges, rn);
        let matched = matching.iter().filter(|m| m.is_some()).count();
        for (i, m) in matching.iter().enumerate() {
            if let Some(j) = m
                && let Some((_, found)) = edges[i].iter().find(|(k, _)| k == j)
            {
                out.extend(found.iter().cloned());
            }
        }
        if matched < wn.min(rn) {
            out.push(d(
                "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
                path,
                format!(
                    "only {matched} of the {} subschemas of {} are matched by a compatible one",
                    wn.min(rn),
                    a.criterion
                ),
            ));
        }
        Ok(())
    }
}

/// A numeric bound keyword: added, removed, increased or decreased (which of these is
/// allowed depends on the keyword: an upper bound may grow, a lower one shrink).
pub(super) fn bound<T: PartialOrd + std::fmt::Display + Copy>(
    out: &mut Vec<Difference>,
    path: &str,
    keyword: &'static str,
    w: Option<T>,
    r: Option<T>,
) {
    let p = sub(path, keyword);
    let name = keyword_kind(keyword);
    let (kind, detail) = match (w, r) {
        (None, Some(y)) => ("ADDED", format!("the reader adds {keyword} {y}")),
        (Some(_), None) => ("REMOVED", String::new()),
        (Some(x), Some(y)) if x < y => ("INCREASED", format!("{keyword} rose from {x} to {y}")),
        (Some(x), Some(y)) if x > y => ("DECREASED", format!("{keyword} fell from {x} to {y}")),
        _ => return,
    };
    out.push(d(diff_kind(name, kind), &p, detail));
}

/// `maxLength` -> `MAX_LENGTH`.
fn keyword_kind(keyword: &str) -> String {
    let mut s = String::new();
    for c in keyword.chars() {
        if c.is_ascii_uppercase() {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

/// The static name of `<KEYWORD>_<CHANGE>` (only the names the diff produces).
fn diff_kind(keyword: String, change: &str) -> &'static str {
    let full = format!("{keyword}_{change}");
    KINDS
        .iter()
        .find(|k| **k == full)
        .copied()
        .unwrap_or("TYPE_CHANGED")
}

const KINDS: &[&str] = &[
    "MAX_LENGTH_ADDED",
    "MAX_LENGTH_REMOVED",
    "MAX_LENGTH_INCREASED",
    "MAX_LENGTH_DECREASED",
    "MIN_LENGTH_ADDED",
    "MIN_LENGTH_REMOVED",
    "MIN_LENGTH_INCREASED",
    "MIN_LENGTH_DECREASED",
    "MAXIMUM_ADDED",
    "MAXIMUM_REMOVED",
    "MAXIMUM_INCREASED",
    "MAXIMUM_DECREASED",
    "MINIMUM_ADDED",
    "MINIMUM_REMOVED",
    "MINIMUM_INCREASED",
    "MINIMUM_DECREASED",
    "EXCLUSIVE_MAXIMUM_ADDED",
    "EXCLUSIVE_MAXIMUM_REMOVED",
    "EXCLUSIVE_MAXIMUM_INCREASED",
    "EXCLUSIVE_MAXIMUM_DECREASED",
    "EXCLUSIVE_MINIMUM_ADDED",
    "EXCLUSIVE_MINIMUM_REMOVED",
    "EXCLUSIVE_MINIMUM_INCREASED",
    "EXCLUSIVE_MINIMUM_DECREASED",
    "MAX_PROPERTIES_ADDED",
    "MAX_PROPERTIES_REMOVED",
    "MAX_PROPERTIES_INCREASED",
    "MAX_PROPERTIES_DECREASED",
    "MIN_PROPERTIES_ADDED",
    "MIN_PROPERTIES_REMOVED",
    "MIN_PROPERTIES_INCREASED",
    "MIN_PROPERTIES_DECREASED",
    "MAX_ITEMS_ADDED",
    "MAX_ITEMS_REMOVED",
    "MAX_ITEMS_INCREASED",
    "MAX_ITEMS_DECREASED",
    "MIN_ITEMS_ADDED",
    "MIN_ITEMS_REMOVED",
    "MIN_ITEMS_INCREASED",
    "MIN_ITEMS_DECREASED",
    "MAX_CONTAINS_ADDED",
    "MAX_CONTAINS_REMOVED",
    "MAX_CONTAINS_INCREASED",
    "MAX_CONTAINS_DECREASED",
    "MIN_CONTAINS_ADDED",
    "MIN_CONTAINS_REMOVED",
    "MIN_CONTAINS_INCREASED",
    "MIN_CONTAINS_DECREASED",
];

fn numbers(out: &mut Vec<Difference>, path: &str, a: &Number, b: &Number) {
    bound(out, path, "maximum", a.maximum, b.maximum);
    bound(out, path, "minimum", a.minimum, b.minimum);
    bound(
        out,
        path,
        "exclusiveMaximum",
        a.exclusive_maximum,
        b.exclusive_maximum,
    );
    bound(
        out,
        path,
        "exclusiveMinimum",
        a.exclusive_minimum,
        b.exclusive_minimum,
    );
    let p = sub(path, "multipleOf");
    match (a.multiple_of, b.multiple_of) {
        (None, Some(y)) => out.push(d(
            "MULTIPLE_OF_ADDED",
            &p,
            format!("the reader adds multipleOf {y}"),
        )),
        (Some(_), None) => out.push(d("MULTIPLE_OF_REMOVED", &p, "")),
        (Some(x), Some(y)) if x != y => {
            let divides = |big: f64, small: f64| small != 0.0 && (big / small).fract() == 0.0;
            if divides(y, x) {
                out.push(d(
                    "MULTIPLE_OF_EXPANDED",
                    &p,
                    format!("multipleOf grew from {x} to {y}"),
                ));
            } else if divides(x, y) {
                out.push(d("MULTIPLE_OF_REDUCED", &p, ""));
            } else {
                out.push(d(
                    "MULTIPLE_OF_CHANGED",
                    &p,
                    format!("multipleOf changed from {x} to {y}"),
                ));
            }
        }
        _ => {}
    }
    if a.integer != b.integer {
        if a.integer {
            out.push(d("TYPE_EXTENDED", path, ""));
        } else {
            out.push(d("TYPE_NARROWED", path, "number narrowed to integer"));
        }
    }
}

/// Maximum bipartite matching (augmenting paths): `edges[i]` lists the right-hand nodes
/// left node `i` may pair with. Returns the right node matched to each left node.
fn max_matching<T>(edges: &[Vec<(usize, T)>], right: usize) -> Vec<Option<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; right];
    fn augment<T>(
        i: usize,
        edges: &[Vec<(usize, T)>],
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for (j, _) in &edges[i] {
            if seen[*j] {
                continue;
            }
            seen[*j] = true;
            if owner[*j].is_none_or(|k| augment(k, edges, seen, owner)) {
                owner[*j] = Some(i);
                return true;
            }
        }
        false
    }
    for i in 0..edges.len() {
        let mut seen = vec![false; right];
        augment(i, edges, &mut seen, &mut owner);
    }
    let mut left = vec![None; edges.len()];
    for (j, o) in owner.iter().enumerate() {
        if let Some(i) = o {
            left[*i] = Some(j);
        }
    }
    left
}
