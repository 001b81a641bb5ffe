#!/usr/bin/env python3
"""Checks a syclgraph output directory's trace.pftrace with Perfetto's own
trace proto (perfetto/protos/perfetto/trace/perfetto_trace_pb2.py from the
`perfetto` package, with `protobuf`).

usage: check_pftrace.py DIR [--partial]

Checks:
  - the file parses as a perfetto.protos.Trace;
  - every track an event names is described, and every track has a name;
  - every slice has a name; host waits and barriers are named "wait: ..."
    or "barrier: ...", the critical path's slices "<operation> #<instance>
    (<cause>)";
  - nesting: on each track, with the events sorted by time as Perfetto's
    importer sorts them (ties in file order), every slice end closes the
    slice it was written for (no slice ends before it begins, no partial
    overlap on one track);
  - each timed kernels.csv row is exactly one device slice (name, instance,
    start, end equal), and each device slice is a row;
  - (not --partial) each region's projection tracks add up to its
    regions.csv device_span_ns, and with tracing on for the whole run each
    closed entry of a region is one "task: <name>" slice;
  - (not --partial) each edge of instances.dot whose two ends have a slice
    is a flow from a slice (or marker) of the producer to one of the
    consumer; each device slice with a task span has its submission flow.

--partial: for a program killed by a signal: kernels.csv may hold rows the
trace has not got yet, and there is no instances.dot.

Prints a one-line summary and exits 0, or prints the problems and exits 1.
"""

import csv
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # pragma: no cover
    sys.exit(f"check_pftrace: the perfetto package is needed ({e}); run scripts/setup.sh")

TE = pb.TrackEvent
MONOTONIC = 3


def varint(data, pos):
    """The varint at `pos` of `data` and the position after it; (None, pos)
    when the data ends inside it."""
    value = shift = 0
    while True:
        if pos >= len(data):
            return None, pos
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def read_trace(path):
    """The trace's whole packets, parsed: a cut file (a killed rank's) is
    read as far as its last whole packet, as syclgraph merges it."""
    data = Path(path).read_bytes()
    pos, end = 0, 0
    while pos < len(data):
        key, p = varint(data, pos)
        length, p = varint(data, p) if key is not None else (None, p)
        if key != (1 << 3 | 2) or length is None or p + length > len(data):
            break
        pos = end = p + length
    trace = pb.Trace()
    trace.ParseFromString(data[:end])
    return trace


