#!/usr/bin/env python3
"""Benchmark: `krabka-streams run` offline vs DuckDB on the same Arrow IPC files.

Generates N rows (as `tail` writes them: payload columns + the five reserved
columns) into Arrow IPC streams, then per case times `krabka-streams run` on the
example topology (sink written to a file; the run process's peak RSS read from
wait4) with `--threads T` (default: the available cores) and with `--threads 1`,
against DuckDB running the same query over the same files (read with pyarrow,
all cores), timed end to end (read + query) and query only. Cases:
  * filter-group-by    examples/topologies/large-orders-by-user.yaml: filter
                       amount > 100, group by user: sum(amount), count(*)  (target <= 1x)
  * windowed-group-by  examples/topologies/orders-per-minute.yaml: tumbling 1-minute
                       windows per upper(trim(country))                   (target <= 1x)
  * join               examples/topologies/orders-with-payments.yaml: N orders joined
                       with N payments on order_id within 10 minutes, then
                       filter paid >= amount and a projection             (target <= 1.5x)
  * parquet-output     the N orders copied through a projection into a .parquet
                       sink against an .arrows sink: Parquet time / IPC time (target <= 1.2x);
                       the Parquet file is read back by DuckDB and pyarrow and compared
After timing, every case checks that the `--threads T` sink file is byte-identical
to the `--threads 1` one (and fails the benchmark when not), and compares krabka's
sink file with DuckDB's result (the group-bys re-emit their cumulative table per
batch: the last row of every group is its result).
At `--rows 100000000` (the issue's large case: about 4 GB of IPC per orders
file, more for the join's two files) the data is generated batch by batch
straight into the files, never held in memory, and the script first estimates
the disk it needs (the inputs it has yet to generate, measured from a sample
batch, plus each case's sink files as large as the largest input) and refuses
to start when the free space of --dir is below twice that. The peak RSS of
`run` (bounded by its state, not by the input) is printed next to DuckDB's.
Prints the ratios side by side (a benchmark, not a timed test), from runs that
alternate between the sides, the CPU times (user + system of the `run` process;
the DuckDB worker's CPU time around its read + query) as a ratio less moved by
the machine's load, and both sides' peak RSS. Needs duckdb, pyarrow and numpy
(the CI test venv has them).

usage: run_offline_vs_duckdb.py BINARY [--rows N] [--dir DIR] [--repeat K] [--threads T] [--case C ...]
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import tempfile
import sys
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "topologies")

RESERVED = [
    ("__key", pa.binary()), ("__timestamp", pa.int64()), ("__partition", pa.int32()),
    ("__offset", pa.int64()), ("__headers", pa.binary()),
]
BASE_TS = 1_700_000_000_000

# name -> (example file, sink, {source: dataset}, DuckDB query over tables named as the sources, target)
# Per case, how krabka's sink columns line up with the query's: (krabka columns
# in the query's order, the group key columns of a cumulative group-by or None).
COMPARE = {
    "filter-group-by": (["user", "total", "n"], ["user"]),
    "windowed-group-by": (["country", "__window_start", "orders", "euros", "largest"],
                          ["country", "__window_start"]),
    "join": (["order_order_id", "order_user", "order_amount", "payment_method"], None),
}
CASES = {
    "filter-group-by": (
        "large-orders-by-user.yaml", "large-orders-by-user", {"orders": "orders"},
        'SELECT "user", sum(amount) AS total, count(*) AS n FROM orders WHERE amount > 100 GROUP BY "user"',
        1.0),
    "windowed-group-by": (
        "orders-per-minute.yaml", "orders-per-minute", {"orders": "orders"},
        "SELECT upper(trim(country)) AS c, (__timestamp // 60000) * 60000 AS w, count(*) AS orders, "
        "sum(CAST(amount // 100 AS BIGINT)) AS euros, max(amount) AS largest FROM orders GROUP BY c, w",
        1.0),
    "join": (
        "orders-with-payments.yaml", "paid-orders", {"orders": "join-orders", "payments": "join-payments"},
        "SELECT o.order_id AS order_order_id, o.\"user\" AS order_user, o.amount AS order_amount, "
        "p.method AS payment_method FROM orders o JOIN payments p ON o.order_id = p.order_id "
        "AND abs(o.__timestamp - p.__timestamp) <= 600000 WHERE p.paid >= o.amount",
        1.5),
}

# The Parquet case: a projection of the orders into a sink, written as Parquet and as IPC.
PARQUET_TOPOLOGY = """version: 1
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns: {user: utf8, country: utf8, amount: int64, ts: timestamp}
  - select: copied
    parent: orders
    columns: [user, country, amount, ts]
  - sink: copy
    parent: copied
    topic: copy
    value: json
