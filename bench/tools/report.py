#!/usr/bin/env python3
"""Number crunching for scripts/bench.sh (syclgraph's overhead benchmark).

  report.py objects CALLGRIND_OUT          self Ir per object file, then "total"
  report.py wall RESULTS.tsv               the wall-clock table
  report.py callgrind RUNS.tsv N1 N2 [CMD] the instructions-per-task table

RESULTS.tsv lines: workload, target, tasks, round, config, us_per_task ("nan"
when the run failed). RUNS.tsv lines: config, repeat, N, callgrind out file.

Callgrind files are read directly (valgrind docs, "Callgrind Format
Specification") rather than through callgrind_annotate's text, whose layout
changes between valgrind versions: every cost line is charged to the object
named by the last `ob=` line, except the cost line right after a `calls=`
line, which is the inclusive cost of that call (the callee's own lines count
it already). Names may be compressed as "(id) name", later "(id)". Only the
first event (Ir, the only one callgrind collects by default) is used. The sum
over objects is checked against the file's `summary:`/`totals:` line.
"""
import math
import re
import statistics
import sys
from collections import defaultdict

CONFIGS = ("noxpti", "empty", "syclgraph")
TITLES = {"noxpti": "no XPTI", "empty": "empty sub", "syclgraph": "syclgraph",
          "stopped": "sg stopped", "notiming": "sg no timing"}
# With --stopped: syclgraph started paused and never started.

# The OpenCL CPU runtime's own objects, left out of instruction counts: how
# much they execute depends on how far submission runs ahead of the device.
EXCLUDED = re.compile(r"^(libintelocl|libtbb|libcommon_clang|libhwloc|libtcm)")

# Instructions per task that syclgraph may add on top of the empty subscriber.
CALLGRIND_TARGET = 4000


# syclgraph's collector rewrites graph.dot and summary.csv about once a
# second of wall time (and at exit), in this function. Under callgrind the
# program runs ~50x slower, so this time-driven cost lands on far fewer tasks
# than in a native run; the report shows syclgraph with and without it.
GRAPH_FILES_FN = re.compile(r"Output::write_graph_files$")


def object_costs(path):
    """Returns ({object path: self Ir}, summary Ir or None, inclusive Ir of
    every call to a function matching GRAPH_FILES_FN)."""
    names = {"ob": {}, "fn": {}}
    costs = defaultdict(int)
    current = "???"
    skip_next = False
    callee = None
    callee_fn = None
    graph_files = 0
    summary = None

    def resolve(kind, value):
        value = value.strip()
        if value.startswith("("):
            close = value.index(")")
            key = value[1:close]
            rest = value[close + 1:].strip()
            if rest:
                names[kind][key] = rest
                return rest
            return names[kind].get(key, "???")
        return value

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line or line[0] in "\n#":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                ir = int(parts[1]) if len(parts) >= 2 else 0
                if skip_next:
                    # Inclusive cost of the call announced by `calls=`.
                    skip_next = False
                    if callee and GRAPH_FILES_FN.search(callee):
                        graph_files += ir
                    continue
                costs[current] += ir
                continue
            if line.startswith("ob="):
                current = resolve("ob", line[3:])
            elif line.startswith("cob="):
                resolve("ob", line[4:])  # may define a compressed name used later
            elif line.startswith("fn="):
                resolve("fn", line[3:])
            elif line.startswith("cfn="):
                callee_fn = resolve("fn", line[4:])
            elif line.startswith("calls="):
                skip_next = True
                callee, callee_fn = callee_fn, None
            elif line.startswith(("summary:", "totals:")):
                summary = int(line.split(":", 1)[1].split()[0])
    return costs, summary, graph_files


def checked_costs(path):
    costs, summary, graph_files = object_costs(path)
    total = sum(costs.values())
    if summary is not None and summary != total:
        raise SystemExit(f"report: {path}: per-object sum {total} != summary {summary}")
    return costs, graph_files


