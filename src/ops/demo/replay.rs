//! The demo's `produce` step: the orders topic captured to Parquet (as `tail orders
//! -e --value-format avro --out orders.parquet` writes it), replayed into a second
//! topic with `produce` (Avro through the registry, each row to its own partition)
//! and tailed back: the same rows.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::engine::schema::cache::SchemaCache;
use crate::ops::demo::tail::{TailJob, to_parquet};
use crate::ops::demo::{Env, failed};
use crate::ops::produce::{
    Hooks, InputFormat, OnError, PartitionChoice, ProducePlan, Summary, produce,
};
use crate::ops::{Error, Result};

pub const REPLAY_TOPIC: &str = "orders-replay";

/// What the replay did.
pub struct Replayed {
    /// The topic captured.
    pub source: String,
    pub capture: PathBuf,
    /// Rows in the capture.
    pub captured: u64,
    /// What `produce` sent to [`REPLAY_TOPIC`].
    pub summary: Summary,
    /// Rows tailed back from [`REPLAY_TOPIC`], and the first of them.
    pub read_back: u64,
    pub preview: Option<RecordBatch>,
}

/// Captures `source`, replays the capture into [`REPLAY_TOPIC`] (created with
/// `partitions`), tails it back.
pub(crate) fn run(env: &Env<'_>, source: &str, partitions: i32) -> Result<Replayed> {
    env.cluster
        .create_topic(REPLAY_TOPIC, partitions)
        .map_err(failed)?;
    let capture = env.dir.join("orders-capture.parquet");
    let captured = to_parquet(env, TailJob::avro(source, capture.clone(), 0))?.rows;
    let plan = ProducePlan {
        topic: REPLAY_TOPIC.to_owned(),
        input: capture.to_string_lossy().into_owned(),
        format: InputFormat::Parquet,
        value_format: "avro".to_owned(),
        value_schema: None,
        key_column: None,
        // The capture holds the key decoded as text, next to the __key bytes sent.
        drop_columns: vec!["key".to_owned()],
        key_format: None,
        key_separator: None,
        line_key: None,
        headers: Vec::new(),
        binary: Default::default(),
        partition: PartitionChoice::Keep,
        transactional_id: None,
        on_error: OnError::Fail,
        dry_run: false,
        kafka: Some(env.kafka()),
        timeout: Duration::from_secs(30),
        schemas: Some(SchemaCache::new(env.registry.clone())),
        batch_rows: 10_000,
    };
    let summary = produce(
        &plan,
        &mut Hooks {
            cancelled: Arc::new(AtomicBool::new(false)),
            catch_signals: None,
            progress: &mut |_, _| {},
            refused: &mut |_, _| {},
        },
    )?;
    let back = to_parquet(
        env,
        TailJob::avro(REPLAY_TOPIC, env.dir.join("orders-replay.parquet"), 5),
    )?;
    if back.rows != captured || summary.records != captured {
        return Err(Error::failure(format!(
            "replayed {} of {captured} captured rows and read {} back",
            summary.records, back.rows
        )));
    }
    Ok(Replayed {
        source: source.to_owned(),
        capture,
        captured,
        summary,
        read_back: back.rows,
        preview: back.preview,
    })
}
