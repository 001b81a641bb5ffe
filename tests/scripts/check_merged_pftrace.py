#!/usr/bin/env python3
"""Checks a merged timeline (`syclgraph report --perfetto MERGED JOB`) against
each chosen rank's own trace.pftrace, with Perfetto's own trace proto
(perfetto_trace_pb2 from the `perfetto` package, with `protobuf`).

usage: check_merged_pftrace.py MERGED RANKDIR...

Each RANKDIR (a rank's directory: trace.pftrace, meta.json) is the oracle of
one process of the merged trace (a cut trace.pftrace: its whole packets). Reads the traces as Perfetto's importer
does: a track belongs to the process its parent chain leads to; an event's
track is its track_uuid, else its sequence's TrackEventDefaults; its name is
its own or the one interned on its sequence (incremental state cleared by
SEQ_INCREMENTAL_STATE_CLEARED), its time decoded from its sequence's
clock: the events are read by check_pftrace.decode_events. Checks:
  - one process track per rank dir, and no other; pids unique;
  - every sequence, track, thread (tid) and flow id belongs to one process;
  - per rank, the merged events are the rank's own, in the same order:
    (time on CLOCK_MONOTONIC as decoded, type, name, track name path)
    equal, so timestamps are untouched and no event is lost or added;
  - per rank, as many flows as in its own trace.
Prints one JSON object: per rank its process name, pid, labels, slices
(begins and instants: Perfetto's slice table) in the merged and in its own
trace, and flows; exits 1 with the problems listed when a check fails.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_pftrace import TE, decode_events, pb, read_trace as read  # noqa: E402  (the one reader of traces)


def walk(trace, problems, what):
    """Tracks, processes and events of a trace, as the importer sees them:
    the events read by check_pftrace.decode_events (per-sequence defaults,
    interned names, incremental clocks), what it could not read added to
    `problems` under `what`."""
    tracks = {}  # uuid -> (parent, name, pid or None, labels, seq)
    threads = {}  # uuid -> tid
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            pid = d.process.pid if d.HasField("process") else None
            labels = list(d.process.process_labels) if d.HasField("process") else []
            name = d.name or d.static_name or (d.process.process_name if d.HasField("process") else "")
            if d.HasField("process") and d.process.process_name:
                name = d.process.process_name
            seq = p.trusted_packet_sequence_id
            tracks[d.uuid] = (d.parent_uuid if d.HasField("parent_uuid") else None, name, pid, labels, seq)
            if d.HasField("thread"):
                threads[d.uuid] = d.thread.tid
    _, decoded, unread = decode_events(trace)
    problems += [f"{what}: {u}" for u in unread[:20]]
    events = []  # (seq, ts on CLOCK_MONOTONIC, type, name, uuid, flows)
    for track, ts, i, typ, e, name, _args in decoded:
        flows = list(e.flow_ids) + list(e.terminating_flow_ids) + list(e.flow_ids_old) + list(e.terminating_flow_ids_old)
        events.append((trace.packet[i].trusted_packet_sequence_id, ts, typ, name, track, flows))
    return tracks, threads, events


def process_of(tracks, uuid):
    seen = set()
    while uuid is not None and uuid in tracks and uuid not in seen:
        seen.add(uuid)
        parent, _, pid, _, _ = tracks[uuid]
        if pid is not None:
            return uuid
        uuid = parent
    return None


def path_of(tracks, uuid):
    """Names from the track up to (not including) its process track."""
    names = []
    while uuid in tracks and tracks[uuid][2] is None:
        names.append(tracks[uuid][1])
        uuid = tracks[uuid][0]
    return "/".join(reversed(names))


def slices(events):
    return sum(1 for e in events if e[2] in (TE.TYPE_SLICE_BEGIN, TE.TYPE_INSTANT))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    problems = []
    merged = read(sys.argv[1])
    tracks, threads, events = walk(merged, problems, "merged")
    processes = {u: t for u, t in tracks.items() if t[2] is not None}
    rank_dirs = [Path(d) for d in sys.argv[2:]]
    metas = [json.loads((d / "meta.json").read_text()) for d in rank_dirs]
    by_name = {}
    for u, t in processes.items():
        by_name.setdefault(t[1], []).append(u)
    if len(processes) != len(rank_dirs):
        problems.append(f"{len(processes)} processes, {len(rank_dirs)} ranks: {sorted(by_name)}")
    pids = [t[2] for t in processes.values()]
    if len(set(pids)) != len(pids):
        problems.append(f"pids not unique: {pids}")

    # Everything that has an owner has one owner.
    owner = {}
    for seq, ts, typ, name, uuid, flows in events:
        proc = process_of(tracks, uuid)
        for what in [("sequence", seq)] + [("flow", f) for f in flows]:
            if owner.setdefault(what, proc) != proc:
                problems.append(f"{what[0]} {what[1]} on two processes")
    for u, t in tracks.items():
        if owner.setdefault(("sequence", t[4]), process_of(tracks, u)) != process_of(tracks, u):
            problems.append(f"sequence {t[4]} describes tracks of two processes")
    tids = defaultdict(set)
    for u, tid in threads.items():
        tids[tid].add(process_of(tracks, u))
    problems += [f"tid {t} in {len(p)} processes" for t, p in tids.items() if len(p) > 1]

    result = {}
    for d, meta in zip(rank_dirs, metas):
        want_name = f"rank {meta['rank']} ({meta['host']}, pid {meta['pid']})"
        procs = by_name.get(want_name, [])
        if len(procs) != 1:
            problems.append(f"{len(procs)} processes named {want_name!r}: {sorted(by_name)}")
            continue
        proc = procs[0]
        mine = [e for e in events if process_of(tracks, e[4]) == proc]
        own_tracks, _, own_events = walk(read(d / "trace.pftrace"), problems, f"rank {meta['rank']}")
        key = lambda tr: (lambda e: (e[1], e[2], e[3], path_of(tr, e[4])))
        got = [key(tracks)(e) for e in mine]
        want = [key(own_tracks)(e) for e in own_events]
        if got != want:
            diff = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            problems.append(
                f"rank {meta['rank']}: {len(got)} events merged, {len(want)} in its own trace; "
                f"first difference at {diff}: {got[diff:diff + 1]} vs {want[diff:diff + 1]}")
        flows = {f for e in mine for f in e[5]}
        own_flows = {f for e in own_events for f in e[5]}
        if len(flows) != len(own_flows):
            problems.append(f"rank {meta['rank']}: {len(flows)} flows merged, {len(own_flows)} in its own trace")
        result[str(meta["rank"])] = {
            "process": tracks[proc][1],
            "pid": tracks[proc][2],
            "labels": tracks[proc][3],
            "slices": slices(mine),
            "own_slices": slices(own_events),
            "flows": len(flows),
        }
    print(json.dumps(result, sort_keys=True))
    if problems:
        print(f"check_merged_pftrace: {len(problems)} problems in {sys.argv[1]}:")
        for p in problems[:40]:
            print("  " + p)
        sys.exit(1)


if __name__ == "__main__":
    main()
