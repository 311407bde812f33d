//! Reading a topology file (D19): versioned YAML, an ordered list of nodes that
//! map one-to-one to the builder calls, plus per-topology settings. Parsed with
//! `saphyr` into a tree that keeps the position of every node, so that each
//! error — YAML syntax, an unknown key, a missing field, and later a type error
//! inside an expression — names the line and column it comes from. Produces an
//! `engine::columnar::topology::spec::TopologySpec`; building happens in the engine.
//! The format is documented in `docs/topology.md`.

use std::path::Path;
use std::time::Duration;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use crate::engine::columnar::expr::types::parse_type;
use crate::engine::columnar::topology::spec::{
    CodecSpec, ErrorPolicy, Guarantee, Located, NodeOp, NodeSpec, Pos, SchemaFile, Settings,
    SpecError, StateLayout, StateStoreKind, TOPOLOGY_FILE_VERSION, TopologySpec,
};
use crate::engine::units::parse_duration;
use crate::io::schema_file;

/// Node kinds, as the key that names the node.
pub const NODE_KINDS: [&str; 10] = [
    "source",
    "filter",
    "select",
    "with_columns",
    "group_by",
    "windowed_group_by",
    "merge",
    "join",
    "sink",
    "pass_through",
];

/// A topology file larger than this is refused before it is parsed: real
/// topologies are a few kilobytes, and the parser keeps a position for every node.
pub const MAX_TOPOLOGY_BYTES: usize = 1 << 20;

/// [`MAX_TOPOLOGY_BYTES`] as a read cap (`io::bounded_read`).
const TOPOLOGY_CAP: crate::io::bounded_read::Cap = crate::io::bounded_read::Cap {
    bytes: MAX_TOPOLOGY_BYTES as u64,
    what: "a topology file",
};

/// At most this many levels of nested sequences and mappings: a topology needs
/// about six; the YAML tree is built and walked recursively, so a file of 20,000
/// levels would overflow the stack.
pub const MAX_YAML_DEPTH: usize = 64;

/// At most this many nodes in one topology.
pub const MAX_TOPOLOGY_NODES: usize = 1000;

/// Reads a topology file: at most [`MAX_TOPOLOGY_BYTES`] (a larger file, a
/// device or a FIFO that never ends is refused without reading it all), UTF-8.
pub fn read(path: &Path) -> Result<String, String> {
    let name = path.display();
    crate::io::bounded_read::read_to_string(path, TOPOLOGY_CAP)
        .map_err(|e| format!("cannot read {name}: {e}"))
}

/// Parses a topology file's text.
pub fn parse(source: &str) -> Result<TopologySpec, SpecError> {
    if source.len() > MAX_TOPOLOGY_BYTES {
        return Err(SpecError::at(
            Pos { line: 1, column: 1 },
            format!("a topology file holds at most {MAX_TOPOLOGY_BYTES} bytes"),
        ));
    }
    check_depth(source)?;
    let docs = MarkedYaml::load_from_str(source).map_err(|e| {
        let mark = e.marker();
        let reported = Pos {
            line: mark.line().max(1),
            column: mark.col() + 1,
        };
        // The scanner marks a tab error where the previous token ended (often the
        // line before) or after the tab: point at the tab itself, the first one from
        // the start of the marked line.
        let pos = if e.info().contains("tab") {
            let line_start = source
                .chars()
                .take(mark.index())
                .enumerate()
                .filter(|(_, c)| *c == '\n')
                .last()
                .map_or(0, |(i, _)| i + 1);
            first_tab_from(source, line_start).unwrap_or(reported)
        } else {
            reported
        };
        SpecError::at(pos, format!("invalid YAML: {}", e.info()))
    })?;
    let reader = Reader {
        chars: source.chars().collect(),
    };
    let root = match docs.as_slice() {
        [root] => root,
        [] => {
            return Err(SpecError::at(
                Pos { line: 1, column: 1 },
                "the topology file is empty",
            ));
        }
        [_, second, ..] => {
            return Err(SpecError::at(
                reader.pos(second),
                "a topology file holds one YAML document",
            ));
        }
    };
    reader.topology(root)
}

