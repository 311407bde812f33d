//! SQL expressions of `filter`, `with_columns` and aggregates: parsed, then
//! type-checked and evaluated against a small batch of every column type.
#![no_main]
use std::sync::{Arc, LazyLock};

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use krabka_streams::engine::columnar::expr::{ParsedExpr, parse_aggregate};
use libfuzzer_sys::fuzz_target;

static BATCH: LazyLock<RecordBatch> = LazyLock::new(|| {
    // The columns of the expression unit tests (their texts are the seeds), plus a float and a bool.
    let schema = Arc::new(Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new("qty", DataType::Int32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
        Field::new("price", DataType::Float64, true),
        Field::new("ok", DataType::Boolean, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![
            Some("Ann"),
            Some("é"),
            None,
            Some(""),
        ])),
        Arc::new(StringArray::from(vec![
            Some("NL"),
            Some("BE"),
            Some("DE"),
            None,
        ])),
        Arc::new(Int64Array::from(vec![
            Some(i64::MIN),
            Some(0),
            None,
            Some(i64::MAX),
        ])),
        Arc::new(Int32Array::from(vec![
            Some(i32::MIN),
            Some(-1),
            Some(7),
            None,
        ])),
        Arc::new(
            TimestampMillisecondArray::from(vec![Some(0), None, Some(-1), Some(i64::MAX)])
                .with_timezone("UTC"),
        ),
        Arc::new(Float64Array::from(vec![
            Some(f64::NAN),
            Some(-0.0),
            None,
            Some(1e308),
        ])),
        Arc::new(BooleanArray::from(vec![
            Some(true),
            None,
            Some(false),
            Some(true),
        ])),
    ];
    RecordBatch::try_new(schema, columns).expect("batch")
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_aggregate(text);
    for allow_alias in [false, true] {
        let Ok(parsed) = ParsedExpr::parse(text, allow_alias) else {
            continue;
        };
        let _ = parsed.columns();
        if let Ok(expression) = parsed.compile(BATCH.schema_ref()) {
            let _ = expression.evaluate(&BATCH);
        }
        if let Ok(predicate) = parsed.compile_predicate(BATCH.schema_ref()) {
            let _ = predicate.evaluate_predicate(&BATCH);
        }
    }
});
