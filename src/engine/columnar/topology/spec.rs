//! A topology file's content as data (D19), and its translation into builder
//! calls. Positions are carried on every value so that each error points at the
//! line (and column) of the file it comes from; parsing the YAML itself is the
//! job of `io::topology_file`. Validation runs in the order of semantics §5
//! (duplicate names, invalid parents, no source, no sink), then node by node:
//! codecs, expressions and columns are checked against the schema flowing into
//! each node when the source schemas are known (declared in the file or read
//! from an input), before any data flows.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};

use super::{BatchCodec, BuiltTopology, NodeId, Topology};
use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::expr::{ExprError, ParsedExpr, parse_aggregate};
use crate::engine::columnar::metadata::{escape_payload_field, reserved_fields};
use crate::engine::columnar::ops::group_by::{AggFunc, Aggregation, GroupBy, Window};
use crate::engine::columnar::ops::join::JoinSpec;
use crate::engine::columnar::ops::stateless::{Filter, Select, WithColumns};
use crate::engine::columnar::ops::{OpError, Operator};

/// The only topology file version.
pub const TOPOLOGY_FILE_VERSION: i64 = 1;

/// A 1-based line and column in the topology file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// A value and where it starts in the file. For text that holds an expression,
/// `block_indent` is the indentation of a block scalar's lines (`|`), so that a
/// position on a later expression line maps back to the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub pos: Pos,
    pub block_indent: Option<usize>,
}

impl<T> Located<T> {
    pub fn new(value: T, pos: Pos) -> Self {
        Located {
            value,
            pos,
            block_indent: None,
        }
    }
}

/// An error at a position of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub pos: Pos,
    pub message: String,
}

impl SpecError {
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        SpecError {
            pos,
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.column, self.message)
    }
}

impl std::error::Error for SpecError {}

/// What to do with a batch that fails.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ErrorPolicy {
    #[default]
    Fail,
    Skip,
    DeadLetter {
        topic: String,
    },
}

/// The processing guarantee of the group runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Guarantee {
    #[default]
    AtLeastOnce,
    ExactlyOnce,
}

/// Snapshot file layout (D14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateLayout {
    #[default]
    JavaGo,
    Rust,
}

/// Where an online run keeps its partitions' state (docs/topology.md "State stores").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateStoreKind {
    /// A compacted Kafka topic (`state_topic`, default `<group>-state`): state
    /// follows its partition to any member. The default.
    Kafka,
    /// Files in `state_dir` (Java/Go or Rust layout): on this machine only.
    Dir,
    /// In the process: lost when it stops.
    Memory,
}

impl StateStoreKind {
    pub fn name(self) -> &'static str {
        match self {
            StateStoreKind::Kafka => "kafka",
            StateStoreKind::Dir => "dir",
            StateStoreKind::Memory => "memory",
        }
    }
}

/// Per-topology settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub consumer_group: Option<String>,
    pub error_policy: ErrorPolicy,
    pub guarantee: Guarantee,
    pub state_dir: Option<String>,
    pub state_layout: StateLayout,
    pub barrier_group: Option<String>,
    /// `state_store` as written; [`Settings::state_store`] resolves the default.
    pub state_store: Option<StateStoreKind>,
    /// The Kafka store's topic (default `<consumer_group>-state`).
    pub state_topic: Option<String>,
    /// `state_epochs_kept`: barrier epochs of each partition the Kafka store keeps
    /// (older ones get tombstones); [`Settings::epochs_kept`] resolves the default.
    pub state_epochs_kept: Option<usize>,
}

/// Barrier epochs per partition the Kafka store keeps by default: the newest
/// 100, as Java 1.3+ keeps in a directory (docs/formats.md §8.3).
pub const DEFAULT_EPOCHS_KEPT: usize = 100;

impl Settings {
    /// The store in effect: the one named, else `kafka` (docs/topology.md
    /// "State stores"), with a `state_dir` as its local copy when one is given.
    /// A stateless topology keeps no state whatever this says.
    pub fn state_store(&self) -> StateStoreKind {
        self.state_store.unwrap_or(StateStoreKind::Kafka)
    }

    /// Barrier epochs of each partition the Kafka store keeps.
    pub fn epochs_kept(&self) -> usize {
        self.state_epochs_kept.unwrap_or(DEFAULT_EPOCHS_KEPT)
    }