def decode_events(trace):
    """Reads a parsed trace's packets as Perfetto's trace processor does,
    per sequence (defaults, interned names, incremental clocks).

    Returns (names, events, problems): the track names by uuid; the track
    events as (track, ts, packet index, type, event, name, args) with ts on
    CLOCK_MONOTONIC; and what could not be read.
    """
    problems = []
    names = {}
    events = []  # (track, ts, file index, type, event, name, args)
    clock_snapshot = False
    # Perfetto's per-sequence state, as its trace processor keeps it
    # (src/trace_processor/importers/proto/proto_trace_reader.cc): the
    # packet defaults, the interned names, and the sequence-scoped clocks
    # (ids 64..127; an incremental one adds each timestamp to its last
    # value), each cleared by SEQ_INCREMENTAL_STATE_CLEARED.
    seqs = {}
    for i, p in enumerate(trace.packet):
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED or seq not in seqs:
            seqs[seq] = dict(valid=bool(p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED),
                             defaults=None, event_names={}, arg_names={}, clocks={})
        st = seqs[seq]
        if p.HasField("trace_packet_defaults"):
            st["defaults"] = p.trace_packet_defaults
        if p.HasField("interned_data"):
            for e in p.interned_data.event_names:
                st["event_names"][e.iid] = e.name
            for e in p.interned_data.debug_annotation_names:
                st["arg_names"][e.iid] = e.name
        if p.HasField("clock_snapshot"):
            clocks = p.clock_snapshot.clocks
            mono = [c.timestamp for c in clocks if c.clock_id == MONOTONIC]
            if not any(64 <= c.clock_id < 128 for c in clocks):
                clock_snapshot = clock_snapshot or bool(mono)
            for c in clocks:
                if 64 <= c.clock_id < 128:
                    if not mono:
                        problems.append(f"packet {i}: clock {c.clock_id} not tied to CLOCK_MONOTONIC")
                        continue
                    st["clocks"][c.clock_id] = dict(incremental=c.is_incremental, last=c.timestamp,
                                                    offset=mono[0] - c.timestamp)
            continue
        if p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE and not st["valid"]:
            problems.append(f"packet {i}: needs the incremental state of sequence {seq}, never cleared")
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            name = d.name or (d.process.process_name if d.HasField("process") else "")
            if not name:
                problems.append(f"track {d.uuid} has no name")
            names[d.uuid] = name
        if p.HasField("track_event"):
            defaults = st["defaults"]
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (
                defaults.timestamp_clock_id if defaults is not None and defaults.HasField("timestamp_clock_id") else MONOTONIC)
            ts = p.timestamp
            if 64 <= clock < 128:
                c = st["clocks"].get(clock)
                if c is None:
                    problems.append(f"packet {i}: clock {clock} of sequence {seq} has no snapshot")
                    continue
                if c["incremental"]:
                    c["last"] += ts
                    ts = c["last"]
                ts += c["offset"]
            elif clock != MONOTONIC:
                problems.append(f"packet {i}: timestamp_clock_id {clock}")
            te = p.track_event
            if te.HasField("track_uuid"):
                track = te.track_uuid
            elif defaults is not None and defaults.track_event_defaults.HasField("track_uuid"):
                track = defaults.track_event_defaults.track_uuid
            else:
                problems.append(f"packet {i}: an event without a track")
                continue
            if te.HasField("name_iid"):
                name = st["event_names"].get(te.name_iid)
                if name is None:
                    problems.append(f"packet {i}: event name {te.name_iid} not interned on sequence {seq}")
                    name = ""
            else:
                name = te.name
            args = {}
            for a in te.debug_annotations:
                kind = a.WhichOneof("value")
                if a.HasField("name_iid"):
                    arg = st["arg_names"].get(a.name_iid)
                    if arg is None:
                        problems.append(f"packet {i}: arg name {a.name_iid} not interned on sequence {seq}")
                        continue
                else:
                    arg = a.name
                args[arg] = getattr(a, kind) if kind else None
            events.append((track, ts, i, te.type, te, name, args))
    if not clock_snapshot:
        problems.append("no clock snapshot with CLOCK_MONOTONIC")

    return names, events, problems


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    partial = "--partial" in sys.argv[2:]
    problems = []
    trace = pb.Trace()
    data = (out / "trace.pftrace").read_bytes()
    trace.ParseFromString(data)

    names, events, decoded_problems = decode_events(trace)
    problems += decoded_problems

    # Slices as written: a BEGIN and the END that follows it on its track.
    slices = []  # dict(track, name, start, end, args, flows, ends)
    open_by_track = defaultdict(list)
    for track, ts, i, typ, ev, name, args in events:
        if track not in names:
            problems.append(f"packet {i}: track {track} was never described")
        if typ == TE.TYPE_SLICE_BEGIN:
            s = dict(track=track, name=name, start=ts, end=None, args=args,
                     flows=list(ev.flow_ids), ends=list(ev.terminating_flow_ids), first=i,
                     instant=False)
            slices.append(s)
            open_by_track[track].append(s)
        elif typ == TE.TYPE_SLICE_END:
            if not open_by_track[track]:
                problems.append(f"packet {i}: slice end with nothing open on {names.get(track)}")
                continue
            s = open_by_track[track].pop()
            s["end"] = ts
            s["last"] = i
        elif typ == TE.TYPE_INSTANT:
            slices.append(dict(track=track, name=name, start=ts, end=ts, args=args,
                               flows=list(ev.flow_ids), ends=list(ev.terminating_flow_ids),
                               first=i, last=i, instant=True))
    for track, left in open_by_track.items():
        if left and not partial:
            problems.append(f"{len(left)} slices never ended on {names.get(track)}")
    done = [s for s in slices if s["end"] is not None]
    for s in done:
        if not s["name"]:
            problems.append(f"a slice at {s['start']} on {names.get(s['track'])} has no name")
    # Host waits and barriers say what they waited on; the critical path's
    # slices name the step ("saxpy #3 (queue)").
    for s in done:
        track = names.get(s["track"], "")
        if track.startswith("host thread ") and s["name"].startswith(("wait", "barrier")):
            if not re.match(r"^(wait|barrier): \S", s["name"]):
                problems.append(f"host span named {s['name']!r}")
        if track == "critical path" and not re.match(r"^.+ #\d+ \((dependency|queue|device|host|none)\)$", s["name"]):
            problems.append(f"critical path slice named {s['name']!r}")
    for s in done:
        if s["end"] < s["start"]:
            problems.append(f"{s['name']} on {names.get(s['track'])} ends before it begins")

    # Nesting as Perfetto's importer sees it: events sorted by (ts, file order).
    by_track = defaultdict(list)
    for s in done:
        if s["instant"]:
            continue
        by_track[s["track"]].append((s["start"], s["first"], "B", id(s)))
        by_track[s["track"]].append((s["end"], s["last"], "E", id(s)))
    for track, evs in by_track.items():
        evs.sort(key=lambda e: (e[0], e[1]))
        stack = []
        for ts, _, kind, sid in evs:
            if kind == "B":
                stack.append(sid)
            elif not stack or stack[-1] != sid:
                problems.append(f"partial overlap on track {names.get(track)!r} at {ts}")
                break
            else:
                stack.pop()

    # kernels.csv rows against device slices.
    device_tracks = {u for u, n in names.items() if n.startswith("queue ")}
    device = [s for s in done if s["track"] in device_tracks and not s["instant"]]
    got = defaultdict(int)
    for s in device:
        got[(s["name"], s["args"].get("instance"), s["start"], s["end"])] += 1
    with open(out / "kernels.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["timing"] == "ok"]
    want = defaultdict(int)
    for r in rows:
        want[(r["name"], int(r["instance"]), int(r["start_ns"]), int(r["end_ns"]))] += 1
    for k, n in want.items():
        if got.get(k, 0) != n and not (partial and got.get(k, 0) == 0):
            problems.append(f"kernels.csv row {k}: {n} rows, {got.get(k, 0)} device slices")
    for k, n in got.items():
        if want.get(k, 0) != n:
            problems.append(f"device slice {k}: {n} slices, {want.get(k, 0)} kernels.csv rows")

    # Flows: id -> begin events, end events; each resolved to (node, instance).
    def key(s):
        a = s["args"]
        return (a.get("node"), a.get("instance"))

    # The row's other values: its device slice is on its queue's track
    # ("queue <queue_id> <device_id> <device>", or a lane of it, "... #2"),
    # and its task span, when it has one, on "host thread <thread_id>",
    # named "submit <name>".
    device_at = {(s["name"], s["args"].get("instance"), s["start"], s["end"]): s for s in device}
    spans = {key(s): s for s in done if s["track"] not in device_tracks and not s["instant"]
             and names.get(s["track"], "").startswith("host thread ")}
    on_queue_track = on_thread_track = 0
    for r in rows:
        s = device_at.get((r["name"], int(r["instance"]), int(r["start_ns"]), int(r["end_ns"])))
        if s is None:
            continue
        track = names.get(s["track"], "")
        m = re.match(r"^queue (\S+)(?: (.*?))?(?: #\d+)?$", track)
        want_device = f"{r['device_id']} {r['device']}" if r["device"] else None
        if not m or m.group(1) != (r["queue_id"] or "?") or (want_device and m.group(2) != want_device):
            problems.append(f"{r['name']} #{r['instance']} on track {track!r}, its row says queue {r['queue_id']} {want_device}")
        else:
            on_queue_track += 1
        span = spans.get(key(s))
        if span is None:
            continue
        span_track = names.get(span["track"], "")
        if span["name"] != f"submit {r['name']}" or not span_track.startswith("host thread "):
            problems.append(f"{r['name']} #{r['instance']}: task span {span['name']!r} on {span_track!r}")
        elif span_track == f"host thread {r['thread_id']}":
            # (A span the runtime ran on another thread than the one that
            # submitted, thread_id, is on that thread's track: seen with
            # dpnp's reductions.)
            on_thread_track += 1

    starts, stops = defaultdict(list), defaultdict(list)
    for s in done:
        for f in s["flows"]:
            starts[f].append(s)
        for f in s["ends"]:
            stops[f].append(s)
    flows = set()
    for f, begins in starts.items():
        for a in begins:
            for b in stops.get(f, []):
                flows.add((key(a), key(b)))
    with_slice = {key(s) for s in done}

    edges_checked = edges_without_slice = 0
    if not partial:
        dot = (out / "instances.dot").read_text()
        for m in re.finditer(r"^\s*i(\d+)_(\d+) -> i(\d+)_(\d+)", dot, re.M):
            a = (int(m.group(1)), int(m.group(2)))
            b = (int(m.group(3)), int(m.group(4)))
            if a not in with_slice or b not in with_slice:
                edges_without_slice += 1
                continue
            edges_checked += 1
            if (a, b) not in flows:
                problems.append(f"instance edge {a} -> {b} is not a flow")
        host_keys = {key(s) for s in done if s["track"] not in device_tracks and not s["instant"]}
        for s in device:
            k = key(s)
            if k in host_keys and (k, k) not in flows:
                problems.append(f"no submission flow to the device slice of {k}")

    # The tracks of what was computed at the end: the critical path's steps
    # are critical_path.csv's rows, one slice each.
    by_name = defaultdict(int)
    for s in done:
        by_name[names.get(s["track"], "")] += 1
    critical = by_name.get("critical path", 0)
    if not partial and (out / "critical_path.csv").exists():
        with open(out / "critical_path.csv") as f:
            rows_on_path = list(csv.DictReader(f))
        steps = len(rows_on_path)
        if steps != critical:
            problems.append(f"{critical} slices on the critical path track, {steps} rows in critical_path.csv")
        # Step by step: each row's operation, instance and cause is a slice.
        want = Counter(f"{r['name']} #{r['instance']} ({r['gap_cause']})" for r in rows_on_path)
        have = Counter(s["name"] for s in done if names.get(s["track"], "") == "critical path")
        if want != have:
            missing = list((want - have).elements())[:5]
            extra = list((have - want).elements())[:5]
            problems.append(f"critical path track differs from critical_path.csv: rows without a slice {missing}, slices without a row {extra}")
        if by_name.get("tracing on", 0) < 1:
            problems.append("no slice on the 'tracing on' track")

    # The regions (regions.csv): each region's device projection track(s)
    # "region <path> (device)[ #n]" hold its entries' projections, whose
    # durations add up to its device_span_ns; with tracing on for the whole
    # run, each entry closed is one "task: <name>" slice on a host thread.
    region_tracks = 0
    regions_csv = out / "regions.csv"
    if not partial and regions_csv.exists():
        with open(regions_csv, newline="") as f:
            regions = list(csv.DictReader(f))
        span_by_path = defaultdict(int)
        for s in done:
            m = re.match(r"^region (.*) \(device\)(?: #\d+)?$", names.get(s["track"], ""))
            if m:
                span_by_path[m.group(1)] += s["end"] - s["start"]
                if s["name"] != m.group(1):
                    problems.append(f"projection slice {s['name']!r} on track of {m.group(1)!r}")
        by_path = {r["region"]: r for r in regions}
        for path, total in span_by_path.items():
            region_tracks += 1
            row = by_path.get(path)
            if row is None:
                problems.append(f"projection track of {path!r}, which regions.csv has not")
            elif total != int(row["device_span_ns"]):
                problems.append(f"{path!r}: projections add up to {total} ns, regions.csv device_span_ns {row['device_span_ns']}")
        with open(out / "windows.csv", newline="") as f:
            windows = list(csv.DictReader(f))
        if len(windows) == 1 and windows[0]["still_on"] == "1":
            want = Counter()
            for r in regions:
                want[r["name"]] += int(r["count"]) - int(r["unclosed"])
            have = Counter(s["name"][len("task: "):] for s in done
                           if s["name"].startswith("task: ")
                           and names.get(s["track"], "").startswith("host thread "))
            if want != have:
                problems.append(f"ITT task slices {dict(have)} against regions.csv entries {dict(want)}")

    if problems:
        print(f"check_pftrace: {len(problems)} problems in {out / 'trace.pftrace'}:")
        for p in problems[:40]:
            print("  " + p)
        sys.exit(1)
    print(
        f"check_pftrace: ok: {len(trace.packet)} packets, {len(names)} tracks, "
        f"{len(done)} slices ({len(device)} device), {len(rows)} timed kernels.csv rows, "
        f"{len(flows)} flows, {edges_checked} instance edges checked "
        f"({edges_without_slice} with an end without a slice), "
        f"{critical} critical path slices, {region_tracks} region projections checked, "
        f"{on_queue_track} device slices on their row's queue track, "
        f"{on_thread_track} task spans on their row's thread"
    )


if __name__ == "__main__":
    main()
