//! The drafts we validate, read from `$schema`, and the meta-schema URIs we know without
//! fetching them.

use serde_json::Value;

/// A JSON Schema draft; the order is the drafts' order of publication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Draft {
    Draft4,
    Draft6,
    Draft7,
    Draft201909,
    Draft202012,
}

impl Draft {
    /// The draft a `$schema` URI names, if it names one.
    pub fn from_uri(uri: &str) -> Option<Draft> {
        let uri = uri.trim_end_matches('#');
        if uri.contains("draft-04") {
            Some(Draft::Draft4)
        } else if uri.contains("draft-06") {
            Some(Draft::Draft6)
        } else if uri.contains("draft-07") {
            Some(Draft::Draft7)
        } else if uri.contains("2019-09") {
            Some(Draft::Draft201909)
        } else if uri.contains("2020-12") {
            Some(Draft::Draft202012)
        } else {
            None
        }
    }

    /// `id` in draft 4, `$id` after it.
    pub fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 { "id" } else { "$id" }
    }

    /// Up to draft 7 a `$ref` replaces every keyword beside it.
    pub fn ref_overrides_siblings(self) -> bool {
        self <= Draft::Draft7
    }
}

/// The draft a schema declares through `$schema`; 2020-12 when absent or unknown.
pub fn draft_of(schema: &Value) -> Draft {
    schema
        .get("$schema")
        .and_then(Value::as_str)
        .and_then(Draft::from_uri)
        .unwrap_or(Draft::Draft202012)
}

/// The draft whose meta-schema (or one of its vocabulary meta-schemas) `uri` is: a `$ref`
/// to it validates the instance as a schema of that draft instead of fetching anything.
pub fn meta_schema_draft(uri: &str) -> Option<Draft> {
    let rest = uri
        .strip_prefix("http://json-schema.org/")
        .or_else(|| uri.strip_prefix("https://json-schema.org/"))?;
    let rest = rest.trim_end_matches('#');
    match rest {
        "draft-04/schema" => Some(Draft::Draft4),
        "draft-06/schema" => Some(Draft::Draft6),
        "draft-07/schema" => Some(Draft::Draft7),
        _ => {
            let (draft, tail) = if let Some(t) = rest.strip_prefix("draft/2019-09/") {
                (Draft::Draft201909, t)
            } else if let Some(t) = rest.strip_prefix("draft/2020-12/") {
                (Draft::Draft202012, t)
            } else {
                return None;
            };
            (tail == "schema" || tail.starts_with("meta/")).then_some(draft)
        }
    }
}