    /// The directory written beside the store in effect: the files of `dir`,
    /// or the local copy of `kafka`.
    pub fn state_copy_dir(&self) -> Option<&str> {
        match self.state_store() {
            StateStoreKind::Memory => None,
            StateStoreKind::Kafka | StateStoreKind::Dir => self.state_dir.as_deref(),
        }
    }
}

/// A codec as named in the file: `json`, `avro`, `gzip+json`, …
#[derive(Debug, Clone, PartialEq)]
pub struct CodecSpec {
    pub value: Located<String>,
    pub key: Option<Located<String>>,
    /// A sink's record key column (`key: {column: …, codec: …}`); `key` then names
    /// the codec of that column (default `string`).
    pub key_column: Option<Located<String>>,
    /// A sink's topic: registry codecs register under `<topic>-value`.
    pub topic: Option<String>,
    /// A sink's writer schema given as a file (`value: avro:FILE.avsc`).
    pub schema_file: Option<SchemaFile>,
    /// The writer schema of a sink's key column given as a file
    /// (`key: {column: user, codec: avro:FILE.avsc}`).
    pub key_schema_file: Option<SchemaFile>,
}

/// A writer schema file named by a sink's `value`: the path as written (relative
/// to the topology file) and, once the file is read, its text.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaFile {
    pub path: Located<String>,
    /// The message a `.proto` file is written with (`protobuf:FILE.proto:pkg.Msg`).
    pub message: Option<Located<String>>,
    pub text: Option<String>,
    /// The files a `.proto` schema file imports (other than the well-known
    /// `google/protobuf/*.proto`), each as (import path, text), every file
    /// after the files it imports; read with the file.
    pub imports: Vec<(String, String)>,
}

/// One node of the file, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    pub name: Located<String>,
    pub op: NodeOp,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeOp {
    Source {
        topics: Vec<Located<String>>,
        codec: CodecSpec,
        /// Declared payload columns (name, type), if any.
        columns: Option<Vec<(Located<String>, Located<DataType>)>>,
    },
    Filter {
        parent: Located<String>,
        predicate: Located<String>,
    },
    Select {
        parent: Located<String>,
        columns: Vec<Located<String>>,
    },
    WithColumns {
        parent: Located<String>,
        columns: Vec<Located<String>>,
    },
    GroupBy {
        parent: Located<String>,
        keys: Vec<Located<String>>,
        aggregates: Vec<Located<String>>,
        /// (size, retention) for a windowed group-by.
        window: Option<(Located<Duration>, Option<Located<Duration>>)>,
    },
    Merge {
        parents: Vec<Located<String>>,
    },
    Join {
        left: Located<String>,
        right: Located<String>,
        left_key: Located<String>,
        right_key: Located<String>,
        window: Located<Duration>,
        left_prefix: Option<String>,
        right_prefix: Option<String>,
    },
    Sink {
        parent: Located<String>,
        topic: Located<String>,
        /// `None` for a pass-through sink.
        codec: Option<CodecSpec>,
    },
}

impl NodeOp {
    pub fn kind(&self) -> &'static str {
        match self {
            NodeOp::Source { .. } => "source",
            NodeOp::Filter { .. } => "filter",
            NodeOp::Select { .. } => "select",
            NodeOp::WithColumns { .. } => "with_columns",
            NodeOp::GroupBy { window: None, .. } => "group_by",
            NodeOp::GroupBy { .. } => "windowed_group_by",
            NodeOp::Merge { .. } => "merge",
            NodeOp::Join { .. } => "join",
            NodeOp::Sink { codec: None, .. } => "pass_through",
            NodeOp::Sink { .. } => "sink",
        }
    }

    fn parents(&self) -> Vec<&Located<String>> {
        match self {
            NodeOp::Source { .. } => Vec::new(),
            NodeOp::Filter { parent, .. }
            | NodeOp::Select { parent, .. }
            | NodeOp::WithColumns { parent, .. }
            | NodeOp::GroupBy { parent, .. }
            | NodeOp::Sink { parent, .. } => vec![parent],
            NodeOp::Merge { parents } => parents.iter().collect(),
            NodeOp::Join { left, right, .. } => vec![left, right],
        }
    }
}

/// A parsed topology file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopologySpec {
    pub settings: Settings,
    pub nodes: Vec<NodeSpec>,
    /// Where `nodes:` is (for whole-topology errors).
    pub nodes_pos: Pos,
}

