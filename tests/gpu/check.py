#!/usr/bin/env python3
"""Checks one traced run of a tests/gpu program against its own oracles.

    check.py STDOUT OUTDIR [--tolerance-ns=N]
    check.py STDOUT -          (an untraced run: the duration figures only)

STDOUT is what the program printed under syclgraph, OUTDIR syclgraph's
output directory (kernels.csv, summary.txt, graph.dot). For every label
with at least 100 ``profiling`` lines it prints the program's own duration
figures (``durations LABEL: n, p50, p95, max``). The program's lines
(tests/gpu/oracle.hpp):

- ``bounds L I BEFORE AFTER``: a bracket. Every timed kernels.csv row whose
  submit_ns lies in [BEFORE, AFTER] must have start_ns >= BEFORE - tol and
  end_ns <= AFTER + tol (tol: 1 us unless told).
- ``profiling L I NS``: a command's own event duration. It belongs to the
  bracket (L, I), else (L, 0), else (P, I), else (P, 0), P being L less its
  last ``_word``; each one must equal, to the ns, the duration of a row of
  its bracket, one row each.
- ``cuda_event L I NS [HOST]``: a cudaEvent pair around a native command's
  work, and the host's time inside the native command; its bracket must
  hold a row no shorter than NS - 1 us and at most max(10 us, 10%) + HOST
  longer (the command's own event spans the host's launch: while the host
  is inside the command, the device waits in it).
- ``expect summary REGEX`` / ``expect no_summary REGEX`` /
  ``expect dot REGEX``: summary.txt has (has no) a line matching REGEX;
  graph.dot matches REGEX.

Prints one ``ok``/``FAIL`` line per check and the residual figures; exits 1
when a check failed, 0 otherwise.
"""

import csv
import os
import re
import sys
from collections import defaultdict


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(q / 100.0 * (len(values) - 1)))))
    return values[k]


