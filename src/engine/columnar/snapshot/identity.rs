//! Whose state a snapshot store holds: the consumer group and a fingerprint of
//! the topology's stateful nodes (docs/topology.md "State identity").
//!
//! A gen B container carries no group, task or topology (formats §8.1), so a
//! `state_dir` another topology used, or another group, would load as if it were
//! this run's and silently give wrong answers. The identity is kept beside the
//! snapshots (a small manifest; the snapshot bytes and names stay the Java/Go
//! ones) and a run compares it with its own before loading anything.
//!
//! The fingerprint covers what decides how a node's snapshot bytes are read:
//! each stateful node's kind and name, a group-by's keys, aggregates and window,
//! a join's sides, keys, window and prefixes. Stateless nodes and sinks are left
//! out: changing them leaves the state meaning the same thing.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::engine::columnar::topology::spec::{NodeOp, TopologySpec};

/// The manifest's `format` value.
pub const MANIFEST_FORMAT: &str = "krabka-streams state identity";
/// The only manifest version.
pub const MANIFEST_VERSION: u64 = 1;
/// A manifest larger than this is refused unread (it is a few hundred bytes).
pub const MANIFEST_MAX_BYTES: u64 = 1 << 20;

/// The group and stateful nodes a store's snapshots belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateIdentity {
    pub consumer_group: String,
    /// One canonical line per stateful node, in node order.
    pub nodes: Vec<String>,
}

/// Collapses runs of whitespace, so re-indenting an expression is no change.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

fn list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let items: Vec<String> = items.into_iter().map(|s| squeeze(s)).collect();
    format!("[{}]", items.join(", "))
}

impl StateIdentity {
    /// The identity of `spec`'s stateful nodes run as `consumer_group`: one
    /// line per stateful node, preceded (when there is any) by one line per
    /// source naming its topics, sorted. State built from other topics is other
    /// state, even under the same node names (the 2.5x-too-high totals).
    pub fn of(spec: &TopologySpec, consumer_group: &str) -> StateIdentity {
        let stateful: Vec<String> = spec
            .nodes
            .iter()
            .filter_map(|node| {
                let name = &node.name.value;
                match &node.op {
                    NodeOp::GroupBy {
                        keys,
                        aggregates,
                        window,
                        ..
                    } => {
                        let mut line = format!(
                            "{} {name} keys={} aggregates={}",
                            node.op.kind(),
                            list(keys.iter().map(|k| &k.value)),
                            list(aggregates.iter().map(|a| &a.value)),
                        );
                        if let Some((size, retention)) = window {
                            let size = millis(size.value);
                            let retention = retention.as_ref().map_or(size, |r| millis(r.value));
                            line.push_str(&format!(" window={size}ms retention={retention}ms"));
                        }
                        Some(line)
                    }
                    NodeOp::Join {
                        left,
                        right,
                        left_key,
                        right_key,
                        window,
                        left_prefix,
                        right_prefix,
                    } => Some(format!(
                        "join {name} left={} right={} left_key={} right_key={} window={}ms prefixes={},{}",
                        left.value,
                        right.value,
                        squeeze(&left_key.value),
                        squeeze(&right_key.value),
                        millis(window.value),
                        left_prefix.as_deref().unwrap_or("left_"),
                        right_prefix.as_deref().unwrap_or("right_"),
                    )),
                    _ => None,
                }
            })
            .collect();
        let mut nodes = Vec::new();
        if !stateful.is_empty() {
            for node in &spec.nodes {
                if let NodeOp::Source { topics, .. } = &node.op {
                    let mut topics: Vec<&String> = topics.iter().map(|t| &t.value).collect();
                    topics.sort();
                    topics.dedup();
                    nodes.push(format!(
                        "source {} topics={}",
                        node.name.value,
                        list(topics)
                    ));
                }
            }
        }
        nodes.extend(stateful);
        StateIdentity {
            consumer_group: consumer_group.to_owned(),
            nodes,
        }
    }

    /// Whether the topology keeps any state at all (a stateless one needs no identity).
    pub fn is_stateful(&self) -> bool {
        !self.nodes.is_empty()
    }

    /// 16 hex digits (FNV-1a, 64 bits) over the node lines: a short name for the
    /// topology's state shape. Comparisons use the lines themselves.
    pub fn fingerprint(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for (i, line) in self.nodes.iter().enumerate() {
            let separator: &[u8] = if i == 0 { b"" } else { b"\n" };
            for byte in separator.iter().chain(line.as_bytes()) {
                hash ^= u64::from(*byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        format!("{hash:016x}")
    }

    /// The manifest as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "consumer_group": self.consumer_group,
            "fingerprint": self.fingerprint(),
            "stateful_nodes": self.nodes,
        })
    }

