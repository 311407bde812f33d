//! The registry a `--dry-run` encodes through: every read goes to the real registry,
//! but a registration only looks the schema up. A schema already registered frames
//! values with its real id; one that is not is remembered as "would register" and
//! framed with id 0 (never sent: nothing leaves a dry run), so the report can say
//! which subjects a real run would add a version to.

use std::sync::{Arc, Mutex};

use crate::engine::schema::registry::{
    RegisteredSchema, Registry, RegistryError, RegistryResult, SCHEMA_NOT_FOUND, SUBJECT_NOT_FOUND,
    SchemaSpec, SubjectVersion,
};

pub struct DryRunRegistry {
    inner: Arc<dyn Registry>,
    pub would_register: Arc<Mutex<Vec<String>>>,
}

impl DryRunRegistry {
    pub fn new(inner: Arc<dyn Registry>) -> Self {
        DryRunRegistry {
            inner,
            would_register: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

fn refused(what: &str) -> RegistryError {
    RegistryError::new(400, format!("--dry-run changes nothing: {what} refused"))
}

impl Registry for DryRunRegistry {
    fn register(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<i32> {
        match self.inner.lookup(subject, spec) {
            Ok(found) => Ok(found.id),
            Err(e)
                if matches!(e.error_code, Some(SCHEMA_NOT_FOUND | SUBJECT_NOT_FOUND))
                    || (e.status == 404 && !e.transport) =>
            {
                let mut names = self
                    .would_register
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                if !names.iter().any(|n| n == subject) {
                    names.push(subject.to_owned());
                }
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }
    fn lookup(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<RegisteredSchema> {
        self.inner.lookup(subject, spec)
    }
    fn latest(&self, subject: &str) -> RegistryResult<RegisteredSchema> {
        self.inner.latest(subject)
    }
    fn version(&self, subject: &str, version: i32) -> RegistryResult<RegisteredSchema> {
        self.inner.version(subject, version)
    }
    fn versions(&self, subject: &str) -> RegistryResult<Vec<i32>> {
        self.inner.versions(subject)
    }
    fn subjects(&self) -> RegistryResult<Vec<String>> {
        self.inner.subjects()
    }
    fn schema_by_id(&self, id: i32) -> RegistryResult<RegisteredSchema> {
        self.inner.schema_by_id(id)
    }
    fn compatibility(&self, subject: Option<&str>) -> RegistryResult<String> {
        self.inner.compatibility(subject)
    }
    fn set_compatibility(&self, _: Option<&str>, _: &str) -> RegistryResult<String> {
        Err(refused("setting compatibility"))
    }
    fn delete_subject(&self, _: &str, _: bool) -> RegistryResult<Vec<i32>> {
        Err(refused("deleting a subject"))
    }
    fn delete_version(&self, _: &str, _: i32, _: bool) -> RegistryResult<i32> {
        Err(refused("deleting a version"))
    }
    fn id_versions(&self, id: i32) -> RegistryResult<Vec<SubjectVersion>> {
        self.inner.id_versions(id)
    }
}