def fmt_ns(ns):
    if ns is None:
        return "-"
    if abs(ns) < 1000:
        return "%d ns" % ns
    return "%.2f us" % (ns / 1000.0)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    tol = 1000
    for a in argv[1:]:
        if a.startswith("--tolerance-ns="):
            tol = int(a.split("=", 1)[1])
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    stdout_path, outdir = args
    brackets = {}
    profiling = []
    cuda_events = []
    expects = []
    with open(stdout_path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 5 and parts[0] == "bounds":
                brackets[(parts[1], int(parts[2]))] = (int(parts[3]), int(parts[4]))
            elif len(parts) == 4 and parts[0] == "profiling":
                profiling.append((parts[1], int(parts[2]), int(parts[3])))
            elif len(parts) in (4, 5) and parts[0] == "cuda_event":
                host = int(parts[4]) if len(parts) == 5 else 0
                cuda_events.append((parts[1], int(parts[2]), int(parts[3]), host))
            elif len(parts) >= 3 and parts[0] == "expect":
                expects.append((parts[1], line.split(None, 2)[2].rstrip("\n")))

    by_label_ns = defaultdict(list)
    for label, i, ns in profiling:
        by_label_ns[label].append(ns)
    for label, values in sorted(by_label_ns.items()):
        if len(values) >= 100:
            print(
                "durations %s: n %d, p50 %s, p95 %s, max %s"
                % (label, len(values), fmt_ns(percentile(values, 50)), fmt_ns(percentile(values, 95)), fmt_ns(max(values)))
            )
    if outdir == "-":
        return 0

    rows = []
    kernels = os.path.join(outdir, "kernels.csv")
    if os.path.exists(kernels):
        with open(kernels, newline="") as f:
            for r in csv.DictReader(f):
                rows.append(r)
    timed = [r for r in rows if r.get("timing") == "ok"]
    timed.sort(key=lambda r: int(r["submit_ns"] or 0))
    submits = [int(r["submit_ns"] or 0) for r in timed]
    # timing=marker rows (a SYCL graph replay on OpenCL): only an end.
    markers = [r for r in rows if r.get("timing") == "marker"]
    markers.sort(key=lambda r: int(r["submit_ns"] or 0))
    marker_submits = [int(r["submit_ns"] or 0) for r in markers]

    import bisect

    def in_bracket(before, after):
        lo = bisect.bisect_left(submits, before)
        hi = bisect.bisect_right(submits, after)
        return timed[lo:hi]

    def markers_in(before, after):
        lo = bisect.bisect_left(marker_submits, before)
        hi = bisect.bisect_right(marker_submits, after)
        return markers[lo:hi]

    failures = 0
    oks = 0

    def fail(msg):
        nonlocal failures
        failures += 1
        print("FAIL " + msg)

    def ok(msg):
        nonlocal oks
        oks += 1
        print("ok " + msg)

    # Bounds.
    early = []  # before - start (> 0: starts before the submission)
    late = []  # end - after (> 0: ends after the host saw completion)
    empty = []
    marker_only = set()
    marker_late = []
    for key, (before, after) in sorted(brackets.items()):
        inside = in_bracket(before, after)
        for r in markers_in(before, after):
            marker_late.append(int(r["end_ns"]) - after)
        if not inside:
            if markers_in(before, after):
                marker_only.add(key)
            else:
                empty.append(key)
            continue
        for r in inside:
            early.append(before - int(r["start_ns"]))
            late.append(int(r["end_ns"]) - after)
    outside = sum(1 for e in early if e > tol) + sum(1 for l in late if l > tol)
    n_rows = len(early)
    if brackets:
        worst_early = max(early) if early else None
        worst_late = max(late) if late else None
        print(
            "residual: %d rows in %d brackets; latest end after the program saw completion %s, "
            "earliest start before its submission %s (negative: inside); "
            "end slack p50 %s, start slack p50 %s"
            % (
                n_rows,
                len(brackets) - len(empty) - len(marker_only),
                fmt_ns(worst_late),
                fmt_ns(worst_early),
                fmt_ns(-percentile(late, 50) if late else None),
                fmt_ns(-percentile(early, 50) if early else None),
            )
        )
        if n_rows and outside == 0:
            ok("bounds: every one of %d timed rows inside the program's clock bounds to %s" % (n_rows, fmt_ns(tol)))
        elif n_rows:
            fail("bounds: %d of %d timed rows outside the program's clock bounds by more than %s" % (outside, n_rows, fmt_ns(tol)))
    if marker_late:
        bad = sum(1 for l in marker_late if l > tol)
        if bad:
            fail("bounds: %d of %d marker rows end after the program saw completion by more than %s" % (bad, len(marker_late), fmt_ns(tol)))
        else:
            ok("bounds: every one of %d marker rows (timing=marker) ends inside the program's bounds" % len(marker_late))
    if empty:
        labels = sorted({k[0] for k in empty})
        fail("rows: %d bracket(s) hold no timed row (labels: %s)" % (len(empty), ", ".join(labels)))

    # Profiling.
    def bracket_of(label, i):
        prefix = label.rsplit("_", 1)[0] if "_" in label else None
        for key in ((label, i), (label, 0), (prefix, i), (prefix, 0)):
            if key in brackets:
                return key
        return None

    wanted = defaultdict(list)
    unbracketed = 0
    for label, i, ns in profiling:
        key = bracket_of(label, i)
        if key is None:
            unbracketed += 1
        else:
            wanted[key].append((label, i, ns))
    by_label_missing = defaultdict(int)
    by_label_total = defaultdict(int)
    marker_labels = defaultdict(int)
    for key, items in wanted.items():
        if key in marker_only:
            for label, i, ns in items:
                marker_labels[label] += 1
            continue
        durations = defaultdict(int)
        for r in in_bracket(*brackets[key]):
            durations[int(r["duration_ns"])] += 1
        for label, i, ns in items:
            by_label_total[label] += 1
            if durations.get(ns, 0) > 0:
                durations[ns] -= 1
            else:
                by_label_missing[label] += 1
    for label in sorted(by_label_total):
        missing = by_label_missing[label]
        if missing:
            fail("profiling %s: %d of %d durations have no row of equal duration_ns" % (label, missing, by_label_total[label]))
        else:
            ok("profiling %s: %d durations equal kernels.csv's to the ns" % (label, by_label_total[label]))
    for label, n in sorted(marker_labels.items()):
        print("note profiling %s: %d replays are timing=marker rows (the backend times a marker after the work): not compared" % (label, n))
    if unbracketed:
        fail("profiling: %d lines without a bracket" % unbracketed)

    # cudaEvent pairs.
    by_label = defaultdict(list)
    for label, i, ns, host in cuda_events:
        key = bracket_of(label, i)
        inside = in_bracket(*brackets[key]) if key else []
        best = None
        for r in inside:
            # Only a row that can hold the pair's work: no shorter than it
            # (less 1 us); the closest of those.
            d = int(r["duration_ns"])
            if d >= ns - 1000 and (best is None or d - ns < best - ns):
                best = d
        by_label[label].append((ns, best, host))
    for label, pairs in sorted(by_label.items()):
        bad = 0
        diffs = []
        for ns, best, host in pairs:
            if best is None:
                bad += 1
                continue
            diffs.append(best - ns)
            if not (best >= ns - 1000 and best - ns <= max(10000, ns // 10) + host):
                bad += 1
        spread = "row - cudaEvent pair: %s..%s" % (fmt_ns(min(diffs)), fmt_ns(max(diffs))) if diffs else "no row"
        hosts = [host for _, _, host in pairs if host]
        if hosts:
            spread += "; host inside the command %s..%s" % (fmt_ns(min(hosts)), fmt_ns(max(hosts)))
        if bad:
            fail("cuda_event %s: %d of %d native commands without a row matching their cudaEvent pair (%s)" % (label, bad, len(pairs), spread))
        else:
            ok("cuda_event %s: %d native commands timed, %s" % (label, len(pairs), spread))

    # Expectations.
    summary = ""
    if os.path.exists(os.path.join(outdir, "summary.txt")):
        summary = open(os.path.join(outdir, "summary.txt"), errors="replace").read()
    dot = ""
    if os.path.exists(os.path.join(outdir, "graph.dot")):
        dot = open(os.path.join(outdir, "graph.dot"), errors="replace").read()
    for what, pattern in expects:
        rx = re.compile(pattern, re.M)
        if what == "summary":
            (ok if rx.search(summary) else fail)("expect summary /%s/" % pattern)
        elif what == "no_summary":
            (ok if not rx.search(summary) else fail)("expect no summary line /%s/" % pattern)
        elif what == "dot":
            (ok if rx.search(dot) else fail)("expect graph.dot /%s/" % pattern)
        else:
            fail("expect %s: unknown expectation" % what)

    for line in summary.splitlines():
        if line.startswith("host clock:"):
            print("syclgraph " + line)
    print("checks: %d ok, %d failed" % (oks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
