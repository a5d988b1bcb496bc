#!/usr/bin/env python3
"""What txq holds for the metadata of many small files: the peak memory of `select 1` (which opens the
corpus: finds every file, learns its tables, reads no row) and of `select count(*) from claude.assistant`
over homes of N tiny Claude Code sessions, cold (--no-cache: every file read by the inference pass),
on the first run that fills the inference cache, and with it warm (no file read); and the process's
own peak over no file. Writes the section "## Many small files" of
benchmarks/RESULTS.md.

Usage: benchmarks/many_files.py --txq [NAME=]BIN [--txq ...] --dir DIR --files N [N ...] [--results FILE]
       [--command TEXT]

Each home is DIR/<N>/.claude/projects/<project>/<session>.jsonl, 1000 sessions a project, each
session two lines (a user prompt and an assistant answer with its usage), written once and reused.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import measured, replace_section  # noqa: E402

PER_PROJECT = 1000


def session(n):
    sid = str(uuid.UUID(int=n + 1))
    user = ('{"type":"user","uuid":"u-%d","sessionId":"%s","timestamp":"2026-11-30T09:00:00.000Z",'
            '"message":{"role":"user","content":"hello"}}\n') % (n, sid)
    answer = ('{"type":"assistant","uuid":"a-%d","parentUuid":"u-%d","sessionId":"%s",'
              '"timestamp":"2026-11-30T09:00:01.000Z","message":{"id":"msg_%d","model":"claude-sonnet-4-6",'
              '"role":"assistant","content":[{"type":"text","text":"hi"}],'
              '"usage":{"input_tokens":3,"output_tokens":2}}}\n') % (n, n, sid, n)
    return sid, user + answer


def write_home(root, files):
    """Writes the home once (a file `done` says it is whole); returns its .claude folder."""
    home = os.path.join(root, str(files), ".claude")
    done = os.path.join(root, str(files), "done")
    if os.path.exists(done):
        return home
    for n in range(files):
        project = os.path.join(home, "projects", f"-home-me-project-{n // PER_PROJECT:05d}")
        if n % PER_PROJECT == 0:
            os.makedirs(project, exist_ok=True)
        sid, text = session(n)
        with open(os.path.join(project, sid + ".jsonl"), "w") as f:
            f.write(text)
    open(done, "w").close()
    return home


def measure(txq, root, counts):
    """The baseline and one row per count of files for the binary `txq`."""
    # The process's own peak, over no file at all: what every row holds before its files.
    with tempfile.TemporaryDirectory() as empty:
        _, base_mb, _ = measured([txq, "-q", "--no-cache", "--format", "csv", "-e", "select 1", empty])
    print(f"{txq}: select 1 over no file {base_mb:.0f} MB", flush=True)
    rows = []
    for files in counts:
        home = write_home(root, files)
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TXQ_CACHE_DIR"] = cache
            one = [txq, "-q", "--format", "csv", "-e", "select 1", home]
            count = [txq, "-q", "--format", "csv", "-e", "select count(*) from claude.assistant", home]
            cold_s, cold_mb, _ = measured([txq, "-q", "--no-cache", "--format", "csv", "-e", "select 1", home])
            fill_s, fill_mb, _ = measured(one)  # fills the cache
            warm_s, warm_mb, _ = measured(one)
            count_s, count_mb, out = measured(count)
            counted = int(out.decode().split()[-1])
            if counted != files:
                sys.exit(f"{files} files: counted {counted} answers")
        rows.append((files, cold_s, cold_mb, fill_s, fill_mb, warm_s, warm_mb, count_s, count_mb))
        print(f"{files} files: select 1 cold {cold_s:.2f}s {cold_mb:.0f} MB, filling the cache {fill_s:.2f}s "
              f"{fill_mb:.0f} MB, warm {warm_s:.2f}s {warm_mb:.0f} MB; count {count_s:.2f}s {count_mb:.0f} MB",
              flush=True)
    return base_mb, rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--txq", required=True, action="append",
                   help="the binary, or NAME=BIN (a build's name, e.g. its profile); once for each build")
    p.add_argument("--dir", required=True)
    p.add_argument("--files", type=int, nargs="+", required=True)
    p.add_argument("--results")
    p.add_argument("--command", default="")
    args = p.parse_args()
    builds = [b.split("=", 1) if "=" in b else (b, b) for b in args.txq]
    measured_builds = [(name, *measure(txq, args.dir, args.files)) for name, txq in builds]
    if args.results:
        lines = ["## Many small files", "",
                 f"Measured with `{args.command or 'python3 benchmarks/many_files.py'}`: homes of N Claude "
                 "Code sessions of two lines each (1000 a project folder); peak RSS of the whole process. "
                 "\"baseline\" is the process alone: `select 1` over an empty folder.", "",
                 "| build | baseline | files | `select 1`, --no-cache | peak | `select 1`, filling the cache | peak | "
                 "`select 1`, cache warm | peak | `count(*)` of assistant, cache warm | peak | "
                 "largest peak over the baseline, per file |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, base_mb, rows in measured_builds:
            for files, cold_s, cold_mb, fill_s, fill_mb, warm_s, warm_mb, count_s, count_mb in rows:
                per_file = (max(cold_mb, fill_mb, warm_mb, count_mb) - base_mb) * 1024 * 1024 / files
                lines.append(f"| {name} | {base_mb:.0f} MB | {files:,} | {cold_s:.2f} s | {cold_mb:.0f} MB | "
                             f"{fill_s:.2f} s | {fill_mb:.0f} MB | {warm_s:.2f} s | {warm_mb:.0f} MB | "
                             f"{count_s:.2f} s | {count_mb:.0f} MB | {per_file:.0f} B |")
        lines += ["", "Each peak is the whole process's (its baseline included). The goal is under 150 MB "
                  "at 1,000,000 files."]
        replace_section(args.results, "## Many small files", lines)


if __name__ == "__main__":
    main()
