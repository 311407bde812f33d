use std::sync::Arc;

use arrow_array::{
    Array, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use super::*;

fn orders() -> RecordBatch {
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
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![Some("Ann"), Some(" bo "), None])),
            Arc::new(StringArray::from(vec![Some("NL"), Some("BE"), Some("DE")])),
            Arc::new(Int64Array::from(vec![Some(150), Some(50), None])),
            Arc::new(Int32Array::from(vec![1, 2, 3])),
            Arc::new(
                TimestampMillisecondArray::from(vec![0, 86_400_000, 2 * 86_400_000])
                    .with_timezone("UTC"),
            ),
        ],
    )
    .unwrap()
}

fn eval(text: &str) -> Result<ArrayRef, String> {
    let batch = orders();
    let parsed = ParsedExpr::parse(text, true).map_err(|e| e.message)?;
    let compiled = parsed.compile(&batch.schema()).map_err(|e| e.message)?;
    compiled.evaluate(&batch).map_err(|e| e.0)
}

fn bools(text: &str) -> Vec<Option<bool>> {
    let out = eval(text).unwrap();
    out.as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap()
        .iter()
        .collect()
}

#[test]
fn comparisons_and_boolean_logic_follow_sql_three_valued_logic() {
    assert_eq!(bools("amount > 100"), [Some(true), Some(false), None]);
    assert_eq!(
        bools("amount > 100 AND country IN ('NL', 'BE')"),
        [Some(true), Some(false), Some(false)]
    );
    assert_eq!(
        bools("amount > 100 OR country = 'DE'"),
        [Some(true), Some(false), Some(true)]
    );
    assert_eq!(bools("NOT amount > 100"), [Some(false), Some(true), None]);
    assert_eq!(
        bools("amount IS NULL"),
        [Some(false), Some(false), Some(true)]
    );
    assert_eq!(
        bools("user IS NOT NULL"),
        [Some(true), Some(true), Some(false)]
    );
    assert_eq!(
        bools("amount BETWEEN 50 AND 100"),
        [Some(false), Some(true), None]
    );
    assert_eq!(
        bools("country NOT IN ('NL')"),
        [Some(false), Some(true), Some(true)]
    );
    assert_eq!(bools("user LIKE 'A%'"), [Some(true), Some(false), None]);
    assert_eq!(bools("user ILIKE 'a%'"), [Some(true), Some(false), None]);
    assert_eq!(bools("qty = amount / 50"), [Some(false), Some(false), None]);
    assert_eq!(
        bools("ts >= '1970-01-02T00:00:00Z'"),
        [Some(false), Some(true), Some(true)]
    );
}

#[test]
fn arithmetic_widens_and_reports_overflow() {
    let doubled = eval("amount * 2 AS double_amount").unwrap();
    let doubled = doubled.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(
        doubled.iter().collect::<Vec<_>>(),
        [Some(300), Some(100), None]
    );
    let mixed = eval("qty + amount").unwrap();
    assert_eq!(mixed.data_type(), &DataType::Int64);
    let err = eval("amount * 9223372036854775807").unwrap_err();
    assert!(err.starts_with("integer overflow"), "{err}");
    assert_eq!(
        eval("qty / 0").unwrap_err(),
        "division by zero (at row 0 of its batch)"
    );
}

#[test]
fn a_runtime_error_names_the_failing_record() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("status", DataType::Utf8, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["1", "2", "3", "x", "5"])),
            Arc::new(Int32Array::from(vec![3; 5])),
            Arc::new(Int64Array::from(vec![40, 41, 42, 43, 44])),
        ],
    )
    .unwrap();
    let parsed = ParsedExpr::parse("CAST(status AS INT) > 0", true).unwrap();
    let compiled = parsed.compile(&batch.schema()).unwrap();
    let err = compiled.evaluate(&batch).unwrap_err().0;
    assert!(err.starts_with("cast failed"), "{err}");
    assert!(
        err.ends_with("(at the record of partition 3 offset 43, row 3 of its batch)"),
        "{err}"
    );
}