def basename(obj):
    return obj.rsplit("/", 1)[-1]


def short(obj):
    """libfoo.so.1.2 -> libfoo.so; executables and ??? unchanged."""
    b = basename(obj)
    return re.sub(r"(\.so)(\.[0-9][0-9.]*)?$", r"\1", b)


def cmd_objects(path):
    costs, graph_files = checked_costs(path)
    for obj, ir in sorted(costs.items(), key=lambda kv: -kv[1]):
        print(f"{ir}\t{obj}")
    print(f"total\t{sum(costs.values())}")
    print(f"graph-file rewrites (inclusive)\t{graph_files}")


def fmt(v, width, digits=2):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-".rjust(width)
    return f"{v:.{digits}f}".rjust(width)


# Wall clock (issue 29 item 3): (numerator, denominator, target or None,
# what the ratio says). The verdict is on the median of the per-round
# ratios: both runs of a round ran minutes apart at most, under the same
# load; the ratio of the medians is shown beside it.
WALL_RATIOS = (
    ("syclgraph", "selftimed", 1.05,
     "(a) syclgraph, every output on / the program timing its own commands"),
    ("notiming", "empty", 1.05,
     "(b) syclgraph with SYCLGRAPH_DEVICE_TIMING=0 / empty subscriber"),
    ("aa", "empty", None, "A/A: empty subscriber / itself, the noise floor"),
    ("selftimed", "empty", None, "the runtime's cost of timing every command"),
    ("syclgraph", "empty", None, "syclgraph / empty subscriber"),
    ("stopped", "empty", None, "syclgraph started paused, never started / empty"),
    ("empty", "noxpti", None, "the runtime's own tracing: empty / no XPTI"),
)
WALL_TITLES = dict(TITLES, aa="empty (A/A)", selftimed="self-timed",
                   notiming="sg no timing", stopped="sg stopped")