"""
PARQUET_TARGET = 1.2


def reserved_columns(ts, first_offset):
    n = len(ts)
    return [
        pa.nulls(n, pa.binary()),
        pa.array(ts),
        pa.array(np.zeros(n, dtype=np.int32)),
        pa.array(np.arange(first_offset, first_offset + n, dtype=np.int64)),
        pa.array([b"\x00\x00\x00\x00"] * n, pa.binary()),
    ]


def write_stream(path, payload_fields, make_payload, rows, batch_rows=65536):
    """Writes `rows` rows in batches; `make_payload(rng, first, n)` gives (payload arrays, ts)."""
    rng = np.random.default_rng(42)
    schema = pa.schema(payload_fields + RESERVED)
    tmp = path + ".tmp"
    with pa.OSFile(tmp, "wb") as sink, ipc.new_stream(sink, schema) as writer:
        done = 0
        while done < rows:
            n = min(batch_rows, rows - done)
            payload, ts = make_payload(rng, done, n)
            writer.write_batch(pa.record_batch(payload + reserved_columns(ts, done), schema=schema))
            done += n
    os.replace(tmp, path)


def generate_orders(path, rows, users=10000):
    """user, country, amount, ts: one row per millisecond of event time."""
    user_names = pa.array([f"user-{i:05d}" for i in range(users)])
    countries = pa.array(["NL", "BE", "DE", "FR", "PL", "CZ"])

    def payload(rng, first, n):
        ts = BASE_TS + np.arange(first, first + n, dtype=np.int64)
        return [
            user_names.take(pa.array(rng.integers(0, users, n))),
            countries.take(pa.array(rng.integers(0, len(countries), n))),
            pa.array(rng.integers(0, 1000, n), pa.int64()),
            pa.array(ts, pa.timestamp("ms", tz="UTC")),
        ], ts

    write_stream(path, [("user", pa.utf8()), ("country", pa.utf8()), ("amount", pa.int64()),
                        ("ts", pa.timestamp("ms", tz="UTC"))], payload, rows)


def order_ids(first, n):
    return pa.array([f"order-{i:010d}" for i in range(first, first + n)])


def generate_join_orders(path, rows, users=10000):
    """order_id, user, amount: one order per millisecond."""
    user_names = pa.array([f"user-{i:05d}" for i in range(users)])

    def payload(rng, first, n):
        ts = BASE_TS + np.arange(first, first + n, dtype=np.int64)
        return [order_ids(first, n), user_names.take(pa.array(rng.integers(0, users, n))),
                pa.array(rng.integers(0, 1000, n), pa.int64())], ts

    write_stream(path, [("order_id", pa.utf8()), ("user", pa.utf8()), ("amount", pa.int64())],
                 payload, rows)


def generate_join_payments(path, rows):
    """One payment per order, 0-60 s after it (so within the 10-minute window), in
    order-id order shuffled inside each batch; paid is random, so about half the
    joined rows pass `paid >= amount`."""
    methods = pa.array(["card", "ideal", "bancontact", "paypal"])

    def payload(rng, first, n):
        perm = rng.permutation(n) + first
        ts = BASE_TS + perm.astype(np.int64) + rng.integers(0, 60_000, n)
        ids = pa.array([f"order-{i:010d}" for i in perm])
        return [ids, methods.take(pa.array(rng.integers(0, len(methods), n))),
                pa.array(rng.integers(0, 1000, n), pa.int64())], ts

    write_stream(path, [("order_id", pa.utf8()), ("method", pa.utf8()), ("paid", pa.int64())],
                 payload, rows)


GENERATORS = {
    "orders": generate_orders,
    "join-orders": generate_join_orders,
    "join-payments": generate_join_payments,
}


SAMPLE_ROWS = 65536


def bytes_per_row(name, directory):
    """The IPC bytes per row of a dataset, measured on one generated batch."""
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = os.path.join(tmp, "sample.arrows")
        GENERATORS[name](path, SAMPLE_ROWS)
        return os.path.getsize(path) / SAMPLE_ROWS


def check_disk(directory, rows, cases):
    """Exits before any generation when --dir has less than twice the space the
    run needs: the inputs not generated yet, and per case its sink files (the
    --threads T one and the --threads 1 one; three for Parquet) counted as large as its largest input."""
    names = set()
    for case in cases:
        names.update(["orders"] if case == "parquet-output" else CASES[case][2].values())
    size = {name: bytes_per_row(name, directory) * rows for name in sorted(names)}
    need = sum(v for name, v in size.items()
               if not os.path.exists(os.path.join(directory, f"{name}-{rows}.arrows")))
    for case in cases:
        # The Parquet case writes three sinks (.arrows, .parquet at T and at 1 thread).
        sources, sinks = (["orders"], 3) if case == "parquet-output" else (CASES[case][2].values(), 2)
        need += sinks * max(size[name] for name in sources)
    free = shutil.disk_usage(directory).free
    gib = 1 << 30
    print(f"disk: about {need / gib:.1f} GiB needed in {directory}, {free / gib:.1f} GiB free",
          file=sys.stderr, flush=True)
    if free < 2 * need:
        sys.exit(f"refusing to start: {directory} has {free / gib:.1f} GiB free, below twice the "
                 f"{need / gib:.1f} GiB this run needs (use --dir on a larger disk or fewer --case)")


def dataset(directory, name, rows):
    path = os.path.join(directory, f"{name}-{rows}.arrows")
    if not os.path.exists(path):
        print(f"generating {rows} rows into {path}", file=sys.stderr)
        GENERATORS[name](path, rows)
    return path


def time_krabka(binary, inputs, out, case, threads=None, topology=None, sink=None):
    """Wall time, peak RSS (KiB, from wait4) and CPU time of one run."""
    if topology is None:
        name, sink, _, _, _ = CASES[case]
        topology = os.path.join(EXAMPLES, name)
    args = [binary, "run", topology]
    for source, path in inputs.items():
        args += ["--input", f"{source}={path}"]
    args += ["--sink", f"{sink}={out}", "-q"]
    if threads is not None:
        args += ["--threads", str(threads)]
    start = time.perf_counter()
    child = subprocess.Popen(args)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{' '.join(args)} exited with {child.returncode}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def time_duckdb(inputs, case):
    """DuckDB's read + query, in a child process: this process stays small, so the
    peak RSS of each `run` child (which on Linux includes the forked copy of this
    process before its exec) measures `run` alone. Returns (read+query s, query s,
    result rows, CPU s, the worker's peak RSS in KiB)."""
    worker = [sys.executable, os.path.abspath(__file__), "--duckdb-worker", case, json.dumps(inputs)]
    child = subprocess.Popen(worker, stdout=subprocess.PIPE, text=True)
    stdout = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"the DuckDB worker for {case} failed")
    return tuple(json.loads(stdout)) + (usage.ru_maxrss,)