    /// The manifest bytes (pretty JSON and a newline: people read it).
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(&self.to_json()).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Reads a manifest; the error says what is wrong with it. A fingerprint that
    /// does not match its own node lines means the file was edited or damaged.
    pub fn decode(bytes: &[u8]) -> Result<StateIdentity, String> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| format!("not a JSON document: {e}"))?;
        let field = |name: &str| {
            value
                .get(name)
                .ok_or_else(|| format!("field `{name}` is missing"))
        };
        if field("format")?.as_str() != Some(MANIFEST_FORMAT) {
            return Err(format!("field `format` is not {MANIFEST_FORMAT:?}"));
        }
        match field("version")?.as_u64() {
            Some(MANIFEST_VERSION) => {}
            _ => {
                return Err(format!(
                    "unsupported version {} (expected {MANIFEST_VERSION})",
                    field("version")?
                ));
            }
        }
        let consumer_group = field("consumer_group")?
            .as_str()
            .ok_or("field `consumer_group` is not a string")?
            .to_owned();
        let nodes = field("stateful_nodes")?
            .as_array()
            .ok_or("field `stateful_nodes` is not a list")?
            .iter()
            .map(|n| n.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or("field `stateful_nodes` holds a non-string")?;
        let identity = StateIdentity {
            consumer_group,
            nodes,
        };
        let fingerprint = field("fingerprint")?
            .as_str()
            .ok_or("field `fingerprint` is not a string")?;
        if fingerprint != identity.fingerprint() {
            return Err(format!(
                "field `fingerprint` {fingerprint} does not match its stateful_nodes ({})",
                identity.fingerprint()
            ));
        }
        Ok(identity)
    }

    /// `Ok` when `found` is this identity; else the mismatch, naming both.
    pub fn check(&self, found: &StateIdentity) -> Result<(), Mismatch> {
        if found == self {
            return Ok(());
        }
        Err(Mismatch {
            found: found.clone(),
            expected: self.clone(),
        })
    }
}

impl fmt::Display for StateIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group {}, fingerprint {} ({})",
            self.consumer_group,
            self.fingerprint(),
            if self.nodes.is_empty() {
                "no stateful nodes".to_owned()
            } else {
                self.nodes.join("; ")
            }
        )
    }
}

/// The state found belongs to another group or another topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub found: StateIdentity,
    pub expected: StateIdentity,
}