/// Codec names a topology file may use (optionally prefixed `gzip+`).
pub const CODEC_NAMES: [&str; 8] = [
    "raw",
    "string",
    "json",
    "json-schema",
    "json-sr",
    "avro",
    "protobuf",
    "arrow",
];

/// Checks a codec name; `gzip+<name>` wraps any codec.
pub fn check_codec_name(name: &Located<String>) -> Result<(), SpecError> {
    let inner = name.value.strip_prefix("gzip+").unwrap_or(&name.value);
    if CODEC_NAMES.contains(&inner) {
        Ok(())
    } else {
        Err(SpecError::at(
            name.pos,
            format!(
                "unknown codec `{}`; expected one of {} (optionally prefixed gzip+)",
                name.value,
                CODEC_NAMES.join(", ")
            ),
        ))
    }
}

/// Turns codec names into codecs. The group runner resolves real codecs (with
/// the registry); offline runs need none and use [`OfflineCodecs`].
pub trait CodecResolver {
    /// `payload` holds the declared payload columns when the file declares them.
    fn resolve(
        &self,
        codec: &CodecSpec,
        payload: Option<&SchemaRef>,
    ) -> Result<Arc<dyn BatchCodec>, String>;
}

/// Offline runs read and write Arrow batches directly: codecs stay unresolved
/// and fail if anything tries to use them.
#[derive(Debug, Default)]
pub struct OfflineCodecs;

#[derive(Debug)]
struct UnresolvedCodec(String);

impl BatchCodec for UnresolvedCodec {
    fn decode(
        &self,
        _topic: &str,
        _records: &[super::Record],
    ) -> Result<arrow_array::RecordBatch, super::CodecError> {
        Err(super::CodecError::new(format!(
            "codec `{}` is not available offline",
            self.0
        )))
    }

    fn encode(
        &self,
        _topic: &str,
        _batch: &arrow_array::RecordBatch,
    ) -> Result<Vec<super::OutRecord>, super::CodecError> {
        Err(super::CodecError::new(format!(
            "codec `{}` is not available offline",
            self.0
        )))
    }

    fn name(&self) -> String {
        self.0.clone()
    }
}

impl CodecResolver for OfflineCodecs {
    fn resolve(
        &self,
        codec: &CodecSpec,
        _payload: Option<&SchemaRef>,
    ) -> Result<Arc<dyn BatchCodec>, String> {
        let name = match &codec.key {
            Some(key) => format!("key {} / value {}", key.value, codec.value.value),
            None => codec.value.value.clone(),
        };
        Ok(Arc::new(UnresolvedCodec(name)))
    }
}

/// A built topology with what was learnt while building it.
#[derive(Debug)]
pub struct BuiltSpec {
    pub topology: BuiltTopology,
    pub settings: Settings,
    /// The output schema of every node, where it is known.
    pub schemas: Vec<Option<SchemaRef>>,
}

/// Maps an expression error to the file, given where the expression text starts.
fn expr_error(text: &Located<String>, e: ExprError) -> SpecError {
    let line = e.line.max(1) as usize;
    let column = e.column.max(1) as usize;
    let pos = if line == 1 {
        Pos {
            line: text.pos.line,
            column: text.pos.column + column - 1,
        }
    } else {
        Pos {
            line: text.pos.line + line - 1,
            column: text.block_indent.unwrap_or(0) + column,
        }
    };
    SpecError::at(pos, e.message)
}

fn op_error(pos: Pos, e: OpError) -> SpecError {
    SpecError::at(pos, e.message)
}

/// "; did you mean …" for a column `schema` lacks (`engine::suggest`).
fn column_hint(name: &str, schema: &Schema) -> String {
    crate::engine::suggest::hint(name, schema.fields().iter().map(|f| f.name().as_str()))
}

/// The processing schema of a source with declared payload columns.
pub fn declared_schema(columns: &[(Located<String>, Located<DataType>)]) -> SchemaRef {
    let mut fields: Vec<FieldRef> = columns
        .iter()
        .map(|(name, ty)| {
            Arc::new(escape_payload_field(&Field::new(
                &name.value,
                ty.value.clone(),
                true,
            )))
        })
        .collect();
    fields.extend(reserved_fields());
    Arc::new(Schema::new(fields))
}

