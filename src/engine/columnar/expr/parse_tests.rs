use super::super::ast::{Expr, Literal, UnaryOp};
use super::super::{MAX_EXPR_NESTING, ParsedExpr};
use super::parse;

/// The tree with every operator's operands in brackets, so precedence shows.
fn shape(e: &Expr) -> String {
    match e {
        Expr::Binary { left, op, right } => format!("[{} {op} {}]", shape(left), shape(right)),
        Expr::Unary { op, expr } => {
            let op = match op {
                UnaryOp::Not => "NOT ",
                UnaryOp::Minus => "-",
                UnaryOp::Plus => "+",
            };
            format!("[{op}{}]", shape(expr))
        }
        Expr::Nested(inner) => shape(inner),
        Expr::IsNull { expr, negated } => {
            format!(
                "[{} IS {}NULL]",
                shape(expr),
                if *negated { "NOT " } else { "" }
            )
        }
        Expr::Between {
            expr, low, high, ..
        } => format!(
            "[{} BETWEEN {} AND {}]",
            shape(expr),
            shape(low),
            shape(high)
        ),
        Expr::Like { expr, pattern, .. } => format!("[{} LIKE {}]", shape(expr), shape(pattern)),
        Expr::In { expr, list, .. } => format!(
            "[{} IN ({})]",
            shape(expr),
            list.iter().map(shape).collect::<Vec<_>>().join(", ")
        ),
        Expr::Cast { expr, ty, .. } => format!("[{}::{}]", shape(expr), ty.name),
        other => other.to_string(),
    }
}

fn tree(text: &str) -> String {
    let (expr, _) = parse(text, true).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    shape(&expr)
}

fn error(text: &str) -> (String, u64, u64) {
    let e = parse(text, true).unwrap_err();
    (e.message, e.line, e.column)
}

#[test]
fn precedence_follows_sql() {
    for (text, want) in [
        ("a OR b AND c", "[a OR [b AND c]]"),
        ("a AND b OR c", "[[a AND b] OR c]"),
        ("NOT a AND b", "[[NOT a] AND b]"),
        ("NOT a = b", "[NOT [a = b]]"),
        ("a = b AND c < d", "[[a = b] AND [c < d]]"),
        ("a + b * c", "[a + [b * c]]"),
        ("a * b + c", "[[a * b] + c]"),
        ("a - b - c", "[[a - b] - c]"),
        ("a / b % c", "[[a / b] % c]"),
        ("a + b = c * d", "[[a + b] = [c * d]]"),
        ("(a + b) * c", "[[a + b] * c]"),
        ("-a * b", "[[-a] * b]"),
        ("-a + b", "[[-a] + b]"),
        ("a || b || c", "[[a || b] || c]"),
        ("a + b || c", "[a + [b || c]]"),
        ("a + b IS NULL", "[[a + b] IS NULL]"),
        ("a = b IS NOT NULL", "[[a = b] IS NOT NULL]"),
        ("NOT a IS NULL", "[NOT [a IS NULL]]"),
        ("a BETWEEN 1 AND 2 AND b", "[[a BETWEEN 1 AND 2] AND b]"),
        (
            "a BETWEEN b + 1 AND c * 2",
            "[a BETWEEN [b + 1] AND [c * 2]]",
        ),
        ("a IN (1, 2) OR b", "[[a IN (1, 2)] OR b]"),
        ("a LIKE 'x' AND b", "[[a LIKE 'x'] AND b]"),
        ("a || 'x' LIKE 'y'", "[[a || 'x'] LIKE 'y']"),
        ("a::INT + 1", "[[a::INT] + 1]"),
        ("a & b | c = d", "[[[a & b] | c] = d]"),
        ("a = b & c", "[a = [b & c]]"),
        ("a + b & c", "[[a + b] & c]"),
        ("a | b ^ c & d", "[a | [b ^ [c & d]]]"),
        ("-a::INT", "[-[a::INT]]"),
        ("a = -1", "[a = [-1]]"),
        ("a - -1", "[a - [-1]]"),
    ] {
        assert_eq!(tree(text), want, "{text}");
    }
}

