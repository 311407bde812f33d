#!/usr/bin/env python3
"""Benchmark: time to the first record of `tail -n 1` against kcat (issue 22).

Starts the embedded cluster (`krabka-streams dev-cluster`, the librdkafka mock) with
topic t1, writes one record into it with kcat, then runs, alternating, K times each:
  krabka-streams -b B tail t1 -n 1 --value-format string --format ndjson
  kcat -b B -C -t t1 -c 1 -e
and measures for each run the time from process start to its first line of output
(the target) and to its exit. Both must print the record written (a run printing
anything else fails the benchmark). Prints the medians and the ratio
krabka / kcat (a benchmark, not a timed test; the target is <= 1.0x), plus each
side's CPU time (user + system, from wait4), which the machine's load moves less.

usage: first_record_vs_kcat.py BINARY [--kcat PATH] [--repeat K]
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

VALUE = "first-record"


def timed(cmd):
    """(seconds to the first stdout line, seconds to exit, CPU seconds, first line)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline()
    first = time.monotonic() - start
    p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    end = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}")
    return first, end, usage.ru_utime + usage.ru_stime, line.decode().strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--kcat", default="/usr/bin/kcat")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()

    cluster = subprocess.Popen(
        [args.binary, "dev-cluster", "--port", "0", "--topic", "t1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = cluster.stdout.readline().decode().strip()
        if not first.startswith("BOOTSTRAP="):
            sys.exit(f"dev-cluster printed {first!r}, not BOOTSTRAP=…")
        bootstrap = first.split("=", 1)[1]
        subprocess.run(
            [args.kcat, "-b", bootstrap, "-P", "-t", "t1", "-p", "0"],
            input=(VALUE + "\n").encode(),
            check=True,
        )
        krabka = [args.binary, "-b", bootstrap, "tail", "t1", "-n", "1",
                  "--value-format", "string", "--format", "ndjson"]
        kcat = [args.kcat, "-b", bootstrap, "-C", "-t", "t1", "-c", "1", "-e"]
        runs = {"krabka": [], "kcat": []}
        for _ in range(args.repeat):
            for name, cmd in (("krabka", krabka), ("kcat", kcat)):
                first_s, end_s, cpu_s, line = timed(cmd)
                if VALUE not in line:
                    sys.exit(f"{name} printed {line!r}, not the record written")
                runs[name].append((first_s, end_s, cpu_s))
        med = {
            name: [statistics.median(r[i] for r in rs) for i in range(3)]
            for name, rs in runs.items()
        }
        for name, (first_s, end_s, cpu_s) in med.items():
            print(f"{name:>6}: first line {first_s * 1000:7.1f} ms, exit {end_s * 1000:7.1f} ms, "
                  f"CPU {cpu_s * 1000:6.1f} ms (medians of {args.repeat})")
        print(f"ratio krabka / kcat, first line: {med['krabka'][0] / med['kcat'][0]:.2f}x "
              f"(target <= 1.0x); exit: {med['krabka'][1] / med['kcat'][1]:.2f}x; "
              f"CPU: {med['krabka'][2] / max(med['kcat'][2], 1e-6):.2f}x")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        cluster.send_signal(signal.SIGINT)
        try:
            cluster.wait(10)
        except subprocess.TimeoutExpired:
            cluster.kill()


if __name__ == "__main__":
    main()