/// Validates the spec and builds it. `inputs` holds the actual schema of a
/// source (by node name) when it is known before running (offline inputs).
pub fn build(
    spec: &TopologySpec,
    codecs: &dyn CodecResolver,
    inputs: &HashMap<String, SchemaRef>,
) -> Result<BuiltSpec, SpecError> {
    check_graph(spec)?;
    let mut topology = Topology::new();
    let mut ids: HashMap<String, NodeId> = HashMap::new();
    let mut schemas: Vec<Option<SchemaRef>> = Vec::new();
    for node in &spec.nodes {
        let mut ctx = NodeContext {
            topology: &mut topology,
            ids: &ids,
            schemas: &schemas,
            name: node.name.value.as_str(),
            at: node.name.pos,
        };
        let (id, schema) = build_node(&mut ctx, node, codecs, inputs)?;
        ids.insert(node.name.value.clone(), id);
        schemas.push(schema);
    }
    let topology = topology
        .build()
        .map_err(|e| SpecError::at(spec.nodes_pos, e.message))?;
    Ok(BuiltSpec {
        topology,
        settings: spec.settings.clone(),
        schemas,
    })
}

/// Whole-topology checks before any node is built: unique names, parents defined
/// before their child, at least one source and one sink, a dead-letter topic named.
fn check_graph(spec: &TopologySpec) -> Result<(), SpecError> {
    // 1. Duplicate names.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (index, node) in spec.nodes.iter().enumerate() {
        if seen.insert(node.name.value.as_str(), index).is_some() {
            return Err(SpecError::at(
                node.name.pos,
                format!("duplicate node name `{}`", node.name.value),
            ));
        }
    }
    // 2. Parents must exist before their child.
    for (index, node) in spec.nodes.iter().enumerate() {
        for parent in node.op.parents() {
            match seen.get(parent.value.as_str()) {
                Some(p) if *p < index => {}
                Some(_) => {
                    return Err(SpecError::at(
                        parent.pos,
                        format!(
                            "node `{}` has an invalid parent: `{}` is defined after it",
                            node.name.value, parent.value
                        ),
                    ));
                }
                None => {
                    return Err(SpecError::at(
                        parent.pos,
                        format!(
                            "parent is not a node in this topology: `{}` (parent of `{}`){}",
                            parent.value,
                            node.name.value,
                            crate::engine::suggest::hint(
                                &parent.value,
                                spec.nodes.iter().map(|n| n.name.value.as_str())
                            )
                        ),
                    ));
                }
            }
        }
    }
    // 3. At least one source and one sink.
    if !spec
        .nodes
        .iter()
        .any(|n| matches!(n.op, NodeOp::Source { .. }))
    {
        return Err(SpecError::at(spec.nodes_pos, "topology has no source"));
    }
    if !spec
        .nodes
        .iter()
        .any(|n| matches!(n.op, NodeOp::Sink { .. }))
    {
        return Err(SpecError::at(spec.nodes_pos, "topology has no sink"));
    }
    if let ErrorPolicy::DeadLetter { topic } = &spec.settings.error_policy
        && topic.is_empty()
    {
        return Err(SpecError::at(
            spec.nodes_pos,
            "deadLetterTopic requires ActionDeadLetter",
        ));
    }
    Ok(())
}

/// What building one node needs of the nodes before it.
struct NodeContext<'a> {
    topology: &'a mut Topology,
    ids: &'a HashMap<String, NodeId>,
    schemas: &'a [Option<SchemaRef>],
    name: &'a str,
    at: Pos,
}

impl NodeContext<'_> {
    /// The schema of an earlier node, when it is known before running.
    fn schema_of(&self, name: &Located<String>) -> Option<SchemaRef> {
        self.schemas[self.ids[&name.value].index()].clone()
    }
}

/// Adds one node to the topology and returns its id and, when known, its schema.
fn build_node(
    ctx: &mut NodeContext<'_>,
    node: &NodeSpec,
    codecs: &dyn CodecResolver,
    inputs: &HashMap<String, SchemaRef>,
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    match &node.op {
        NodeOp::Source {
            topics,
            codec,
            columns,
        } => build_source(ctx, topics, codec, columns.as_deref(), codecs, inputs),
        NodeOp::Filter { parent, predicate } => {
            let parsed =
                ParsedExpr::parse(&predicate.value, false).map_err(|e| expr_error(predicate, e))?;
            let input = ctx.schema_of(parent);
            if let Some(input) = &input {
                parsed
                    .compile_predicate(input)
                    .map_err(|e| expr_error(predicate, e))?;
            }
            let op: Arc<dyn Operator> = Arc::new(Filter::new(parsed));
            add_operator(ctx.topology, name, op, ctx.ids[&parent.value], input, at)
        }
        NodeOp::Select { parent, columns } => build_select(ctx, parent, columns),
        NodeOp::WithColumns { parent, columns } => build_with_columns(ctx, parent, columns),
        NodeOp::GroupBy {
            parent,
            keys,
            aggregates,
            window,
        } => build_group_by(ctx, parent, keys, aggregates, window.as_ref()),
        NodeOp::Merge { parents } => build_merge(ctx, parents),
        NodeOp::Join {
            left,
            right,
            left_key,
            right_key,
            window,
            left_prefix,
            right_prefix,
        } => build_join(
            ctx,
            (left, right),
            (left_key, right_key),
            window,
            (left_prefix, right_prefix),
        ),
        NodeOp::Sink {
            parent,
            topic,
            codec,
        } => build_sink(ctx, parent, topic, codec.as_ref(), codecs),
    }
}