def duckdb_worker(inputs, case):
    query = CASES[case][3]
    cpu = time.process_time()
    start = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    tables = {}
    for source, path in inputs.items():
        with pa.memory_map(path) as data:
            tables[source] = ipc.open_stream(data).read_all()
        con.register(source, tables[source])
    read_done = time.perf_counter()
    result = con.sql(query).to_arrow_table()
    end = time.perf_counter()
    return end - start, end - read_done, result.num_rows, time.process_time() - cpu


def check_worker(inputs, case, out):
    """Exits non-zero when krabka's sink file `out` and DuckDB's result differ."""
    query = CASES[case][3]
    columns, keys = COMPARE[case]
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    tables = {}
    for source, path in inputs.items():
        with pa.memory_map(path) as data:
            tables[source] = ipc.open_stream(data).read_all()
        con.register(source, tables[source])
    expected = con.sql(query).to_arrow_table()
    with pa.memory_map(out) as data:
        got = ipc.open_stream(data).read_all().select(columns)
    if keys is not None:
        # The last emitted row of every group (the cumulative table's final state).
        con.register("emitted", got.append_column("__row", pa.array(np.arange(got.num_rows))))
        key_list = ", ".join(f'"{k}"' for k in keys)
        cols = ", ".join(f'"{c}"' for c in columns)
        got = con.sql(f"SELECT {cols} FROM emitted QUALIFY row_number() OVER "
                      f"(PARTITION BY {key_list} ORDER BY __row DESC) = 1").to_arrow_table()
    got = got.rename_columns(expected.column_names)
    order = [(c, "ascending") for c in expected.column_names]
    got = got.cast(expected.schema).sort_by(order)
    expected = expected.sort_by(order)
    if not got.equals(expected):
        sys.exit(f"{case}: krabka's result ({got.num_rows} rows) differs from DuckDB's "
                 f"({expected.num_rows} rows)")
    print(f"{case}: krabka's result equals DuckDB's ({expected.num_rows} rows)", flush=True)


