#!/usr/bin/env python3
"""Number crunching for scripts/bench.sh (syclgraph's overhead benchmark).

  report.py objects CALLGRIND_OUT          self Ir per object file, then "total"
  report.py wall RESULTS.tsv               the wall-clock tables (loop, whole process)
  report.py callgrind RUNS.tsv N1 N2 [CMD] the instructions-per-task table

RESULTS.tsv lines: workload, tasks, round, config, us_per_task, the whole
process's seconds, its end of run's seconds ("nan" when the run failed). RUNS.tsv lines: config, repeat, N, callgrind out file.

Callgrind files are read directly (valgrind docs, "Callgrind Format
Specification") rather than through callgrind_annotate's text, whose layout
changes between valgrind versions: every cost line is charged to the object
named by the last `ob=` line, except the cost line right after a `calls=`
line, which is the inclusive cost of that call (the callee's own lines count
it already). Names may be compressed as "(id) name", later "(id)". Only the
first event (Ir, the only one callgrind collects by default) is used. The sum
over objects is checked against the file's `summary:`/`totals:` line.
"""
import glob
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

# Instructions per task that syclgraph may add on top of the empty subscriber
# (issue 29): on the program's own threads, and on syclgraph's threads, their
# end of run included (issue 41).
PROGRAM_THREADS_TARGET = 1000
COLLECTOR_TARGET = 6000


# syclgraph's collector rewrites graph.dot and summary.csv about once a
# second of wall time (and at exit), in this function. Under callgrind the
# program runs ~50x slower, so this time-driven cost lands on far fewer tasks
# than in a native run; the report shows syclgraph with and without it.
GRAPH_FILES_FN = re.compile(r"(^|::)write_graph_files$")
# The collector's work paced on the wall clock, not on commands: the graph
# files' snapshots (subscriber/src/snapshot_pacing.rs: at most one a second)
# and the device clock's calibration (ze-bridge: every 250 ms). Under
# callgrind a command takes 40 to 130 times as long as natively, so this
# work comes as many times as often per command as it does natively; it is
# reported apart from the per-command figure (docs/performance.md).
PACED_FN = re.compile(r"(Output::snapshot|UrTimestampSource::measure)$")
# The collector's end of the run: the last drain, the replay of the journal
# into the trace writer and the analyses, and every output file. It grows
# with the run's length, so the (N2 - N1) difference holds it; the report
# gives the collector during the run and this end-of-run work apart.
FINISH_FN = re.compile(r"Collector::finish$")


# Where a thread starts: the function `start_thread` (glibc) calls. A thread
# whose start routine lives in libsyclgraph is one syclgraph started (its
# collector: Rust's thread_start is linked into the library); every other
# thread is the program's (its main thread, its own threads, the runtime's
# workers).
THREAD_START_FN = "start_thread"
SYCLGRAPH_OBJECT = re.compile(r"^libsyclgraph")
# A UR function a syclgraph hook calls on to (subscriber/src/ur_hooks.rs:
# urQueueCreate, urEnqueue*, urCommandBuffer*, urEventWait): the runtime's
# own work, subtracted from the hook's inclusive cost. (urEventWait: the
# program's own wait, which runs as long as the device has work queued.)
HOOKED_UR_FN = re.compile(
    r"(^|::)ur(QueueCreate|Enqueue[A-Za-z0-9]*|CommandBuffer[A-Za-z0-9]*|EventWait)$")
# The release of a device event syclgraph kept, made on a submitting thread
# (subscriber/src/release_queue.rs): the runtime's destruction of its event,
# which without syclgraph runs on the same thread when the program lets go
# of the event ("the rest" falls by it). Counted apart from the entry
# points; the program threads' figure by difference holds its net cost.
RELEASE_FN = re.compile(r"(^|::)urEventRelease$")


def bare_name(fn):
    """A demangled name without its parameter list."""
    fn = fn or ""
    return fn.split("(", 1)[0].strip() if not fn.startswith("(") else fn


