//! Property-style checks of `tail`'s position rules against Tansu: generated cases
//! (1-5 topics of 1-8 partitions, empty partitions included, random record counts,
//! random combinations of -g, -p, --from, -n, --where, -e and batch sizes), each
//! compared record by record (topic, partition, offset, key, value) with what an
//! independent reader (confluent-kafka) holds, and in group mode with what the
//! group committed: a group commits exactly what it wrote.
//!
//! One broker serves every case. The seed is printed first and with every failure;
//! `KRABKA_TAIL_PROPERTY_SEED` replays one, `KRABKA_TAIL_PROPERTY_CASES` sets how
//! many cases run (default 50).

use std::collections::{BTreeMap, BTreeSet};

use crate::support::admin::{committed_offsets, create_topics};
use crate::support::tansu::Tansu;
use crate::support::unique_name;
use crate::tail_topics::{Produced, Reference, Row, arrow_rows, produce_rows, reference, run_tail};

/// SplitMix64: small, seedable, good enough to pick cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as i64 - 1) as usize]
    }
}

/// A pool of topics, produced once: each case tails some of them.
struct Pool {
    topics: Vec<(String, i32)>,
    reference: Reference,
}

fn pool(bootstrap: &str, rng: &mut Rng) -> Pool {
    let topics: Vec<(String, i32)> = (0..7)
        .map(|i| (unique_name(&format!("prop{i}")), rng.range(1, 8) as i32))
        .collect();
    let specs: Vec<(&str, i32)> = topics.iter().map(|(t, p)| (t.as_str(), *p)).collect();
    create_topics(bootstrap, &specs);
    let mut records: Vec<Produced> = Vec::new();
    for (t, partitions) in &topics {
        for p in 0..*partitions {
            // About a third of the partitions stay empty.
            let n = if rng.chance(30) { 0 } else { rng.range(1, 12) };
            for i in 0..n {
                let key = rng
                    .chance(70)
                    .then(|| format!("k{}", rng.range(0, 5)).into_bytes());
                // Values are bytes, not always UTF-8.
                let mut value = format!("{t}/{p}/{i}/").into_bytes();
                value.extend((0..rng.range(0, 6)).map(|_| rng.next() as u8));
                records.push((t.clone(), p, key, value));
            }
        }
    }
    produce_rows(bootstrap, &records);
    let names: Vec<String> = topics.iter().map(|(t, _)| t.clone()).collect();
    let reference = reference(bootstrap, &names);
    assert_eq!(
        reference.rows.len(),
        records.len(),
        "the reference reader sees every record produced"
    );
    Pool { topics, reference }
}

/// Where a case starts and stops, as `--from` (or -e) says it.
#[derive(Debug, Clone)]
enum From {
    Start,
    End,
    AfterStart(i64),
    BeforeEnd(i64),
    Offset(i64),
}

#[derive(Debug, Clone)]
enum Where {
    Partition(i32),
    OffsetAtLeast(i64),
    OffsetBelow(i64),
    Topic(String),
}

#[derive(Debug, Clone)]
struct Case {
    topics: Vec<String>,
    partitions: Option<Vec<i32>>,
    from: From,
    /// `--from S:M` instead of -e (no group): stop offset per partition.
    stop_offset: Option<i64>,
    max: Option<u64>,
    predicate: Option<Where>,
    group: Option<String>,
    batch_records: usize,
    topic_column: bool,
}

fn generate(rng: &mut Rng, pool: &Pool) -> Case {
    let count = rng.range(1, 5) as usize;
    let mut topics: Vec<String> = Vec::new();
    while topics.len() < count {
        let t = rng.pick(&pool.topics).0.clone();
        if !topics.contains(&t) {
            topics.push(t);
        }
    }
    let numbers: BTreeSet<i32> = pool
        .topics
        .iter()
        .filter(|(t, _)| topics.contains(t))
        .flat_map(|(_, p)| 0..*p)
        .collect();
    let numbers: Vec<i32> = numbers.into_iter().collect();
    let partitions = rng.chance(35).then(|| {
        let mut chosen: BTreeSet<i32> = BTreeSet::new();
        for _ in 0..rng.range(1, 3) {
            chosen.insert(*rng.pick(&numbers));
        }
        chosen.into_iter().collect()
    });
    let group = rng.chance(35).then(|| unique_name("propgroup"));
    let from = if group.is_some() {
        if rng.chance(15) {
            From::End
        } else {
            From::Start
        }
    } else {
        match rng.range(0, 5) {
            0 | 1 => From::Start,
            2 => From::End,
            3 => From::AfterStart(rng.range(0, 8)),
            4 => From::BeforeEnd(rng.range(0, 8)),
            _ => From::Offset(rng.range(0, 12)),
        }
    };
    // A stop offset past a partition's end would wait for records to come (as it
    // should): stop at or below the lowest end among the partitions read.
    let lowest_end = pool
        .topics
        .iter()
        .filter(|(t, _)| topics.contains(t))
        .flat_map(|(t, n)| (0..*n).map(move |p| (t, p)))
        .filter(|(_, p)| {
            partitions
                .as_ref()
                .is_none_or(|only: &Vec<i32>| only.contains(p))
        })
        .map(|(t, p)| pool.reference.marks[&format!("{t}/{p}")].1)
        .min()
        .unwrap_or(0);
    let stop_offset =
        (group.is_none() && lowest_end > 0 && rng.chance(40)).then(|| rng.range(0, lowest_end));
    let topic_column = topics.len() > 1 || rng.chance(50);
    let predicate = rng.chance(35).then(|| match rng.range(0, 3) {
        0 => Where::Partition(*rng.pick(&numbers)),
        1 => Where::OffsetAtLeast(rng.range(0, 6)),
        2 => Where::OffsetBelow(rng.range(1, 8)),
        _ if topic_column => Where::Topic(rng.pick(&topics).clone()),
        _ => Where::OffsetAtLeast(1),
    });
    Case {
        topics,
        partitions,
        from,
        stop_offset,
        max: rng.chance(30).then(|| rng.range(0, 25) as u64),
        predicate,
        group,
        batch_records: *rng.pick(&[1, 3, 10_000]),
        topic_column,
    }
}