fn build_source(
    ctx: &mut NodeContext<'_>,
    topics: &[Located<String>],
    codec: &CodecSpec,
    columns: Option<&[(Located<String>, Located<DataType>)]>,
    codecs: &dyn CodecResolver,
    inputs: &HashMap<String, SchemaRef>,
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    check_codec_name(&codec.value)?;
    if let Some(key) = &codec.key {
        check_codec_name(key)?;
    }
    let declared = columns.map(declared_schema);
    let schema = match (inputs.get(name), columns) {
        (Some(actual), Some(columns)) => {
            check_declared(actual, columns)?;
            Some(actual.clone())
        }
        (Some(actual), None) => Some(actual.clone()),
        (None, _) => declared.clone(),
    };
    let resolved = codecs
        .resolve(codec, declared.as_ref())
        .map_err(|m| SpecError::at(codec.value.pos, m))?;
    let topics = topics.iter().map(|t| t.value.clone()).collect();
    let id = ctx
        .topology
        .add_source(name, topics, resolved)
        .map_err(|e| SpecError::at(at, e.message))?;
    Ok((id, schema))
}

fn build_select(
    ctx: &mut NodeContext<'_>,
    parent: &Located<String>,
    columns: &[Located<String>],
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    let input = ctx.schema_of(parent);
    if let Some(input) = &input {
        for column in columns {
            if input.index_of(&column.value).is_err() {
                return Err(SpecError::at(
                    column.pos,
                    format!(
                        "Arrow column does not exist: {}{}",
                        column.value,
                        column_hint(&column.value, input)
                    ),
                ));
            }
        }
    }
    let op: Arc<dyn Operator> = Arc::new(Select::new(
        columns.iter().map(|c| c.value.clone()).collect(),
    ));
    add_operator(ctx.topology, name, op, ctx.ids[&parent.value], input, at)
}

fn build_with_columns(
    ctx: &mut NodeContext<'_>,
    parent: &Located<String>,
    columns: &[Located<String>],
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    let input = ctx.schema_of(parent);
    let mut derived = Vec::new();
    for column in columns {
        let parsed = ParsedExpr::parse(&column.value, true).map_err(|e| expr_error(column, e))?;
        let out_name = match (parsed.alias(), parsed.column_name()) {
            (Some(alias), _) => alias.to_owned(),
            (None, Some(column_name)) => column_name.to_owned(),
            (None, None) => {
                return Err(SpecError::at(
                    column.pos,
                    "a derived column needs a name: write `<expression> AS <name>`",
                ));
            }
        };
        if let Some(input) = &input {
            parsed.compile(input).map_err(|e| expr_error(column, e))?;
        }
        WithColumns::new(vec![(out_name.clone(), parsed.clone())])
            .map_err(|e| op_error(column.pos, e))?;
        derived.push((out_name, parsed));
    }
    let op: Arc<dyn Operator> = Arc::new(WithColumns::new(derived).map_err(|e| op_error(at, e))?);
    add_operator(ctx.topology, name, op, ctx.ids[&parent.value], input, at)
}

