//! The registry's state: schemas by global id, subjects with their versions, and
//! compatibility levels. Pure data and rules, no HTTP: every operation answers with
//! either a value or an [`ApiError`] carrying the Confluent status and error code.

use std::collections::BTreeMap;

/// Error codes of the Confluent REST contract (docs/semantics.md §1).
pub const SUBJECT_NOT_FOUND: u32 = 40401;
pub const VERSION_NOT_FOUND: u32 = 40402;
pub const SCHEMA_NOT_FOUND: u32 = 40403;
pub const INVALID_SCHEMA: u32 = 42201;
pub const INVALID_VERSION: u32 = 42202;
pub const INVALID_COMPATIBILITY: u32 = 42203;

/// The compatibility level a fresh registry reports.
pub const DEFAULT_COMPATIBILITY: &str = "BACKWARD";

const COMPATIBILITY_LEVELS: [&str; 7] = [
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
];

/// A refusal in the registry's own words: HTTP status, `error_code`, `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: u32,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, code: u32, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn subject_not_found() -> Self {
        Self::new(404, SUBJECT_NOT_FOUND, "subject not found")
    }

    pub fn version_not_found() -> Self {
        Self::new(404, VERSION_NOT_FOUND, "version not found")
    }

    pub fn schema_not_found() -> Self {
        Self::new(404, SCHEMA_NOT_FOUND, "schema not found")
    }

    pub fn invalid_schema(detail: &str) -> Self {
        Self::new(422, INVALID_SCHEMA, format!("invalid schema: {detail}"))
    }

    pub fn invalid_version(raw: &str) -> Self {
        Self::new(422, INVALID_VERSION, format!("invalid version: {raw}"))
    }
}

/// A schema reference: `name` as imported by the referring schema, resolved to `subject`@`version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaReference {
    pub name: String,
    pub subject: String,
    pub version: i32,
}

/// One registered schema. `schema_type` is `None` for Avro (the wire omits it), otherwise
/// `PROTOBUF` or `JSON`; `message_type` is the krabka extension (full protobuf message name).
/// Identity is (schema, schema_type, message_type); references ride along with the first registration.
/// Like Confluent's registry (which compares parsed schemas on register and lookup), an Avro or
/// JSON Schema text is the same schema as another that parses to the same JSON document, key
/// order and whitespace aside (Avro `doc` aside too); Protobuf texts must match exactly.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaRecord {
    pub schema: String,
    pub schema_type: Option<String>,
    pub message_type: Option<String>,
    pub references: Vec<SchemaReference>,
}

impl SchemaRecord {
    /// An Avro schema.
    pub fn avro(schema: impl Into<String>) -> Self {
        SchemaRecord {
            schema: schema.into(),
            ..Default::default()
        }
    }

    /// A Protobuf schema with its full message name.
    pub fn protobuf(schema: impl Into<String>, message_type: impl Into<String>) -> Self {
        let message_type = message_type.into();
        SchemaRecord {
            schema: schema.into(),
            schema_type: Some("PROTOBUF".into()),
            message_type: (!message_type.is_empty()).then_some(message_type),
            references: Vec::new(),
        }
    }

    /// A JSON Schema.
    pub fn json(schema: impl Into<String>) -> Self {
        SchemaRecord {
            schema: schema.into(),
            schema_type: Some("JSON".into()),
            ..Default::default()
        }
    }

    /// Adds a reference.
    pub fn with_reference(mut self, name: &str, subject: &str, version: i32) -> Self {
        self.references.push(SchemaReference {
            name: name.into(),
            subject: subject.into(),
            version,
        });
        self
    }

    fn same_identity(&self, other: &SchemaRecord) -> bool {
        self.schema_type == other.schema_type
            && self.message_type == other.message_type
            && (self.schema == other.schema || self.same_document(&other.schema))
    }

