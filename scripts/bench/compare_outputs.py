#!/usr/bin/env python3
"""Byte-identity of two builds' outputs: `tail`, `run` and `barrier` on the benchmark data.

Runs the same commands with binary OLD and binary NEW and fails (exit 1) naming the first output
that differs. Used to show that a refactoring changed no output (issue 17: the move of the use
cases into src/ops): OLD is a build of the commit before, NEW one of after.

  * run (offline): the benchmark topologies of run_offline_vs_duckdb.py (filter + group-by,
    tumbling window, join, the Parquet copy) over its generated Arrow IPC data, `--rows N` rows,
    sinks compared byte for byte (`--threads 1` and the default);
  * tail: the generated orders produced (by NEW, Avro through the registry, `--partition keep`:
    all in partition 0, since how records of several partitions interleave depends on timing,
    not on the build) to the embedded cluster of
    `NEW dev-cluster`, then `tail -e` by each binary to Arrow IPC and Parquet (compared as
    tables: schema, metadata and rows in order; where fetched batches end is timing) and to
    NDJSON and the table (bytes);
  * barrier: the golden barrier records of tests/vectors/data/barrier.json produced to
    `__barrier_state`, then `barrier list --all` (table, JSON, and as data to Arrow IPC stream and file and
    Parquet files) and `barrier show` of each cut (text and JSON).

Needs pyarrow, duckdb, numpy and confluent-kafka (the test venv has them).

usage: compare_outputs.py OLD NEW [--rows N] [--dir DIR] [--port P]
"""

import argparse
import filecmp
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run_offline_vs_duckdb as bench  # noqa: E402


def fail(what):
    sys.exit(f"compare_outputs: DIFFERENT: {what}")


def files_of(old, new, directory, name, write):
    """The files `write(binary, path)` makes with OLD and with NEW: (old's path, new's path)."""
    stem, ext = name.rsplit(".", 1)
    paths = []
    for label, binary in (("old", old), ("new", new)):
        path = os.path.join(directory, f"compare-{stem}-{label}.{ext}")
        write(binary, path)
        paths.append(path)
    return paths


def same_files(a, b, what):
    if not filecmp.cmp(a, b, shallow=False):
        fail(f"{what} ({a} vs {b})")
    print(f"same: {what} ({os.path.getsize(a)} bytes)", flush=True)


