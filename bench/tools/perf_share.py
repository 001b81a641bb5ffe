#!/usr/bin/env python3
"""syclgraph's share of the submitting thread's time, from a `perf record`.

  perf_share.py PERF.DATA [OBJECT]

Reads `perf script` of a run sampled with `perf record -e cpu-clock -g`
(software sampling: works where hardware counters do not, e.g. in a VM)
and prints, for the thread that submits (the one with the most samples in
`libsycl.so`), inside its loop (its first to its last sample, less 50 ms
at the start for the warm-up's tail), how many of its samples have their
leaf in OBJECT (default `libsyclgraph.so`), and that share in percent.
The other threads' samples in the same window are listed too (the
collector's among them). Compare shares between configurations of one
program, over several runs: the wall clock of a single run moves by ±30%
on a busy 2-core machine, a thread's share much less.
"""
import collections
import re
import subprocess
import sys

LEAF_OBJECT = re.compile(r"\(([^()]*)\)\s*$")


def samples(path):
    """(tid, time, leaf object) of every sample in `path`."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "tid,time,ip,dso"],
                         capture_output=True, text=True, check=True).stdout
    rows, current = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        if line.rstrip().endswith(":"):  # "  1234 56789.012345:" starts a sample
            tid, time = line.split()[:2]
            current = [int(tid), float(time.rstrip(":")), None]
            rows.append(current)
        elif current is not None and current[2] is None:  # its leaf frame
            m = LEAF_OBJECT.search(line)
            current[2] = m.group(1).rsplit("/", 1)[-1] if m else "?"
    return rows


def main(argv):
    if len(argv) not in (2, 3):
        print("perf_share: usage: perf_share.py PERF.DATA [OBJECT] (see its doc comment)",
              file=sys.stderr)
        return 2
    obj = argv[2] if len(argv) == 3 else "libsyclgraph.so"
    try:
        rows = samples(argv[1])
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"perf_share: cannot read {argv[1]} with perf script: {e}", file=sys.stderr)
        return 2
    in_sycl = collections.Counter(t for t, _, o in rows if o and o.startswith("libsycl.so"))
    if not in_sycl:
        print(f"perf_share: no sample in libsycl.so in {argv[1]}", file=sys.stderr)
        return 1
    submitter = in_sycl.most_common(1)[0][0]
    times = [t for tid, t, _ in rows if tid == submitter]
    start, end = min(times) + 0.05, max(times)
    window = [r for r in rows if start <= r[1] <= end]
    per_thread = collections.Counter(tid for tid, _, _ in window)
    ours = sum(1 for tid, _, o in window if tid == submitter and o and o.startswith(obj))
    total = per_thread[submitter]
    print(f"submitting thread {submitter}: {total} samples in {end - start:.3f} s, "
          f"{ours} in {obj}: {100.0 * ours / max(total, 1):.2f}%")
    for tid, n in per_thread.most_common():
        if tid != submitter:
            print(f"  thread {tid}: {n} samples in that window")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