impl Mismatch {
    /// What differs, in words: the group, the topology's stateful nodes, or both.
    pub fn what(&self) -> &'static str {
        let group = self.found.consumer_group != self.expected.consumer_group;
        let nodes = self.found.nodes != self.expected.nodes;
        match (group, nodes) {
            (true, true) => "another consumer group and another topology",
            (true, false) => "another consumer group",
            _ => "a topology with other stateful nodes",
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "it holds the state of {}: found {}; expected {}",
            self.what(),
            self.found,
            self.expected
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::topology::spec::{Located, NodeSpec, Pos};

    fn text(s: &str) -> Located<String> {
        Located::new(s.to_owned(), Pos::default())
    }

    fn group_by(
        name: &str,
        keys: &[&str],
        aggregates: &[&str],
        window_ms: Option<u64>,
    ) -> NodeSpec {
        NodeSpec {
            name: text(name),
            op: NodeOp::GroupBy {
                parent: text("in"),
                keys: keys.iter().map(|k| text(k)).collect(),
                aggregates: aggregates.iter().map(|a| text(a)).collect(),
                window: window_ms.map(|ms| {
                    (
                        Located::new(Duration::from_millis(ms), Pos::default()),
                        None,
                    )
                }),
            },
        }
    }

    fn spec(nodes: Vec<NodeSpec>) -> TopologySpec {
        TopologySpec {
            nodes,
            ..TopologySpec::default()
        }
    }

    #[test]
    fn the_fingerprint_follows_every_stateful_detail_and_ignores_whitespace() {
        let base = StateIdentity::of(
            &spec(vec![group_by(
                "per-user",
                &["user"],
                &["sum(amount) AS total"],
                None,
            )]),
            "g",
        );
        assert_eq!(
            base.nodes,
            ["group_by per-user keys=[user] aggregates=[sum(amount) AS total]"]
        );
        assert_eq!(base.fingerprint().len(), 16);
        let respaced = StateIdentity::of(
            &spec(vec![group_by(
                "per-user",
                &["user"],
                &["sum(amount)  AS\ntotal"],
                None,
            )]),
            "g",
        );
        assert_eq!(respaced.fingerprint(), base.fingerprint());
        for changed in [
            group_by("per-country", &["user"], &["sum(amount) AS total"], None),
            group_by("per-user", &["country"], &["sum(amount) AS total"], None),
            group_by("per-user", &["user"], &["count(*) AS total"], None),
            group_by(
                "per-user",
                &["user"],
                &["sum(amount) AS total"],
                Some(60_000),
            ),
        ] {
            let other = StateIdentity::of(&spec(vec![changed]), "g");
            assert_ne!(other.fingerprint(), base.fingerprint(), "{other}");
            assert!(base.check(&other).is_err());
        }
        let windowed = |ms| {
            StateIdentity::of(
                &spec(vec![group_by("w", &["u"], &["count(*) AS n"], Some(ms))]),
                "g",
            )
        };
        assert_eq!(
            windowed(1000).nodes,
            [
                "windowed_group_by w keys=[u] aggregates=[count(*) AS n] window=1000ms retention=1000ms"
            ]
        );
        assert_ne!(windowed(1000).fingerprint(), windowed(2000).fingerprint());
    }

    fn source(name: &str, topics: &[&str]) -> NodeSpec {
        NodeSpec {
            name: text(name),
            op: NodeOp::Source {
                topics: topics.iter().map(|t| text(t)).collect(),
                codec: crate::engine::columnar::topology::spec::CodecSpec {
                    value: text("json"),
                    key: None,
                    key_column: None,
                    topic: None,
                    schema_file: None,
                    key_schema_file: None,
                },
                columns: None,
            },
        }
    }

    #[test]
    fn the_source_topics_are_part_of_the_identity_of_a_stateful_topology_only() {
        let per_user = || group_by("per-user", &["user"], &["sum(amount) AS total"], None);
        let on = |topics: &[&str]| {
            StateIdentity::of(&spec(vec![source("orders", topics), per_user()]), "g")
        };
        assert_eq!(
            on(&["orders-eu", "orders-us"]).nodes,
            [
                "source orders topics=[orders-eu, orders-us]",
                "group_by per-user keys=[user] aggregates=[sum(amount) AS total]"
            ]
        );
        // The order the topics are listed in does not change what the state means.
        assert_eq!(
            on(&["orders-us", "orders-eu"]),
            on(&["orders-eu", "orders-us"])
        );
        // Another topic under the same node names is another state.
        assert_ne!(
            on(&["refunds"]).fingerprint(),
            on(&["orders"]).fingerprint()
        );
        assert!(on(&["orders"]).check(&on(&["refunds"])).is_err());
        let stateless = StateIdentity::of(&spec(vec![source("orders", &["orders"])]), "g");
        assert!(!stateless.is_stateful());
    }

    #[test]
    fn a_mismatch_names_both_groups_and_fingerprints() {
        let nodes = vec![group_by(
            "per-user",
            &["user"],
            &["sum(amount) AS total"],
            None,
        )];
        let ours = StateIdentity::of(&spec(nodes.clone()), "orders-app");
        let theirs = StateIdentity::of(&spec(nodes), "refunds-app");
        let message = ours.check(&theirs).unwrap_err().to_string();
        assert!(message.starts_with("it holds the state of another consumer group: found group refunds-app, fingerprint "), "{message}");
        assert!(
            message.contains("expected group orders-app, fingerprint "),
            "{message}"
        );
        assert!(ours.check(&ours.clone()).is_ok());
    }

    #[test]
    fn the_manifest_round_trips_and_a_damaged_one_is_refused() {
        let identity = StateIdentity::of(
            &spec(vec![group_by(
                "per-user",
                &["user"],
                &["sum(amount) AS total"],
                None,
            )]),
            "g",
        );
        let bytes = identity.encode();
        assert_eq!(StateIdentity::decode(&bytes), Ok(identity.clone()));
        let edited = String::from_utf8(bytes)
            .unwrap()
            .replace("sum(amount)", "count(*)");
        let e = StateIdentity::decode(edited.as_bytes()).unwrap_err();
        assert!(e.contains("does not match its stateful_nodes"), "{e}");
        assert!(StateIdentity::decode(b"{\"format\": 3}").is_err());
        assert!(
            StateIdentity::decode(b"\x00\x01")
                .unwrap_err()
                .starts_with("not a JSON document")
        );
        let mut future = identity.to_json();
        future["version"] = json!(2);
        let e = StateIdentity::decode(future.to_string().as_bytes()).unwrap_err();
        assert_eq!(e, "unsupported version 2 (expected 1)");
    }

    #[test]
    fn stateless_topologies_have_no_stateful_nodes() {
        let identity = StateIdentity::of(&spec(vec![]), "g");
        assert!(!identity.is_stateful());
    }
}