#[test]
fn string_functions_and_casts_are_column_kernels() {
    let strings = |text: &str| -> Vec<Option<String>> {
        let out = eval(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        out.as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect()
    };
    assert_eq!(
        strings("lower(country)"),
        [Some("nl".into()), Some("be".into()), Some("de".into())]
    );
    assert_eq!(strings("upper(trim(user))")[1], Some("BO".into()));
    assert_eq!(strings("substr(country, 2)")[0], Some("L".into()));
    assert_eq!(strings("substr(user, 1, 2)")[0], Some("An".into()));
    assert_eq!(strings("concat(country, '-', qty)")[0], Some("NL-1".into()));
    assert_eq!(strings("country || '!'")[2], Some("DE!".into()));
    assert_eq!(
        strings("coalesce(user, 'nobody')")[2],
        Some("nobody".into())
    );
    assert_eq!(strings("CAST(amount AS VARCHAR)")[0], Some("150".into()));
    let len = eval("length(user)").unwrap();
    let len = len.as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(len.iter().collect::<Vec<_>>(), [Some(3), Some(4), None]);
    let err = eval("CAST(country AS INT)").unwrap_err();
    assert!(err.starts_with("cast failed"), "{err}");
}

#[test]
fn type_errors_point_into_the_expression() {
    let batch = orders();
    let check = |text: &str| {
        ParsedExpr::parse(text, false)
            .and_then(|p| p.compile_predicate(&batch.schema()))
            .unwrap_err()
    };
    let e = check("amount > 'x'");
    assert!(
        e.message.contains("cannot convert literal") || e.message.contains("cannot compare"),
        "{}",
        e.message
    );
    let e = check("amont > 100");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(
        e.message.starts_with("Arrow column does not exist: amont"),
        "{}",
        e.message
    );
    let e = check("amount > 1 AND\n  nope = 2");
    assert_eq!((e.line, e.column), (2, 3));
    let e = check("amount + 1");
    assert!(e.message.contains("must be boolean"), "{}", e.message);
    let e = check("country > 1");
    assert!(
        e.message.contains("cannot compare utf8 with int64"),
        "{}",
        e.message
    );
    let e = check("frobnicate(country)");
    assert!(
        e.message.starts_with("unknown function `frobnicate`"),
        "{}",
        e.message
    );
    let e = ParsedExpr::parse("amount >", false).unwrap_err();
    eprintln!("{e:?}");
    assert!(e.message.starts_with("syntax error"), "{}", e.message);
    assert_eq!(e.line, 1);
    let e = ParsedExpr::parse("amount > 1 AS big", false).unwrap_err();
    assert!(e.message.contains("takes no `AS name`"), "{}", e.message);
}

#[test]
fn aliases_and_bare_columns_are_recognised() {
    let p = ParsedExpr::parse("amount * 2 AS double_amount", true).unwrap();
    assert_eq!(p.alias(), Some("double_amount"));
    let p = ParsedExpr::parse("amount", true).unwrap();
    assert_eq!(p.column_name(), Some("amount"));
}

#[test]
fn operator_chains_beyond_the_limit_are_refused_before_they_can_overflow_the_stack() {
    for chain in [
        "amount + ".repeat(100_000) + "1",
        "user IS NULL ".repeat(50_000).replacen("user", "(user", 1) + ")",
        "qty::BIGINT".to_owned() + &"::BIGINT".repeat(50_000),
    ] {
        let e = ParsedExpr::parse(&chain, true).unwrap_err();
        assert!(
            e.message.contains("more than 64 operators"),
            "{}",
            e.message
        );
        assert_eq!(e.line, 1);
    }
}

#[test]
fn deep_nesting_is_a_clear_error() {
    for nested in [
        "(".repeat(20_000) + "1" + &")".repeat(20_000),
        "NOT ".repeat(400) + "true",
        "length(".repeat(5_000) + "user" + &")".repeat(5_000),
        "(".repeat(MAX_EXPR_NESTING) + "qty" + &")".repeat(MAX_EXPR_NESTING),
        "upper(".repeat(MAX_EXPR_NESTING) + "user" + &")".repeat(MAX_EXPR_NESTING),
        "- ".repeat(400) + "1",
    ] {
        let e = ParsedExpr::parse(&nested, true).unwrap_err();
        assert!(!e.message.is_empty());
    }
    let e = ParsedExpr::parse(&("(".repeat(50) + "1" + &")".repeat(50)), true).unwrap_err();
    assert_eq!(e.message, "expression nests too deeply");
}

#[test]
fn the_deepest_and_longest_allowed_expressions_run_on_a_small_stack() {
    // Test threads have a 2 MiB stack, as tokio workers do: less than the main thread's 8 MiB.
    // A function call or parenthesis takes up to two levels of the parser's budget.
    let depth = MAX_EXPR_NESTING / 2 - 1;
    let chain = "qty + ".repeat(MAX_EXPR_OPERATORS - 1) + "1";
    for text in [
        "(".repeat(depth) + &chain + &")".repeat(depth),
        "upper(".repeat(depth) + "user" + &")".repeat(depth),
        "NOT ".repeat(depth)
            + "("
            + &"qty > 0 OR ".repeat((MAX_EXPR_OPERATORS - depth) / 2 - 1)
            + "true)",
    ] {
        let parsed = ParsedExpr::parse(&text, true).unwrap();
        let expression = parsed.compile(&orders().schema()).unwrap();
        assert_eq!(expression.evaluate(&orders()).unwrap().len(), 3, "{text}");
    }
}