impl Case {
    fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = self.topics.clone();
        let start = match self.from {
            From::Start => "start".to_owned(),
            From::End => "end".to_owned(),
            From::AfterStart(n) => format!("+{n}"),
            From::BeforeEnd(n) => format!("-{n}"),
            From::Offset(n) => n.to_string(),
        };
        match self.stop_offset {
            Some(m) => a.extend(["--from".into(), format!("{start}:{m}")]),
            None => a.extend(["--from".into(), start, "-e".into()]),
        }
        if let Some(p) = &self.partitions {
            let list: Vec<String> = p.iter().map(i32::to_string).collect();
            a.extend(["-p".into(), list.join(",")]);
        }
        if let Some(n) = self.max {
            a.extend(["-n".into(), n.to_string()]);
        }
        if let Some(w) = &self.predicate {
            let text = match w {
                Where::Partition(p) => format!("__partition = {p}"),
                Where::OffsetAtLeast(o) => format!("__offset >= {o}"),
                Where::OffsetBelow(o) => format!("__offset < {o}"),
                Where::Topic(t) => format!("__topic = '{t}'"),
            };
            a.extend(["--where".into(), text]);
        }
        if let Some(g) = &self.group {
            // Tansu answers a JoinGroup after half the session timeout.
            a.extend([
                "-g".into(),
                g.clone(),
                "-X".into(),
                "session.timeout.ms=6000".into(),
            ]);
        }
        if self.topic_column {
            a.push("--topic-column".into());
        }
        a.extend(["--batch-records".into(), self.batch_records.to_string()]);
        a
    }

    fn keeps(&self, row: &Row) -> bool {
        match &self.predicate {
            None => true,
            Some(Where::Partition(p)) => row.1 == *p,
            Some(Where::OffsetAtLeast(o)) => row.2 >= *o,
            Some(Where::OffsetBelow(o)) => row.2 < *o,
            Some(Where::Topic(t)) => &row.0 == t,
        }
    }

    /// The partitions read, each with the offsets [start, stop) it covers.
    fn ranges(&self, pool: &Pool) -> BTreeMap<(String, i32), (i64, i64)> {
        let mut out = BTreeMap::new();
        for (t, partitions) in pool.topics.iter().filter(|(t, _)| self.topics.contains(t)) {
            for p in 0..*partitions {
                if self
                    .partitions
                    .as_ref()
                    .is_some_and(|only| !only.contains(&p))
                {
                    continue;
                }
                let (low, high) = pool.reference.marks[&format!("{t}/{p}")];
                let start = match self.from {
                    From::Start => low,
                    From::End => high,
                    From::AfterStart(n) => (low + n).min(high),
                    From::BeforeEnd(n) => (high - n).max(low),
                    From::Offset(n) => n,
                };
                let stop = self.stop_offset.unwrap_or(high);
                out.insert((t.clone(), p), (start, stop));
            }
        }
        out
    }
}

