//! The codec's tests: every variant by hand, random records and sequences,
//! a journal cut at every byte, and garbage.

use std::io::{self, Read};

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// `records` as a whole journal.
fn journal(records: &[Record]) -> Vec<u8> {
    let mut out = JOURNAL_HEADER.to_vec();
    for r in records {
        append_record(r, &mut out);
    }
    out
}

/// Every item a reader gives for `bytes`, with each error as its kind.
fn read_all(bytes: impl Read) -> Vec<Result<Record, io::ErrorKind>> {
    JournalReader::new(bytes)
        .unwrap()
        .map(|r| r.map_err(|e| e.kind()))
        .collect()
}

/// A reader that hands out at most one byte a call (refills everywhere).
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

fn assert_round_trips(records: &[Record]) {
    let bytes = journal(records);
    let want: Vec<_> = records.iter().cloned().map(Ok).collect();
    assert_eq!(read_all(&bytes[..]), want);
    assert_eq!(read_all(Trickle(&bytes)), want);
}

fn metadata(pairs: &[(&str, &str)]) -> Metadata {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One record of every variant with edge values (0, `u64::MAX`, empty and
/// non-ASCII strings, both `Option` cases where there is one).
fn every_variant() -> Vec<Record> {
    let m = u64::MAX;
    vec![
        Record::String {
            id: u32::MAX,
            text: "ünïcødé ✓ \0 tab\t".into(),
        },
        Record::String {
            id: 0,
            text: "".into(),
        },
        Record::NodeDefined(Box::new(NodeInfo {
            id: 7,
            uid: m,
            kind_hint: "memory_transfer_node::memcpy".into(),
            name: "".into(),
            source_file: Some("/src/ä.cpp".into()),
            source_line: Some(u32::MAX),
            source_column: Some(0),
            metadata: metadata(&[("sym_line_no", "42"), ("", ""), ("κ", "v")]),
        })),
        Record::NodeDefined(Box::default()),
        Record::NodeMetadata {
            node: 3,
            metadata: Box::new(metadata(&[("from_source", "false")])),
        },
        Record::NodeMetadata {
            node: 0,
            metadata: Box::default(),
        },
        Record::EdgeDefined(Box::new(EdgeInfo {
            id: u32::MAX,
            uid: 0,
            source: 1,
            target: u32::MAX,
            metadata: metadata(&[("access_mode", "read_write")]),
        })),
        Record::EdgeInstance {
            edge: 0,
            instance: m,
        },
        Record::Submitted {
            node: 1,
            instance: 2,
            thread: u32::MAX,
            ns: m,
        },
        Record::TaskBegin {
            node: 0,
            instance: 0,
            thread: 0,
            ns: 0,
        },
        Record::TaskEnd {
            node: u32::MAX,
            instance: m,
            thread: 1,
            ns: 1_700_000_000_000_000,
        },
        Record::Task {
            node: 1,
            instance: 1,
            thread: 1,
            begin_ns: m,
            end_ns: 0,
        },
        Record::SignalledTask {
            node: 1,
            instance: 9,
            thread: 2,
            begin_ns: 0,
            end_ns: m,
            event: 0x5555_1234_5678,
        },
        Record::SubmittedAfter {
            node: 1,
            instance: 10,
            thread: 2,
            ns: 5,
            after: (u32::MAX, m),
        },
        Record::SubmittedTask {
            node: 2,
            instance: m,
            thread: 3,
            submit_ns: 1_700_000_000_000_000,
            after: Some((2, m - 1)),
            begin_ns: 1_699_999_999_999_000,
            end_ns: 1_700_000_000_000_900,
            event: Some(0),
        },
        Record::SubmittedTask {
            node: 2,
            instance: 1 << 32,
            thread: 3,
            submit_ns: 0,
            after: None,
            begin_ns: m,
            end_ns: 1,
            event: None,
        },
        Record::SubmissionAnnounced {
            node: 0,
            instance: 1 << 32,
            after: Some((0, (1 << 32) - 1)),
        },
        Record::SubmissionAnnounced {
            node: u32::MAX,
            instance: m,
            after: None,
        },
        Record::TimedTask {
            node: 0,
            instance: 300,
            thread: 1,
            submit_ns: 1_700_000_001_500_000,
            // 3 s after the submission: no fixed layout.
            begin_ns: 1_700_003_001_500_120,
            end_ns: 1_700_003_001_500_900,
            event: 0x5555_5f00_2a40,
            device_status: TimingStatus::Ok,
            device_start_ns: 1_700_003_001_501_300,
            device_end_ns: 1_700_003_001_502_000,
        },
        Record::TimedTask {
            node: 1,
            instance: m,
            thread: 0,
            submit_ns: m,
            begin_ns: 0,
            end_ns: m,
            event: m,
            device_status: TimingStatus::NotRetained,
            device_start_ns: 0,
            device_end_ns: 0,
        },
        Record::Signal {
            node: 4,
            instance: 4,
            event: m,
        },
        Record::SpanBegin {
            kind: SpanKind::Wait,
            label: 0,
            thread: 1,
            ns: 2,
        },
        Record::SpanBegin {
            kind: SpanKind::Task,
            label: u32::MAX,
            thread: 0,
            ns: m,
        },
        Record::SpanEnd {
            kind: SpanKind::Barrier,
            thread: u32::MAX,
            ns: 0,
        },
        Record::Tracing { on: true, ns: 0 },
        Record::Tracing { on: false, ns: m },
        Record::QueueCreated {
            queue_id: m,
            device: 2,
            device_handle: 0x5566_aabb,
            ns: 1,
        },
        Record::DeviceDefined {
            device: m,
            parent: 0,
        },
        Record::QueueDestroyed { queue_id: 0, ns: m },
        Record::Device(DeviceTimes {
            node: 3,
            instance: 3,
            status: TimingStatus::Lost,
            start_ns: m,
            end_ns: 0,
        }),
        Record::InstanceEdge(InstanceEdge {
            source: 0,
            source_instance: m,
            target: u32::MAX,
            target_instance: 0,
            queue_order: true,
        }),
        Record::InstanceEdge(InstanceEdge {
            source: 1,
            source_instance: 1,
            target: 2,
            target_instance: 1,
            queue_order: false,
        }),
        Record::InstanceQueue {
            node: 1,
            instance: 2,
            queue_id: m,
        },
        Record::GraphMember {
            graph: u32::MAX,
            node: 0,
        },
        Record::GraphEdge {
            graph: 1,
            source: u32::MAX,
            target: 0,
        },
        Record::GraphFinalized {
            graph: 1,
            node: 5,
            thread: 0,
            begin_ns: m,
            end_ns: 3,
        },
    ]
}

/// `records` are written with `tags`, in order (runs of one tag as one),
/// and round-trip alone and in sequence.
fn assert_tags_and_round_trips(records: &[Record], tags: std::ops::RangeInclusive<u8>) {
    let mut got: Vec<u8> = records.iter().map(tag_of).collect();
    got.dedup();
    assert_eq!(got, tags.collect::<Vec<u8>>(), "one tag each");
    for r in records {
        assert_round_trips(std::slice::from_ref(r));
    }
    assert_round_trips(records);
}

#[test]
fn every_variant_round_trips_alone_and_in_sequence() {
    assert_tags_and_round_trips(&every_variant(), 1..=27);
    let m = u64::MAX;
    let regions = [
        Record::RegionBegin {
            thread: u32::MAX,
            label: 3,
            ns: m,
            id: 0,
            shown: true,
        },
        Record::RegionBegin {
            thread: 0,
            label: u32::MAX,
            ns: 0,
            id: m,
            shown: false,
        },
        Record::RegionEnd {
            thread: 1,
            ns: m,
            id: m,
        },
    ];
    assert_tags_and_round_trips(&regions, 35..=36);
}

/// Hot records that take their fixed layouts, in the order of the layouts'
/// tags (28 ..= 34), values at the layouts' bounds included.
fn fixed_layouts() -> Vec<Record> {
    let m = u64::MAX;
    let top = u64::from(u32::MAX);
    let (lo, hi) = (i64::from(i32::MIN) as u64, i64::from(i32::MAX) as u64);
    vec![
        Record::SubmissionAnnounced {
            node: u32::MAX,
            instance: top,
            after: None,
        },
        Record::SubmissionAnnounced {
            node: 0,
            instance: 0,
            after: None,
        },
        Record::SubmissionAnnounced {
            node: 0,
            instance: 300,
            after: Some((0, 299)),
        },
        Record::SubmissionAnnounced {
            node: 1,
            instance: 0,
            after: Some((u32::MAX, top)),
        },
        Record::TimedTask {
            node: 0,
            instance: 300,
            thread: 1,
            submit_ns: 1_700_000_001_500_000,
            begin_ns: 1_700_000_001_500_120,
            end_ns: 1_700_000_001_500_900,
            event: 0x5555_5f00_2a40,
            device_status: TimingStatus::Ok,
            device_start_ns: 1_700_000_001_501_300,
            device_end_ns: 1_700_000_001_502_000,
        },
        // Every difference at a bound of i32, across u64's wrap.
        Record::TimedTask {
            node: u32::MAX,
            instance: top,
            thread: u32::MAX,
            submit_ns: m,
            begin_ns: m.wrapping_add(hi),
            end_ns: m.wrapping_add(hi).wrapping_add(lo),
            event: m,
            device_status: TimingStatus::NotRetained,
            device_start_ns: m.wrapping_add(hi).wrapping_add(lo).wrapping_add(lo),
            device_end_ns: m
                .wrapping_add(hi)
                .wrapping_add(lo)
                .wrapping_add(lo)
                .wrapping_add(hi),
        },
        Record::SubmittedTask {
            node: 2,
            instance: 7,
            thread: 3,
            submit_ns: 1_700_000_000_000_000,
            after: None,
            begin_ns: 1_700_000_000_000_000 + hi,
            end_ns: 1_700_000_000_000_000,
            event: None,
        },
        Record::SubmittedTask {
            node: 2,
            instance: top,
            thread: 0,
            submit_ns: 0,
            after: Some((u32::MAX, top)),
            begin_ns: lo,
            end_ns: lo.wrapping_add(hi),
            event: None,
        },
        Record::SubmittedTask {
            node: 0,
            instance: 0,
            thread: u32::MAX,
            submit_ns: m,
            after: None,
            begin_ns: m,
            end_ns: 0,
            event: Some(m),
        },
        Record::SubmittedTask {
            node: 5,
            instance: 9,
            thread: 1,
            submit_ns: 5_000,
            after: Some((5, 8)),
            begin_ns: 5_120,
            end_ns: 5_900,
            event: Some(0),
        },
    ]
}

#[test]
fn the_hot_records_take_their_fixed_layouts_and_round_trip() {
    let records = fixed_layouts();
    assert_tags_and_round_trips(&records, 28..=34);
    let mixed: Vec<Record> = every_variant().into_iter().chain(records).collect();
    assert_round_trips(&mixed);
}

/// The tag `record` is written with.
fn tag_of(record: &Record) -> u8 {
    let mut out = Vec::new();
    append_record(record, &mut out);
    out[0]
}

#[test]
fn one_past_a_fixed_layouts_bound_takes_the_general_layout() {
    let top = u64::from(u32::MAX);
    let (lo, hi) = (i64::from(i32::MIN) as u64, i64::from(i32::MAX) as u64);
    let announced = |instance, after| Record::SubmissionAnnounced {
        node: 1,
        instance,
        after,
    };
    let timed = |instance, deltas: [u64; 4]| Record::TimedTask {
        node: 1,
        instance,
        thread: 2,
        submit_ns: 1_000,
        begin_ns: 1_000u64.wrapping_add(deltas[0]),
        end_ns: 1_000u64.wrapping_add(deltas[0]).wrapping_add(deltas[1]),
        event: 3,
        device_status: TimingStatus::Ok,
        device_start_ns: 1_000u64
            .wrapping_add(deltas[0])
            .wrapping_add(deltas[1])
            .wrapping_add(deltas[2]),
        device_end_ns: 1_000u64
            .wrapping_add(deltas[0])
            .wrapping_add(deltas[1])
            .wrapping_add(deltas[2])
            .wrapping_add(deltas[3]),
    };
    let submitted = |instance, after, deltas: [u64; 2]| Record::SubmittedTask {
        node: 1,
        instance,
        thread: 2,
        submit_ns: 1_000,
        after,
        begin_ns: 1_000u64.wrapping_add(deltas[0]),
        end_ns: 1_000u64.wrapping_add(deltas[0]).wrapping_add(deltas[1]),
        event: Some(4),
    };
    // (record at the bound, its fixed tag, the record one past it)
    let mut cases = vec![
        (announced(top, None), 28, announced(top + 1, None)),
        (
            announced(1, Some((1, top))),
            29,
            announced(1, Some((1, top + 1))),
        ),
        (timed(top, [0; 4]), 30, timed(top + 1, [0; 4])),
        (
            submitted(top, None, [0; 2]),
            33,
            submitted(top + 1, None, [0; 2]),
        ),
        (
            submitted(1, Some((1, top)), [0; 2]),
            34,
            submitted(1, Some((1, top + 1)), [0; 2]),
        ),
    ];
    for i in 0..4 {
        for (bound, past) in [(hi, hi + 1), (lo, lo.wrapping_sub(1))] {
            let (mut at, mut over) = ([0; 4], [0; 4]);
            at[i] = bound;
            over[i] = past;
            cases.push((timed(1, at), 30, timed(1, over)));
            if i < 2 {
                let (at, over) = ([at[0], at[1]], [over[0], over[1]]);
                cases.push((submitted(1, None, at), 33, submitted(1, None, over)));
            }
        }
    }
    for (at_bound, fixed_tag, past) in cases {
        assert_eq!(tag_of(&at_bound), fixed_tag, "{at_bound:?}");
        let general = match fixed_tag {
            28 | 29 => 13,
            30 => 14,
            _ => 12,
        };
        assert_eq!(tag_of(&past), general, "{past:?}");
        assert_round_trips(&[at_bound, past]);
    }
}

#[test]
fn every_timing_status_round_trips() {
    for status in TimingStatus::ALL {
        assert_round_trips(&[Record::Device(DeviceTimes {
            node: 1,
            instance: 2,
            status,
            start_ns: 10,
            end_ns: 5,
        })]);
    }
}

/// The bytes of a tiny memcpy's pair, laid out by hand from the format.
#[test]
fn a_memcpy_pair_has_the_documented_bytes() {
    let records = fixed_layouts();
    let pair = [&records[2], &records[4]];
    let mut out = Vec::new();
    for r in pair {
        append_record(r, &mut out);
    }
    // Tag 29; node 0, instance 300, after (0, 299): u32 little-endian.
    let announced = [29, 0, 0, 0, 0, 0x2c, 1, 0, 0, 0, 0, 0, 0, 0x2b, 1, 0, 0];
    let mut timed = vec![30, 0, 0, 0, 0, 0x2c, 1, 0, 0, 1, 0, 0, 0];
    timed.extend(1_700_000_001_500_000u64.to_le_bytes());
    // begin - submit = 120, end - begin = 780: i32 little-endian.
    timed.extend([120, 0, 0, 0, 0x0c, 3, 0, 0]);
    timed.extend(0x5555_5f00_2a40u64.to_le_bytes());
    // Ok; device start - end = 400, device end - start = 700.
    timed.extend([0, 0x90, 1, 0, 0, 0xbc, 2, 0, 0]);
    assert_eq!(out, [&announced[..], &timed[..]].concat());
    assert_eq!(out.len(), 17 + 46);
}

#[test]
fn a_journal_cut_at_every_byte_ends_clean_only_at_record_boundaries() {
    let records: Vec<Record> = every_variant()
        .into_iter()
        .step_by(3)
        .chain(fixed_layouts())
        .collect();
    let bytes = journal(&records);
    let mut boundaries = vec![JOURNAL_HEADER.len()];
    for r in &records {
        let mut out = Vec::new();
        append_record(r, &mut out);
        boundaries.push(boundaries.last().unwrap() + out.len());
    }
    assert_eq!(*boundaries.last().unwrap(), bytes.len());
    for cut in 0..=bytes.len() {
        let head = &bytes[..cut];
        if cut < JOURNAL_HEADER.len() {
            let err = JournalReader::new(head).err().expect("a cut header");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "cut {cut}");
            continue;
        }
        let whole = boundaries.iter().filter(|&&b| b <= cut).count() - 1;
        let mut want: Vec<_> = records[..whole].iter().cloned().map(Ok).collect();
        if !boundaries.contains(&cut) {
            want.push(Err(io::ErrorKind::UnexpectedEof));
        }
        assert_eq!(read_all(head), want, "cut at byte {cut}");
        assert_eq!(read_all(Trickle(head)), want, "cut at byte {cut}, trickled");
    }
}

#[test]
fn a_record_larger_than_the_buffer_reads_back() {
    let big = Record::String {
        id: 1,
        text: "x".repeat(200_000).into(),
    };
    let small = Record::Tracing { on: true, ns: 9 };
    assert_round_trips(&[small.clone(), big, small]);
}

/// The `InvalidData` error a reader gives for `bytes` after the header, with
/// the records before it.
fn garbage(records: &[Record], tail: &[u8]) -> (usize, String) {
    let mut bytes = journal(records);
    bytes.extend_from_slice(tail);
    let mut reader = JournalReader::new(&bytes[..]).unwrap();
    let mut good = 0;
    let err = loop {
        match reader.next().expect("an error before the end") {
            Ok(_) => good += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(reader.next().is_none(), "nothing after an error");
    (good, err.to_string())
}

#[test]
fn garbage_is_invalid_data_naming_its_byte_offset() {
    let first = Record::Tracing { on: true, ns: 1 };
    let h = JOURNAL_HEADER.len();
    // Tracing{on, 1} is 3 bytes: the garbage starts at h + 3.
    let (good, msg) = garbage(&[first], &[0, 1, 2]);
    assert_eq!(good, 1);
    assert!(msg.contains(&format!("byte offset {}", h + 3)), "{msg}");
    assert!(msg.contains("unknown record tag"), "{msg}");
    let (_, msg) = garbage(&[], &[200]);
    assert!(msg.contains(&format!("byte offset {h}")), "{msg}");
    // A flag byte of 2 (Tracing's `on`), at h + 1.
    let (_, msg) = garbage(&[], &[18, 2, 0]);
    assert!(msg.contains(&format!("byte offset {}:", h + 1)), "{msg}");
    // An unknown timing status in a Device record (tag, node, instance, status).
    let (_, msg) = garbage(&[], &[22, 0, 0, 9, 0, 0]);
    assert!(msg.contains(&format!("byte offset {}:", h + 3)), "{msg}");
    assert!(msg.contains("timing status"), "{msg}");
    // A varint of 11 bytes.
    let mut tail = vec![21];
    tail.extend([0xff; 10]);
    tail.push(0);
    let (_, msg) = garbage(&[], &tail);
    assert!(msg.contains("64 bits"), "{msg}");
    // A node id above u32::MAX.
    let (_, msg) = garbage(&[], &[25, 0x80, 0x80, 0x80, 0x80, 0x10, 0]);
    assert!(msg.contains(&format!("byte offset {}:", h + 1)), "{msg}");
    // An unknown timing status in a fixed TimedTask: tag, node, instance,
    // thread, submit_ns, two differences and the event before it.
    let mut tail = vec![30];
    tail.extend([0; 36]);
    tail.push(9);
    tail.extend([0; 8]);
    let (_, msg) = garbage(&[], &tail);
    assert!(msg.contains(&format!("byte offset {}:", h + 37)), "{msg}");
    assert!(msg.contains("timing status"), "{msg}");
    // The first tag past the region records'.
    let (_, msg) = garbage(&[], &[37, 0, 0, 0, 0]);
    assert!(msg.contains(&format!("byte offset {h}:")), "{msg}");
    assert!(msg.contains("unknown record tag"), "{msg}");
    // A string that is not UTF-8.
    let (_, msg) = garbage(&[], &[1, 0, 2, 0xc3, 0x28]);
    assert!(msg.contains("UTF-8"), "{msg}");
    // The same garbage after a refill: offsets count from the journal's start.
    let filler: Vec<Record> = (0..30_000)
        .map(|i| Record::Tracing { on: true, ns: i })
        .collect();
    let len = journal(&filler).len();
    let (good, msg) = garbage(&filler, &[0]);
    assert_eq!(good, filler.len());
    assert!(msg.contains(&format!("byte offset {len}:")), "{msg}");
}

#[test]
fn a_wrong_header_is_invalid_data() {
    for bytes in [&b"syclgraph journal 3\n"[..], b"PK\x03\x04", b"x"] {
        let err = JournalReader::new(bytes).err().expect("a wrong header");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("syclgraph"));
    }
}

#[test]
fn the_header_names_the_format_version() {
    assert_eq!(
        JOURNAL_HEADER,
        format!("syclgraph journal {JOURNAL_VERSION}\n").as_bytes()
    );
    assert!(JOURNAL_HEADER.starts_with(JOURNAL_MAGIC));
}

#[test]
fn a_journal_of_the_varint_only_format_is_refused_not_misread() {
    // Format 1 (before the fixed layouts): a Tracing record after its header.
    let old = b"syclgraph journal 1\n\x12\x01\x05";
    let err = JournalReader::new(&old[..])
        .err()
        .expect("format 1 refused");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    let msg = err.to_string();
    assert!(
        msg.contains("another syclgraph (format 1; this one reads format 2)"),
        "{msg}"
    );
}

fn text() -> impl Strategy<Value = String> {
    vec(any::<char>(), 0..6).prop_map(|c| c.into_iter().collect())
}

fn meta() -> impl Strategy<Value = Metadata> {
    vec((text(), text()), 0..4)
}

/// Numbers as small, realistic (ns, addresses) or anything.
fn num() -> impl Strategy<Value = u64> {
    prop_oneof![
        0..300u64,
        1_699_000_000_000_000..1_701_000_000_000_000u64,
        0x5555_0000_0000..0x5556_0000_0000u64,
        any::<u64>(),
        Just(u64::MAX),
    ]
}

fn id() -> impl Strategy<Value = u32> {
    prop_oneof![0..40u32, any::<u32>(), Just(u32::MAX)]
}

fn status() -> impl Strategy<Value = TimingStatus> {
    proptest::sample::select(TimingStatus::ALL.to_vec())
}

fn span_kind() -> impl Strategy<Value = SpanKind> {
    proptest::sample::select(vec![SpanKind::Wait, SpanKind::Barrier, SpanKind::Task])
}

fn pair() -> impl Strategy<Value = (u32, u64)> {
    (id(), num())
}

fn strings_and_definitions() -> impl Strategy<Value = Record> {
    prop_oneof![
        (id(), text()).prop_map(|(id, t)| Record::String { id, text: t.into() }),
        (
            (id(), num(), text(), text()),
            (
                proptest::option::of(text()),
                proptest::option::of(id()),
                proptest::option::of(id()),
                meta()
            )
        )
            .prop_map(
                |(
                    (id, uid, kind_hint, name),
                    (source_file, source_line, source_column, metadata),
                )| {
                    Record::NodeDefined(Box::new(NodeInfo {
                        id,
                        uid,
                        kind_hint,
                        name,
                        source_file,
                        source_line,
                        source_column,
                        metadata,
                    }))
                }
            ),
        (id(), meta()).prop_map(|(node, m)| Record::NodeMetadata {
            node,
            metadata: Box::new(m)
        }),
        (id(), num(), id(), id(), meta()).prop_map(|(id, uid, source, target, metadata)| {
            Record::EdgeDefined(Box::new(EdgeInfo {
                id,
                uid,
                source,
                target,
                metadata,
            }))
        }),
        pair().prop_map(|(edge, instance)| Record::EdgeInstance { edge, instance }),
        (pair(), id(), num()).prop_map(|((node, instance), thread, ns)| Record::Submitted {
            node,
            instance,
            thread,
            ns
        }),
        (pair(), id(), num()).prop_map(|((node, instance), thread, ns)| Record::TaskBegin {
            node,
            instance,
            thread,
            ns
        }),
        (pair(), id(), num()).prop_map(|((node, instance), thread, ns)| Record::TaskEnd {
            node,
            instance,
            thread,
            ns
        }),
        (pair(), id(), num(), num()).prop_map(|((node, instance), thread, begin_ns, end_ns)| {
            Record::Task {
                node,
                instance,
                thread,
                begin_ns,
                end_ns,
            }
        }),
    ]
}

fn submissions() -> impl Strategy<Value = Record> {
    prop_oneof![
        (pair(), id(), num(), num(), num()).prop_map(
            |((node, instance), thread, begin_ns, end_ns, event)| Record::SignalledTask {
                node,
                instance,
                thread,
                begin_ns,
                end_ns,
                event,
            }
        ),
        (pair(), id(), num(), pair()).prop_map(|((node, instance), thread, ns, after)| {
            Record::SubmittedAfter {
                node,
                instance,
                thread,
                ns,
                after,
            }
        }),
        (
            pair(),
            id(),
            (num(), num(), num()),
            proptest::option::of(pair()),
            proptest::option::of(num())
        )
            .prop_map(
                |((node, instance), thread, (submit_ns, begin_ns, end_ns), after, event)| {
                    Record::SubmittedTask {
                        node,
                        instance,
                        thread,
                        submit_ns,
                        after,
                        begin_ns,
                        end_ns,
                        event,
                    }
                }
            ),
        (pair(), proptest::option::of(pair())).prop_map(|((node, instance), after)| {
            Record::SubmissionAnnounced {
                node,
                instance,
                after,
            }
        }),
        (
            pair(),
            id(),
            (num(), num(), num(), num()),
            status(),
            (num(), num())
        )
            .prop_map(
                |(
                    (node, instance),
                    thread,
                    (submit_ns, begin_ns, end_ns, event),
                    device_status,
                    (device_start_ns, device_end_ns),
                )| Record::TimedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    begin_ns,
                    end_ns,
                    event,
                    device_status,
                    device_start_ns,
                    device_end_ns,
                }
            ),
        (pair(), num()).prop_map(|((node, instance), event)| Record::Signal {
            node,
            instance,
            event
        }),
        (span_kind(), id(), id(), num()).prop_map(|(kind, label, thread, ns)| {
            Record::SpanBegin {
                kind,
                label,
                thread,
                ns,
            }
        }),
        (span_kind(), id(), num()).prop_map(|(kind, thread, ns)| Record::SpanEnd {
            kind,
            thread,
            ns
        }),
        (any::<bool>(), num()).prop_map(|(on, ns)| Record::Tracing { on, ns }),
    ]
}

fn queues_devices_and_graphs() -> impl Strategy<Value = Record> {
    prop_oneof![
        (num(), id(), num(), num()).prop_map(|(queue_id, device, device_handle, ns)| {
            Record::QueueCreated {
                queue_id,
                device,
                device_handle,
                ns,
            }
        }),
        (num(), num()).prop_map(|(device, parent)| Record::DeviceDefined { device, parent }),
        (num(), num()).prop_map(|(queue_id, ns)| Record::QueueDestroyed { queue_id, ns }),
        (pair(), status(), num(), num()).prop_map(
            |((node, instance), status, start_ns, end_ns)| Record::Device(DeviceTimes {
                node,
                instance,
                status,
                start_ns,
                end_ns,
            })
        ),
        (pair(), pair(), any::<bool>()).prop_map(|(s, t, queue_order)| {
            Record::InstanceEdge(InstanceEdge {
                source: s.0,
                source_instance: s.1,
                target: t.0,
                target_instance: t.1,
                queue_order,
            })
        }),
        (pair(), num()).prop_map(|((node, instance), queue_id)| Record::InstanceQueue {
            node,
            instance,
            queue_id
        }),
        (id(), id()).prop_map(|(graph, node)| Record::GraphMember { graph, node }),
        (id(), id(), id()).prop_map(|(graph, source, target)| Record::GraphEdge {
            graph,
            source,
            target
        }),
        (id(), id(), id(), num(), num()).prop_map(|(graph, node, thread, begin_ns, end_ns)| {
            Record::GraphFinalized {
                graph,
                node,
                thread,
                begin_ns,
                end_ns,
            }
        }),
    ]
}

/// Instances around the fixed layouts' 32-bit bound, or anything.
fn instance() -> impl Strategy<Value = u64> {
    prop_oneof![0..300u64, (1u64 << 32) - 3..(1u64 << 32) + 3, any::<u64>(),]
}

/// A difference between two timestamps of a hot record: small, around the
/// fixed layouts' `i32` bounds, or anything.
fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![
        (-3_000..3_000i64).prop_map(|d| d as u64),
        (i64::from(i32::MAX) - 2..i64::from(i32::MAX) + 3).prop_map(|d| d as u64),
        (i64::from(i32::MIN) - 2..i64::from(i32::MIN) + 3).prop_map(|d| d as u64),
        any::<u64>(),
    ]
}