class ThreadCosts:
    """What report.py takes from one callgrind file (one thread with
    --separate-threads=yes, else the whole process)."""

    def __init__(self):
        self.objects = defaultdict(int)   # object path -> self Ir
        self.summary = None               # the file's summary/totals line
        self.graph_files = 0              # inclusive Ir of output::write_graph_files
        self.finish = 0                   # inclusive Ir of Collector::finish
        self.paced = 0                    # inclusive Ir of the PACED_FN calls
        self.paced_calls = 0              # how many
        self.start_objects = defaultdict(int)  # objects of the functions start_thread
                                          # called -> their inclusive Ir
        self.entry = 0                    # inclusive Ir of calls into libsyclgraph from
                                          # other objects, less its hooks' calls on
        self.entry_calls = defaultdict(lambda: [0, 0])  # entry function -> [Ir, calls]
        self.released = 0                 # inclusive Ir of syclgraph's urEventRelease calls
                                          # (RELEASE_FN), not in `entry`

    def syclgraph_thread(self):
        """True when syclgraph started this thread (its start routine is in libsyclgraph)."""
        # By the start routine that ran longest: valgrind gives a thread's
        # number to a thread started after it ended, and callgrind adds the
        # new one to the same file (the exit's short fsync threads, after
        # the program's own thread ended).
        if not self.start_objects:
            return False
        main = max(self.start_objects.items(), key=lambda kv: kv[1])[0]
        return bool(SYCLGRAPH_OBJECT.match(basename(main)))


def object_costs(path):
    """Reads one callgrind file into a ThreadCosts."""
    names = {"ob": {}, "fn": {}}
    t = ThreadCosts()
    current = "???"
    fn = ""
    skip_next = False
    callee = None
    callee_fn = None
    callee_ob = None
    call_count = 0

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
                        t.graph_files += ir
                    if callee and FINISH_FN.search(callee):
                        t.finish += ir
                    if callee and PACED_FN.search(bare_name(callee)):
                        t.paced += ir
                        t.paced_calls += call_count
                    caller_sg = bool(SYCLGRAPH_OBJECT.match(basename(current)))
                    callee_sg = bool(SYCLGRAPH_OBJECT.match(basename(callee_ob)))
                    if fn == THREAD_START_FN:
                        t.start_objects[callee_ob] += ir
                    if callee_sg and not caller_sg:
                        t.entry += ir
                        e = t.entry_calls[bare_name(callee)]
                        e[0] += ir
                        e[1] += call_count
                    elif caller_sg and not callee_sg and HOOKED_UR_FN.search(bare_name(callee)):
                        t.entry -= ir
                        e = t.entry_calls["(calls on to the runtime)"]
                        e[0] -= ir
                        e[1] += call_count
                    elif caller_sg and not callee_sg and RELEASE_FN.search(bare_name(callee)):
                        t.entry -= ir
                        t.released += ir
                        e = t.entry_calls["(the runtime's release of kept events)"]
                        e[0] -= ir
                        e[1] += call_count
                    callee_ob = None
                    continue
                t.objects[current] += ir
                continue
            if line.startswith("ob="):
                current = resolve("ob", line[3:])
            elif line.startswith("cob="):
                callee_ob = resolve("ob", line[4:])
            elif line.startswith("fn="):
                fn = resolve("fn", line[3:])
            elif line.startswith("cfn="):
                callee_fn = resolve("fn", line[4:])
            elif line.startswith("calls="):
                skip_next = True
                call_count = int(line[6:].split()[0])
                callee, callee_fn = callee_fn, None
                # Without cob= the callee is in the caller's object.
                callee_ob = callee_ob if callee_ob is not None else current
            elif line.startswith(("summary:", "totals:")):
                t.summary = int(line.split(":", 1)[1].split()[0])
            if not line.startswith(("cob=", "cfn=", "cfi=", "cfl=", "calls=")):
                callee_ob = None
    return t


def thread_files(path):
    """The callgrind files of one run: PATH-01, PATH-02, ... when callgrind
    ran with --separate-threads=yes (PATH itself is then empty), else PATH."""
    parts = sorted(glob.glob(glob.escape(path) + "-[0-9]*"))
    return parts or [path]