fn build_group_by(
    ctx: &mut NodeContext<'_>,
    parent: &Located<String>,
    keys: &[Located<String>],
    aggregates: &[Located<String>],
    window: Option<&(Located<Duration>, Option<Located<Duration>>)>,
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    let input = ctx.schema_of(parent);
    if keys.is_empty() {
        return Err(SpecError::at(
            at,
            "groupBy requires at least one key column",
        ));
    }
    if let Some(input) = &input {
        for key in keys {
            if input.index_of(&key.value).is_err() {
                return Err(SpecError::at(
                    key.pos,
                    format!(
                        "Arrow column does not exist: {}{}",
                        key.value,
                        column_hint(&key.value, input)
                    ),
                ));
            }
        }
    }
    let aggs = aggregations(keys, aggregates, input.as_deref())?;
    let window = window.map(group_window).transpose()?;
    let op: Arc<dyn Operator> = Arc::new(GroupBy::new(
        keys.iter().map(|k| k.value.clone()).collect(),
        aggs,
        window,
    ));
    add_operator(ctx.topology, name, op, ctx.ids[&parent.value], input, at)
}

/// The aggregations of a `groupBy`, checked against its input when known.
fn aggregations(
    keys: &[Located<String>],
    aggregates: &[Located<String>],
    input: Option<&Schema>,
) -> Result<Vec<Aggregation>, SpecError> {
    let mut aggs = Vec::new();
    for text in aggregates {
        let call = parse_aggregate(&text.value).map_err(|e| expr_error(text, e))?;
        let func = match call.function.as_str() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            _ => AggFunc::Max,
        };
        let input_column = match call.column.clone() {
            Some(c) => c,
            // count(*) counts rows; any column will do, the first key is always there.
            None => keys[0].value.clone(),
        };
        if let Some(input) = input
            && input.index_of(&input_column).is_err()
        {
            return Err(SpecError::at(
                text.pos,
                format!(
                    "Arrow column does not exist: {input_column}{}",
                    column_hint(&input_column, input)
                ),
            ));
        }
        let output = call.alias.clone().unwrap_or_else(|| match &call.column {
            Some(c) => format!("{}_{c}", call.function),
            None => "count".to_owned(),
        });
        aggs.push(Aggregation {
            input: input_column,
            output,
            func,
            output_type: call.output_type,
        });
    }
    Ok(aggs)
}

/// A `groupBy` window: size and retention in milliseconds.
fn group_window(
    (size, retention): &(Located<Duration>, Option<Located<Duration>>),
) -> Result<Window, SpecError> {
    // Beyond i64 milliseconds no window bound is representable.
    let ms = |d: &Located<Duration>| {
        i64::try_from(d.value.as_millis()).map_err(|_| {
            SpecError::at(
                d.pos,
                format!(
                    "{} ms is beyond the 64-bit millisecond range of window bounds (at most {} ms, about 292 million years)",
                    d.value.as_millis(),
                    i64::MAX
                ),
            )
        })
    };
    let retention_ms = retention.as_ref().map(ms).transpose()?;
    Window::new(ms(size)?, retention_ms).map_err(|e| {
        let pos = match (&e.message, retention) {
            (m, Some(r)) if m.starts_with("retention") => r.pos,
            _ => size.pos,
        };
        op_error(pos, e)
    })
}

fn build_merge(
    ctx: &mut NodeContext<'_>,
    parents: &[Located<String>],
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    let known: Vec<SchemaRef> = parents.iter().filter_map(|p| ctx.schema_of(p)).collect();
    let schema = if known.len() == parents.len() {
        if known.iter().any(|s| s != &known[0]) {
            return Err(SpecError::at(
                at,
                format!(
                    "merge `{name}`: parents have different schemas ({})",
                    known
                        .iter()
                        .map(|s| describe_schema(s))
                        .collect::<Vec<_>>()
                        .join(" vs ")
                ),
            ));
        }
        Some(known[0].clone())
    } else {
        None
    };
    let parent_ids: Vec<NodeId> = parents.iter().map(|p| ctx.ids[&p.value]).collect();
    let id = ctx
        .topology
        .add_merge(name, &parent_ids)
        .map_err(|e| SpecError::at(at, e.message))?;
    Ok((id, schema))
}

