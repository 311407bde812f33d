//! An Arrow input (what `tail` writes: reserved columns `__partition` Int32 and `__offset`
//! Int64, formats §4) against a cut: for each partition the cut names, the input holds exactly
//! the records before the cut: none missing, none past it, none twice.
//!
//! "The records before the cut" are the offsets the topic really holds below the cut offset:
//! offsets are not contiguous (barrier and transaction markers leave gaps, compaction removes
//! records), so the caller reads them from the topic and passes them as a [`PartitionLog`].
//! Offsets below the topic's current log start can no longer be checked (retention removed
//! them after the input was written); they are counted and accepted.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::DataType;

use crate::engine::columnar::barrier::record::Cut;

use super::ranges::OffsetRanges;

/// The reserved column holding the source partition.
pub const PARTITION_COLUMN: &str = "__partition";
/// The reserved column holding the source offset.
pub const OFFSET_COLUMN: &str = "__offset";
/// The column naming the source topic when an input holds several (formats §4).
pub const TOPIC_COLUMN: &str = crate::engine::columnar::metadata::TOPIC_COLUMN;

/// Why an Arrow input cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error(
        "the input has no {0} column (expected the reserved columns of formats §4, as `tail` writes them)"
    )]
    MissingColumn(&'static str),
    #[error("the input's {column} column is {found}, expected {expected}")]
    WrongType {
        column: &'static str,
        found: DataType,
        expected: DataType,
    },
    #[error("the input's {column} column is null in row {row}")]
    Null { column: &'static str, row: u64 },
}

/// The offsets an input holds, by partition, gathered batch by batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputOffsets {
    pub by_partition: BTreeMap<i32, Vec<i64>>,
    /// Rows of the checked topic.
    pub rows: u64,
    /// The checked topic: an input with a `__topic` column (a tail of several topics)
    /// counts only that topic's rows, as partition 0 of another topic is another log.
    pub topic: Option<String>,
    /// Rows numbered across batches, all topics (for error messages).
    pub seen: u64,
}

impl InputOffsets {
    /// Offsets of `topic`'s rows only, where the input says which topic a row is of.
    pub fn for_topic(topic: &str) -> Self {
        InputOffsets {
            topic: Some(topic.to_owned()),
            ..Default::default()
        }
    }

    /// Adds one batch's `(__partition, __offset)` pairs; rows are numbered across batches.
    pub fn add_batch(&mut self, batch: &RecordBatch) -> Result<(), InputError> {
        let partitions: &Int32Array = column(batch, PARTITION_COLUMN, DataType::Int32)?;
        let offsets: &Int64Array = column(batch, OFFSET_COLUMN, DataType::Int64)?;
        let topics = match (&self.topic, batch.column_by_name(TOPIC_COLUMN)) {
            (Some(_), Some(topics)) => {
                Some(arrow::compute::cast(topics, &DataType::Utf8).map_err(|_| {
                    InputError::WrongType {
                        column: TOPIC_COLUMN,
                        found: topics.data_type().clone(),
                        expected: DataType::Utf8,
                    }
                })?)
            }
            _ => None,
        };
        let topics = topics.as_ref().map(|t| t.as_string::<i32>());
        let first = self.seen;
        self.seen += batch.num_rows() as u64;
        for row in 0..batch.num_rows() {
            let at = first + row as u64;
            if let (Some(topics), Some(wanted)) = (topics, &self.topic) {
                if topics.is_null(row) {
                    return Err(InputError::Null {
                        column: TOPIC_COLUMN,
                        row: at,
                    });
                }
                if topics.value(row) != wanted {
                    continue;
                }
            }
            if partitions.is_null(row) {
                return Err(InputError::Null {
                    column: PARTITION_COLUMN,
                    row: at,
                });
            }
            if offsets.is_null(row) {
                return Err(InputError::Null {
                    column: OFFSET_COLUMN,
                    row: at,
                });
            }
            self.by_partition
                .entry(partitions.value(row))
                .or_default()
                .push(offsets.value(row));
            self.rows += 1;
        }
        Ok(())
    }
}

/// The offsets of every batch.
pub fn input_offsets(batches: &[RecordBatch]) -> Result<InputOffsets, InputError> {
    let mut out = InputOffsets::default();
    for batch in batches {
        out.add_batch(batch)?;
    }
    Ok(out)
}

