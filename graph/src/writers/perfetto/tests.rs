//! The trace writer's tests: what it writes, read back.

use super::recent::Ids;
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

/// The parts of Perfetto's messages these tests read back (the field
/// numbers of `protos/perfetto/trace/**.proto`).
mod read {
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Trace {
        #[prost(message, repeated, tag = "1")]
        pub packet: Vec<Packet>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Packet {
        #[prost(uint64, optional, tag = "8")]
        pub timestamp: Option<u64>,
        #[prost(uint32, optional, tag = "58")]
        pub timestamp_clock_id: Option<u32>,
        #[prost(uint32, optional, tag = "10")]
        pub sequence: Option<u32>,
        #[prost(uint32, optional, tag = "13")]
        pub sequence_flags: Option<u32>,
        #[prost(message, optional, tag = "12")]
        pub interned: Option<Interned>,
        #[prost(message, optional, tag = "59")]
        pub defaults: Option<Defaults>,
        #[prost(message, optional, tag = "6")]
        pub clock_snapshot: Option<Snapshot>,
        #[prost(message, optional, tag = "11")]
        pub track_event: Option<Event>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Interned {
        #[prost(message, repeated, tag = "2")]
        pub event_names: Vec<Name>,
        #[prost(message, repeated, tag = "3")]
        pub arg_names: Vec<Name>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Name {
        #[prost(uint64, optional, tag = "1")]
        pub iid: Option<u64>,
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Defaults {
        #[prost(uint32, optional, tag = "58")]
        pub clock: Option<u32>,
        #[prost(message, optional, tag = "11")]
        pub track_event: Option<EventDefaults>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct EventDefaults {
        #[prost(uint64, optional, tag = "11")]
        pub track_uuid: Option<u64>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Snapshot {
        #[prost(message, repeated, tag = "1")]
        pub clocks: Vec<Clock>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Clock {
        #[prost(uint32, optional, tag = "1")]
        pub id: Option<u32>,
        #[prost(uint64, optional, tag = "2")]
        pub timestamp: Option<u64>,
        #[prost(bool, optional, tag = "3")]
        pub incremental: Option<bool>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Event {
        #[prost(int32, optional, tag = "9")]
        pub r#type: Option<i32>,
        #[prost(uint64, optional, tag = "11")]
        pub track_uuid: Option<u64>,
        #[prost(uint64, optional, tag = "10")]
        pub name_iid: Option<u64>,
        #[prost(string, optional, tag = "23")]
        pub name: Option<String>,
        #[prost(message, repeated, tag = "4")]
        pub args: Vec<Arg>,
        #[prost(fixed64, repeated, packed = "false", tag = "47")]
        pub flow_ids: Vec<u64>,
        #[prost(fixed64, repeated, packed = "false", tag = "48")]
        pub terminating_flow_ids: Vec<u64>,
    }
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Arg {
        #[prost(uint64, optional, tag = "1")]
        pub name_iid: Option<u64>,
        #[prost(uint64, optional, tag = "3")]
        pub uint_value: Option<u64>,
        #[prost(string, optional, tag = "6")]
        pub string_value: Option<String>,
    }
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

fn events(bytes: &[u8]) -> Vec<Ev> {
    let trace = <read::Trace as prost::Message>::decode(bytes).expect("the file parses");
    let mut seqs: FxHashMap<u32, SequenceState> = FxHashMap::default();
    let mut out = Vec::new();
    for p in trace.packet {
        let seq = p.sequence.expect("every packet has a sequence");
        if p.sequence_flags.unwrap_or(0) & INCREMENTAL_STATE_CLEARED != 0 {
            seqs.insert(seq, SequenceState::default());
        }
        let st = seqs.entry(seq).or_default();
        if let Some(d) = p.defaults {
            st.clock = d.clock;
            st.track = d.track_event.and_then(|e| e.track_uuid);
        }
        if let Some(i) = p.interned {
            for n in i.event_names {
                st.event_names.insert(n.iid.unwrap(), n.name.unwrap());
            }
            for n in i.arg_names {
                st.arg_names.insert(n.iid.unwrap(), n.name.unwrap());
            }
        }
        if let Some(s) = p.clock_snapshot {
            let at = |id| s.clocks.iter().find(|c| c.id == Some(id));
            if let (Some(inc), Some(mono)) = (at(encoding::INCREMENTAL_CLOCK), at(CLOCK_MONOTONIC))
            {
                assert_eq!(inc.incremental, Some(true));
                st.last = inc.timestamp.unwrap();
                st.offset = mono.timestamp.unwrap() - st.last;
            }
            continue;
        }
        let Some(e) = p.track_event else { continue };
        let mut ts = p.timestamp.expect("an event has a timestamp");
        match p.timestamp_clock_id.or(st.clock) {
            Some(encoding::INCREMENTAL_CLOCK) => {
                st.last += ts;
                ts = st.last + st.offset;
            }
            Some(CLOCK_MONOTONIC) => {}
            c => panic!("clock {c:?}"),
        }
        let name = match (e.name_iid, e.name) {
            (Some(iid), _) => st.event_names[&iid].clone(),
            (None, Some(n)) => n,
            (None, None) => String::new(),
        };
        let args = e
            .args
            .iter()
            .filter_map(|a| Some((st.arg_names[&a.name_iid?].clone(), a.uint_value?)))
            .collect();
        out.push(Ev {
            kind: e.r#type.unwrap_or(0),
            track: e.track_uuid.or(st.track).expect("a track"),
            ts,
            name,
            args,
            flow_ids: e.flow_ids,
            terminating_flow_ids: e.terminating_flow_ids,
        });
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
            let (mut whole, mut laid) = (Vec::new(), Vec::new());
            let n = write_event(&mut whole, &mut track(), ts, &Event::end());
            assert_eq!(write_end(&mut laid, &mut track(), ts), n);
            assert_eq!(laid, whole, "sequence {sequence}, ts {ts}");
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
                let mut laid = Vec::new();
                let n = write_event(
                    &mut laid,
                    &mut track,
                    ts,
                    &Event {
                        kind: Type::SliceBegin,
                        name: Some(Name::Interned(iid, "x")),
                        node: Some(node),
                        instance: Some(instance),
                        head: &head,
                        first_args: &[],
                        flows: &flows[..f],
                        ends: &flows[f..f + e],
                        absolute: false,
                    },
                );
                assert_eq!(n, laid.len());
                // The generic writer (no head: not laid out by hand).
                let mut whole = Vec::new();
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
                    head: &[],
                    first_args: &[],
                    flows: &flows[..f],
                    ends: &flows[f..f + e],
                    absolute: false,
                };
                write_event(&mut whole, &mut t2, ts, &e2);
                assert_eq!(laid, whole, "sequence {sequence}, ts {ts}, flows {f} {e}");
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
