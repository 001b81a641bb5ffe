#!/usr/bin/env python3
"""Runs tests/gpu/native_commands (built for the CUDA backend) under
`syclgraph run` in each of its modes and checks syclgraph's outputs against
what the program measured itself (#42 items 1, 3 and 4):

- timed:       every native command is a `native` row, timed `ok`, whose
               duration_ns equals its SYCL event's command_end - command_start
               (the program's `times` lines) to the nanosecond;
- plain:       the same commands on a queue made without enable_profiling
               are timed too (syclgraph turns profiling on);
- graph,
  graph-plain: a SYCL graph holding a native node (memcpy -> native ->
               memset), finalised with and without enable_profiling: its
               three members and two edges, its replay rows, no `lost:` line;
               with enable_profiling the replay rows equal the program's own;
- violation:   a native command that depends_on a long native command of
               another queue: when the program's own times show it started
               before that one ended, violations.csv has the pair with the
               same overlap (to 1 us) and the summary a `violations:` line;
               a memset with the same dependency that waited has no row;
- host-task:   a host task taking an interop_handle stays a host task.

Usage: native_check.py PROGRAM SYCLGRAPH OUTDIR
Prints one line per check (`ok:` or `FAIL:`) with the figures, and exits 1
when any check failed. Standard library only.
"""

import csv
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "native_commands.cpp")
FILE = "native_commands.cpp"
COUNT = 20
REPLAYS = 3

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def tag_lines():
    tags = {}
    with open(SOURCE) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"// @node (\w+)\s*$", line)
            if m:
                tags[m.group(1)] = str(number)
    return tags


def run(program, syclgraph, outdir, mode, *args):
    out = os.path.join(outdir, mode)
    cmd = [syclgraph, "run", "-q", "-o", out, "--", program, mode, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"{mode}: exit {done.returncode}")
    if done.stderr.strip():
        print(f"info: {mode}: stderr: {done.stderr.strip()[-400:]}", flush=True)
    return out, done.stdout


def times(stdout, word="times"):
    """`times <label> <i> <start> <end>` -> {(label, i): (start, end)}."""
    found = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] == word:
            found[(parts[1], int(parts[2]))] = (int(parts[3]), int(parts[4]))
    return found


def pairs(stdout):
    found = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "pair":
            found[int(parts[2])] = int(parts[3])
    return found


def rows(out, name="kernels.csv"):
    with open(os.path.join(out, name), newline="") as f:
        return list(csv.DictReader(f))


def rows_at(all_rows, line):
    at = [r for r in all_rows if r["source_file"].endswith(FILE) and r["source_line"] == line]
    return sorted(at, key=lambda r: int(r["instance"]))


def summary(out):
    with open(os.path.join(out, "summary.txt")) as f:
        return f.read()


def dot(out):
    """graph.dot: {node id: attributes}, [(source, target, attributes)]."""
    nodes, edges = {}, []
    attr = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
    with open(os.path.join(out, "graph.dot")) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"^(n\d+) -> (n\d+) \[(.*)\]$", line)
            if m:
                edges.append((m.group(1), m.group(2), dict(attr.findall(m.group(3)))))
                continue
            m = re.match(r"^(n\d+)\[(.*)\]$", line)
            if m:
                nodes[m.group(1)] = dict(attr.findall(m.group(2)))
    return nodes, edges


def check_timed(program, syclgraph, outdir, tags, mode):
    out, stdout = run(program, syclgraph, outdir, mode, "--count", str(COUNT))
    own, cuda = times(stdout), pairs(stdout)
    native = rows_at(rows(out), tags["native_timed"])
    check(len(native) == COUNT, f"{mode}: {len(native)} rows at the native command's line (want {COUNT})")
    check(all(r["kind"] == "native" and r["name"] == "native command" for r in native),
          f"{mode}: every row kind native, named native command")
    timed = [r for r in native if r["timing"] == "ok"]
    check(len(timed) == len(native), f"{mode}: {len(timed)} of {len(native)} rows timing=ok")
    worst_event, worst_pair = 0, 0
    for r in timed:
        i = int(r["instance"]) - 1
        duration = int(r["duration_ns"])
        if ("native", i) in own:
            start, end = own[("native", i)]
            worst_event = max(worst_event, abs(duration - (end - start)))
        if i in cuda:
            worst_pair = max(worst_pair, abs(duration - cuda[i]))
    if mode == "timed":
        check(len(own) == COUNT and len(timed) == COUNT and worst_event == 0,
              f"{mode}: duration_ns - the SYCL event's own (end - start): largest difference {worst_event} ns over {len(own)} commands")
    durations = sorted(int(r["duration_ns"]) for r in timed)
    if durations:
        print(f"info: {mode}: native durations {durations[0]}..{durations[-1]} ns; "
              f"largest |duration_ns - cudaEvent pair| {worst_pair} ns", flush=True)
    text = summary(out)
    check("native" in text and "native commands:" not in text,
          f"{mode}: the summary's table has the native commands, no refusal")