    fn same_document(&self, other: &str) -> bool {
        let avro = self.schema_type.is_none() || self.schema_type.as_deref() == Some("AVRO");
        if !avro && self.schema_type.as_deref() != Some("JSON") {
            return false;
        }
        let parse = |t: &str| -> Option<serde_json::Value> {
            let mut v = serde_json::from_str(t).ok()?;
            if avro {
                strip_doc(&mut v);
            }
            Some(v)
        };
        match (parse(&self.schema), parse(other)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// Removes Avro `doc` attributes (Avro schema equality ignores them). A record field that
/// is *named* `doc` is a value, not a key, and stays.
fn strip_doc(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            o.remove("doc");
            o.values_mut().for_each(strip_doc);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_doc),
        _ => {}
    }
}

/// A version selector from a path: `latest` (or `-1`) or a positive number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSel {
    Latest,
    Number(i32),
}

impl VersionSel {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        if raw == "latest" || raw == "-1" {
            return Ok(VersionSel::Latest);
        }
        match raw.parse::<i32>() {
            Ok(n) if n > 0 => Ok(VersionSel::Number(n)),
            _ => Err(ApiError::invalid_version(raw)),
        }
    }
}

/// A subject's live versions, oldest first: (version, schema id).
#[derive(Debug, Default, Clone)]
struct Subject {
    versions: Vec<(i32, u32)>,
}

/// What one subject version resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectVersion {
    pub subject: String,
    pub version: i32,
    pub id: u32,
    pub record: SchemaRecord,
}

/// All registry state. Ids are global and start at 1; versions count per subject from 1.
#[derive(Debug)]
pub struct Store {
    schemas: BTreeMap<u32, SchemaRecord>,
    subjects: BTreeMap<String, Subject>,
    global_compatibility: String,
    subject_compatibility: BTreeMap<String, String>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            schemas: BTreeMap::new(),
            subjects: BTreeMap::new(),
            global_compatibility: DEFAULT_COMPATIBILITY.into(),
            subject_compatibility: BTreeMap::new(),
        }
    }
}

impl Store {
    /// The id of a schema with the same identity, if any.
    fn id_of(&self, record: &SchemaRecord) -> Option<u32> {
        self.schemas
            .iter()
            .find(|(_, r)| r.same_identity(record))
            .map(|(id, _)| *id)
    }

    fn next_id(&self) -> u32 {
        self.schemas.keys().next_back().map_or(1, |id| id + 1)
    }

    /// Registers `record` under `subject`: reuses the identity's id under any subject,
    /// adds a version only when the id is not already live under the subject.
    /// Returns (id, version). References must name existing subject versions.
    pub fn register(
        &mut self,
        subject: &str,
        record: SchemaRecord,
    ) -> Result<(u32, i32), ApiError> {
        for r in &record.references {
            if self
                .version(&r.subject, VersionSel::Number(r.version))
                .is_err()
            {
                return Err(ApiError::invalid_schema(&format!(
                    "reference not found: {} -> {}@{}",
                    r.name, r.subject, r.version
                )));
            }
        }
        Ok(self.register_unchecked(subject, record))
    }

    /// [`Store::register`] without checking references (seeding).
    pub fn register_unchecked(&mut self, subject: &str, record: SchemaRecord) -> (u32, i32) {
        let id = match self.id_of(&record) {
            Some(id) => id,
            None => {
                let id = self.next_id();
                self.schemas.insert(id, record);
                id
            }
        };
        let entry = self.subjects.entry(subject.to_string()).or_default();
        if let Some((version, _)) = entry.versions.iter().find(|(_, i)| *i == id) {
            return (id, *version);
        }
        let version = entry.versions.last().map_or(1, |(v, _)| v + 1);
        entry.versions.push((version, id));
        (id, version)
    }

    /// Stores `record` under a chosen id without a subject (seeding writer schemas by id).
    pub fn insert_with_id(&mut self, id: u32, record: SchemaRecord) {
        self.schemas.insert(id, record);
    }

    /// The live version of `subject` holding the same identity as `record`.
    pub fn lookup(&self, subject: &str, record: &SchemaRecord) -> Result<SubjectVersion, ApiError> {
        let id = self.id_of(record).ok_or_else(ApiError::schema_not_found)?;
        let versions = self
            .subjects
            .get(subject)
            .ok_or_else(ApiError::schema_not_found)?;
        let (version, _) = versions
            .versions
            .iter()
            .find(|(_, i)| *i == id)
            .ok_or_else(ApiError::schema_not_found)?;
        Ok(self.subject_version(subject, *version, id))
    }

