//! `schema inspect`: read-only questions to the registry, each answered as a typed
//! value the command renders (docs/semantics.md §1: subjects, versions, ids and their
//! references as the registry holds them). Nothing here writes.

use crate::engine::schema::registry::{RegisteredSchema, Registry, SubjectVersion};
use crate::engine::schema::resolve::{ResolvedReference, resolved_schema_by_id};
use crate::ops::schema::connect::registry_error;
use crate::ops::{Error, Result};

/// What to ask the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Subjects,
    Versions {
        subject: String,
    },
    /// `version` is a positive number or `latest`.
    Get {
        subject: String,
        version: String,
        arrow: bool,
    },
    Id {
        id: u32,
        arrow: bool,
    },
    IdUsage {
        id: u32,
    },
    Compatibility {
        subject: Option<String>,
    },
}

/// The registry's answer.
#[derive(Debug)]
pub enum Answer {
    Subjects(Vec<String>),
    Versions {
        subject: String,
        versions: Vec<i32>,
    },
    /// A schema with the schemas it references and, when asked, its Arrow mapping.
    Schema {
        schema: RegisteredSchema,
        references: Vec<ResolvedReference>,
        arrow: Option<String>,
    },
    IdUsage {
        id: u32,
        usage: Vec<SubjectVersion>,
    },
    Compatibility {
        subject: Option<String>,
        level: String,
    },
}

/// Answers `query` from `registry`; errors say what was being asked.
pub fn inspect(registry: &dyn Registry, query: Query) -> Result<Answer> {
    Ok(match query {
        Query::Subjects => Answer::Subjects(
            registry
                .subjects()
                .map_err(|e| registry_error(&e, "list subjects"))?,
        ),
        Query::Versions { subject } => {
            let versions = registry
                .versions(&subject)
                .map_err(|e| registry_error(&e, &format!("list versions of {subject}")))?;
            Answer::Versions { subject, versions }
        }
        Query::Get {
            subject,
            version,
            arrow,
        } => {
            let what = format!("get {subject} version {version}");
            let found = if version == "latest" {
                registry.latest(&subject)
            } else {
                let v: i32 = version
                    .parse()
                    .ok()
                    .filter(|v: &i32| *v > 0)
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "--version {version:?} is not a positive integer or latest"
                        ))
                    })?;
                registry.version(&subject, v)
            }
            .map_err(|e| registry_error(&e, &what))?;
            let resolved = resolved_schema_by_id(registry, found.id).map_err(|e| {
                registry_error(
                    &e,
                    &format!("resolve the references of schema {}", found.id as u32),
                )
            })?;
            schema_answer(found, resolved.references, arrow)?
        }
        Query::Id { id, arrow } => {
            let resolved = resolved_schema_by_id(registry, id as i32)
                .map_err(|e| registry_error(&e, &format!("get schema id {id}")))?;
            schema_answer(resolved.schema, resolved.references, arrow)?
        }
        Query::IdUsage { id } => {
            let usage = registry.id_versions(id as i32).map_err(|e| {
                registry_error(&e, &format!("list the subjects using schema id {id}"))
            })?;
            Answer::IdUsage { id, usage }
        }
        Query::Compatibility { subject } => {
            let level = registry
                .compatibility(subject.as_deref())
                .map_err(|e| registry_error(&e, "get the compatibility level"))?;
            Answer::Compatibility { subject, level }
        }
    })
}

fn schema_answer(
    schema: RegisteredSchema,
    references: Vec<ResolvedReference>,
    arrow: bool,
) -> Result<Answer> {
    let arrow = if arrow {
        Some(
            crate::engine::columnarschema::describe_arrow(
                schema.spec.schema_type,
                &schema.spec.schema,
                schema.spec.message_type.as_deref(),
                &references
                    .iter()
                    .map(|r| (r.name.clone(), r.spec_text.clone()))
                    .collect::<Vec<_>>(),
            )
            .map_err(|e| {
                Error::failure(format!("map schema {} to Arrow: {e}", schema.id as u32))
            })?,
        )
    } else {
        None
    };
    Ok(Answer::Schema {
        schema,
        references,
        arrow,
    })
}