fn build_join(
    ctx: &mut NodeContext<'_>,
    (left, right): (&Located<String>, &Located<String>),
    (left_key, right_key): (&Located<String>, &Located<String>),
    window: &Located<Duration>,
    (left_prefix, right_prefix): (&Option<String>, &Option<String>),
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let (name, at) = (ctx.name, ctx.at);
    let join = JoinSpec::new(
        left_key.value.clone(),
        right_key.value.clone(),
        window.value.as_nanos() as i128,
        left_prefix.clone(),
        right_prefix.clone(),
    )
    .map_err(|e| op_error(window.pos, e))?;
    let schema = match (ctx.schema_of(left), ctx.schema_of(right)) {
        (Some(l), Some(r)) => {
            for (schema, key) in [(&l, left_key), (&r, right_key)] {
                if schema.index_of(&key.value).is_err() {
                    return Err(SpecError::at(
                        key.pos,
                        format!(
                            "join key column does not exist: {}{}",
                            key.value,
                            column_hint(&key.value, schema)
                        ),
                    ));
                }
            }
            Some(join.output_schema(&l, &r).map_err(|e| op_error(at, e))?)
        }
        _ => None,
    };
    let id = ctx
        .topology
        .add_join(name, join, ctx.ids[&left.value], ctx.ids[&right.value])
        .map_err(|e| SpecError::at(right.pos, e.message))?;
    Ok((id, schema))
}

fn build_sink(
    ctx: &mut NodeContext<'_>,
    parent: &Located<String>,
    topic: &Located<String>,
    codec: Option<&CodecSpec>,
    codecs: &dyn CodecResolver,
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let name = ctx.name;
    let input = ctx.schema_of(parent);
    let id = match codec {
        Some(codec) => {
            check_codec_name(&codec.value)?;
            if let Some(key) = &codec.key {
                check_codec_name(key)?;
            }
            check_sink_key(codec, input.as_deref())?;
            let resolved = codecs
                .resolve(codec, input.as_ref())
                .map_err(|m| SpecError::at(codec.value.pos, m))?;
            ctx.topology
                .add_sink(name, &topic.value, resolved, ctx.ids[&parent.value])
        }
        None => ctx
            .topology
            .add_pass_through_sink(name, &topic.value, ctx.ids[&parent.value]),
    }
    .map_err(|e| SpecError::at(parent.pos, e.message))?;
    Ok((id, input))
}

fn add_operator(
    topology: &mut Topology,
    name: &str,
    op: Arc<dyn Operator>,
    parent: NodeId,
    input: Option<SchemaRef>,
    at: Pos,
) -> Result<(NodeId, Option<SchemaRef>), SpecError> {
    let schema = match &input {
        Some(input) => Some(op.output_schema(input).map_err(|e| op_error(at, e))?),
        None => None,
    };
    let id = topology
        .add_operator(name, op, parent)
        .map_err(|e| SpecError::at(at, e.message))?;
    Ok((id, schema))
}

/// Codecs a sink key column may be written with.
pub const SINK_KEY_CODECS: [&str; 7] = [
    "string",
    "raw",
    "json",
    "avro",
    "json-schema",
    "json-sr",
    "protobuf",
];