def checked_costs(path):
    """The ThreadCosts of every thread of one run, each checked against its
    file's summary line."""
    threads = []
    for part in thread_files(path):
        t = object_costs(part)
        total = sum(t.objects.values())
        if t.summary is not None and t.summary != total:
            raise SystemExit(f"report: {part}: per-object sum {total} != summary {t.summary}")
        threads.append(t)
    return threads


def merged_objects(threads, which=None):
    """Self Ir per object summed over `threads` (those `which` accepts)."""
    costs = defaultdict(int)
    for t in threads:
        if which is None or which(t):
            for o, ir in t.objects.items():
                costs[o] += ir
    return costs


def basename(obj):
    return obj.rsplit("/", 1)[-1]


def short(obj):
    """libfoo.so.1.2 -> libfoo.so; executables and ??? unchanged."""
    b = basename(obj)
    return re.sub(r"(\.so)(\.[0-9][0-9.]*)?$", r"\1", b)


def cmd_objects(path):
    threads = checked_costs(path)
    costs = merged_objects(threads)
    for obj, ir in sorted(costs.items(), key=lambda kv: -kv[1]):
        print(f"{ir}\t{obj}")
    print(f"total\t{sum(costs.values())}")
    print(f"graph-file rewrites (inclusive)\t{sum(t.graph_files for t in threads)}")
    for i, t in enumerate(threads, 1):
        who = "syclgraph" if t.syclgraph_thread() else "program"
        print(f"thread {i}\t{who}\t{sum(t.objects.values())}\tentry points {t.entry}")
        for fn, (ir, calls) in sorted(t.entry_calls.items(), key=lambda kv: -abs(kv[1][0])):
            print(f"  {ir}\t{calls}\t{fn}")


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
    ("threadtimed", "selftimed", None,
     "the program's commands timed by a second thread while it submits / on its own thread"),
    ("syclgraph", "threadtimed", None, "syclgraph / the program timing on a second thread"),
    ("syclgraph", "empty", None, "syclgraph / empty subscriber"),
    ("stopped", "empty", None, "syclgraph started paused, never started / empty"),
    ("empty", "noxpti", None, "the runtime's own tracing: empty / no XPTI"),
)
WALL_TITLES = dict(TITLES, aa="empty (A/A)", selftimed="self-timed", threadtimed="thread-timed",
                   notiming="sg no timing", stopped="sg stopped")