def same_bytes(a, b, what):
    if not filecmp.cmp(a, b, shallow=False):
        sys.exit(f"{what}: the --threads sink file differs from the --threads 1 one ({a} vs {b})")
    print(f"{what}: sink files byte-identical across --threads ({os.path.getsize(a)} bytes)", flush=True)


def best(runs):
    """(best wall time, max peak RSS KiB, best CPU time) of timed runs."""
    return min(r[0] for r in runs), max(r[1] for r in runs), min(r[2] for r in runs)


def run_case(args, case, threads_label):
    _, _, sources, _, target = CASES[case]
    inputs = {source: dataset(args.dir, name, args.rows) for source, name in sources.items()}
    out = os.path.join(args.dir, "run-bench-sink.arrows")
    out_one = os.path.join(args.dir, "run-bench-sink-1.arrows")
    # Alternate the sides: on a shared machine the load changes from one
    # phase to the next, and a ratio of two phases mostly measures that change.
    runs, ones, duck = [], [], []
    for _ in range(args.repeat):
        runs.append(time_krabka(args.binary, inputs, out, case, args.threads))
        ones.append(time_krabka(args.binary, inputs, out_one, case, 1))
        duck.append(time_duckdb(inputs, case))
    krabka, rss, krabka_cpu = best(runs)
    one, rss_one, one_cpu = best(ones)
    duck_total = min(d[0] for d in duck)
    duck_query = min(d[1] for d in duck)
    duck_cpu = min(d[3] for d in duck)
    duck_rss = max(d[4] for d in duck)
    print(f"{case}, rows {args.rows}: run --threads {threads_label} {krabka:.3f}s "
          f"(CPU {krabka_cpu:.2f}s, peak RSS {rss / 1024:.0f} MiB) | run --threads 1 {one:.3f}s "
          f"(CPU {one_cpu:.2f}s, peak RSS {rss_one / 1024:.0f} MiB) | DuckDB read+query {duck_total:.3f}s "
          f"(query only {duck_query:.3f}s, CPU {duck_cpu:.2f}s, peak RSS {duck_rss / 1024:.0f} MiB, "
          f"{duck[0][2]} result rows)")
    print(f"{case}: ratios run/DuckDB(read+query) = {krabka / duck_total:.2f}x (target <= {target:g}x), "
          f"run --threads 1/DuckDB = {one / duck_total:.2f}x, run/DuckDB(query only) = "
          f"{krabka / duck_query:.2f}x, --threads {threads_label} speed-up over 1 = {one / krabka:.2f}x; "
          f"CPU run/DuckDB = {krabka_cpu / duck_cpu:.2f}x", flush=True)
    print(f"{case}: peak RSS run --threads {threads_label} {rss / 1024:.0f} MiB, run --threads 1 "
          f"{rss_one / 1024:.0f} MiB, DuckDB {duck_rss / 1024:.0f} MiB (run/DuckDB = "
          f"{rss / max(duck_rss, 1):.2f}x), rows {args.rows}", flush=True)
    same_bytes(out, out_one, case)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--check-worker", case,
                    json.dumps(inputs), out], check=True)


