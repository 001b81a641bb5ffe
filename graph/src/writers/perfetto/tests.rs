//! The trace writer's tests: what it writes, read back.

use super::recent::Ids;
use super::wire::{self, Value};
use super::*;
use crate::record::{DeviceTimes, NodeInfo, TimingStatus};

#[test]
fn the_start_of_a_trace_reads_back() {
    let clocks = [(CLOCK_MONOTONIC, 123_456_789), (CLOCK_BOOTTIME, 42)];
    let mut t = TraceWriter::new(Vec::new(), 4321, "my app", &clocks, 1 << 20).unwrap();
    t.flush().unwrap();
    let bytes = t.get_ref().clone();
    let want = TraceStart {
        pid: 4321,
        process_name: "my app".into(),
        clocks: clocks.to_vec(),
    };
    assert_eq!(TraceStart::read(&bytes), Some(want.clone()));
    // Later packets do not matter; garbage, a cut start or nothing do.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0x0a, 0x02, 0x40, 0x01]);
    assert_eq!(TraceStart::read(&longer), Some(want));
    assert_eq!(TraceStart::read(&bytes[..bytes.len() - 1]), None);
    assert_eq!(TraceStart::read(b"not a trace"), None);
    assert_eq!(TraceStart::read(&[]), None);
}

/// A track event as Perfetto reads it: its sequence's defaults,
/// interned names and incremental clock resolved.
#[derive(Debug)]
struct Ev {
    kind: i32,
    track: u64,
    ts: u64,
    name: String,
    args: Vec<(String, u64)>,
    flow_ids: Vec<u64>,
    terminating_flow_ids: Vec<u64>,
}

#[derive(Default)]
struct SequenceState {
    event_names: FxHashMap<u64, String>,
    arg_names: FxHashMap<u64, String>,
    track: Option<u64>,
    clock: Option<u32>,
    /// The incremental clock's last value and its CLOCK_MONOTONIC
    /// offset.
    last: u64,
    offset: u64,
}

/// The fields of the message `buf`, each number with its value.
fn message(buf: &[u8]) -> Vec<(u32, Value<'_>)> {
    wire::fields(buf)
        .map(|f| f.map(|f| (f.number, f.value)).expect("the message parses"))
        .collect()
}

fn uint(v: &Value) -> u64 {
    match *v {
        Value::Varint(n) | Value::Fixed64(n) => n,
        Value::Fixed32(n) => n.into(),
        Value::Len(_) => panic!("a number was expected"),
    }
}

fn bytes<'a>(v: &Value<'a>) -> &'a [u8] {
    match *v {
        Value::Len(b) => b,
        _ => panic!("bytes were expected"),
    }
}

fn text(v: &Value) -> String {
    String::from_utf8(bytes(v).to_vec()).expect("UTF-8")
}

/// An `EventName` or `DebugAnnotationName`: (iid, name).
fn interned_name(buf: &[u8]) -> (u64, String) {
    let (mut iid, mut name) = (None, None);
    for (n, v) in message(buf) {
        match n {
            interned::IID => iid = Some(uint(&v)),
            interned::NAME => name = Some(text(&v)),
            _ => {}
        }
    }
    (iid.expect("an iid"), name.expect("a name"))
}

