//! `ResolvedSchemaByID` (semantics §1): a schema by id plus the texts of every schema
//! it references, fetched recursively through `Version(subject, version)`, dependencies
//! first. A subject@version already on the current path is skipped, so reference
//! cycles end instead of looping.

use crate::engine::schema::registry::{
    RegisteredSchema, Registry, RegistryResult, SchemaReference,
};

/// One referenced schema: the name the referrer imports it by, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedReference {
    pub name: String,
    pub subject: String,
    pub version: i32,
    pub spec_text: String,
}

/// A writer schema with its references resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSchema {
    pub schema: RegisteredSchema,
    /// Dependencies first: a reference's own references precede it. Names are unique.
    pub references: Vec<ResolvedReference>,
}

/// Fetches schema `id` and, recursively, every schema it references.
pub fn resolved_schema_by_id(registry: &dyn Registry, id: i32) -> RegistryResult<ResolvedSchema> {
    let schema = registry.schema_by_id(id)?;
    let mut references = Vec::new();
    let mut path = Vec::new();
    collect(
        registry,
        &schema.spec.references,
        &mut path,
        &mut references,
    )?;
    Ok(ResolvedSchema { schema, references })
}

fn collect(
    registry: &dyn Registry,
    refs: &[SchemaReference],
    path: &mut Vec<(String, i32)>,
    out: &mut Vec<ResolvedReference>,
) -> RegistryResult<()> {
    for r in refs {
        let key = (r.subject.clone(), r.version);
        if path.contains(&key) || out.iter().any(|o| o.name == r.name) {
            continue;
        }
        let referenced = registry.version(&r.subject, r.version)?;
        path.push(key);
        collect(registry, &referenced.spec.references, path, out)?;
        path.pop();
        if !out.iter().any(|o| o.name == r.name) {
            out.push(ResolvedReference {
                name: r.name.clone(),
                subject: r.subject.clone(),
                version: referenced.version.unwrap_or(r.version),
                spec_text: referenced.spec.schema,
            });
        }
    }
    Ok(())
}