def parquet_case(args, threads_label):
    inputs = {"orders": dataset(args.dir, "orders", args.rows)}
    topology = os.path.join(args.dir, "run-bench-copy.yaml")
    with open(topology, "w") as f:
        f.write(PARQUET_TOPOLOGY)
    ipc_out = os.path.join(args.dir, "run-bench-copy.arrows")
    pq_out = os.path.join(args.dir, "run-bench-copy.parquet")
    pq_one = os.path.join(args.dir, "run-bench-copy-1.parquet")
    ipc, pq, pq1 = [], [], []
    for _ in range(args.repeat):
        ipc.append(time_krabka(args.binary, inputs, ipc_out, None, args.threads, topology, "copy"))
        pq.append(time_krabka(args.binary, inputs, pq_out, None, args.threads, topology, "copy"))
        pq1.append(time_krabka(args.binary, inputs, pq_one, None, 1, topology, "copy"))
    (ti, ri, ci), (tp, rp, cp), (t1, r1, c1) = best(ipc), best(pq), best(pq1)
    print(f"parquet-output, rows {args.rows}: .arrows {ti:.3f}s (CPU {ci:.2f}s, {ri / 1024:.0f} MiB) | "
          f".parquet --threads {threads_label} {tp:.3f}s (CPU {cp:.2f}s, {rp / 1024:.0f} MiB) | "
          f".parquet --threads 1 {t1:.3f}s (CPU {c1:.2f}s, {r1 / 1024:.0f} MiB); sizes "
          f"{os.path.getsize(ipc_out)} vs {os.path.getsize(pq_out)} bytes")
    print(f"parquet-output: ratio Parquet/IPC time = {tp / ti:.2f}x (target <= {PARQUET_TARGET:g}x), "
          f"at --threads 1 {t1 / ti:.2f}x; CPU {cp / ci:.2f}x", flush=True)
    same_bytes(pq_out, pq_one, "parquet-output")
    # Read back by two other readers: the same rows as the IPC sink.
    with pa.memory_map(ipc_out) as data:
        expected = pa.ipc.open_stream(data).read_all()
    import pyarrow.parquet as pq_reader
    got = pq_reader.read_table(pq_out)
    con = duckdb.connect()
    duck = con.execute(f"SELECT count(*), sum(amount), count(DISTINCT \"user\") FROM read_parquet('{pq_out}')").fetchone()
    want = (expected.num_rows, pa.compute.sum(expected["amount"]).as_py(),
            len(pa.compute.unique(expected["user"])))
    if tuple(duck) != want or got.num_rows != expected.num_rows or \
            not got.select(["user", "amount"]).equals(expected.select(["user", "amount"])):
        sys.exit(f"parquet-output: the Parquet file does not read back as the IPC sink ({duck} vs {want})")
    print(f"parquet-output: DuckDB and pyarrow read the Parquet file back as the IPC sink "
          f"({expected.num_rows} rows)", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--rows", type=int, default=10_000_000,
                        help="rows per dataset (10,000,000 by default; 100000000 for the large case)")
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="run's --threads (default: run's own default, the available cores)")
    parser.add_argument("--case", choices=sorted(CASES) + ["parquet-output"], action="append")
    args = parser.parse_args()
    label = str(args.threads) if args.threads else f"default ({os.cpu_count()} cores)"
    cases = args.case or list(CASES) + ["parquet-output"]
    os.makedirs(args.dir, exist_ok=True)
    check_disk(args.dir, args.rows, cases)
    for case in cases:
        if case == "parquet-output":
            parquet_case(args, label)
        else:
            run_case(args, case, label)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--duckdb-worker":
        print(json.dumps(duckdb_worker(json.loads(sys.argv[3]), sys.argv[2])))
    elif len(sys.argv) == 5 and sys.argv[1] == "--check-worker":
        check_worker(json.loads(sys.argv[3]), sys.argv[2], sys.argv[4])
    else:
        main()
