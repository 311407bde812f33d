#!/usr/bin/env python3
"""Benchmark: `krabka-streams run` offline vs DuckDB on the same Arrow IPC file.

Generates N rows (user, country, amount, ts + the five reserved columns, as
`tail` writes them) into an Arrow IPC stream, then times
  * krabka-streams run examples/topologies/large-orders-by-user.yaml
      (filter amount > 100, group by user: sum(amount), count(*)), output discarded
      except the last cumulative batch;
  * DuckDB: the same file read with pyarrow and the same query
      (SELECT user, sum(amount), count(*) WHERE amount > 100 GROUP BY user),
      timed end to end (read + query) and query-only.
Prints the ratio krabka / DuckDB (a benchmark, not a timed test; the issue's
target is <= 2x). Needs duckdb and pyarrow (pip install duckdb pyarrow).

usage: run_offline_vs_duckdb.py BINARY [--rows N] [--dir DIR] [--repeat K]
"""

import argparse
import os
import subprocess
import sys
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "topologies")

# name -> (example file, sink, DuckDB query over the table `orders`, target ratio)
CASES = {
    "filter-group-by": (
        "large-orders-by-user.yaml", "large-orders-by-user",
        'SELECT "user", sum(amount) AS total, count(*) AS n FROM orders WHERE amount > 100 GROUP BY "user"',
        2.0),
    "windowed-group-by": (
        "orders-per-minute.yaml", "orders-per-minute",
        "SELECT upper(trim(country)) AS c, (__timestamp // 60000) * 60000 AS w, count(*) AS orders, "
        "sum(CAST(amount // 100 AS BIGINT)) AS euros, max(amount) AS largest FROM orders GROUP BY c, w",
        3.0),
}


def generate(path, rows, batch_rows=65536, users=10000, partitions=1):
    rng = np.random.default_rng(42)
    user_names = pa.array([f"user-{i:05d}" for i in range(users)])
    countries = pa.array(["NL", "BE", "DE", "FR", "PL", "CZ"])
    schema = pa.schema([
        ("user", pa.utf8()), ("country", pa.utf8()), ("amount", pa.int64()),
        ("ts", pa.timestamp("ms", tz="UTC")),
        ("__key", pa.binary()), ("__timestamp", pa.int64()), ("__partition", pa.int32()),
        ("__offset", pa.int64()), ("__headers", pa.binary()),
    ])
    with pa.OSFile(path, "wb") as sink, ipc.new_stream(sink, schema) as writer:
        done = 0
        while done < rows:
            n = min(batch_rows, rows - done)
            ts = 1_700_000_000_000 + np.arange(done, done + n, dtype=np.int64)
            batch = pa.record_batch([
                user_names.take(pa.array(rng.integers(0, users, n))),
                countries.take(pa.array(rng.integers(0, len(countries), n))),
                pa.array(rng.integers(0, 1000, n), pa.int64()),
                pa.array(ts, pa.timestamp("ms", tz="UTC")),
                pa.nulls(n, pa.binary()),
                pa.array(ts),
                pa.array(np.zeros(n, dtype=np.int32) if partitions == 1 else rng.integers(0, partitions, n).astype(np.int32)),
                pa.array(np.arange(done, done + n, dtype=np.int64)),
                pa.array([b"\x00\x00\x00\x00"] * n, pa.binary()),
            ], schema=schema)
            writer.write_batch(batch)
            done += n


def time_krabka(binary, data, out, case="filter-group-by"):
    topology, sink, _, _ = CASES[case]
    start = time.perf_counter()
    subprocess.run([binary, "run", os.path.join(EXAMPLES, topology), "--input", f"orders={data}",
                    "--sink", f"{sink}={out}", "-q"], check=True)
    return time.perf_counter() - start


def time_duckdb(data, case="filter-group-by"):
    query = CASES[case][2]
    start = time.perf_counter()
    with pa.memory_map(data) as source:
        orders = ipc.open_stream(source).read_all()
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    read_done = time.perf_counter()
    result = con.sql(query).to_arrow_table()
    end = time.perf_counter()
    return end - start, end - read_done, result.num_rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    data = os.path.join(args.dir, f"orders-{args.rows}.arrows")
    out = os.path.join(args.dir, "large-orders-by-user.arrows")
    if not os.path.exists(data):
        print(f"generating {args.rows} rows into {data}", file=sys.stderr)
        generate(data, args.rows)
    for case in args.case or ["filter-group-by"]:
        target = CASES[case][3]
        krabka = min(time_krabka(args.binary, data, out, case) for _ in range(args.repeat))
        duck = [time_duckdb(data, case) for _ in range(args.repeat)]
        duck_total = min(d[0] for d in duck)
        duck_query = min(d[1] for d in duck)
        print(f"{case}, rows {args.rows}: krabka-streams run {krabka:.3f}s; DuckDB read+query {duck_total:.3f}s "
              f"(query only {duck_query:.3f}s, {duck[0][2]} result rows)")
        print(f"{case}: ratio krabka/DuckDB(read+query) = {krabka / duck_total:.2f}x; "
              f"krabka/DuckDB(query only) = {krabka / duck_query:.2f}x (target <= {target:g}x)")


if __name__ == "__main__":
    main()
