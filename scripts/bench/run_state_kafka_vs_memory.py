#!/usr/bin/env python3
"""Benchmark: steady-state online throughput of a group-by over many groups with the
Kafka state store against state in memory only (issue 19, target >= 0.7x).

Starts Tansu (in-memory storage); per store, produces G orders (one per user, so the
state holds G groups), then R more orders for users drawn uniformly from the G (each of the
runner's rounds touches a small share of the groups), all keyed by user over 4
partitions. Then, for each store (`state_store: memory`, `state_store: kafka`), runs
`krabka-streams run` as a fresh consumer group over the same input
(`sum(amount)` per user to a sink topic) and samples the group's committed offsets:
the load phase (G records, produced first) ends when they reach its end; the steady
phase is timed from the first update sent until the updates are committed. Each
store gets its own input topic. Prints both rates, the steady-state ratio kafka / memory, and the
state topic's records by kind (full / delta / chunk / tombstone) with their bytes,
read with confluent-kafka. A benchmark, not a timed test: the machine's load moves
the figures (printed with the load average).

usage: run_state_kafka_vs_memory.py BINARY [--tansu PATH] [--groups G] [--updates R]
(run it with the test venv's python: it needs confluent-kafka)
"""

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 4


def start_tansu(binary):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    child = subprocess.Popen(
        [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
         "--storage-engine", "memory://tansu/"],
        env={**os.environ, "RUST_LOG": "warn"}, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return child, f"127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                sys.exit("Tansu did not start")
            time.sleep(0.05)


def create(bootstrap, topic, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


def produce(bootstrap, topic, users, amounts):
    # One record per batch: Tansu's high watermark is right only then.
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1,
                  "queue.buffering.max.messages": 200000})
    for user, amount in zip(users, amounts):
        value = json.dumps({"user": user, "amount": amount})
        while True:
            try:
                p.produce(topic, key=user, value=value)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    if p.flush(300) != 0:
        sys.exit("produce did not finish")


def ends(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-ends"})
    out = [c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
           for p in range(PARTITIONS)]
    c.close()
    return out


def committed(consumer, topic):
    tps = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
    return [max(tp.offset, 0) for tp in tps]


def topology(path, group, store, topic, sink):
    with open(path, "w") as f:
        f.write(f"""version: 1
settings:
  consumer_group: {group}
  state_store: {store}
nodes:
  - source: orders
    topics: [{topic}]
    value: json
  - group_by: per-user
    parent: orders
    keys: [user]
    aggregates: [sum(amount) AS total]
  - sink: out
    parent: per-user
    topic: {sink}
    value: json
""")


def wait_committed(watcher, child, store, topic, targets, start):
    while True:
        if child.poll() is not None:
            sys.exit(f"run ({store}) exited {child.returncode}: {child.stderr.read().decode()}")
        if all(d >= e for d, e in zip(committed(watcher, topic), targets)):
            return time.monotonic()
        if time.monotonic() - start > 3600:
            sys.exit(f"run ({store}) did not finish within an hour")
        time.sleep(0.1)


def run_one(binary, bootstrap, store, groups, updates, workdir):
    """(group, load seconds, steady seconds): the load is one record per group,
    produced before the runner starts; the updates are produced once the runner
    has committed the load, and timed from their first send to their commit."""
    group = f"bench-{store}-{os.getpid()}-{time.monotonic_ns()}"
    topic, sink = f"{group}-in", f"{group}-out"
    create(bootstrap, topic, PARTITIONS)
    create(bootstrap, sink, 1)
    rng = random.Random(19)
    users = [f"user-{u:07d}" for u in range(groups)]
    produce(bootstrap, topic, users, [u % 97 + 1 for u in range(groups)])
    load_ends = ends(bootstrap, topic)
    path = os.path.join(workdir, f"{store}.yaml")
    topology(path, group, store, topic, sink)
    watcher = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                        "enable.auto.commit": False})
    start = time.monotonic()
    child = subprocess.Popen(
        [binary, "-q", "run", path, "-b", bootstrap, "-X", "session.timeout.ms=6000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        loaded = wait_committed(watcher, child, store, topic, load_ends, start)
        picked = [users[rng.randrange(groups)] for _ in range(updates)]
        began = time.monotonic()
        produce(bootstrap, topic, picked, [rng.randrange(1, 1000) for _ in picked])
        done = wait_committed(watcher, child, store, topic, ends(bootstrap, topic), start)
        return group, loaded - start, done - began
    finally:
        watcher.close()
        child.send_signal(signal.SIGINT)
        try:
            child.wait(120)
        except subprocess.TimeoutExpired:
            child.kill()


def state_topic_summary(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-state-read",
                  "enable.auto.commit": False})
    kinds = {}
    for p in range(PARTITIONS):
        low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
        if high <= low:
            continue
        c.assign([TopicPartition(topic, p, low)])
        last = low - 1
        while last < high - 1:
            m = c.poll(30)
            if m is None:
                sys.exit("reading the state topic timed out")
            if m.error():
                continue
            last = m.offset()
            key = (m.key() or b"").decode()
            kind = ("tombstone" if m.value() is None else "delta" if ".delta-" in key
                    else "chunk" if ".chunk-" in key else "full")
            n, size, largest = kinds.get(kind, (0, 0, 0))
            length = len(m.value() or b"")
            kinds[kind] = (n + 1, size + length, max(largest, length))
    c.close()
    return kinds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--tansu", default=os.environ.get("KRABKA_TANSU_BIN"))
    ap.add_argument("--groups", type=int, default=1_000_000)
    ap.add_argument("--updates", type=int, default=200_000)
    args = ap.parse_args()
    if not args.tansu:
        sys.exit("needs --tansu or KRABKA_TANSU_BIN")
    tansu, bootstrap = start_tansu(args.tansu)
    try:
        print(f"input: {args.groups} groups (one record each), then {args.updates} updates "
              f"for users drawn uniformly, produced while the runner runs")
        rates = {}
        with tempfile.TemporaryDirectory() as workdir:
            for store in ("memory", "kafka"):
                group, load_s, steady_s = run_one(args.binary, bootstrap, store,
                                                  args.groups, args.updates, workdir)
                rates[store] = args.updates / steady_s
                print(f"{store:>6}: load {args.groups / load_s:9.0f} records/s ({load_s:.1f} s), "
                      f"steady {rates[store]:9.0f} records/s ({steady_s:.1f} s)")
                if store == "kafka":
                    for kind, (n, size, largest) in sorted(
                            state_topic_summary(bootstrap, f"{group}-state").items()):
                        print(f"        state topic {kind:>9}: {n:6d} records, {size:12d} bytes "
                              f"(largest {largest})")
        print(f"ratio kafka / memory, steady state: {rates['kafka'] / rates['memory']:.2f}x "
              f"(target >= 0.7x); load average {os.getloadavg()[0]:.1f}")
    finally:
        tansu.send_signal(signal.SIGINT)
        try:
            tansu.wait(10)
        except subprocess.TimeoutExpired:
            tansu.kill()


if __name__ == "__main__":
    main()