#[test]
fn every_construct_parses() {
    for (text, want) in [
        ("amount", "amount"),
        ("\"Order Id\"", "\"Order Id\""),
        ("`x`", "`x`"),
        ("t.amount", "t.amount"),
        ("12", "12"),
        ("1.5e3", "1.5e3"),
        (".5", ".5"),
        ("'it''s'", "'it''s'"),
        ("TRUE", "true"),
        ("false", "false"),
        ("null", "NULL"),
        ("a IS NOT TRUE", "a IS NOT TRUE"),
        ("a IS FALSE", "a IS FALSE"),
        ("a NOT IN ('x')", "a NOT IN ('x')"),
        ("a NOT BETWEEN 1 AND 2", "a NOT BETWEEN 1 AND 2"),
        ("a NOT ILIKE 'x%'", "a NOT ILIKE 'x%'"),
        ("a LIKE 'x' ESCAPE '!'", "a LIKE 'x' ESCAPE '!'"),
        ("CAST(a AS DOUBLE PRECISION)", "CAST(a AS DOUBLE PRECISION)"),
        ("cast(a as varchar(10))", "CAST(a AS varchar(10))"),
        (
            "CAST(a AS timestamp[us, UTC])",
            "CAST(a AS timestamp[us, UTC])",
        ),
        ("a::BIGINT", "a::BIGINT"),
        ("try_cast(a AS INT)", "TRY_CAST(a AS INT)"),
        ("SUBSTRING(a FROM 2 FOR 3)", "SUBSTRING(a FROM 2 FOR 3)"),
        ("substring(a, 2)", "SUBSTRING(a, 2)"),
        ("substr(a, 2, 1)", "SUBSTR(a, 2, 1)"),
        ("SUBSTR(a FROM 2)", "SUBSTR(a FROM 2)"),
        ("CASE WHEN a THEN 1 END", "CASE WHEN a THEN 1 END"),
        (
            "case a when 1 then 'x' when 2 then 'y' else 'z' end",
            "CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END",
        ),
        ("a & 1", "a & 1"),
        ("TRIM(a)", "TRIM(a)"),
        ("TRIM(LEADING a)", "TRIM(LEADING a)"),
        ("TRIM(TRAILING FROM a)", "TRIM(TRAILING a)"),
        ("TRIM(BOTH 'x' FROM a)", "TRIM(BOTH 'x' FROM a)"),
        ("trim(a, 'x')", "TRIM(a, 'x')"),
        ("a IS NOT UNKNOWN", "a IS NOT UNKNOWN"),
        ("a IS DISTINCT FROM b + 1", "a IS DISTINCT FROM b + 1"),
        ("lower(a)", "lower(a)"),
        ("concat(a, 'b', 1)", "concat(a, 'b', 1)"),
        ("now()", "now()"),
        ("count(*)", "count(*)"),
        ("count(DISTINCT a)", "count(DISTINCT a)"),
        ("+a", "+a"),
        ("- -a", "- -a"),
        ("-+a", "- +a"),
        ("CAST(a AS INT UNSIGNED)", "CAST(a AS INT UNSIGNED)"),
        ("NOT NOT a", "NOT NOT a"),
        ("(a)", "(a)"),
        ("a -- trailing comment", "a"),
        ("/* lead */ a", "a"),
    ] {
        let (expr, _) = parse(text, true).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(expr.to_string(), want, "{text}");
    }
    let (expr, alias) = parse("amount * 2 AS \"Double\"", true).unwrap();
    assert_eq!(
        (expr.to_string().as_str(), alias.as_deref()),
        ("amount * 2", Some("Double"))
    );
    let (_, alias) = parse("count(*) AS from", true).unwrap();
    assert_eq!(alias.as_deref(), Some("from"));
    let (_, alias) = parse("a AS 'total'", true).unwrap();
    assert_eq!(alias.as_deref(), Some("total"));
    assert_eq!(tree("leading + escape"), "[leading + escape]");
    assert_eq!(
        error("from + 1").0,
        "syntax error: Expected: an expression, found: from"
    );
    let (expr, _) = parse("x IS NULL", true).unwrap();
    assert!(matches!(expr, Expr::IsNull { negated: false, .. }));
    let (expr, _) = parse("'a'", true).unwrap();
    assert!(matches!(expr, Expr::Literal { value: Literal::String(ref s), .. } if s == "a"));
}