/// The hot records with realistic timestamps (each near the one before it,
/// mostly in their fixed layouts) and values around the layouts' bounds.
fn hot() -> impl Strategy<Value = Record> {
    let after = || proptest::option::of((id(), instance()));
    prop_oneof![
        (id(), instance(), after()).prop_map(|(node, instance, after)| {
            Record::SubmissionAnnounced {
                node,
                instance,
                after,
            }
        }),
        (
            (id(), instance(), id()),
            (num(), gap(), gap()),
            (num(), status(), gap(), gap())
        )
            .prop_map(
                |(
                    (node, instance, thread),
                    (submit_ns, d_begin, d_end),
                    (event, device_status, d_start, d_device_end),
                )| {
                    let begin_ns = submit_ns.wrapping_add(d_begin);
                    let end_ns = begin_ns.wrapping_add(d_end);
                    let device_start_ns = end_ns.wrapping_add(d_start);
                    Record::TimedTask {
                        node,
                        instance,
                        thread,
                        submit_ns,
                        begin_ns,
                        end_ns,
                        event,
                        device_status,
                        device_start_ns,
                        device_end_ns: device_start_ns.wrapping_add(d_device_end),
                    }
                }
            ),
        (
            (id(), instance(), id()),
            (num(), gap(), gap()),
            after(),
            proptest::option::of(num())
        )
            .prop_map(
                |((node, instance, thread), (submit_ns, d_begin, d_end), after, event)| {
                    let begin_ns = submit_ns.wrapping_add(d_begin);
                    Record::SubmittedTask {
                        node,
                        instance,
                        thread,
                        submit_ns,
                        after,
                        begin_ns,
                        end_ns: begin_ns.wrapping_add(d_end),
                        event,
                    }
                }
            ),
    ]
}