def check_graph(program, syclgraph, outdir, tags, mode):
    out, stdout = run(program, syclgraph, outdir, mode, "--replays", str(REPLAYS))
    nodes, edges = dot(out)
    replay = [(n, a) for n, a in nodes.items() if a.get("kind") == "graph"]
    if not check(len(replay) == 1, f"{mode}: one replay node ({len(replay)})"):
        return
    rid, rattrs = replay[0]
    members = rattrs.get("members", "").split()
    kinds = {m: nodes.get(m, {}).get("kind") for m in members}
    lines = {m: nodes.get(m, {}).get("line") for m in members}
    want = {tags["graph_memcpy"]: "memcpy", tags["graph_native"]: "native",
            tags["graph_memset"]: "memset"}
    got = {lines[m]: kinds[m] for m in members}
    check(got == want, f"{mode}: members {got} (want {want})")
    by_line = {lines[m]: m for m in members}
    inner = {(s, t) for s, t, a in edges if a.get("kind") == "sycl_graph"}
    chain = {(by_line.get(tags["graph_memcpy"]), by_line.get(tags["graph_native"])),
             (by_line.get(tags["graph_native"]), by_line.get(tags["graph_memset"]))}
    check(chain <= inner, f"{mode}: edges memcpy -> native -> memset inside the graph ({sorted(inner)})")
    outside = [n for n, a in nodes.items()
               if a.get("line") == tags["graph_native"] and n not in members]
    check(not outside, f"{mode}: no native node outside the graph ({outside})")
    replay_rows = [r for r in rows(out) if r["kind"] == "graph"]
    check(len(replay_rows) == REPLAYS, f"{mode}: {len(replay_rows)} replay rows (want {REPLAYS})")
    text = summary(out)
    lost = [l for l in text.splitlines() if l.startswith("lost:")]
    check(not lost, f"{mode}: no lost: line ({lost})")
    if mode == "graph":
        own = times(stdout)
        diffs = []
        for r in replay_rows:
            i = int(r["instance"]) - 1
            if r["timing"] == "ok" and ("replay", i) in own:
                start, end = own[("replay", i)]
                diffs.append(abs(int(r["duration_ns"]) - (end - start)))
        check(len(diffs) == REPLAYS and max(diffs) == 0,
              f"{mode}: replay duration_ns - the replay event's own: {diffs}")
    inside = {nodes[m].get("inside_replay") for m in members}
    print(f"info: {mode}: members' inside_replay: {sorted(x or '' for x in inside)}", flush=True)


def check_violation(program, syclgraph, outdir, tags):
    out, stdout = run(program, syclgraph, outdir, "violation")
    own = times(stdout)
    long_start, long_end = own[("long", 0)]
    dep_start, _ = own[("native_dep", 0)]
    memset_start, _ = own[("memset_dep", 0)]
    print(f"info: violation: the program's own times: long native {long_start}..{long_end}, "
          f"native_dep starts {long_end - dep_start} ns before it ends, "
          f"memset_dep starts {memset_start - long_end} ns after it ends", flush=True)
    found = rows(out, "violations.csv")
    def pair(before, after):
        return [r for r in found if r["before_source"].endswith(f"{FILE}:{tags[before]}")
                and r["after_source"].endswith(f"{FILE}:{tags[after]}")]
    native_rows = pair("long_native", "native_dep")
    if dep_start < long_end:
        ok = len(native_rows) == 1 and abs(int(native_rows[0]["overlap_ns"]) - (long_end - dep_start)) <= 1000
        check(ok, f"violation: the native command that started {long_end - dep_start} ns early is in violations.csv "
                  f"({[r['overlap_ns'] for r in native_rows]})")
        check("violations:" in summary(out), "violation: the summary's violations: line")
    else:
        check(not native_rows, "violation: the native command waited this time: no row")
    memset_rows = pair("long_native", "memset_dep")
    check(bool(memset_rows) == (memset_start < long_end),
          f"violation: memset_dep rows {len(memset_rows)} (it started {'before' if memset_start < long_end else 'after'} the end)")
    for line in summary(out).splitlines():
        if line.startswith("violations:"):
            print("info: " + line, flush=True)


def check_host_task(program, syclgraph, outdir, tags):
    out, stdout = run(program, syclgraph, outdir, "host-task")
    nodes, _ = dot(out)
    at = [a for a in nodes.values() if a.get("line") == tags["interop_host_task"]]
    check(len(at) == 1 and at[0].get("kind") == "host_task",
          f"host-task: the interop host task is a host_task node ({[a.get('kind') for a in at]})")
    check(all(r["kind"] != "native" for r in rows(out)), "host-task: no native rows")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    program, syclgraph, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    tags = tag_lines()
    for mode in ["timed", "plain"]:
        check_timed(program, syclgraph, outdir, tags, mode)
    for mode in ["graph", "graph-plain"]:
        check_graph(program, syclgraph, outdir, tags, mode)
    check_violation(program, syclgraph, outdir, tags)
    check_host_task(program, syclgraph, outdir, tags)
    print(f"native_check: {'FAILED ' + str(len(failures)) if failures else 'passed'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