#[test]
fn nodes_start_at_their_first_operand() {
    let at = |text: &str| parse(text, true).unwrap().0.pos();
    assert_eq!(at("amount > 1"), (1, 1));
    assert_eq!(at("  -amount"), (1, 4));
    assert_eq!(at("(x)"), (1, 2));
    assert_eq!(at("CAST(x AS INT)"), (1, 6));
    assert_eq!(at("\n  lower(x)"), (2, 3));
    assert_eq!(at("'é' || x"), (1, 1));
    assert_eq!(at("TRIM('x' FROM s)"), (1, 6));
    assert_eq!(at("TRIM(s, 'x')"), (1, 6));
    assert_eq!(at("TRIM(LEADING s)"), (1, 14));
    assert_eq!(at("  CASE WHEN a THEN 1 END"), (1, 3));
    assert_eq!(
        parse("'é' || \"ü\" || y", true).unwrap().0.to_string(),
        "'é' || \"ü\" || y"
    );
}

#[test]
fn syntax_errors_name_what_was_expected_and_where() {
    assert_eq!(
        error("amount >"),
        (
            "syntax error: Expected: an expression, found: EOF".into(),
            1,
            9
        )
    );
    assert_eq!(
        error("amount > \n"),
        (
            "syntax error: Expected: an expression, found: EOF".into(),
            2,
            1
        )
    );
    assert_eq!(
        error("(a + 1"),
        ("syntax error: Expected: ), found: EOF".into(), 1, 7)
    );
    assert_eq!(
        error("a # b"),
        ("unexpected `#` after the expression".into(), 1, 3)
    );
    assert_eq!(
        error("a IN ()"),
        (
            "syntax error: Expected: an expression, found: )".into(),
            1,
            7
        )
    );
    assert_eq!(
        error("CASE a END"),
        ("syntax error: Expected: WHEN, found: END".into(), 1, 8)
    );
    assert_eq!(
        error("a = 'open"),
        ("syntax error: Unterminated string literal".into(), 1, 5)
    );
    assert_eq!(
        error("a IS 3"),
        (
            "syntax error: Expected: [NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM after IS, found: 3".into(),
            1,
            6
        )
    );
    assert_eq!(
        error("a BETWEEN 1 OR 2"),
        ("syntax error: Expected: AND, found: OR".into(), 1, 13)
    );
    assert_eq!(
        error("CAST(a AS)"),
        (
            "syntax error: Expected: a data type name, found: )".into(),
            1,
            10
        )
    );
    assert_eq!(
        error("a IN (SELECT 1)"),
        ("IN takes a list of values, not a subquery".into(), 1, 1)
    );
    assert_eq!(error("a NOT 1").0, "unexpected `NOT` after the expression");
    assert_eq!(
        error("a AS"),
        (
            "syntax error: Expected: identifier, found: EOF".into(),
            1,
            5
        )
    );
    let e = parse("a > 1 AS big", false).unwrap_err();
    assert_eq!(
        e.message,
        "unexpected `AS` after the expression (a filter predicate takes no `AS name`)"
    );
    assert_eq!((e.line, e.column), (1, 7));
}

#[test]
fn a_hundred_thousand_nested_parentheses_are_refused_without_recursing() {
    let text = "(".repeat(100_000) + "1" + &")".repeat(100_000);
    let e = parse(&text, true).unwrap_err();
    assert_eq!(e.message, "expression nests too deeply");
    // The limit itself: a parenthesis counts two levels, the whole expression one.
    let depth = MAX_EXPR_NESTING / 2;
    let fits = "(".repeat(depth - 1) + "1" + &")".repeat(depth - 1);
    assert!(parse(&fits, true).is_ok());
    let deeper = "(".repeat(depth) + "1" + &")".repeat(depth);
    assert_eq!(
        parse(&deeper, true).unwrap_err().message,
        "expression nests too deeply"
    );
    let calls = "f(".repeat(100_000);
    assert_eq!(
        parse(&calls, true).unwrap_err().message,
        "expression nests too deeply"
    );
}