/// The track events of a trace, read with [`wire`] and the field numbers
/// of [`fields`] (the one decoder of the tests; `tests/scripts/
/// check_pftrace.py` checks the files with Perfetto's own definitions).
fn events(trace: &[u8]) -> Vec<Ev> {
    use fields::{annotation, clock_snapshot as cs, defaults};
    let mut seqs: FxHashMap<u32, SequenceState> = FxHashMap::default();
    let mut out = Vec::new();
    for (number, packet) in message(trace) {
        assert_eq!(number, TRACE_PACKET);
        let p = message(bytes(&packet));
        let get = |f: u32| p.iter().find(|(n, _)| *n == f).map(|(_, v)| *v);
        let seq = u32::try_from(uint(
            &get(packet::TRUSTED_PACKET_SEQUENCE_ID).expect("every packet has a sequence"),
        ))
        .unwrap();
        let flags = get(packet::SEQUENCE_FLAGS).map_or(0, |v| uint(&v)) as u32;
        if flags & INCREMENTAL_STATE_CLEARED != 0 {
            seqs.insert(seq, SequenceState::default());
        }
        let st = seqs.entry(seq).or_default();
        if let Some(d) = get(packet::TRACE_PACKET_DEFAULTS) {
            for (n, v) in message(bytes(&d)) {
                match n {
                    defaults::TIMESTAMP_CLOCK_ID => st.clock = Some(uint(&v) as u32),
                    defaults::TRACK_EVENT_DEFAULTS => {
                        for (n, v) in message(bytes(&v)) {
                            if n == event::TRACK_UUID {
                                st.track = Some(uint(&v));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(i) = get(packet::INTERNED_DATA) {
            for (n, v) in message(bytes(&i)) {
                let (iid, name) = interned_name(bytes(&v));
                match n {
                    interned::EVENT_NAMES => st.event_names.insert(iid, name),
                    interned::DEBUG_ANNOTATION_NAMES => st.arg_names.insert(iid, name),
                    _ => None,
                };
            }
        }
        if let Some(s) = get(packet::CLOCK_SNAPSHOT) {
            // (clock id, timestamp, incremental) of each clock.
            let clocks: Vec<(u64, u64, bool)> = message(bytes(&s))
                .iter()
                .filter(|(n, _)| *n == cs::CLOCKS)
                .map(|(_, c)| {
                    let c = message(bytes(c));
                    let at = |f| c.iter().find(|(n, _)| *n == f).map(|(_, v)| uint(v));
                    (
                        at(cs::CLOCK_ID).unwrap(),
                        at(cs::TIMESTAMP).unwrap(),
                        at(cs::IS_INCREMENTAL) == Some(1),
                    )
                })
                .collect();
            let at = |id: u32| clocks.iter().find(|c| c.0 == u64::from(id));
            if let (Some(inc), Some(mono)) = (at(encoding::INCREMENTAL_CLOCK), at(CLOCK_MONOTONIC))
            {
                assert!(inc.2, "the sequence's clock is incremental");
                st.last = inc.1;
                st.offset = mono.1 - st.last;
            }
            continue;
        }
        let Some(e) = get(packet::TRACK_EVENT) else {
            continue;
        };
        let mut ts = uint(&get(packet::TIMESTAMP).expect("an event has a timestamp"));
        match get(packet::TIMESTAMP_CLOCK_ID)
            .map(|v| uint(&v) as u32)
            .or(st.clock)
        {
            Some(encoding::INCREMENTAL_CLOCK) => {
                st.last += ts;
                ts = st.last + st.offset;
            }
            Some(CLOCK_MONOTONIC) => {}
            c => panic!("clock {c:?}"),
        }
        let mut ev = Ev {
            kind: 0,
            track: 0,
            ts,
            name: String::new(),
            args: Vec::new(),
            flow_ids: Vec::new(),
            terminating_flow_ids: Vec::new(),
        };
        let mut track = None;
        for (n, v) in message(bytes(&e)) {
            match n {
                event::TYPE => ev.kind = uint(&v) as i32,
                event::TRACK_UUID => track = Some(uint(&v)),
                event::NAME_IID => ev.name = st.event_names[&uint(&v)].clone(),
                event::NAME => ev.name = text(&v),
                event::FLOW_IDS => ev.flow_ids.push(uint(&v)),
                event::TERMINATING_FLOW_IDS => ev.terminating_flow_ids.push(uint(&v)),
                event::DEBUG_ANNOTATIONS => {
                    let a = message(bytes(&v));
                    let at = |f| a.iter().find(|(n, _)| *n == f).map(|(_, v)| *v);
                    if let (Some(name), Some(value)) =
                        (at(annotation::NAME_IID), at(annotation::UINT_VALUE))
                    {
                        ev.args
                            .push((st.arg_names[&uint(&name)].clone(), uint(&value)));
                    }
                }
                _ => {}
            }
        }
        ev.track = track.or(st.track).expect("a track");
        out.push(ev);
    }
    out
}

fn graph_with_kernel() -> TaskGraph {
    let mut g = TaskGraph::new();
    let mut done = Vec::new();
    g.apply(
        Record::NodeDefined(Box::new(NodeInfo {
            id: 0,
            uid: 7,
            kind_hint: "command_group_node".into(),
            name: "saxpy".into(),
            source_file: Some("a.cpp".into()),
            source_line: Some(3),
            source_column: None,
            metadata: vec![
                ("kernel_name".into(), "saxpy".into()),
                ("queue_id".into(), "1".into()),
            ],
        })),
        &mut done,
    );
    g
}

fn kernel(instance: u64, start: u64) -> Completed {
    let mut i = crate::Instance::new(instance);
    i.thread = Some(1);
    i.begin_ns = Some(start - 50);
    i.end_ns = Some(start - 40);
    i.device = Some(DeviceTimes {
        node: 0,
        instance,
        status: TimingStatus::Ok,
        start_ns: start,
        end_ns: start + 10,
    });
    Completed {
        node: 0,
        instance: i,
    }
}

#[test]
fn slices_and_flows_of_a_dependency_known_before_and_after() {
    let g = graph_with_kernel();
    let mut t = TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], u64::MAX).unwrap();
    let edge = |a: u64, b: u64| {
        Record::InstanceEdge(InstanceEdge {
            source: 0,
            source_instance: a,
            target: 0,
            target_instance: b,
            queue_order: true,
        })
    };
    // 1 -> 2 known before both complete (twice: queue order and data
    // give the same pair); 1 -> 3 after 1 was written.
    t.observe(&g, &edge(1, 2));
    t.observe(&g, &edge(1, 2));
    t.write(&g, &kernel(1, 1000));
    t.observe(&g, &edge(1, 3));
    t.observe(&g, &edge(1, 3));
    t.write(&g, &kernel(2, 2000));
    t.write(&g, &kernel(3, 3000));
    t.flush().unwrap();
    let ev = events(t.get_ref());
    let begins: Vec<_> = ev
        .iter()
        .filter(|e| e.kind == Type::SliceBegin as i32)
        .collect();
    assert_eq!(begins.len(), 6); // a task span and a device slice each
    let markers: Vec<_> = ev
        .iter()
        .filter(|e| e.kind == Type::Instant as i32)
        .collect();
    assert_eq!(markers.len(), 1, "one marker for the late edge, once");
    let d1 = edge_flow((0, 1), (0, 2));
    let d2 = edge_flow((0, 1), (0, 3));
    assert_eq!(begins[1].flow_ids, vec![d1], "the pair's flow once");
    assert_eq!(
        begins[3]
            .terminating_flow_ids
            .iter()
            .filter(|&&f| f == d1)
            .count(),
        1
    );
    assert_eq!(markers[0].flow_ids, vec![d2]);
    assert_eq!(markers[0].name, "dependency");
    assert_eq!(markers[0].ts, 1000, "at the producer slice's start");
    for (name, value) in [("node", 0), ("instance", 1)] {
        assert!(
            markers[0].args.contains(&(name.to_string(), value)),
            "{:?}",
            markers[0].args
        );
    }
    assert!(begins[5].terminating_flow_ids.contains(&d2));
    // submission -> device
    assert_eq!(begins[0].flow_ids, vec![submit_flow((0, 1))]);
    assert!(begins[1]
        .terminating_flow_ids
        .contains(&submit_flow((0, 1))));
    assert_eq!(t.dropped(), 0);
}

#[test]
fn no_flow_to_an_instance_written_without_a_slice() {
    let g = graph_with_kernel();
    let mut t = TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], u64::MAX).unwrap();
    // 2 completes with no times at all: it has no slice.
    let untimed = Completed {
        node: 0,
        instance: crate::Instance::new(2),
    };
    t.write(&g, &untimed);
    t.observe(
        &g,
        &Record::InstanceEdge(InstanceEdge {
            source: 0,
            source_instance: 1,
            target: 0,
            target_instance: 2,
            queue_order: false,
        }),
    );
    t.write(&g, &kernel(1, 1000));
    t.flush().unwrap();
    let ev = events(t.get_ref());
    assert!(ev.iter().all(|e| e.flow_ids.len() <= 1), "{ev:?}");
    assert!(!ev
        .iter()
        .any(|e| e.flow_ids.contains(&edge_flow((0, 1), (0, 2)))));
    assert_eq!(t.flows(), 1, "the submission's flow only");
}

#[test]
fn a_hand_laid_slice_end_is_the_packet_write_event_writes() {
    for sequence in [2, 3, 100, 127] {
        for (clock, ts) in [(0, 0), (5, 127), (5, 133), (1 << 40, (1 << 40) + 1_000_000)] {
            let track = || Track {
                uuid: 7,
                sequence,
                started: true,
                clock,
                interned: Vec::new(),
            };
            let (mut whole, mut laid) = (Out::default(), Out::default());
            let n = write_event(&mut whole, &mut track(), ts, &Event::end());
            assert_eq!(write_end(&mut laid, &mut track(), ts), n);
            assert_eq!(
                laid.as_slice(),
                whole.as_slice(),
                "sequence {sequence}, ts {ts}"
            );
        }
    }
}

#[test]
fn a_hand_laid_slice_begin_is_the_packet_write_event_writes() {
    let flows = [1u64, u64::MAX, 0x5eed_5eed_5eed_5eed, 7];
    for (sequence, iid, node) in [(2, 2, 0), (127, 200, 1 << 20)] {
        let head = begin_head(iid, node);
        for (clock, ts, instance) in [(0, 0, 1), (5, 133, 1 << 21), (1 << 40, (1 << 40) + 9, 3)] {
            for (f, e) in [(0, 0), (1, 0), (0, 1), (2, 2), (1, 3)] {
                let mut track = Track {
                    uuid: 7,
                    sequence,
                    started: true,
                    clock,
                    interned: Vec::new(),
                };
                track.intern(iid);
                let mut laid = Out::default();
                let n = write_event(
                    &mut laid,
                    &mut track,
                    ts,
                    &Event {
                        kind: Type::SliceBegin,
                        name: Some(Name::Interned(iid, "x")),
                        node: Some(node),
                        instance: Some(instance),
                        head: Some(&head),
                        first_args: &[],
                        flows: &flows[..f],
                        ends: &flows[f..f + e],
                        absolute: false,
                    },
                );
                assert_eq!(n, laid.len());
                // The generic writer (no head: not laid out by hand).
                let mut whole = Out::default();
                let mut t2 = Track {
                    uuid: 7,
                    sequence,
                    started: true,
                    clock,
                    interned: Vec::new(),
                };
                t2.intern(iid);
                let e2 = Event {
                    kind: Type::SliceBegin,
                    name: Some(Name::Interned(iid, "x")),
                    node: Some(node),
                    instance: Some(instance),
                    head: None,
                    first_args: &[],
                    flows: &flows[..f],
                    ends: &flows[f..f + e],
                    absolute: false,
                };
                write_event(&mut whole, &mut t2, ts, &e2);
                assert_eq!(
                    laid.as_slice(),
                    whole.as_slice(),
                    "sequence {sequence}, ts {ts}, flows {f} {e}"
                );
            }
        }
    }
}

#[test]
fn slices_read_back_with_their_names_times_tracks_and_args() {
    let g = graph_with_kernel();
    let mut t = TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], u64::MAX).unwrap();
    // 2 is written before 1: its times are earlier than the track's
    // clock when 1 is written after.
    for (i, start) in [(2, 5000), (1, 1000), (3, 9000)] {
        t.write(&g, &kernel(i, start));
    }
    t.flush().unwrap();
    let ev = events(t.get_ref());
    let begins: Vec<_> = ev
        .iter()
        .filter(|e| e.kind == Type::SliceBegin as i32)
        .collect();
    let ends: Vec<_> = ev
        .iter()
        .filter(|e| e.kind == Type::SliceEnd as i32)
        .collect();
    assert_eq!((begins.len(), ends.len()), (6, 6));
    for (k, (i, start)) in [(2, 5000), (1, 1000), (3, 9000)].into_iter().enumerate() {
        let (host, device) = (begins[2 * k], begins[2 * k + 1]);
        assert_eq!((host.name.as_str(), host.ts), ("submit saxpy", start - 50));
        assert_eq!((device.name.as_str(), device.ts), ("saxpy", start));
        assert_eq!(ends[2 * k].ts, start - 40);
        assert_eq!(ends[2 * k + 1].ts, start + 10);
        assert_eq!(host.track, thread_uuid(1));
        // 1 comes before 2, written first: on the queue's second lane.
        assert_eq!(device.track, queue_uuid(0, usize::from(i == 1)));
        assert!(device.args.contains(&("instance".to_string(), i)));
        assert!(device.args.contains(&("node".to_string(), 0)));
        // The node's own args on its first slice on each track only.
        let queue_arg = device.args.iter().any(|(n, _)| n == "queue");
        assert_eq!(queue_arg, k < 2, "{:?}", device.args);
    }
}