def same_rows(a, b, ext, what):
    """Same schema (metadata included) and the same rows in the same order. Not bytes: where
    `tail`'s record batches (and so IPC messages and Parquet pages) end follows what each fetch
    returned, which is timing, not the build."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def load(path):
        if ext == "parquet":
            return pq.read_table(path)
        with pa.memory_map(path) as data:
            return pa.ipc.open_stream(data).read_all()
    left, right = load(a), load(b)
    if not left.schema.equals(right.schema, check_metadata=True) or not left.equals(right):
        fail(f"{what} ({a} vs {b})")
    print(f"same: {what} ({right.num_rows} rows, schema and metadata equal)", flush=True)


def same_stdout(old, new, args, what):
    outs = []
    for binary in (old, new):
        p = subprocess.run([binary] + args, capture_output=True)
        if p.returncode != 0:
            sys.exit(f"{binary} {' '.join(args)} exited {p.returncode}: {p.stderr.decode()[-400:]}")
        outs.append(p.stdout)
    if outs[0] != outs[1]:
        fail(f"{what}: stdout of {' '.join(args)}")
    print(f"same: {what} ({len(outs[0])} bytes of stdout)", flush=True)
    return outs[1]


def compare_run(old, new, rows, directory):
    for case, (name, sink, sources, _, _) in bench.CASES.items():
        inputs = {source: bench.dataset(directory, data, rows) for source, data in sources.items()}
        # OLD may predate --threads: its one run is compared with NEW's default and one thread.
        reference = os.path.join(directory, f"compare-{case}-old.arrows")
        bench.time_krabka(old, inputs, reference, case)
        for threads in (None, 1):
            out = os.path.join(directory, f"compare-{case}-new.arrows")
            bench.time_krabka(new, inputs, out, case, threads)
            same_files(reference, out, f"run {name}, NEW at --threads {threads or 'default'}")
    inputs = {"orders": bench.dataset(directory, "orders", rows)}
    topology = os.path.join(directory, "compare-copy.yaml")
    with open(topology, "w") as f:
        f.write(bench.PARQUET_TOPOLOGY)
    outs = files_of(old, new, directory, "copy.parquet",
                    lambda binary, out: bench.time_krabka(binary, inputs, out, None, None,
                                                          topology, "copy"))
    same_files(*outs, "run copy to Parquet")


def wait_port(port, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"dev-cluster did not listen on {port}")


def registry_of(cluster):
    for line in cluster.stdout:
        if line.startswith("REGISTRY="):
            return line.strip().split("=", 1)[1]
    sys.exit("dev-cluster printed no REGISTRY= line")


def produce_barrier_records(bootstrap):
    from confluent_kafka import Producer
    with open(os.path.join(ROOT, "tests/vectors/data/barrier.json")) as f:
        vectors = json.load(f)
    producer = Producer({"bootstrap.servers": bootstrap})
    sent = 0
    for v in vectors:
        expected = v.get("expected", {})
        if v.get("kind") == "barrier.record" and "key_hex" in expected and "value_hex" in expected:
            producer.produce("__barrier_state", key=bytes.fromhex(expected["key_hex"]),
                             value=bytes.fromhex(expected["value_hex"]), partition=0)
            sent += 1
    if producer.flush(30) != 0:
        sys.exit("barrier records were not delivered")
    return sent


def compare_broker(old, new, rows, directory, port):
    cluster = subprocess.Popen([new, "dev-cluster", "--port", str(port), "--topic", "orders:4",
                                "--topic", "__barrier_state:1"],
                               stdout=subprocess.PIPE, text=True)
    try:
        registry = registry_of(cluster)
        wait_port(port)
        common = ["-b", f"127.0.0.1:{port}", "--registry", registry]
        orders = bench.dataset(directory, "orders", rows)
        subprocess.run([new] + common + ["-q", "produce", "orders", "--input", orders,
                                         "--value-format", "avro", "--partition", "keep"],
                       check=True)
        tail = common + ["-q", "tail", "orders", "-e", "--value-format", "avro"]
        for ext in ("arrows", "parquet"):
            outs = files_of(old, new, directory, f"tail.{ext}", lambda binary, out: subprocess.run(
                [binary] + tail + ["--out", out], check=True))
            same_rows(*outs, ext, f"tail -e to .{ext}")
        same_stdout(old, new, tail + ["--format", "ndjson"], "tail -e --format ndjson")
        same_stdout(old, new, tail + ["--format", "table", "-n", "50"], "tail -e --format table")
        print(f"barrier: {produce_barrier_records(f'127.0.0.1:{port}')} golden records produced",
              flush=True)
        base = ["-b", f"127.0.0.1:{port}", "barrier"]
        same_stdout(old, new, base + ["list", "--all"], "barrier list --all")
        listed = same_stdout(old, new, ["--output", "json"] + base + ["list", "--all"],
                             "barrier list --all --output json")
        for fmt, ext in (("arrow", "arrows"), ("arrow-file", "arrow"), ("parquet", "parquet")):
            outs = files_of(old, new, directory, f"cuts.{ext}", lambda binary, out: subprocess.run(
                [binary] + base + ["list", "--all", "--format", fmt, "--out", out], check=True))
            same_files(*outs, f"barrier list --all --format {fmt} --out FILE")
        cuts = json.loads(listed)["data"]["cuts"]
        if not cuts:
            sys.exit("barrier list found no cuts in the golden records")
        for cut in cuts:
            name, epoch = cut["group"], str(cut["epoch"])
            for output in ([], ["--output", "json"]):
                same_stdout(old, new, output + base + ["show", "--group", name, "--epoch", epoch],
                            f"barrier show --group {name} --epoch {epoch} {' '.join(output)}")
        print(f"barrier: {len(cuts)} cuts shown", flush=True)
    finally:
        cluster.terminate()
        cluster.wait(10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--port", type=int, default=19392)
    args = parser.parse_args()
    # The embedded cluster (librdkafka's mock) keeps about 5 MiB per partition: 100 000 orders fit.
    compare_broker(args.old, args.new, min(args.rows, 100_000), args.dir, args.port)
    compare_run(args.old, args.new, args.rows, args.dir)
    print("compare_outputs: every output identical", flush=True)


if __name__ == "__main__":
    main()