fn seed() -> u64 {
    match std::env::var("KRABKA_TAIL_PROPERTY_SEED") {
        Ok(s) => s.parse().expect("KRABKA_TAIL_PROPERTY_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    }
}

#[test]
fn generated_tails_hold_every_position_rule_per_topic_partition() {
    let seed = seed();
    eprintln!("tail properties: KRABKA_TAIL_PROPERTY_SEED={seed}");
    let cases: usize = std::env::var("KRABKA_TAIL_PROPERTY_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(50);
    let mut rng = Rng(seed);
    let broker = Tansu::start();
    let pool = pool(&broker.bootstrap(), &mut rng);
    let dir = tempfile::tempdir().unwrap();
    for n in 0..cases {
        let case = generate(&mut rng, &pool);
        let args = case.args();
        let at = format!("seed {seed}, case {n}: tail {}", args.join(" "));
        eprintln!("{at}");
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_tail(dir.path(), &broker.bootstrap(), &argv);
        assert_eq!(run.code(), 0, "{at}: {}", run.stderr);
        let (mut rows, _) = arrow_rows(dir.path(), &run.stdout);
        if !case.topic_column {
            for r in &mut rows {
                r.0 = case.topics[0].clone();
            }
            rows.sort();
        }
        check(&case, &pool, &rows, &broker.bootstrap(), &at);
    }
}

/// What a case must have written: for each partition read, the reference's records
/// in its range that the predicate keeps — all of them, or with -n a prefix of each
/// partition's, `n` in all (as many as there are when fewer).
fn check(case: &Case, pool: &Pool, rows: &[Row], bootstrap: &str, at: &str) {
    let ranges = case.ranges(pool);
    let mut expected: BTreeMap<(String, i32), Vec<Row>> = BTreeMap::new();
    for r in &pool.reference.rows {
        let tp = (r.0.clone(), r.1);
        if let Some((start, stop)) = ranges.get(&tp)
            && r.2 >= *start
            && r.2 < *stop
            && case.keeps(r)
        {
            expected.entry(tp).or_default().push(r.clone());
        }
    }
    let mut got: BTreeMap<(String, i32), Vec<Row>> = BTreeMap::new();
    for r in rows {
        got.entry((r.0.clone(), r.1)).or_default().push(r.clone());
    }
    let total: usize = expected.values().map(Vec::len).sum();
    let short = |m: &BTreeMap<(String, i32), Vec<Row>>| -> BTreeMap<String, Vec<i64>> {
        m.iter()
            .map(|((t, p), rows)| (format!("{t}/{p}"), rows.iter().map(|r| r.2).collect()))
            .collect()
    };
    match case.max {
        None => assert!(
            got == expected,
            "{at}: wrote {:?}, expected {:?}",
            short(&got),
            short(&expected)
        ),
        Some(n) => {
            assert_eq!(rows.len(), total.min(n as usize), "{at}: -n {n} of {total}");
            for (tp, written) in &got {
                let want = expected.get(tp).map(Vec::as_slice).unwrap_or_default();
                assert!(
                    want.starts_with(written),
                    "{at}: {}/{} wrote {:?}, not a prefix of {:?}",
                    tp.0,
                    tp.1,
                    written.iter().map(|r| r.2).collect::<Vec<_>>(),
                    want.iter().map(|r| r.2).collect::<Vec<_>>()
                );
            }
        }
    }
    if let Some(group) = &case.group {
        check_commits(case, pool, &got, &ranges, bootstrap, group, at);
    }
}

/// A group commits exactly what it wrote: per partition, the rows written are the
/// reference's kept records below the committed offset, and nothing is committed
/// where nothing was read.
fn check_commits(
    case: &Case,
    pool: &Pool,
    got: &BTreeMap<(String, i32), Vec<Row>>,
    ranges: &BTreeMap<(String, i32), (i64, i64)>,
    bootstrap: &str,
    group: &str,
    at: &str,
) {
    for (t, partitions) in pool.topics.iter().filter(|(t, _)| case.topics.contains(t)) {
        for (p, committed) in committed_offsets(bootstrap, group, t, *partitions) {
            let tp = (t.clone(), p);
            let written: Vec<&Row> = got.get(&tp).map(|r| r.iter().collect()).unwrap_or_default();
            let Some(&(start, stop)) = ranges.get(&tp) else {
                assert_eq!(
                    committed, None,
                    "{at}: {t}/{p} is outside -p but was committed"
                );
                continue;
            };
            let Some(c) = committed else {
                assert!(
                    written.is_empty(),
                    "{at}: {t}/{p} wrote rows but committed nothing"
                );
                continue;
            };
            assert!(
                (start..=stop).contains(&c),
                "{at}: {t}/{p} committed {c} outside [{start}, {stop}]"
            );
            let below: Vec<&Row> = pool
                .reference
                .rows
                .iter()
                .filter(|r| r.0 == *t && r.1 == p && r.2 >= start && r.2 < c && case.keeps(r))
                .collect();
            assert_eq!(
                written.iter().map(|r| r.2).collect::<Vec<_>>(),
                below.iter().map(|r| r.2).collect::<Vec<_>>(),
                "{at}: {t}/{p} committed {c}: the rows written are not the records below it"
            );
            if case.max.is_none() && !matches!(case.from, From::End) {
                assert_eq!(c, stop, "{at}: {t}/{p} read to its end commits the end");
            }
        }
    }
}
