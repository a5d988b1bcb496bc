#!/usr/bin/env python3
"""The same statements on this machine and on a Ballista cluster of one `txq scheduler` and two
`txq executor`s started on this same machine (loopback ports): the time of each, median of
--runs, cache warm. Writes the section "## A cluster on one machine" of benchmarks/RESULTS.md.

Usage: benchmarks/cluster.py --txq BIN --corpus DIR [--runs N] [--results FILE] [--command TEXT]

On one machine a cluster does the work of a local run and more (plans sent to the scheduler,
stages, shuffle files, results over Arrow Flight): the figure says what the cluster costs, not
what it gains with more machines.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import measured, replace_section  # noqa: E402

STATEMENTS = [
    ("events by type (group by)", "select type, count(*) n from rupu.events group by type order by type"),
    ("tool calls joined to results",
     "select c.tool, count(*) n, count(r.error) failed from rupu.tool_call c join rupu.tool_result r "
     "on c.run_id = r.run_id and c.call_id = r.call_id group by c.tool order by c.tool"),
    ("spend by model (calls, call_cost)",
     "select model, count(*) calls, round(sum(cost_usd), 4) usd from calls group by model order by model"),
    ("tool outputs by length (a scan of every line's text)",
     "select error is null as ok, count(*) n, sum(length(output)) chars from rupu.tool_result group by 1 order by 1"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(txq, work):
    port = free_port()
    env = dict(os.environ, RUST_LOG="warn")
    procs = [subprocess.Popen([txq, "scheduler", "--bind-host", "127.0.0.1", "--external-host", "127.0.0.1",
                               "--bind-port", str(port), "-s", "pull-staged", "--min-ready-executors", "2"],
                              env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "scheduler.log"), "w"))]
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    for i in range(2):
        d = os.path.join(work, f"executor-{i}")
        os.makedirs(d, exist_ok=True)
        procs.append(subprocess.Popen(
            [txq, "executor", "--bind-host", "127.0.0.1", "--scheduler-host", "127.0.0.1", "--scheduler-port", str(port),
             "--bind-port", str(free_port()), "--bind-grpc-port", str(free_port()), "--bind-health-port", str(free_port()),
             "--work-dir", d, "--vcores", "1", "--memory-pool-size", "4GB", "-s", "pull-staged"],
            env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "log"), "w")))
    for _ in range(600):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).status == 200:
                return port, procs
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("the cluster is not ready")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--txq", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--results")
    p.add_argument("--command", default="")
    args = p.parse_args()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.corpus) for f in fs)
    files = sum(len(fs) for _, _, fs in os.walk(args.corpus))
    work = tempfile.mkdtemp(prefix="txq-cluster-bench-")
    port, procs = start_cluster(args.txq, work)
    rows = []
    try:
        for name, sql in STATEMENTS:
            local = [args.txq, "-q", "--format", "csv", "-e", sql, args.corpus]
            remote = local[:1] + ["--cluster", f"df://127.0.0.1:{port}"] + local[1:]
            _, _, want = measured(local)  # warms the page cache and the inference cache
            _, _, got = measured(remote)
            if got != want:
                sys.exit(f"{name}: the cluster's answer differs from the local one")
            times = {}
            for label, cmd in (("local", local), ("cluster", remote)):
                runs = [measured(cmd) for _ in range(args.runs)]
                times[label] = (statistics.median(t for t, _, _ in runs), max(m for _, m, _ in runs))
            rows.append((name, times["local"], times["cluster"]))
            print(f"{name}: local {times['local'][0]:.2f}s, cluster {times['cluster'][0]:.2f}s", flush=True)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    if args.results:
        lines = ["## A cluster on one machine", "",
                 f"Measured with `{args.command or 'python3 benchmarks/cluster.py'}`: {files:,} files, "
                 f"{total / 1e9:.2f} GB; one `txq scheduler` and two `txq executor`s (`--vcores 1` each) on "
                 f"this same machine ({os.cpu_count()} cores), pull-staged; median of {args.runs} runs, the "
                 "inference cache warm; every answer equal to the local one. Client peak RSS only (the "
                 "cluster's processes are not counted).", "",
                 "| statement | local | cluster | cluster / local | client peak, local | client peak, cluster |",
                 "|---|---:|---:|---:|---:|---:|"]
        for name, (lt, lm), (ct, cm) in rows:
            lines.append(f"| {name} | {lt:.2f} s | {ct:.2f} s | {ct / lt:.2f}x | {lm:.0f} MB | {cm:.0f} MB |")
        replace_section(args.results, "## A cluster on one machine", lines)


if __name__ == "__main__":
    main()