#[test]
fn huge_literals_parse_and_the_compiler_judges_them() {
    let digits = "9".repeat(1_000_000);
    let (expr, _) = parse(&digits, true).unwrap();
    assert!(
        matches!(&expr, Expr::Literal { value: Literal::Number(n), .. } if n.len() == 1_000_000)
    );
    let schema = arrow_schema::Schema::empty();
    let e = ParsedExpr::parse(&digits, true)
        .unwrap()
        .compile(&schema)
        .unwrap_err();
    assert!(
        e.message.contains("does not fit int64"),
        "{}",
        &e.message[..80]
    );
    let float = "1".repeat(500_000) + ".5";
    assert!(
        ParsedExpr::parse(&float, true)
            .unwrap()
            .compile(&schema)
            .is_ok()
    );
    let string = format!("'{}'", "x''".repeat(500_000));
    let (expr, _) = parse(&string, true).unwrap();
    assert!(
        matches!(&expr, Expr::Literal { value: Literal::String(s), .. } if s.len() == 1_000_000)
    );
    let name = format!("\"{}\"", "n".repeat(1_000_000));
    assert!(parse(&name, true).is_ok());
}

#[test]
fn hostile_input_is_an_error_never_a_panic() {
    let samples = [
        "a IN (1, 2) AND CAST(b AS timestamp[us, UTC]) BETWEEN -1 AND +2",
        "TRIM(BOTH 'x' FROM SUBSTRING(a FROM 1 FOR 2)) NOT ILIKE 'p' ESCAPE '!'",
        "count(DISTINCT \"q\"\"x\") AS `n` -- c",
        "/* x */ a::INT IS NOT NULL OR b.c = 1e+5 /*",
    ];
    for sample in samples {
        for (i, _) in sample.char_indices() {
            let _ = ParsedExpr::parse(&sample[..i], true);
            let _ = ParsedExpr::parse(&sample[i..], false);
        }
    }
    for text in [
        "",
        " ",
        "(",
        ")",
        ",",
        "*",
        "::",
        "a::",
        "CAST(",
        "CAST(a",
        "CAST(a AS INT",
        "TRIM(",
        "SUBSTRING(",
        "a IN",
        "a IN (",
        "a NOT",
        "a IS",
        "1e",
        "1e+",
        "\"",
        "`",
        "'",
        "/*",
        "§",
        "a b",
        "a.",
        "a.1",
        "f(*",
        "f(*,1)",
        "CAST(a AS x[",
        "CAST(a AS x(1",
        "\u{0}",
    ] {
        assert!(ParsedExpr::parse(text, true).is_err(), "{text:?}");
    }
}

#[test]
fn random_token_soup_never_panics() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![Some(i64::MIN), None, Some(3)])),
        Arc::new(StringArray::from(vec![Some("x"), Some(""), None])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let vocabulary = [
        "a",
        "s",
        "1",
        "-",
        "+",
        "*",
        "/",
        "%",
        "||",
        "(",
        ")",
        ",",
        "=",
        "<>",
        "<",
        ">=",
        "AND",
        "OR",
        "NOT",
        "IS",
        "NULL",
        "TRUE",
        "IN",
        "BETWEEN",
        "LIKE",
        "'x%'",
        "CAST",
        "AS",
        "INT",
        "::",
        "VARCHAR",
        "SUBSTRING",
        "FROM",
        "FOR",
        "TRIM",
        "LEADING",
        "lower",
        "coalesce",
        "count",
        "*",
        "9223372036854775808",
        "1.5",
        "\"a\"",
        ".",
        "ESCAPE",
        "DISTINCT",
    ];
    // A fixed xorshift sequence: the same soups on every run.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..20_000 {
        let mut text = String::new();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for _ in 0..(state % 12) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(vocabulary[(state % vocabulary.len() as u64) as usize]);
            text.push(' ');
        }
        let _ = super::super::parse_aggregate(&text);
        if let Ok(parsed) = ParsedExpr::parse(&text, true) {
            let _ = parsed.columns();
            if let Ok(expression) = parsed.compile(&schema) {
                let _ = expression.evaluate(&batch);
            }
        }
    }
}