fn column<'a, T: 'static>(
    batch: &'a RecordBatch,
    name: &'static str,
    expected: DataType,
) -> Result<&'a T, InputError> {
    let array = batch
        .column_by_name(name)
        .ok_or(InputError::MissingColumn(name))?;
    array
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| InputError::WrongType {
            column: name,
            found: array.data_type().clone(),
            expected,
        })
}

/// What the topic holds below the cut in one partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionLog {
    /// The partition's log start offset (low watermark) when it was read.
    pub log_start: i64,
    /// Offsets of the records present in `[log_start, cut offset)`, ascending.
    pub offsets: Vec<i64>,
}

/// One cut partition of the input's topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPartitionCheck {
    pub partition: i32,
    pub cut_offset: i64,
    pub log_start: i64,
    /// Records the topic holds before the cut (from the log start).
    pub expected: u64,
    /// Of those, how many the input holds.
    pub matched: u64,
    /// In the topic before the cut, absent from the input.
    pub missing: OffsetRanges,
    /// Input offsets at or after the cut offset.
    pub past_cut: OffsetRanges,
    /// Input offsets present more than once.
    pub duplicates: OffsetRanges,
    /// Input offsets in `[log_start, cut offset)` the topic does not hold.
    pub not_in_topic: OffsetRanges,
    /// Input offsets below the log start: no longer checkable, accepted.
    pub before_log_start: u64,
}

impl InputPartitionCheck {
    pub fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.past_cut.is_empty()
            && self.duplicates.is_empty()
            && self.not_in_topic.is_empty()
    }
}

/// The input against every partition of one topic of the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputReport {
    pub topic: String,
    pub partitions: Vec<InputPartitionCheck>,
    /// Partitions the input holds that the cut does not name, with their row counts: records
    /// of such a partition cannot be "before the cut", so they fail the check.
    pub other_partitions: BTreeMap<i32, u64>,
}

impl InputReport {
    pub fn ok(&self) -> bool {
        self.other_partitions.is_empty() && self.partitions.iter().all(InputPartitionCheck::ok)
    }
}

/// Which of the cut's topics the input is: `requested` when given (it must be one the cut
/// names), else the cut's only topic.
pub fn input_topic(cut: &Cut, requested: Option<&str>) -> Result<String, String> {
    let topics: Vec<&str> = cut.topics.iter().map(|t| t.topic.as_str()).collect();
    match requested {
        Some(topic) if topics.contains(&topic) => Ok(topic.to_owned()),
        Some(topic) => Err(format!(
            "the cut does not name topic {topic}; it names {}",
            topics.join(", ")
        )),
        None if topics.len() == 1 => Ok(topics[0].to_owned()),
        None => Err(format!(
            "the cut names several topics ({}): pass --topic to say which one the input holds",
            topics.join(", ")
        )),
    }
}

/// Compares the input's offsets with what the topic holds before the cut, per cut partition
/// of `topic`. A cut partition missing from `logs` is taken as an empty log from offset 0.
pub fn check_input(
    cut: &Cut,
    topic: &str,
    input: &InputOffsets,
    logs: &BTreeMap<i32, PartitionLog>,
) -> InputReport {
    let named: Vec<(i32, i64)> = cut
        .offsets()
        .filter(|(tp, _)| tp.topic == topic)
        .map(|(tp, offset)| (tp.partition, offset))
        .collect();
    let empty_log = PartitionLog::default();
    let empty_input = Vec::new();
    let partitions = named
        .iter()
        .map(|&(partition, cut_offset)| {
            let log = logs.get(&partition).unwrap_or(&empty_log);
            let offsets = input.by_partition.get(&partition).unwrap_or(&empty_input);
            check_partition(partition, cut_offset, log, offsets)
        })
        .collect();
    let other_partitions = input
        .by_partition
        .iter()
        .filter(|(p, _)| !named.iter().any(|(n, _)| n == *p))
        .map(|(p, offsets)| (*p, offsets.len() as u64))
        .collect();
    InputReport {
        topic: topic.to_owned(),
        partitions,
        other_partitions,
    }
}