#[test]
fn the_size_bound_cuts_between_whole_packets_and_counts() {
    let g = graph_with_kernel();
    let mut t = TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], 4096).unwrap();
    for i in 1..=200 {
        t.write(&g, &kernel(i, 1000 * i + 100));
    }
    t.flush().unwrap();
    assert!(t.get_ref().len() <= 4096, "{}", t.get_ref().len());
    assert!(t.dropped() > 100, "{}", t.dropped());
    let written = events(t.get_ref()).len() as u64 / 2;
    assert_eq!(written, t.slices());
    assert!(written > 4, "{written}");
}

#[test]
fn a_recent_instance_entry_stays_small() {
    // Two generations in tables of 65,536 slots: every byte here is
    // 128 KiB of the trace's tables.
    assert!(std::mem::size_of::<Ids>() <= 32);
    assert!(std::mem::size_of::<(InstanceKey, Seen)>() <= 88);
    let mut ids = Ids::default();
    for id in 1..=5 {
        ids.push(id);
    }
    ids.pop(5);
    assert!(ids.contains(4) && !ids.contains(5));
    assert_eq!(ids.iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
}

#[test]
fn recent_keeps_two_generations_in_two_tables_allocated_once() {
    let mut recent: Recent<u64, u64> = Recent::default();
    let n = RECENT as u64;
    for k in 0..2 * n {
        recent.insert(k, k);
    }
    // The first generation is the older one, whole; the second current.
    assert_eq!(recent.get_mut(&0), Some(&mut 0));
    assert_eq!(recent.get_mut(&(2 * n - 1)), Some(&mut (2 * n - 1)));
    let tables = (recent.current.capacity(), recent.older.capacity());
    // Exactly full: RECENT fills its table to the load the table allows.
    assert_eq!(tables, (RECENT, RECENT));
    for k in 2 * n..5 * n {
        *recent.entry(k, || 0) = k;
    }
    // The oldest generations are forgotten, the last two kept.
    assert_eq!(recent.get_mut(&(3 * n - 1)), None);
    assert_eq!(recent.get_mut(&(3 * n)), Some(&mut (3 * n)));
    assert_eq!(recent.current.len() + recent.older.len(), 2 * RECENT);
    // The same two tables, neither grown nor made again.
    let now = (recent.current.capacity(), recent.older.capacity());
    assert!(now == tables || now == (tables.1, tables.0));
}