/// The line and column of the first tab at or after character index `from`.
fn first_tab_from(source: &str, from: usize) -> Option<Pos> {
    let (mut line, mut column) = (1, 1);
    for (i, c) in source.chars().enumerate() {
        if c == '\t' && i >= from {
            return Some(Pos { line, column });
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    None
}

/// Refuses nesting deeper than [`MAX_YAML_DEPTH`] at the line it goes too deep,
/// from the parser's event stream (iterative: no recursion on the input's depth).
/// Syntax errors are left to the loader, which reports them the same way.
fn check_depth(source: &str) -> Result<(), SpecError> {
    use saphyr_parser::{Event, Parser};
    let mut depth = 0usize;
    for event in Parser::new_from_str(source) {
        let Ok((event, span)) = event else {
            return Ok(());
        };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_YAML_DEPTH {
                    return Err(SpecError::at(
                        Pos {
                            line: span.start.line().max(1),
                            column: span.start.col() + 1,
                        },
                        format!(
                            "nesting deeper than {MAX_YAML_DEPTH} levels of sequences and mappings"
                        ),
                    ));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

struct Reader {
    chars: Vec<char>,
}

/// A topic name the broker would refuse fails here, at its position.
fn check_topic(topic: &Located<String>) -> Result<(), SpecError> {
    crate::engine::topic_name::validate(&topic.value).map_err(|m| SpecError::at(topic.pos, m))
}

/// Codecs whose sink `value` (or key `codec`) may name a writer schema file:
/// `avro:FILE.avsc`, `json-schema:FILE.json`, `protobuf:FILE.proto[:pkg.Msg]`.
const SCHEMA_FILE_CODECS: [&str; 4] = ["avro", "protobuf", "json-schema", "json-sr"];

/// Splits `CODEC:PATH` into the codec and the schema file it names; a Protobuf
/// path may end in `:MESSAGE`, the message it is written with.
fn split_schema_file(value: Located<String>) -> (Located<String>, Option<SchemaFile>) {
    let Some((codec, path)) = value.value.split_once(':') else {
        return (value, None);
    };
    let inner = codec.strip_prefix("gzip+").unwrap_or(codec);
    if !SCHEMA_FILE_CODECS.contains(&inner) || path.is_empty() {
        return (value, None);
    }
    let path_pos = Pos {
        line: value.pos.line,
        column: value.pos.column + codec.chars().count() + 1,
    };
    let (path, message) = match path.rsplit_once(':') {
        Some((file, message)) if inner == "protobuf" && !message.is_empty() => {
            let at = Pos {
                line: path_pos.line,
                column: path_pos.column + file.chars().count() + 1,
            };
            (file, Some(Located::new(message.to_owned(), at)))
        }
        _ => (path, None),
    };
    let file = SchemaFile {
        path: Located::new(path.to_owned(), path_pos),
        message,
        text: None,
        imports: Vec::new(),
    };
    (Located::new(codec.to_owned(), value.pos), Some(file))
}

/// Reads every sink's schema files (value and key), relative to `dir` (the
/// topology file's directory); a file that cannot be read is an error at its path.
pub fn load_schema_files(spec: &mut TopologySpec, dir: &Path) -> Result<(), SpecError> {
    for node in &mut spec.nodes {
        if let NodeOp::Sink {
            codec: Some(codec), ..
        } = &mut node.op
        {
            let protobuf = |codec: Option<&Located<String>>| {
                codec.is_some_and(|c| {
                    c.value.strip_prefix("gzip+").unwrap_or(&c.value) == "protobuf"
                })
            };
            let value_proto = protobuf(Some(&codec.value));
            let key_proto = protobuf(codec.key.as_ref());
            for (file, proto) in [
                (&mut codec.schema_file, value_proto),
                (&mut codec.key_schema_file, key_proto),
            ] {
                let Some(file) = file else { continue };
                let path = dir.join(&file.path.value);
                let text = schema_file::read(&path)
                    .map_err(|e| SpecError::at(file.path.pos, e.to_string()))?;
                if proto {
                    file.imports = schema_file::read_proto_imports(&path, &text).map_err(|e| {
                        SpecError::at(
                            file.path.pos,
                            format!("schema file {}: {e}", path.display()),
                        )
                    })?;
                }
                file.text = Some(text);
            }
        }
    }
    Ok(())
}

/// A sink key's codec and column.
type SinkKey = (Option<Located<String>>, Option<Located<String>>);

type Entries<'a, 'b> = Vec<(String, Pos, &'b MarkedYaml<'a>)>;

/// `state_epochs_kept`: barrier epochs kept per partition (docs/topology.md "State in Kafka").
fn epochs_kept_value(text: &Located<String>) -> Result<usize, SpecError> {
    text.value
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=1_000_000).contains(n))
        .ok_or_else(|| {
            SpecError::at(
                text.pos,
                format!(
                    "state_epochs_kept must be a whole number from 1 to 1000000 (barrier epochs kept per partition), got `{}`",
                    text.value
                ),
            )
        })
}

impl Reader {
    fn pos(&self, node: &MarkedYaml<'_>) -> Pos {
        Pos {
            line: node.span.start.line().max(1),
            column: node.span.start.col() + 1,
        }
    }

    fn mapping<'a, 'b>(
        &self,
        node: &'b MarkedYaml<'a>,
        what: &str,
    ) -> Result<Entries<'a, 'b>, SpecError> {
        let YamlData::Mapping(map) = &node.data else {
            return Err(SpecError::at(
                self.pos(node),
                format!("{what} must be a mapping"),
            ));
        };
        map.iter()
            .map(|(k, v)| {
                let key = match &k.data {
                    YamlData::Value(Scalar::String(s)) => s.to_string(),
                    _ => return Err(SpecError::at(self.pos(k), "keys must be plain names")),
                };
                Ok((key, self.pos(k), v))
            })
            .collect()
    }

    fn scalar_text(&self, node: &MarkedYaml<'_>) -> Option<String> {
        match &node.data {
            YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
            YamlData::Value(Scalar::Integer(i)) => Some(i.to_string()),
            YamlData::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
            YamlData::Value(Scalar::Boolean(b)) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A text value with the position of its first character (inside quotes,
    /// or on the first line of a block scalar).
    fn text(&self, node: &MarkedYaml<'_>, what: &str) -> Result<Located<String>, SpecError> {
        let value = self
            .scalar_text(node)
            .ok_or_else(|| SpecError::at(self.pos(node), format!("{what} must be text")))?;
        let mut pos = self.pos(node);
        let start = node.span.start.index();
        let mut block_indent = None;
        if matches!(self.chars.get(start), Some('"') | Some('\'')) {
            pos.column += 1;
        } else {
            // A block scalar (`|`, `>`, with chomping) starts on the line after its
            // indicator. Looked for by walking back from the value over whitespace and
            // chomping signs only: copying all the text before every value made
            // reading a file quadratic in its size (40,000 columns took 20 s).
            let end = start.min(self.chars.len());
            let mut i = end;
            while i > 0 && self.chars[i - 1].is_whitespace() {
                i -= 1;
            }
            let spaced = i < end;
            while i > 0 && matches!(self.chars[i - 1], '+' | '-') {
                i -= 1;
            }
            if spaced && i > 0 && matches!(self.chars[i - 1], '|' | '>') {
                block_indent = Some(pos.column - 1);
            }
        }
        Ok(Located {
            value,
            pos,
            block_indent,
        })
    }

    fn list(&self, node: &MarkedYaml<'_>, what: &str) -> Result<Vec<Located<String>>, SpecError> {
        match &node.data {
            YamlData::Sequence(items) => items.iter().map(|i| self.text(i, what)).collect(),
            _ => Ok(vec![self.text(node, what)?]),
        }
    }

    fn duration(&self, node: &MarkedYaml<'_>, what: &str) -> Result<Located<Duration>, SpecError> {
        let text = self.text(node, what)?;
        let value = parse_duration(&text.value)
            .map_err(|e| SpecError::at(text.pos, format!("{what}: {e}")))?;
        Ok(Located::new(value, text.pos))
    }

    /// A sink's `key`: a codec name (`raw`: the `__key` column), or
    /// `{column: NAME, codec: CODEC}` (codec optional, default `string`).
    fn sink_key(&self, node: &MarkedYaml<'_>) -> Result<SinkKey, SpecError> {
        if !matches!(node.data, YamlData::Mapping(_)) {
            return Ok((Some(self.text(node, "key")?), None));
        }
        let mut column = None;
        let mut codec = None;
        for (key, key_pos, value) in self.mapping(node, "key")? {
            match key.as_str() {
                "column" => column = Some(self.text(value, "key column")?),
                "codec" => codec = Some(self.text(value, "key codec")?),
                other => {
                    return Err(SpecError::at(
                        key_pos,
                        format!("unknown key `{other}` in a sink key; expected column, codec"),
                    ));
                }
            }
        }
        let column = column
            .ok_or_else(|| SpecError::at(self.pos(node), "a sink key mapping needs `column`"))?;
        let codec = codec.unwrap_or_else(|| Located::new("string".to_owned(), column.pos));
        Ok((Some(codec), Some(column)))
    }

    fn topology(&self, root: &MarkedYaml<'_>) -> Result<TopologySpec, SpecError> {
        let entries = self.mapping(root, "the topology file")?;
        let mut version = None;
        let mut settings = Settings::default();
        let mut nodes = None;
        for (key, key_pos, value) in &entries {
            match key.as_str() {
                "version" => {
                    let v = match &value.data {
                        YamlData::Value(Scalar::Integer(v)) => *v,
                        _ => {
                            return Err(SpecError::at(
                                self.pos(value),
                                "version must be an integer",
                            ));
                        }
                    };
                    if v != TOPOLOGY_FILE_VERSION {
                        return Err(SpecError::at(
                            self.pos(value),
                            format!(
                                "unsupported topology file version {v}; this build reads version {TOPOLOGY_FILE_VERSION}"
                            ),
                        ));
                    }
                    version = Some(v);
                }
                "settings" => settings = self.settings(value)?,
                "nodes" => nodes = Some((*key_pos, *value)),
                other => {
                    return Err(SpecError::at(
                        *key_pos,
                        format!("unknown key `{other}`; expected version, settings or nodes"),
                    ));
                }
            }
        }
        if version.is_none() {
            return Err(SpecError::at(
                self.pos(root),
                format!("missing `version: {TOPOLOGY_FILE_VERSION}`"),
            ));
        }
        let Some((nodes_pos, nodes)) = nodes else {
            return Err(SpecError::at(self.pos(root), "missing `nodes`"));
        };
        let YamlData::Sequence(items) = &nodes.data else {
            return Err(SpecError::at(self.pos(nodes), "nodes must be a list"));
        };
        if items.len() > MAX_TOPOLOGY_NODES {
            return Err(SpecError::at(
                self.pos(nodes),
                format!(
                    "{} nodes; a topology holds at most {MAX_TOPOLOGY_NODES}",
                    items.len()
                ),
            ));
        }
        let nodes = items
            .iter()
            .map(|n| self.node(n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TopologySpec {
            settings,
            nodes,
            nodes_pos,
        })
    }

    fn settings(&self, node: &MarkedYaml<'_>) -> Result<Settings, SpecError> {
        let mut settings = Settings::default();
        let mut policy: Option<Located<String>> = None;
        let mut dead_letter_topic: Option<Located<String>> = None;
        let mut store: Option<Located<String>> = None;
        let mut state_topic: Option<Located<String>> = None;
        let mut epochs_kept: Option<Located<String>> = None;
        for (key, key_pos, value) in self.mapping(node, "settings")? {
            let text = self.text(value, &key)?;
            let choice = |options: &[&str]| -> Result<(), SpecError> {
                if options.contains(&text.value.as_str()) {
                    Ok(())
                } else {
                    Err(SpecError::at(
                        text.pos,
                        format!(
                            "{key} must be one of {}, got `{}`",
                            options.join(", "),
                            text.value
                        ),
                    ))
                }
            };
            match key.as_str() {
                "consumer_group" => settings.consumer_group = Some(text.value),
                "state_dir" => settings.state_dir = Some(text.value),
                "barrier_group" => settings.barrier_group = Some(text.value),
                "error_policy" => {
                    choice(&["fail", "skip", "dead-letter"])?;
                    policy = Some(text);
                }
                "dead_letter_topic" => {
                    // The records of a failed row go there: a name the broker refuses
                    // would fail the run at its first bad record, long after --check.
                    check_topic(&text)?;
                    dead_letter_topic = Some(text);
                }
                "guarantee" => {
                    choice(&["at-least-once", "exactly-once"])?;
                    settings.guarantee = if text.value == "exactly-once" {
                        Guarantee::ExactlyOnce
                    } else {
                        Guarantee::AtLeastOnce
                    };
                }
                "state_store" => {
                    choice(&["kafka", "dir", "memory"])?;
                    settings.state_store = Some(match text.value.as_str() {
                        "kafka" => StateStoreKind::Kafka,
                        "dir" => StateStoreKind::Dir,
                        _ => StateStoreKind::Memory,
                    });
                    store = Some(text);
                }
                "state_topic" => {
                    check_topic(&text)?;
                    settings.state_topic = Some(text.value.clone());
                    state_topic = Some(text);
                }
                "state_epochs_kept" => {
                    settings.state_epochs_kept = Some(epochs_kept_value(&text)?);
                    epochs_kept = Some(text);
                }
                "state_layout" => {
                    choice(&["java-go", "rust"])?;
                    settings.state_layout = if text.value == "rust" {
                        StateLayout::Rust
                    } else {
                        StateLayout::JavaGo
                    };
                }
                other => {
                    return Err(SpecError::at(
                        key_pos,
                        format!(
                            "unknown setting `{other}`; expected consumer_group, error_policy, dead_letter_topic, guarantee, state_store, state_topic, state_epochs_kept, state_dir, state_layout or barrier_group"
                        ),
                    ));
                }
            }
        }
        if let Some(store) = &store {
            match (settings.state_store, settings.state_dir.is_some()) {
                (Some(StateStoreKind::Dir), false) => {
                    return Err(SpecError::at(
                        store.pos,
                        "state_store dir needs a state_dir (the directory its snapshot files go to)",
                    ));
                }
                (Some(StateStoreKind::Memory), true) => {
                    return Err(SpecError::at(
                        store.pos,
                        "state_store memory keeps no files: drop state_dir, or choose state_store dir",
                    ));
                }
                _ => {}
            }
        }
        if let Some(topic) = &state_topic
            && settings.state_store() != StateStoreKind::Kafka
        {
            return Err(SpecError::at(
                topic.pos,
                "state_topic belongs to state_store kafka",
            ));
        }
        if let Some(kept) = &epochs_kept
            && settings.state_store() != StateStoreKind::Kafka
        {
            return Err(SpecError::at(
                kept.pos,
                "state_epochs_kept belongs to state_store kafka (a directory's epochs are pruned with `snapshot prune`)",
            ));
        }
        settings.error_policy = error_policy(policy, dead_letter_topic)?;
        Ok(settings)
    }

    fn node(&self, node: &MarkedYaml<'_>) -> Result<NodeSpec, SpecError> {
        let entries = self.mapping(node, "a node")?;
        let kinds: Vec<&(String, Pos, &MarkedYaml<'_>)> = entries
            .iter()
            .filter(|(k, _, _)| NODE_KINDS.contains(&k.as_str()))
            .collect();
        let (kind, name) = match kinds.as_slice() {
            [(kind, _, value)] => (kind.as_str(), self.text(value, "a node name")?),
            [] => {
                return Err(SpecError::at(
                    self.pos(node),
                    format!(
                        "a node starts with its kind and name, e.g. `- filter: large`; kinds: {}",
                        NODE_KINDS.join(", ")
                    ),
                ));
            }
            [_, (second, pos, _), ..] => {
                return Err(SpecError::at(
                    *pos,
                    format!("a node has one kind, but `{second}` is a second one"),
                ));
            }
        };
        if name.value.is_empty() {
            return Err(SpecError::at(name.pos, "a node name must not be empty"));
        }
        let allowed: &[&str] = match kind {
            "source" => &["topics", "key", "value", "columns"],
            "filter" => &["parent", "where"],
            "select" | "with_columns" => &["parent", "columns"],
            "group_by" => &["parent", "keys", "aggregates"],
            "windowed_group_by" => &["parent", "keys", "aggregates", "window", "retention"],
            "merge" => &["parents"],
            "join" => &[
                "left",
                "right",
                "on",
                "left_key",
                "right_key",
                "window",
                "left_prefix",
                "right_prefix",
            ],
            "sink" => &["parent", "topic", "key", "value"],
            _ => &["parent", "topic"],
        };
        let mut fields = std::collections::HashMap::new();
        for (key, key_pos, value) in &entries {
            if key == kind {
                continue;
            }
            if !allowed.contains(&key.as_str()) {
                return Err(SpecError::at(
                    *key_pos,
                    format!(
                        "unknown key `{key}` for a {kind} node; expected {}",
                        allowed.join(", ")
                    ),
                ));
            }
            fields.insert(key.as_str(), *value);
        }
        let fields = NodeFields {
            reader: self,
            fields,
            name: &name,
            kind,
        };
        let op = match kind {
            "source" => self.source_op(&fields)?,
            "filter" => NodeOp::Filter {
                parent: fields.text("parent")?,
                predicate: fields.text("where")?,
            },
            "select" => NodeOp::Select {
                parent: fields.text("parent")?,
                columns: fields.list("columns")?,
            },
            "with_columns" => NodeOp::WithColumns {
                parent: fields.text("parent")?,
                columns: fields.list("columns")?,
            },
            "group_by" | "windowed_group_by" => {
                let window = if kind == "windowed_group_by" {
                    let size = self.duration(fields.required("window")?, "window")?;
                    let retention = fields
                        .fields
                        .get("retention")
                        .map(|r| self.duration(r, "retention"))
                        .transpose()?;
                    Some((size, retention))
                } else {
                    None
                };
                NodeOp::GroupBy {
                    parent: fields.text("parent")?,
                    keys: fields.list("keys")?,
                    aggregates: fields.list("aggregates")?,
                    window,
                }
            }
            "merge" => NodeOp::Merge {
                parents: fields.list("parents")?,
            },
            "join" => self.join_op(&fields)?,
            "sink" => self.sink_op(&fields)?,
            _ => NodeOp::Sink {
                parent: fields.text("parent")?,
                topic: fields.text("topic")?,
                codec: None,
            },
        };
        Ok(NodeSpec { name, op })
    }

    fn source_op(&self, fields: &NodeFields<'_, '_, '_>) -> Result<NodeOp, SpecError> {
        let topics = fields.list("topics")?;
        for t in &topics {
            check_topic(t)?;
        }
        let codec = CodecSpec {
            value: fields.text("value")?,
            key: fields.optional_text("key")?,
            key_column: None,
            schema_file: None,
            key_schema_file: None,
            topic: None,
        };
        let columns = match fields.fields.get("columns") {
            None => None,
            Some(columns) => {
                let mut out = Vec::new();
                for (column, column_pos, ty) in self.mapping(columns, "columns")? {
                    let ty_text = self.text(ty, "a column type")?;
                    let parsed =
                        parse_type(&ty_text.value).map_err(|m| SpecError::at(ty_text.pos, m))?;
                    out.push((
                        Located::new(column, column_pos),
                        Located::new(parsed, ty_text.pos),
                    ));
                }
                Some(out)
            }
        };
        Ok(NodeOp::Source {
            topics,
            codec,
            columns,
        })
    }

    fn join_op(&self, fields: &NodeFields<'_, '_, '_>) -> Result<NodeOp, SpecError> {
        let on = fields.optional_text("on")?;
        let key = |field: &str| -> Result<Located<String>, SpecError> {
            match (fields.optional_text(field)?, &on) {
                (Some(k), _) => Ok(k),
                (None, Some(on)) => Ok(on.clone()),
                (None, None) => Err(SpecError::at(
                    fields.name.pos,
                    format!(
                        "join node `{}` needs `on` (a key column of both sides) or `{field}`",
                        fields.name.value
                    ),
                )),
            }
        };
        Ok(NodeOp::Join {
            left: fields.text("left")?,
            right: fields.text("right")?,
            left_key: key("left_key")?,
            right_key: key("right_key")?,
            window: self.duration(fields.required("window")?, "window")?,
            left_prefix: fields.optional_text("left_prefix")?.map(|p| p.value),
            right_prefix: fields.optional_text("right_prefix")?.map(|p| p.value),
        })
    }

    fn sink_op(&self, fields: &NodeFields<'_, '_, '_>) -> Result<NodeOp, SpecError> {
        let topic = fields.text("topic")?;
        check_topic(&topic)?;
        let (key, key_column) = match fields.fields.get("key") {
            None => (None, None),
            Some(key) => self.sink_key(key)?,
        };
        let (value, schema_file) = split_schema_file(fields.text("value")?);
        let (key, key_schema_file) = match key {
            Some(k) if key_column.is_some() => {
                let (k, file) = split_schema_file(k);
                (Some(k), file)
            }
            k => (k, None),
        };
        Ok(NodeOp::Sink {
            parent: fields.text("parent")?,
            codec: Some(CodecSpec {
                value,
                key,
                key_column,
                topic: Some(topic.value.clone()),
                schema_file,
                key_schema_file,
            }),
            topic,
        })
    }
}

/// The keys of one node after its kind, with the lookups every kind uses.
struct NodeFields<'r, 'a, 'b> {
    reader: &'r Reader,
    fields: std::collections::HashMap<&'r str, &'b MarkedYaml<'a>>,
    name: &'r Located<String>,
    kind: &'r str,
}

impl NodeFields<'_, '_, '_> {
    fn required(&self, field: &str) -> Result<&MarkedYaml<'_>, SpecError> {
        self.fields.get(field).copied().ok_or_else(|| {
            SpecError::at(
                self.name.pos,
                format!("{} node `{}` needs `{field}`", self.kind, self.name.value),
            )
        })
    }

    fn text(&self, field: &str) -> Result<Located<String>, SpecError> {
        self.reader.text(self.required(field)?, field)
    }

    fn optional_text(&self, field: &str) -> Result<Option<Located<String>>, SpecError> {
        self.fields
            .get(field)
            .map(|v| self.reader.text(v, field))
            .transpose()
    }

    fn list(&self, field: &str) -> Result<Vec<Located<String>>, SpecError> {
        self.reader.list(self.required(field)?, field)
    }
}

/// `error_policy` with `dead_letter_topic`: a dead-letter policy names its topic, and a
/// topic is only for that policy.
fn error_policy(
    policy: Option<Located<String>>,
    dead_letter_topic: Option<Located<String>>,
) -> Result<ErrorPolicy, SpecError> {
    Ok(match (policy, dead_letter_topic) {
        (Some(p), Some(topic)) if p.value == "dead-letter" => {
            ErrorPolicy::DeadLetter { topic: topic.value }
        }
        (Some(p), None) if p.value == "dead-letter" => {
            return Err(SpecError::at(
                p.pos,
                "error_policy dead-letter needs a dead_letter_topic",
            ));
        }
        (_, Some(topic)) => {
            return Err(SpecError::at(
                topic.pos,
                "deadLetterTopic requires ActionDeadLetter: set error_policy: dead-letter",
            ));
        }
        (Some(p), None) if p.value == "skip" => ErrorPolicy::Skip,
        _ => ErrorPolicy::Fail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "\
version: 1
settings:
  consumer_group: large-orders
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns:
      user: utf8
      amount: int64
  - filter: large
    parent: orders
    where: \"amount > 100\"
  - group_by: by_user
    parent: large
    keys: [user]
    aggregates:
      - sum(amount) AS total
  - sink: out
    parent: by_user
    topic: large-orders-by-user
    value: json
";

    #[test]
    fn state_store_is_chosen_in_settings_and_contradictions_are_errors_at_its_line() {
        let with = |lines: &str| {
            parse(&EXAMPLE.replace(
                "  consumer_group: large-orders\n",
                &format!("  consumer_group: large-orders\n{lines}"),
            ))
        };
        let store = |lines: &str| with(lines).unwrap().settings.state_store();
        assert_eq!(store(""), StateStoreKind::Kafka);
        // A state_dir alone is the Kafka store's local copy.
        let settings = with("  state_dir: /s\n").unwrap().settings;
        assert_eq!(settings.state_store(), StateStoreKind::Kafka);
        assert_eq!(settings.state_copy_dir(), Some("/s"));
        assert_eq!(
            store("  state_store: dir\n  state_dir: /s\n"),
            StateStoreKind::Dir
        );
        assert_eq!(store("  state_store: memory\n"), StateStoreKind::Memory);
        let e = with("  state_store: dir\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "4:16: state_store dir needs a state_dir (the directory its snapshot files go to)"
        );
        let e = with("  state_dir: /s\n  state_store: memory\n").unwrap_err();
        assert_eq!(e.pos.line, 5, "{e}");
        assert!(
            e.message.starts_with("state_store memory keeps no files"),
            "{e}"
        );
        let e = with("  state_store: disk\n").unwrap_err();
        assert_eq!(
            e.message,
            "state_store must be one of kafka, dir, memory, got `disk`"
        );
        let settings = with("  state_store: kafka\n  state_topic: orders-state\n")
            .unwrap()
            .settings;
        assert_eq!(settings.state_store(), StateStoreKind::Kafka);
        assert_eq!(settings.state_topic.as_deref(), Some("orders-state"));
        let e = with("  state_store: dir\n  state_dir: /s\n  state_topic: t\n").unwrap_err();
        assert_eq!(e.message, "state_topic belongs to state_store kafka");
        // Barrier epochs the Kafka store keeps: Java's 100 unless told.
        assert_eq!(with("").unwrap().settings.epochs_kept(), 100);
        assert_eq!(
            with("  state_epochs_kept: 3\n")
                .unwrap()
                .settings
                .epochs_kept(),
            3
        );
        for bad in ["0", "-1", "many", "1000001"] {
            let e = with(&format!("  state_epochs_kept: {bad}\n")).unwrap_err();
            assert!(
                e.message
                    .starts_with("state_epochs_kept must be a whole number from 1 to 1000000"),
                "{e}"
            );
        }
        let e = with("  state_store: dir\n  state_dir: /s\n  state_epochs_kept: 3\n").unwrap_err();
        assert!(
            e.message
                .starts_with("state_epochs_kept belongs to state_store kafka"),
            "{e}"
        );
        assert_eq!(
            with("  state_topic: t\n")
                .unwrap()
                .settings
                .state_topic
                .as_deref(),
            Some("t")
        );
        assert!(with("  guarantee: exactly-once\n  state_store: kafka\n").is_ok());
        let both = with("  state_store: kafka\n  state_dir: /s\n")
            .unwrap()
            .settings;
        assert_eq!(both.state_store(), StateStoreKind::Kafka);
        assert_eq!(both.state_copy_dir(), Some("/s"));
        let memory = with("  state_store: memory\n").unwrap().settings;
        assert_eq!(memory.state_copy_dir(), None);
    }

    #[test]
    fn a_file_maps_to_nodes_in_order() {
        let spec = parse(EXAMPLE).unwrap();
        let kinds: Vec<&str> = spec.nodes.iter().map(|n| n.op.kind()).collect();
        assert_eq!(kinds, ["source", "filter", "group_by", "sink"]);
        assert_eq!(
            spec.settings.consumer_group.as_deref(),
            Some("large-orders")
        );
        let NodeOp::Filter { predicate, .. } = &spec.nodes[1].op else {
            panic!()
        };
        // Inside the quotes.
        assert_eq!(
            predicate.pos,
            Pos {
                line: 13,
                column: 13
            }
        );
    }

    #[test]
    fn a_protobuf_schema_file_names_its_message_and_a_key_codec_its_own_schema_file() {
        let text = EXAMPLE.replace(
            "    value: json\n",
            "    value: protobuf:t.proto:shop.Total\n    key: {column: user, codec: json-schema:k.json}\n",
        );
        let spec = parse(&text).unwrap();
        let NodeOp::Sink {
            codec: Some(codec), ..
        } = &spec.nodes[3].op
        else {
            panic!()
        };
        assert_eq!(codec.value.value, "protobuf");
        let file = codec.schema_file.as_ref().unwrap();
        assert_eq!(file.path.value, "t.proto");
        let message = file.message.as_ref().unwrap();
        assert_eq!(message.value, "shop.Total");
        assert_eq!((file.path.pos.column, message.pos.column), (21, 29));
        assert_eq!(codec.key.as_ref().unwrap().value, "json-schema");
        let key_file = codec.key_schema_file.as_ref().unwrap();
        assert_eq!(
            (key_file.path.value.as_str(), key_file.message.as_ref()),
            ("k.json", None)
        );
        // A colon in another codec's path stays in the path.
        let (_, file) = split_schema_file(Located::new("avro:a:b.avsc".into(), Pos::default()));
        assert_eq!(file.unwrap().path.value, "a:b.avsc");
    }

    #[test]
    fn a_sink_key_column_is_parsed_and_an_unknown_one_is_an_error_at_its_line() {
        use crate::engine::columnar::topology::spec::{OfflineCodecs, build};
        let keyed = EXAMPLE.replace(
            "    value: json\n",
            "    value: json\n    key: {column: user, codec: string}\n",
        );
        let spec = parse(&keyed).unwrap();
        let NodeOp::Sink {
            codec: Some(codec), ..
        } = &spec.nodes[3].op
        else {
            panic!()
        };
        assert_eq!(codec.key_column.as_ref().unwrap().value, "user");
        assert_eq!(codec.key.as_ref().unwrap().value, "string");
        assert_eq!(codec.topic.as_deref(), Some("large-orders-by-user"));
        assert!(build(&spec, &OfflineCodecs, &Default::default()).is_ok());

        let defaulted = parse(&EXAMPLE.replace(
            "    value: json\n",
            "    value: json\n    key:\n      column: usr\n",
        ))
        .unwrap();
        let err = build(&defaulted, &OfflineCodecs, &Default::default()).unwrap_err();
        assert_eq!(
            err.pos,
            Pos {
                line: 24,
                column: 15
            }
        );
        assert!(
            err.message
                .starts_with("sink key column does not exist: usr (columns: user, total)"),
            "{}",
            err.message
        );
        let bad = parse(&EXAMPLE.replace(
            "    value: json\n",
            "    value: json\n    key: {column: user, codec: arrow}\n",
        ))
        .unwrap();
        let err = build(&bad, &OfflineCodecs, &Default::default()).unwrap_err();
        assert!(
            err.message
                .contains("string, raw, json, avro, json-schema, json-sr, protobuf"),
            "{}",
            err.message
        );
        let err = parse(&EXAMPLE.replace(
            "    value: json\n",
            "    value: json\n    key: {col: user}\n",
        ))
        .unwrap_err();
        assert!(
            err.message.contains("unknown key `col` in a sink key"),
            "{}",
            err.message
        );
    }

    #[test]
    fn errors_name_the_line_and_column() {
        let err = parse("version: 1\nnodes:\n  - source: a\n    topics: [a]\n    value: avro\n    colour: red\n").unwrap_err();
        assert_eq!(err.pos, Pos { line: 6, column: 5 });
        assert!(
            err.message
                .starts_with("unknown key `colour` for a source node"),
            "{}",
            err.message
        );
        let err = parse("version: 2\nnodes: []\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "1:10: unsupported topology file version 2; this build reads version 1"
        );
        let err = parse("nodes: [\n").unwrap_err();
        assert!(err.message.starts_with("invalid YAML"), "{}", err.message);
        let err = parse("version: 1\nnodes:\n  - filter: f\n    where: x > 1\n").unwrap_err();
        assert_eq!(err.to_string(), "3:13: filter node `f` needs `parent`");
        let err = parse("version: 1\nversion: 1\nnodes: []\n").unwrap_err();
        assert!(err.message.contains("duplicated key"), "{}", err.message);
        let err = parse("version: 1\nnodes:\n  - source: s\n    topics: a\n    value: avro\n    columns: {a: int128}\n").unwrap_err();
        assert_eq!(
            err.pos,
            Pos {
                line: 6,
                column: 18
            }
        );
    }

    #[test]
    fn block_scalars_map_expression_lines_back() {
        let spec = parse("version: 1\nnodes:\n  - filter: f\n    parent: s\n    where: |\n      amount > 1\n      AND x\n").unwrap();
        let NodeOp::Filter { predicate, .. } = &spec.nodes[0].op else {
            panic!()
        };
        assert_eq!(predicate.pos, Pos { line: 6, column: 7 });
        assert_eq!(predicate.block_indent, Some(6));
    }
}

#[cfg(test)]
mod hostile_tests {
    use super::*;
    use crate::engine::columnar::topology::spec::{self, OfflineCodecs};

    fn chain(filters: usize) -> String {
        let mut text = String::from(
            "version: 1\nnodes:\n  - source: s\n    topics: [t]\n    value: avro\n    columns:\n      amount: int64\n",
        );
        let mut parent = "s".to_owned();
        for i in 0..filters {
            text.push_str(&format!(
                "  - filter: f{i}\n    parent: {parent}\n    where: amount > {i}\n"
            ));
            parent = format!("f{i}");
        }
        text.push_str(&format!(
            "  - sink: out\n    parent: {parent}\n    topic: o\n    value: json\n"
        ));
        text
    }

    #[test]
    fn an_alias_bomb_is_refused_by_its_expansion_budget() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let prev = format!("*a{}", level - 1);
            text.push_str(&format!(
                "a{level}: &a{level} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        text.push_str("version: 1\nnodes: []\n");
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("alias expansion"), "{}", err.message);
    }

    #[test]
    fn a_file_over_the_size_limit_is_refused_before_parsing() {
        let text = format!(
            "version: 1\n#{}\nnodes: []\n",
            "x".repeat(MAX_TOPOLOGY_BYTES)
        );
        let err = parse(&text).unwrap_err();
        assert!(
            err.message.contains("at most 1048576 bytes"),
            "{}",
            err.message
        );
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("big.yaml");
        std::fs::write(&path, &text).unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .contains("1 MiB (1048576 bytes), the cap for a topology file")
        );
        // A device that never ends is read only up to the limit.
        assert!(
            read(Path::new("/dev/zero"))
                .unwrap_err()
                .contains("the cap for a topology file")
        );
        std::fs::write(&path, b"version: 1\n# \xff\n").unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .contains("not UTF-8 text (invalid byte at offset 13)")
        );
    }

    #[test]
    fn too_many_nodes_are_refused_and_the_most_allowed_build_without_overflow() {
        let err = parse(&chain(MAX_TOPOLOGY_NODES)).unwrap_err();
        assert!(err.message.contains("at most 1000"), "{}", err.message);
        // The longest chain allowed (on a test thread's 2 MiB stack).
        let spec = parse(&chain(MAX_TOPOLOGY_NODES - 2)).unwrap();
        spec::build(&spec, &OfflineCodecs, &Default::default()).unwrap();
    }

    #[test]
    fn cycles_and_self_references_are_refused_with_the_node_named() {
        let cyclic = "version: 1\nnodes:\n  - filter: a\n    parent: b\n    where: x > 1\n  - filter: b\n    parent: a\n    where: x > 1\n";
        let spec = parse(cyclic).unwrap();
        let err = spec::build(&spec, &OfflineCodecs, &Default::default()).unwrap_err();
        assert!(err.message.contains('b'), "{}", err.message);
        let own = "version: 1\nnodes:\n  - filter: a\n    parent: a\n    where: x > 1\n";
        let spec = parse(own).unwrap();
        assert!(spec::build(&spec, &OfflineCodecs, &Default::default()).is_err());
    }

    #[test]
    fn deeply_nested_yaml_is_a_clear_error() {
        let text = format!(
            "version: 1\nnodes: {}{}\n",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(parse(&text).is_err());
        let text = format!(
            "version: 1\nnodes: {}1{}\n",
            "{a: ".repeat(5000),
            "}".repeat(5000)
        );
        assert!(parse(&text).is_err());
    }
}