def quartiles(values):
    """(first quartile, median, third quartile) of a non-empty list."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


# The whole process (issue 41): the same ratios on each run's start-to-exit
# time, where the end of the run is inside the clock. Only (a) has a target
# there; (b) is a figure (with device timing off every output is written at
# exit from the journal).
WHOLE_TARGETS = {("syclgraph", "selftimed"): 1.05}
# What happens after the program's last command, syclgraph's end of run less
# the empty subscriber's, per 1,000,000 commands (issue 41): target 0.25 s.
END_OF_RUN_TARGET_S = 0.25


def wall_rows(path):
    """metric -> workload -> config -> round -> value, and workload -> tasks.
    Metrics: "loop" (µs per task, the program's own clock), "whole" (the
    whole process, s) and "tail" (its end of run, s); lines of five columns
    (an older results file) have the loop only."""
    rows = {m: defaultdict(lambda: defaultdict(dict)) for m in ("loop", "whole", "tail")}
    tasks = {}
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            workload, n, rnd, config, value = cols[:5]
            tasks.setdefault(workload, n)
            rows["loop"][workload][config][int(rnd)] = float(value)
            if len(cols) >= 7:
                rows["whole"][workload][config][int(rnd)] = float(cols[5])
                rows["tail"][workload][config][int(rnd)] = float(cols[6])
    return rows, tasks


def config_table(by_config, unit, digits=2):
    """Per configuration: median, IQR, min..max, failed runs. Returns the
    number of configurations with a failed run."""
    failures = 0
    header = f"  {'configuration':<14} {'median':>9} {'IQR':>17} {'min..max':>17} {'failed':>6}"
    print(header + f"   ({unit})")
    print("  " + "-" * (len(header) - 2))
    for c, values in by_config.items():
        good = sorted(v for v in values.values() if not math.isnan(v))
        bad = len(values) - len(good)
        failures += 1 if bad else 0
        if good:
            q1, q2, q3 = quartiles(good)
            print(f"  {WALL_TITLES.get(c, c):<14} {q2:>9.{digits}f} {f'{q1:.{digits}f}..{q3:.{digits}f}':>17}"
                  f" {f'{good[0]:.{digits}f}..{good[-1]:.{digits}f}':>17} {bad:>6}")
        else:
            print(f"  {WALL_TITLES.get(c, c):<14} {'-':>9} {'-':>17} {'-':>17} {bad:>6}")
    return failures


def ratio_table(by_config, targets):
    """The paired ratios of WALL_RATIOS, with `targets` ((num, den) ->
    target); returns the number of targets missed."""
    failures = 0
    header = (f"  {'ratio':<27} {'paired':>7} {'IQR':>13} {'min..max':>13} {'of medians':>10}"
              f" {'target':>6}  result")
    print(header)
    print("  " + "-" * (len(header) - 2))
    notes = []
    for num, den, _, what in WALL_RATIOS:
        target = targets.get((num, den))
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
    return failures


def end_of_run_line(by_config, tasks):
    """syclgraph's end of run less the empty subscriber's, paired by round,
    per 1,000,000 commands, against END_OF_RUN_TARGET_S; returns 1 when
    missed."""
    # The empty subscriber's end of run; the self-timed program's (the
    # empty subscriber too) when the empty one did not run.
    base = "empty" if "empty" in by_config else "selftimed"
    a, b = by_config.get("syclgraph", {}), by_config.get(base, {})
    extra = sorted((a[r] - b[r]) * 1e6 / int(tasks) for r in a.keys() & b.keys()
                   if not (math.isnan(a[r]) or math.isnan(b[r])))
    if not extra:
        print(f"  end of run: no paired rounds  ERROR")
        return 1
    med = statistics.median(extra)
    verdict = "PASS" if med <= END_OF_RUN_TARGET_S else "FAIL"
    print(f"  end of run (the program's last line to its exit), syclgraph - {WALL_TITLES[base]}:"
          f" {med:+.3f} s per 1,000,000 commands (paired median; {extra[0]:+.3f}..{extra[-1]:+.3f})"
          f" (target <= {END_OF_RUN_TARGET_S} s)  {verdict}")
    return 0 if verdict == "PASS" else 1


def cmd_wall(path):
    """Prints the wall-clock tables (the loop, the whole process, the end of
    run); returns 1 when a target is missed or a run failed."""
    rows, tasks = wall_rows(path)
    failures = 0
    loop_targets = {(num, den): t for num, den, t, _ in WALL_RATIOS if t is not None}
    for w, by_config in rows["loop"].items():
        rounds = max(len(v) for v in by_config.values())
        print(f"{w}: {tasks[w]} tasks, {rounds} interleaved rounds")
        print()
        print("the loop (the program's own clock: its submission loop and final wait), µs per task:")
        failures += config_table(by_config, "µs per task")
        print()
        failures += ratio_table(by_config, loop_targets)
        print()
        whole = rows["whole"].get(w)
        if whole:
            print("the whole process (start to exit, every file written), seconds:")
            config_table(whole, "s", 3)
            print()
            failures += ratio_table(whole, WHOLE_TARGETS)
            print()
            config_table(rows["tail"][w], "end of run s", 3)
            failures += end_of_run_line(rows["tail"][w], tasks[w])
            print()
    print("paired: the median over rounds of the two configurations' ratio in the same")
    print("round (the verdict); IQR and min..max of those ratios; of medians: the ratio of")
    print("the two columns' medians. The A/A row shows what noise alone gives.")
    return 1 if failures else 0


def per_thread_table(per_task, config="syclgraph"):
    """Prints `config` (syclgraph, or syclgraph without device timing) -
    empty subscriber per task on the program's threads and on syclgraph's
    own, with a PASS/FAIL line per target; returns 1 when one is missed.
    Runs are paired by repeat number (run k of syclgraph with run k of the
    empty subscriber)."""
    pairs = list(zip((s for *_, s in per_task[config]), (s for *_, s in per_task["empty"])))
    if not pairs or any(None in pair for pair in pairs):
        print()
        print("no per-thread split: the runs were not made with --separate-threads=yes")
        return 1
    diff = {k: [sg[k] - e[k] for sg, e in pairs] for k in ("program", "own", "entry", "released", "exit", "paced")}
    diff["total"] = [p + o for p, o in zip(diff["program"], diff["own"])]
    # Per command: the collector less its work paced on the wall clock.
    diff["per_command"] = [o - p for o, p in zip(diff["own"], diff["paced"])]
    # The collector while the program runs: its threads less the end of
    # the run (Collector::finish, inclusive), which is reported apart.
    diff["run"] = [o - x for o, x in zip(diff["own"], diff["exit"])]
    # The program threads less syclgraph's own functions there: what the
    # runtime did differently (the work syclgraph makes it do, and work it
    # moved between its threads or did not do), by difference.
    diff["rest"] = [p - e - r for p, e, r in zip(diff["program"], diff["entry"], diff["released"])]
    med = {k: statistics.median(v) for k, v in diff.items()}
    each = lambda k: " ".join(f"{v:+.0f}" for v in diff[k])
    own_threads = max(sg["threads"] for sg, _ in pairs)

    print()
    print(f"per task, {TITLES[config]} - empty subscriber, by thread (median of the runs; each run):")
    print(f"  {'program threads (counted objects, by difference)':<58} {med['program']:+8.0f}   {each('program')}")
    print(f"    {'syclgraph entry points there (inclusive)':<56} {med['entry']:+8.0f}   {each('entry')}")
    print(f"    {'the runtime releasing the events syclgraph kept':<56} {med['released']:+8.0f}   {each('released')}")
    print(f"    {'the rest: the runtime on those threads':<56} {med['rest']:+8.0f}   {each('rest')}")
    print(f"  {f'syclgraph threads ({own_threads}: the collector)':<58} {med['own']:+8.0f}   {each('own')}")
    print(f"    {'during the run':<56} {med['run']:+8.0f}   {each('run')}")
    print(f"    {'at the end of the run (Collector::finish, inclusive)':<56} {med['exit']:+8.0f}   {each('exit')}")
    print(f"    {'paced on the wall clock (snapshots, clock calibration)':<56} {med['paced']:+8.0f}   {each('paced')}")
    print(f"  {'total':<58} {med['total']:+8.0f}   {each('total')}")
    print("  (a thread is syclgraph's when the function start_thread called is in")
    print("   libsyclgraph; entry points: every call into libsyclgraph from another")
    print("   object, inclusive, less what its UR hooks call on to and its releases")
    print("   of the events it kept (without syclgraph the runtime destroys them on")
    print("   the same threads: 'the rest' falls by most of it); the empty subscriber's")
    print("   own callbacks, 3 instructions per task, are not subtracted)")
    if config != "syclgraph":
        # Targets 1 and 2 are syclgraph's with every output on; this
        # configuration's target (3b) is on the wall clock: figures only.
        print(f"{TITLES[config]}: program threads {med['program']:+.0f}, collector during the run"
              f" {med['run']:+.0f}: {med['program'] + med['run']:+.0f} per task during the run"
              f" (figure: target 3b is on the wall clock)")
        print(f"{TITLES[config]}, collector at the end of the run: {med['exit']:+.0f} per task")
        return 0
    status = 0
    worst = max(diff["entry"])
    verdict = "PASS" if worst <= PROGRAM_THREADS_TARGET else "FAIL"
    status |= verdict == "FAIL"
    print(f"program threads: syclgraph's entry points {med['entry']:+.0f} per task, every run"
          f" <= {worst:+.0f} (target <= +{PROGRAM_THREADS_TARGET})  {verdict}")
    # The releases are left out of the entry points above; the threads'
    # whole count, by difference, holds what they cost net: it must meet
    # the same target.
    worst = max(diff["program"])
    verdict = "PASS" if worst <= PROGRAM_THREADS_TARGET else "FAIL"
    status |= verdict == "FAIL"
    print(f"program threads, by difference (the releases included): {med['program']:+.0f} per task,"
          f" every run <= {worst:+.0f} (target <= +{PROGRAM_THREADS_TARGET})  {verdict}")
    # Issue 41: syclgraph's threads with their end of run (work moved to
    # the exit is not work removed), per command: less the work paced on
    # the wall clock, which comes once a second or every 250 ms whatever
    # the commands, and under callgrind (a command 40 to 130 times as long
    # as natively) as many times as often per command. Both printed.
    calls = "; ".join(sg["paced_calls"] for sg, _ in pairs)
    print(f"  the work paced on the wall clock: {med['paced']:+.0f} per task here, in {calls} calls")
    print("  (graph-file snapshots, at most one a second, and device clock calibrations, one per")
    print(f"  device every 250 ms); with it syclgraph's threads are {med['own']:+.0f} per task")
    verdict = "PASS" if med["per_command"] <= COLLECTOR_TARGET else "FAIL"
    status |= verdict == "FAIL"
    print(f"syclgraph's threads, end of run included, per command (less the work paced on the"
          f" wall clock): {med['per_command']:+.0f} per task (target <= +{COLLECTOR_TARGET})  {verdict}")
    print(f"  of it during the run {med['run']:+.0f}, at the end of the run {med['exit']:+.0f} per task"
          f" ({med['exit'] * 1e6 / 1e9:.2f} billion instructions per 1,000,000 tasks)")
    return int(status)


def cmd_callgrind(path, n1, n2, command="tiny_memcpy N 1"):
    n1, n2 = int(n1), int(n2)
    runs = defaultdict(dict)  # (config, repeat) -> N -> [ThreadCosts]
    with open(path) as f:
        for line in f:
            config, repeat, n, out = line.rstrip("\n").split("\t")
            runs[(config, repeat)][int(n)] = checked_costs(out)

    def split(threads):
        """Counted Ir on the program's threads, on syclgraph's threads, and
        the inclusive Ir of syclgraph's entry points on the program's threads;
        None for a run without one file per thread."""
        if len(threads) < 2:
            return None
        program = merged_objects(threads, lambda t: not t.syclgraph_thread())
        own = merged_objects(threads, lambda t: t.syclgraph_thread())
        count = lambda d: sum(v for o, v in d.items() if not EXCLUDED.match(short(o)))
        entry = sum(t.entry for t in threads if not t.syclgraph_thread())
        released = sum(t.released for t in threads if not t.syclgraph_thread())
        # Inclusive, so it holds the OpenCL runtime's objects it called too:
        # an upper bound of its counted share.
        exit_ir = sum(t.finish for t in threads if t.syclgraph_thread())
        # Inclusive too: the OpenCL runtime's objects it called are in it.
        paced = sum(t.paced for t in threads if t.syclgraph_thread())
        paced_calls = sum(t.paced_calls for t in threads if t.syclgraph_thread())
        return {"program": count(program), "own": count(own), "entry": entry,
                "released": released, "exit": exit_ir, "paced": paced, "paced_calls": paced_calls, "threads": sum(1 for t in threads if t.syclgraph_thread())}

    # Per (config, repeat): per-task self Ir by object, per-task Ir of the
    # graph-file rewrites, and the per-thread split, from the N2 - N1 difference.
    per_task = defaultdict(list)  # config -> [({object: Ir per task}, graph-file Ir per task, split)]
    for (config, _), by_n in sorted(runs.items()):
        if n1 not in by_n or n2 not in by_n:
            continue
        t1, t2 = by_n[n1], by_n[n2]
        c1, c2 = merged_objects(t1), merged_objects(t2)
        g1, g2 = (sum(t.graph_files for t in ts) for ts in (t1, t2))
        per_object = defaultdict(float)
        for o in set(c1) | set(c2):
            per_object[short(o)] += (c2.get(o, 0) - c1.get(o, 0)) / (n2 - n1)
        s1, s2 = split(t1), split(t2)
        per_split = None
        if s1 and s2:
            per_split = {k: (s2[k] - s1[k]) / (n2 - n1) for k in ("program", "own", "entry", "released", "exit", "paced")}
            per_split["threads"] = max(s1["threads"], s2["threads"])
            per_split["paced_calls"] = f"{s1['paced_calls']} (N={n1}) and {s2['paced_calls']} (N={n2})"
        per_task[config].append((per_object, (g2 - g1) / (n2 - n1), per_split))

    def counted(d):
        return sum(v for o, v in d.items() if not EXCLUDED.match(o))

    def left_out(d):
        return sum(v for o, v in d.items() if EXCLUDED.match(o))

    rows = []  # (label, key, median counted, per-run values, median left out)
    configs = CONFIGS + tuple(c for c in ("notiming", "stopped") if per_task[c])
    for c in configs:
        if not per_task[c]:
            rows.append((TITLES[c], c, None, [], None))
            continue
        values = [counted(d) for d, *_ in per_task[c]]
        rows.append((TITLES[c], c, statistics.median(values), values,
                     statistics.median(left_out(d) for d, *_ in per_task[c])))
        if c == "syclgraph":
            values = [counted(d) - g for d, g, _ in per_task[c]]
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
    print("(\"w/o graph files\": syclgraph less the calls to output::write_graph_files, the")
    print(" rewrite of the graph files paced on the collector's CPU time (and on the clock")
    print(" when it idles) and at exit: callgrind's slow-down can inflate it)")
    print()
    status = 0
    if "empty" in summary and "noxpti" in summary:
        print(f"XPTI + empty subscriber - no XPTI:    {summary['empty'] - summary['noxpti']:+8.0f} per task")
    if "empty" in summary and "syclgraph" in summary:
        for key, label in (("syclgraph", "syclgraph - empty subscriber:        "),
                           ("syclgraph-hot", "  the same, w/o graph-file rewrites: ")):
            print(f"{label}{summary[key] - summary['empty']:+8.0f} per task")
        status |= per_thread_table(per_task)
    else:
        status = 1
    if "empty" in summary and "notiming" in summary:
        print()
        print(f"syclgraph without device timing - empty subscriber: {summary['notiming'] - summary['empty']:+8.0f} per task")
        # Target 3b is on the wall clock; on this 2-core machine what
        # syclgraph executes during the run lands on it about one for one.
        status |= per_thread_table(per_task, "notiming")
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
        objs = set().union(*(d for d, *_ in per_task[c])) if per_task[c] else set()
        medians[c] = {o: statistics.median(d.get(o, 0) for d, *_ in per_task[c]) for o in objs}
    objs = sorted({o for c in CONFIGS for o, v in medians[c].items()
                   if not EXCLUDED.match(o) and abs(v) >= 50},
                  key=lambda o: -max(medians[c].get(o, 0) for c in CONFIGS))
    stopped = "stopped" in configs
    notiming = "notiming" in configs
    print(f"  {'object':<22} {'no XPTI':>9} {'empty':>9} {'syclgraph':>9} {'empty-noX':>10} {'sg-empty':>9}"
          + (f" {'no timing':>9}" if notiming else "")
          + (f" {'stopped':>9}" if stopped else ""))
    for o in objs:
        v = {c: medians[c].get(o, 0) if medians[c] else None for c in CONFIGS}
        d1 = v["empty"] - v["noxpti"] if None not in (v["empty"], v["noxpti"]) else None
        d2 = v["syclgraph"] - v["empty"] if None not in (v["syclgraph"], v["empty"]) else None
        print(f"  {o:<22} {fmt(v['noxpti'], 9, 0)} {fmt(v['empty'], 9, 0)} {fmt(v['syclgraph'], 9, 0)}"
              f" {fmt(d1, 10, 0)} {fmt(d2, 9, 0)}"
              + (f" {fmt(medians['notiming'].get(o, 0), 9, 0)}" if notiming else "")
              + (f" {fmt(medians['stopped'].get(o, 0), 9, 0)}" if stopped else ""))
    if per_task["syclgraph"]:
        g = statistics.median(g for _, g, _ in per_task["syclgraph"])
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