/// A sink key column must exist in the sink's input (when its schema is known)
/// and be written with one of [`SINK_KEY_CODECS`].
fn check_sink_key(codec: &CodecSpec, input: Option<&Schema>) -> Result<(), SpecError> {
    let Some(column) = &codec.key_column else {
        return Ok(());
    };
    if let Some(key) = &codec.key
        && !SINK_KEY_CODECS.contains(&key.value.as_str())
    {
        return Err(SpecError::at(
            key.pos,
            format!(
                "a sink key column is written with {}, not `{}`",
                SINK_KEY_CODECS.join(", "),
                key.value
            ),
        ));
    }
    if let Some(schema) = input
        && schema.index_of(&column.value).is_err()
    {
        return Err(SpecError::at(
            column.pos,
            format!(
                "sink key column does not exist: {} (columns: {})",
                column.value,
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(())
}

fn check_declared(
    actual: &Schema,
    columns: &[(Located<String>, Located<DataType>)],
) -> Result<(), SpecError> {
    for (name, ty) in columns {
        let escaped = escape_payload_field(&Field::new(&name.value, ty.value.clone(), true));
        match actual.field_with_name(escaped.name()) {
            Err(_) => {
                return Err(SpecError::at(
                    name.pos,
                    format!(
                        "the input has no column `{}` (it has {})",
                        name.value,
                        describe_schema(actual)
                    ),
                ));
            }
            Ok(field) if field.data_type() != &ty.value => {
                return Err(SpecError::at(
                    ty.pos,
                    format!(
                        "column `{}` is {} in the input, but the topology declares {}",
                        name.value,
                        type_name(field.data_type()),
                        type_name(&ty.value)
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// `name type, …` for messages and `--explain`.
pub fn describe_schema(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| format!("{} {}", f.name(), type_name(f.data_type())))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Pos {
        Pos { line, column }
    }

    fn loc(text: &str, line: usize, column: usize) -> Located<String> {
        Located::new(text.to_owned(), at(line, column))
    }

    fn orders_spec(predicate: &str) -> TopologySpec {
        TopologySpec {
            settings: Settings::default(),
            nodes_pos: at(2, 1),
            nodes: vec![
                NodeSpec {
                    name: loc("orders", 3, 13),
                    op: NodeOp::Source {
                        topics: vec![loc("orders", 4, 14)],
                        codec: CodecSpec {
                            value: loc("avro", 5, 12),
                            key: None,
                            key_column: None,
                            schema_file: None,
                            key_schema_file: None,
                            topic: None,
                        },
                        columns: Some(vec![
                            (loc("user", 7, 7), Located::new(DataType::Utf8, at(7, 13))),
                            (
                                loc("amount", 8, 7),
                                Located::new(DataType::Int64, at(8, 15)),
                            ),
                        ]),
                    },
                },
                NodeSpec {
                    name: loc("large", 9, 13),
                    op: NodeOp::Filter {
                        parent: loc("orders", 10, 13),
                        predicate: loc(predicate, 11, 12),
                    },
                },
                NodeSpec {
                    name: loc("out", 12, 11),
                    op: NodeOp::Sink {
                        parent: loc("large", 13, 13),
                        topic: loc("out", 14, 12),
                        codec: Some(CodecSpec {
                            value: loc("json", 15, 12),
                            key: None,
                            key_column: None,
                            schema_file: None,
                            key_schema_file: None,
                            topic: Some("out".into()),
                        }),
                    },
                },
            ],
        }
    }

    #[test]
    fn expression_errors_point_at_the_file_position() {
        let err = build(
            &orders_spec("amount > 1 AND colour = 'x'"),
            &OfflineCodecs,
            &HashMap::new(),
        )
        .unwrap_err();
        assert_eq!(err.pos, at(11, 27));
        assert!(
            err.message
                .starts_with("Arrow column does not exist: colour")
        );
        let built = build(
            &orders_spec("amount > 100"),
            &OfflineCodecs,
            &HashMap::new(),
        )
        .unwrap();
        assert_eq!(built.schemas.len(), 3);
        assert_eq!(built.schemas[1].as_ref().unwrap().fields().len(), 7);
    }

    #[test]
    fn validation_follows_the_order_and_wording_of_the_builder() {
        let mut spec = orders_spec("amount > 1");
        spec.nodes[2].name = loc("large", 12, 11);
        let err = build(&spec, &OfflineCodecs, &HashMap::new()).unwrap_err();
        assert_eq!(err.to_string(), "12:11: duplicate node name `large`");

        let mut spec = orders_spec("amount > 1");
        if let NodeOp::Filter { parent, .. } = &mut spec.nodes[1].op {
            *parent = loc("out", 10, 13);
        }
        let err = build(&spec, &OfflineCodecs, &HashMap::new()).unwrap_err();
        assert!(
            err.message
                .starts_with("node `large` has an invalid parent"),
            "{err}"
        );

        let mut spec = orders_spec("amount > 1");
        if let NodeOp::Filter { parent, .. } = &mut spec.nodes[1].op {
            *parent = loc("nowhere", 10, 13);
        }
        let err = build(&spec, &OfflineCodecs, &HashMap::new()).unwrap_err();
        assert!(
            err.message
                .starts_with("parent is not a node in this topology"),
            "{err}"
        );
        assert_eq!(err.pos, at(10, 13));

        let mut spec = orders_spec("amount > 1");
        spec.nodes.truncate(2);
        let err = build(&spec, &OfflineCodecs, &HashMap::new()).unwrap_err();
        assert_eq!(err.message, "topology has no sink");
        spec.nodes.clear();
        let err = build(&spec, &OfflineCodecs, &HashMap::new()).unwrap_err();
        assert_eq!(err.message, "topology has no source");
    }

    #[test]
    fn a_declared_column_must_match_the_input() {
        let actual = Arc::new(Schema::new(vec![
            Field::new("user", DataType::Utf8, true),
            Field::new("amount", DataType::Int32, true),
        ]));
        let inputs = HashMap::from([("orders".to_owned(), actual as SchemaRef)]);
        let err = build(&orders_spec("amount > 1"), &OfflineCodecs, &inputs).unwrap_err();
        assert_eq!(err.pos, at(8, 15));
        assert_eq!(
            err.message,
            "column `amount` is int32 in the input, but the topology declares int64"
        );
    }
}