def quartiles(values):
    """(first quartile, median, third quartile) of a non-empty list."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def cmd_wall(path):
    """Prints the wall-clock tables; returns 1 when a target is missed or a
    run failed."""
    rows = defaultdict(lambda: defaultdict(dict))  # workload -> config -> round -> µs
    tasks = {}
    with open(path) as f:
        for line in f:
            workload, n, rnd, config, value = line.rstrip("\n").split("\t")
            tasks.setdefault(workload, n)
            rows[workload][config][int(rnd)] = float(value)

    failures = 0
    for w, by_config in rows.items():
        rounds = max(len(v) for v in by_config.values())
        print(f"{w}: {tasks[w]} tasks, {rounds} interleaved rounds, wall time per task in µs")
        header = f"  {'configuration':<14} {'median':>8} {'IQR':>15} {'min..max':>15} {'failed':>6}"
        print(header)
        print("  " + "-" * (len(header) - 2))
        for c, values in by_config.items():
            good = sorted(v for v in values.values() if not math.isnan(v))
            bad = len(values) - len(good)
            failures += 1 if bad else 0
            if good:
                q1, q2, q3 = quartiles(good)
                print(f"  {WALL_TITLES.get(c, c):<14} {q2:>8.2f} {f'{q1:.2f}..{q3:.2f}':>15}"
                      f" {f'{good[0]:.2f}..{good[-1]:.2f}':>15} {bad:>6}")
            else:
                print(f"  {WALL_TITLES.get(c, c):<14} {'-':>8} {'-':>15} {'-':>15} {bad:>6}")
        print()
        header = (f"  {'ratio':<27} {'paired':>7} {'IQR':>13} {'min..max':>13} {'of medians':>10}"
                  f" {'target':>6}  result")
        print(header)
        print("  " + "-" * (len(header) - 2))
        notes = []
        for num, den, target, what in WALL_RATIOS:
            if num not in by_config or den not in by_config:
                continue
            a, b = by_config[num], by_config[den]
            pairs = sorted(a[r] / b[r] for r in a.keys() & b.keys()
                           if not (math.isnan(a[r]) or math.isnan(b[r])) and b[r] > 0)
            good_a = [v for v in a.values() if not math.isnan(v)]
            good_b = [v for v in b.values() if not math.isnan(v)]
            label = f"{WALL_TITLES.get(num, num)} / {WALL_TITLES.get(den, den)}"
            if not pairs or not good_a or not good_b:
                print(f"  {label:<27} {'-':>7} {'-':>13} {'-':>13} {'-':>10}"
                      f" {fmt(target, 6)}  {'ERROR' if target else ''}".rstrip())
                failures += 1 if target else 0
                continue
            q1, paired, q3 = quartiles(pairs)
            of_medians = statistics.median(good_a) / statistics.median(good_b)
            if target is None:
                result = ""
            elif paired <= target:
                result = "PASS"
            else:
                result = "FAIL"
                failures += 1
            print(f"  {label:<27} {paired:>7.3f} {f'{q1:.3f}..{q3:.3f}':>13}"
                  f" {f'{pairs[0]:.3f}..{pairs[-1]:.3f}':>13} {of_medians:>10.3f}"
                  f" {fmt(target, 6)}  {result}".rstrip())
            notes.append(f"  {label}: {what}")
        print()
        print("\n".join(notes))
        print()
    print("paired: the median over rounds of the two configurations' ratio in the same")
    print("round (the verdict); IQR and min..max of those ratios; of medians: the ratio of")
    print("the two columns' medians. The A/A row shows what noise alone gives.")
    return 1 if failures else 0


def cmd_callgrind(path, n1, n2, command="tiny_memcpy N 1"):
    n1, n2 = int(n1), int(n2)
    runs = defaultdict(dict)  # (config, repeat) -> N -> (costs, graph-file Ir)
    with open(path) as f:
        for line in f:
            config, repeat, n, out = line.rstrip("\n").split("\t")
            runs[(config, repeat)][int(n)] = checked_costs(out)

    # Per (config, repeat): per-task self Ir by object, and per-task Ir of the
    # graph-file rewrites, from the N2 - N1 difference.
    per_task = defaultdict(list)  # config -> [({object: Ir per task}, graph-file Ir per task)]
    for (config, _), by_n in sorted(runs.items()):
        if n1 not in by_n or n2 not in by_n:
            continue
        (c1, g1), (c2, g2) = by_n[n1], by_n[n2]
        per_object = defaultdict(float)
        for o in set(c1) | set(c2):
            per_object[short(o)] += (c2.get(o, 0) - c1.get(o, 0)) / (n2 - n1)
        per_task[config].append((per_object, (g2 - g1) / (n2 - n1)))

    def counted(d):
        return sum(v for o, v in d.items() if not EXCLUDED.match(o))

    def left_out(d):
        return sum(v for o, v in d.items() if EXCLUDED.match(o))

    rows = []  # (label, key, median counted, per-run values, median left out)
    configs = CONFIGS + (("stopped",) if per_task["stopped"] else ())
    for c in configs:
        if not per_task[c]:
            rows.append((TITLES[c], c, None, [], None))
            continue
        values = [counted(d) for d, _ in per_task[c]]
        rows.append((TITLES[c], c, statistics.median(values), values,
                     statistics.median(left_out(d) for d, _ in per_task[c])))
        if c == "syclgraph":
            values = [counted(d) - g for d, g in per_task[c]]
            rows.append(("  w/o graph files", "syclgraph-hot", statistics.median(values), values, None))
    summary = {key: med for _, key, med, _, _ in rows if med is not None}

    print(f"instructions per task of `{command}`: (Ir[N={n2}] - Ir[N={n1}]) / {n2 - n1}")
    print("counted: every object but libintelocl, libtbb*, libcommon_clang, libhwloc, libtcm")
    header = f"{'configuration':<18} {'counted':>8}  {'each run':<24} {'left out (OpenCL rt)':>20}"
    print(header)
    print("-" * len(header))
    for label, _, med, values, out in rows:
        each = " ".join(f"{v:.0f}" for v in values)
        print(f"{label:<18} {fmt(med, 8, 0)}  {each:<24} {fmt(out, 20, 0)}")
    print("(\"w/o graph files\": syclgraph less the calls to Output::write_graph_files, the")
    print(" rewrite of graph.dot and summary.csv done about once a second of wall time")
    print(" and at exit: a time-driven cost that callgrind's ~50x slow-down inflates)")
    print()
    status = 0
    if "empty" in summary and "noxpti" in summary:
        print(f"XPTI + empty subscriber - no XPTI:    {summary['empty'] - summary['noxpti']:+8.0f} per task")
    if "empty" in summary and "syclgraph" in summary:
        for key, label in (("syclgraph", "syclgraph - empty subscriber:        "),
                           ("syclgraph-hot", "  the same, w/o graph-file rewrites: ")):
            d = summary[key] - summary["empty"]
            verdict = "PASS" if d <= CALLGRIND_TARGET else "FAIL"
            if verdict == "FAIL":
                status = 1
            print(f"{label}{d:+8.0f} per task (target <= +{CALLGRIND_TARGET})  {verdict}")
    else:
        status = 1
    if "stopped" in summary and "empty" in summary and "noxpti" in summary:
        d = summary["stopped"] - summary["empty"]
        verdict = "PASS" if d <= 0 else "FAIL"
        if verdict == "FAIL":
            status = 1
        print(f"syclgraph stopped - empty subscriber: {d:+8.0f} per task (target <= 0)  {verdict}")
        print(f"syclgraph stopped - no XPTI:          {summary['stopped'] - summary['noxpti']:+8.0f} per task")
    print()
    print("where the counted instructions go, per task (median over runs; objects >= 50):")
    medians = {}
    for c in configs:
        objs = set().union(*(d for d, _ in per_task[c])) if per_task[c] else set()
        medians[c] = {o: statistics.median(d.get(o, 0) for d, _ in per_task[c]) for o in objs}
    objs = sorted({o for c in CONFIGS for o, v in medians[c].items()
                   if not EXCLUDED.match(o) and abs(v) >= 50},
                  key=lambda o: -max(medians[c].get(o, 0) for c in CONFIGS))
    stopped = "stopped" in configs
    print(f"  {'object':<22} {'no XPTI':>9} {'empty':>9} {'syclgraph':>9} {'empty-noX':>10} {'sg-empty':>9}"
          + (f" {'stopped':>9}" if stopped else ""))
    for o in objs:
        v = {c: medians[c].get(o, 0) if medians[c] else None for c in CONFIGS}
        d1 = v["empty"] - v["noxpti"] if None not in (v["empty"], v["noxpti"]) else None
        d2 = v["syclgraph"] - v["empty"] if None not in (v["syclgraph"], v["empty"]) else None
        print(f"  {o:<22} {fmt(v['noxpti'], 9, 0)} {fmt(v['empty'], 9, 0)} {fmt(v['syclgraph'], 9, 0)}"
              f" {fmt(d1, 10, 0)} {fmt(d2, 9, 0)}"
              + (f" {fmt(medians['stopped'].get(o, 0), 9, 0)}" if stopped else ""))
    if per_task["syclgraph"]:
        g = statistics.median(g for _, g in per_task["syclgraph"])
        print(f"  {'(graph-file rewrites)':<22} {'':>9} {'':>9} {g:>9.0f}   (inclusive, part of the rows above)")
    return status


def main(argv):
    if len(argv) >= 2 and argv[0] == "objects":
        cmd_objects(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "wall":
        return cmd_wall(argv[1])
    if len(argv) >= 4 and argv[0] == "callgrind":
        return cmd_callgrind(*argv[1:5])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