fn regions() -> impl Strategy<Value = Record> {
    prop_oneof![
        (id(), id(), num(), num(), any::<bool>()).prop_map(|(thread, label, ns, id, shown)| {
            Record::RegionBegin {
                thread,
                label,
                ns,
                id,
                shown,
            }
        }),
        (id(), num(), num()).prop_map(|(thread, ns, id)| Record::RegionEnd { thread, ns, id }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        strings_and_definitions(),
        submissions(),
        queues_devices_and_graphs(),
        hot(),
        regions()
    ]
}

/// Runs `test` on 400 cases of `strategy` on a thread with a large stack
/// (the nested strategies of every variant overflow the default one in
/// debug builds).
fn check<S>(strategy: S, test: fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy + Send + 'static,
{
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut runner =
                proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(400));
            if let Err(e) = runner.run(&strategy, test) {
                panic!("{e}");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn random_records_round_trip() {
    check(record(), |r| {
        let bytes = journal(std::slice::from_ref(&r));
        prop_assert_eq!(read_all(&bytes[..]), vec![Ok(r)]);
        Ok(())
    });
}

#[test]
fn random_sequences_round_trip() {
    check(vec(record(), 0..40), |records| {
        let bytes = journal(&records);
        let want: Vec<_> = records.iter().cloned().map(Ok).collect();
        prop_assert_eq!(read_all(&bytes[..]), want.clone());
        prop_assert_eq!(read_all(Trickle(&bytes)), want);
        Ok(())
    });
}

#[test]
fn the_hot_strategy_reaches_every_layout_of_the_hot_records() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = hot();
    let tags: std::collections::BTreeSet<u8> = (0..3_000)
        .map(|_| tag_of(&strategy.new_tree(&mut runner).unwrap().current()))
        .collect();
    let want: std::collections::BTreeSet<u8> = [12, 13, 14].into_iter().chain(28..=34).collect();
    assert_eq!(tags, want, "the general and every fixed layout");
}