fn check_partition(
    partition: i32,
    cut_offset: i64,
    log: &PartitionLog,
    input: &[i64],
) -> InputPartitionCheck {
    let mut sorted = input.to_vec();
    sorted.sort_unstable();
    let expected: Vec<i64> = log
        .offsets
        .iter()
        .copied()
        .filter(|o| *o >= log.log_start && *o < cut_offset)
        .collect();
    let mut check = InputPartitionCheck {
        partition,
        cut_offset,
        log_start: log.log_start,
        expected: expected.len() as u64,
        matched: 0,
        missing: OffsetRanges::default(),
        past_cut: OffsetRanges::default(),
        duplicates: OffsetRanges::default(),
        not_in_topic: OffsetRanges::default(),
        before_log_start: 0,
    };
    let mut want = expected.iter().copied().peekable();
    let mut previous = None;
    for offset in sorted {
        if previous == Some(offset) {
            check.duplicates.push(offset);
            continue;
        }
        previous = Some(offset);
        if offset >= cut_offset {
            check.past_cut.push(offset);
            continue;
        }
        if offset < log.log_start {
            check.before_log_start += 1;
            continue;
        }
        while let Some(missing) = want.next_if(|w| *w < offset) {
            check.missing.push(missing);
        }
        if want.next_if_eq(&offset).is_some() {
            check.matched += 1;
        } else {
            check.not_in_topic.push(offset);
        }
    }
    for missing in want {
        check.missing.push(missing);
    }
    check
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::StringArray;
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::engine::columnar::barrier::record::{CutOffset, CutStatus, CutTopic};

    fn cut() -> Cut {
        Cut {
            triggered_at: 0,
            completed_at: 0,
            status: CutStatus::Complete,
            topics: vec![CutTopic {
                topic: "orders".into(),
                partitions: vec![
                    CutOffset {
                        partition: 0,
                        offset: 5,
                    },
                    CutOffset {
                        partition: 1,
                        offset: 4,
                    },
                ],
            }],
            missing: vec![],
        }
    }

    fn batch(rows: &[(Option<i32>, Option<i64>)]) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("name", DataType::Utf8, true),
            Field::new(PARTITION_COLUMN, DataType::Int32, true),
            Field::new(OFFSET_COLUMN, DataType::Int64, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec![Some("x"); rows.len()])),
                Arc::new(Int32Array::from(
                    rows.iter().map(|r| r.0).collect::<Vec<_>>(),
                )),
                Arc::new(Int64Array::from(
                    rows.iter().map(|r| r.1).collect::<Vec<_>>(),
                )),
            ],
        )
        .unwrap()
    }

    fn input(rows: &[(i32, i64)]) -> InputOffsets {
        let rows: Vec<_> = rows.iter().map(|(p, o)| (Some(*p), Some(*o))).collect();
        input_offsets(&[batch(&rows)]).unwrap()
    }

    fn logs(entries: &[(i32, i64, &[i64])]) -> BTreeMap<i32, PartitionLog> {
        entries
            .iter()
            .map(|(p, start, offsets)| {
                (
                    *p,
                    PartitionLog {
                        log_start: *start,
                        offsets: offsets.to_vec(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn exactly_the_records_before_the_cut_verifies_even_across_marker_gaps() {
        // Offset 2 of partition 0 is a control marker: the topic never returns it.
        let topic = logs(&[(0, 0, &[0, 1, 3, 4]), (1, 0, &[0, 1, 2, 3])]);
        let got = input(&[
            (0, 0),
            (0, 1),
            (0, 3),
            (0, 4),
            (1, 3),
            (1, 2),
            (1, 1),
            (1, 0),
        ]);
        let report = check_input(&cut(), "orders", &got, &topic);
        assert!(report.ok(), "{report:?}");
        assert_eq!(report.partitions[0].matched, 4);
        assert_eq!(report.partitions[0].expected, 4);
    }

    #[test]
    fn missing_past_duplicate_and_unknown_offsets_are_each_reported() {
        let topic = logs(&[(0, 0, &[0, 1, 2, 3, 4]), (1, 0, &[0, 1, 3])]);
        let got = input(&[
            (0, 0),
            (0, 3),
            (0, 5),
            (0, 6),
            (0, 3),
            (1, 0),
            (1, 1),
            (1, 2),
            (1, 3),
        ]);
        let report = check_input(&cut(), "orders", &got, &topic);
        let p0 = &report.partitions[0];
        assert_eq!(p0.missing.to_string(), "1-2, 4");
        assert_eq!(p0.past_cut.to_string(), "5-6");
        assert_eq!(p0.duplicates.to_string(), "3");
        assert!(!p0.ok());
        let p1 = &report.partitions[1];
        assert_eq!(p1.not_in_topic.to_string(), "2");
        assert!(p1.missing.is_empty());
        assert!(!report.ok());
    }

    #[test]
    fn offsets_below_the_log_start_are_accepted_and_counted() {
        let topic = logs(&[(0, 3, &[3, 4]), (1, 4, &[])]);
        let got = input(&[(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 1)]);
        let report = check_input(&cut(), "orders", &got, &topic);
        assert!(report.ok(), "{report:?}");
        assert_eq!(report.partitions[0].before_log_start, 3);
        assert_eq!(report.partitions[1].before_log_start, 1);
    }

    #[test]
    fn an_empty_input_misses_every_record_and_rows_of_uncut_partitions_fail() {
        let topic = logs(&[(0, 0, &[0, 1]), (1, 0, &[])]);
        let report = check_input(&cut(), "orders", &InputOffsets::default(), &topic);
        assert_eq!(report.partitions[0].missing.to_string(), "0-1");
        assert!(
            report.partitions[1].ok(),
            "nothing before the cut, nothing read"
        );

        let stray = input(&[(0, 0), (0, 1), (7, 0), (7, 1)]);
        let report = check_input(&cut(), "orders", &stray, &topic);
        assert_eq!(report.other_partitions, BTreeMap::from([(7, 2)]));
        assert!(!report.ok());
    }

    #[test]
    fn reserved_columns_must_exist_with_their_types_and_no_nulls() {
        let error = input_offsets(&[batch(&[(Some(0), None)])]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the input's __offset column is null in row 0"
        );
        let mut acc = InputOffsets::default();
        acc.add_batch(&batch(&[(Some(0), Some(1))])).unwrap();
        let error = acc.add_batch(&batch(&[(None, Some(1))])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the input's __partition column is null in row 1"
        );

        let wrong = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new(PARTITION_COLUMN, DataType::Int64, true),
                Field::new(OFFSET_COLUMN, DataType::Int64, true),
            ])),
            vec![
                Arc::new(Int64Array::from(vec![0])),
                Arc::new(Int64Array::from(vec![0])),
            ],
        )
        .unwrap();
        assert_eq!(
            input_offsets(&[wrong]).unwrap_err().to_string(),
            "the input's __partition column is Int64, expected Int32"
        );
        let only_offset = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                OFFSET_COLUMN,
                DataType::Int64,
                true,
            )])),
            vec![Arc::new(Int64Array::from(vec![0]))],
        )
        .unwrap();
        assert!(matches!(
            input_offsets(&[only_offset]),
            Err(InputError::MissingColumn(PARTITION_COLUMN))
        ));
    }

    #[test]
    fn the_input_topic_defaults_to_the_cuts_only_topic() {
        let mut two = cut();
        assert_eq!(input_topic(&two, None).unwrap(), "orders");
        assert!(
            input_topic(&two, Some("payments"))
                .unwrap_err()
                .contains("does not name")
        );
        two.topics.push(CutTopic {
            topic: "payments".into(),
            partitions: vec![],
        });
        assert!(input_topic(&two, None).unwrap_err().contains("--topic"));
        assert_eq!(input_topic(&two, Some("payments")).unwrap(), "payments");
    }

    #[test]
    fn an_input_of_several_topics_counts_only_the_checked_topics_rows() {
        use arrow_array::{DictionaryArray, types::Int32Type};
        let schema = Schema::new(vec![
            Field::new(
                TOPIC_COLUMN,
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new(PARTITION_COLUMN, DataType::Int32, true),
            Field::new(OFFSET_COLUMN, DataType::Int64, true),
        ]);
        let topics: DictionaryArray<Int32Type> = vec![
            Some("orders"),
            Some("payments"),
            Some("orders"),
            Some("payments"),
        ]
        .into_iter()
        .collect();
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(topics),
                Arc::new(Int32Array::from(vec![0, 0, 1, 0])),
                Arc::new(Int64Array::from(vec![0, 0, 0, 1])),
            ],
        )
        .unwrap();
        let mut orders = InputOffsets::for_topic("orders");
        orders.add_batch(&batch).unwrap();
        assert_eq!(orders.rows, 2);
        assert_eq!(
            orders.by_partition,
            BTreeMap::from([(0, vec![0]), (1, vec![0])]),
            "payments/0 is not orders/0"
        );
        let mut payments = InputOffsets::for_topic("payments");
        payments.add_batch(&batch).unwrap();
        assert_eq!(payments.by_partition, BTreeMap::from([(0, vec![0, 1])]));
    }
}