    fn subject_version(&self, subject: &str, version: i32, id: u32) -> SubjectVersion {
        SubjectVersion {
            subject: subject.to_string(),
            version,
            id,
            record: self.schemas[&id].clone(),
        }
    }

    fn live_subject(&self, subject: &str) -> Result<&Subject, ApiError> {
        match self.subjects.get(subject) {
            Some(s) if !s.versions.is_empty() => Ok(s),
            _ => Err(ApiError::subject_not_found()),
        }
    }

    /// One version of a subject.
    pub fn version(&self, subject: &str, sel: VersionSel) -> Result<SubjectVersion, ApiError> {
        let s = self.live_subject(subject)?;
        let found = match sel {
            VersionSel::Latest => s.versions.last(),
            VersionSel::Number(n) => s.versions.iter().find(|(v, _)| *v == n),
        };
        let (version, id) = found.ok_or_else(ApiError::version_not_found)?;
        Ok(self.subject_version(subject, *version, *id))
    }

    /// The live version numbers of a subject.
    pub fn versions(&self, subject: &str) -> Result<Vec<i32>, ApiError> {
        Ok(self
            .live_subject(subject)?
            .versions
            .iter()
            .map(|(v, _)| *v)
            .collect())
    }

    /// Every subject with at least one live version, sorted.
    pub fn subjects(&self) -> Vec<String> {
        self.subjects
            .iter()
            .filter(|(_, s)| !s.versions.is_empty())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The schema with a global id.
    pub fn schema_by_id(&self, id: u32) -> Result<&SchemaRecord, ApiError> {
        self.schemas.get(&id).ok_or_else(ApiError::schema_not_found)
    }

    /// Every (subject, version) that uses a schema id.
    pub fn versions_of_id(&self, id: u32) -> Result<Vec<(String, i32)>, ApiError> {
        self.schema_by_id(id)?;
        Ok(self
            .subjects
            .iter()
            .flat_map(|(name, s)| {
                s.versions
                    .iter()
                    .filter(move |(_, i)| *i == id)
                    .map(move |(v, _)| (name.clone(), *v))
            })
            .collect())
    }

    /// Ids of the schemas whose references name `subject`@`version`.
    pub fn referenced_by(&self, subject: &str, sel: VersionSel) -> Result<Vec<u32>, ApiError> {
        let target = self.version(subject, sel)?;
        Ok(self
            .schemas
            .iter()
            .filter(|(_, r)| {
                r.references
                    .iter()
                    .any(|x| x.subject == subject && x.version == target.version)
            })
            .map(|(id, _)| *id)
            .collect())
    }

    /// Removes a subject; answers the versions it had.
    pub fn delete_subject(&mut self, subject: &str) -> Result<Vec<i32>, ApiError> {
        let versions = self.versions(subject)?;
        self.subjects.remove(subject);
        self.subject_compatibility.remove(subject);
        Ok(versions)
    }

    /// Removes one version; answers its number.
    pub fn delete_version(&mut self, subject: &str, sel: VersionSel) -> Result<i32, ApiError> {
        let version = self.version(subject, sel)?.version;
        if let Some(s) = self.subjects.get_mut(subject) {
            s.versions.retain(|(v, _)| *v != version);
        }
        Ok(version)
    }

    /// The compatibility level of a subject (falling back to the global one), or the global one.
    pub fn compatibility(&self, subject: Option<&str>) -> &str {
        subject
            .and_then(|s| self.subject_compatibility.get(s))
            .unwrap_or(&self.global_compatibility)
    }

    /// Sets a compatibility level (case-insensitive); answers the stored spelling.
    pub fn set_compatibility(
        &mut self,
        subject: Option<&str>,
        level: &str,
    ) -> Result<String, ApiError> {
        let level = level.to_ascii_uppercase();
        if !COMPATIBILITY_LEVELS.contains(&level.as_str()) {
            return Err(ApiError::new(
                422,
                INVALID_COMPATIBILITY,
                format!("invalid compatibility level: {level}"),
            ));
        }
        match subject {
            Some(s) => {
                self.subject_compatibility
                    .insert(s.to_string(), level.clone());
            }
            None => self.global_compatibility = level.clone(),
        }
        Ok(level)
    }
}
