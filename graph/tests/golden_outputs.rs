//! Every output file, byte for byte, from fixed record streams replayed the
//! way the subscriber's collector applies them, compared with the golden
//! files under `tests/golden/<case>/`. A refactor of the model, the
//! analyses or the writers must leave them identical.
//!
//! The streams are deterministic: coherent runs built from a seeded
//! generator (kernels, memcpys and host tasks on two devices and three
//! queues, dependencies, in-order queue edges, waits, untimed commands,
//! late device records, tracing windows, a SYCL graph), the per-instance
//! benchmark's memcpy chain, and arbitrary streams from the property tests'
//! strategy drawn with proptest's deterministic RNG.
//!
//! After an intended change of an output, regenerate the goldens with
//! `SYCLGRAPH_BLESS=1 cargo test -p syclgraph-graph --test graph_tests golden_outputs::`
//! and review the diff.

use crate::common;
use crate::property_strategies as strategies;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use syclgraph_graph::critical_path_text::critical_path_text;
use syclgraph_graph::instances_dot::render_instances_dot;
use syclgraph_graph::journal::{append_record, JournalReader, JOURNAL_HEADER};
use syclgraph_graph::perfetto::{TraceWriter, CLOCK_BOOTTIME, CLOCK_MONOTONIC};
use syclgraph_graph::record::{
    DeviceTimes, EdgeInfo, InstanceEdge, NodeId, NodeInfo, Record, SpanKind, TimingStatus,
};
use syclgraph_graph::regions_csv::{region_block, region_rows};
use syclgraph_graph::replay::Replay;
use syclgraph_graph::summary::{format_table, read_summary_csv, summary_table};
use syclgraph_graph::what_if_text::what_would_pay_text;
use syclgraph_graph::windows::write_windows_csv;
use syclgraph_graph::{write_all, write_kernels_csv, KernelRowWriter, Limits, Run};

/// The time every "now" of the outputs is taken at.
const NOW_NS: u64 = 9_000_000_000;

/// The trace writer every case writes to.
fn golden_trace() -> TraceWriter<Vec<u8>> {
    TraceWriter::new(
        Vec::new(),
        4242,
        "golden",
        &[(CLOCK_BOOTTIME, 7), (CLOCK_MONOTONIC, 1_000)],
        u64::MAX,
    )
    .unwrap()
}

/// Every output of one replay: (file name, bytes).
fn outputs(records: &[Record], limits: Limits) -> Vec<(String, Vec<u8>)> {
    let mut graph = Run::with_limits(limits);
    let mut rows = KernelRowWriter::new(Vec::new()).unwrap();
    let mut trace = golden_trace();
    let mut done = Vec::new();
    for record in records {
        trace.observe(&graph, record);
        graph.apply(record.clone(), &mut done);
        for c in done.drain(..) {
            rows.write(&graph, &c).unwrap();
            trace.write(&graph, &c);
        }
    }
    graph.finish(&mut done);
    for c in done.drain(..) {
        rows.write(&graph, &c).unwrap();
        trace.write(&graph, &c);
    }
    let report = graph.critical_path().report();
    trace.write_summary_track(0, "critical path", &report.steps, |_, s, label| {
        let name = graph.node(s.key.0).map_or("?", |n| n.operation.as_str());
        let _ = write!(label, "{name} #{} ({})", s.key.1, s.cause.as_str());
        (s.start_ns, s.end_ns)
    });
    trace.write_summary_track(1, "tracing on", graph.windows(), |i, w, label| {
        let _ = write!(label, "tracing on #{}", i + 1);
        (w.start_ns, w.end_ns.unwrap_or(NOW_NS))
    });
    trace.write_region_tracks(&graph);
    trace.flush().unwrap();
    let trace_bytes = trace.get_ref().clone();
    drop(trace);
    rows.flush().unwrap();
    files_of(&graph, rows.into_inner().unwrap(), trace_bytes)
}

/// Every output the subscriber writes with its pipeline deferred: the
/// model alone live (its kernels.csv rows streamed), every record
/// journalled, and the run with its analyses and the trace replayed from
/// the journal at the end ([`Replay`]).
fn deferred_outputs(records: &[Record], limits: Limits) -> Vec<(String, Vec<u8>)> {
    let kernels = common::streamed_rows(records, limits);
    let mut journal = Journal::default();
    for record in records {
        journal.append(record);
    }
    let mut replay = Replay::new(limits, Some(golden_trace()));
    for record in journal.read_back() {
        replay.apply(record);
    }
    replay.finish(NOW_NS);
    let mut trace = replay.take_trace().unwrap();
    trace.flush().unwrap();
    files_of(replay.run(), kernels, trace.get_ref().clone())
}

/// The records as the subscriber journals them, read back in order.
struct Journal(Vec<u8>);

impl Default for Journal {
    fn default() -> Journal {
        Journal(JOURNAL_HEADER.to_vec())
    }
}

impl Journal {
    fn append(&mut self, record: &Record) {
        append_record(record, &mut self.0);
    }

    fn read_back(&self) -> impl Iterator<Item = Record> + '_ {
        JournalReader::new(&self.0[..]).unwrap().map(|r| r.unwrap())
    }
}

/// The files written from the finished run, after kernels.csv and the trace.
fn files_of(graph: &Run, kernels: Vec<u8>, trace_bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![
        ("kernels.csv".to_string(), kernels),
        ("trace.pftrace".to_string(), trace_bytes),
    ];
    let report = graph.critical_path().report();
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), graph).unwrap();
    write_kernels_csv(&dir.path().join("all"), graph).unwrap();
    for name in [
        "graph.dot",
        "summary.csv",
        "critical_path.csv",
        "idle_gaps.csv",
        "regions.csv",
        "all/kernels.csv",
    ] {
        let bytes = fs::read(dir.path().join(name)).unwrap();
        out.push((name.replace('/', "_"), bytes));
    }
    out.push((
        "instances.dot".to_string(),
        render_instances_dot(graph).into_bytes(),
    ));
    let mut windows = Vec::new();
    write_windows_csv(&mut windows, graph.windows(), NOW_NS).unwrap();
    out.push(("windows.csv".to_string(), windows));
    let mut text = summary_table(graph);
    text.push_str(&region_block(&region_rows(graph, &report)));
    text.push_str(&critical_path_text(graph, &report));
    out.push(("summary.txt".to_string(), text.into_bytes()));
    out.push((
        "what_would_pay.txt".to_string(),
        what_would_pay_text(graph).into_bytes(),
    ));
    let summary = fs::read(dir.path().join("summary.csv")).unwrap();
    let read_back = match read_summary_csv(&summary[..]) {
        Ok(lines) => format_table(&lines),
        Err(e) => format!("error: {e}\n"),
    };
    out.push(("summary_read_back.txt".to_string(), read_back.into_bytes()));
    out.push((
        "stats.txt".to_string(),
        format!("{:#?}\n", graph.stats()).into_bytes(),
    ));
    out
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn metadata(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A node definition: (hint, name, metadata) by the node's role.
fn define(id: NodeId, role: u64, queue: u64, device: u64) -> Record {
    let queue = queue.to_string();
    let handle = format!("{device:#x}");
    let device_name = if device == 0xd1 {
        "Intel(R) Data Center GPU Max 1550"
    } else {
        "Intel(R) Core(TM) i7 \"CPU\""
    };
    let (hint, name, mut pairs) = match role {
        0 | 1 => (
            "command_group_node",
            if role == 0 {
                "_ZTSZ4mainE6stencil"
            } else {
                "_ZTS6reduce"
            },
            vec![
                ("kernel_name", "_ZTSZ4mainE6stencil"),
                ("sym_source_file_name", "/src/app/stencil.cpp"),
                ("sym_line_no", "17"),
                ("global_size", "1024,1,1"),
                ("local_size", "64,1,1"),
            ],
        ),
        2 => (
            "memory_transfer_node::memcpy",
            "main",
            vec![("memory_size", "4096"), ("sym_line_no", "42")],
        ),
        3 => ("host_task", "host_task", vec![("sym_line_no", "77")]),
        _ => (
            "command_group_node",
            "fill",
            vec![("memory_size", "128"), ("sym_function_name", "fill")],
        ),
    };
    if role == 1 {
        pairs[0] = ("kernel_name", "_ZTS6reduce");
    }
    pairs.push(("queue_id", &queue));
    pairs.push(("sycl_device", &handle));
    pairs.push(("sycl_device_name", device_name));
    Record::NodeDefined(Box::new(NodeInfo {
        id,
        uid: 0x1000 + u64::from(id),
        kind_hint: hint.to_string(),
        name: name.to_string(),
        source_file: Some("/src/app/stencil.cpp".to_string()),
        source_line: Some(10 + id),
        source_column: Some(3),
        metadata: metadata(&pairs),
    }))
}

/// A coherent run: `nodes` nodes submitted `submissions` times in all on
/// three queues (1 and 2 in order on the GPU and its tile, 3 out of order
/// on the CPU), with data dependencies, waits and device records that
/// arrive late.
pub fn coherent(seed: u64, nodes: u32, submissions: u64) -> Vec<Record> {
    let mut rng = Rng(seed);
    let mut out = vec![
        Record::Tracing { on: true, ns: 900 },
        Record::String {
            id: 1,
            text: "Intel(R) Data Center GPU Max 1550".into(),
        },
        Record::String {
            id: 2,
            text: "Intel(R) Core(TM) i7 \"CPU\"".into(),
        },
        Record::String {
            id: 3,
            text: "queue::wait".into(),
        },
        Record::String {
            id: 4,
            text: "event::wait \\ barrier".into(),
        },
        Record::String {
            id: 5,
            text: "step".into(),
        },
        Record::String {
            id: 6,
            text: "forward".into(),
        },
        Record::String {
            id: 7,
            text: "backward, \"grad\"".into(),
        },
        Record::DeviceDefined {
            device: 0xd1,
            parent: 0,
        },
        Record::DeviceDefined {
            device: 0xd11,
            parent: 0xd1,
        },
        Record::DeviceDefined {
            device: 0xc1,
            parent: 0,
        },
    ];
    let queues = [(1u64, 1u32, 0xd1u64), (2, 1, 0xd11), (3, 2, 0xc1)];
    for (q, name, handle) in queues {
        out.push(Record::QueueCreated {
            queue_id: q,
            device: name,
            device_handle: handle,
            ns: 1_000 + q,
        });
    }
    // Node → (role, queue index).
    let mut roles = Vec::new();
    for id in 0..nodes {
        let role = rng.below(5);
        let q = rng.below(3) as usize;
        roles.push((role, q));
        if rng.below(4) != 0 {
            out.push(define(id, role, queues[q].0, queues[q].2));
        }
    }
    for e in 0..nodes.saturating_sub(1) {
        let source = rng.below(u64::from(nodes)) as NodeId;
        let target = rng.below(u64::from(nodes)) as NodeId;
        out.push(Record::EdgeDefined(Box::new(EdgeInfo {
            id: e,
            uid: 0x5000 + u64::from(e),
            source,
            target,
            metadata: metadata(&[
                ("access_mode", if e % 2 == 0 { "read" } else { "write" }),
                ("memory_object", "0x7f00aa"),
            ]),
        })));
    }
    out.push(Record::GraphMember { graph: 1, node: 0 });
    out.push(Record::GraphMember { graph: 1, node: 1 });
    out.push(Record::GraphEdge {
        graph: 1,
        source: 0,
        target: 1,
    });
    out.push(Record::GraphFinalized {
        graph: 1,
        node: nodes,
        thread: 1,
        begin_ns: 1_500,
        end_ns: 2_500,
    });

    let mut t = 10_000u64;
    let mut instances = vec![0u64; nodes as usize];
    let mut last_on_queue: [Option<(NodeId, u64)>; 3] = [None; 3];
    let mut device_free = [0u64; 3];
    // (node, instance, end) of earlier submissions.
    let mut earlier: Vec<(NodeId, u64, u64)> = Vec::new();
    // Device records held back, emitted a few submissions later.
    let mut late: Vec<(u64, Record)> = Vec::new();
    for step in 0..submissions {
        let node = rng.below(u64::from(nodes)) as NodeId;
        let (role, q) = roles[node as usize];
        instances[node as usize] += 1;
        let instance = instances[node as usize];
        let thread = 1 + (rng.below(2) as u32);
        t += 200 + rng.below(3_000);
        // Regions on thread 1, by the step alone (the generator's
        // sequence stays as it was): "step" around ten submissions,
        // "forward" around its first five, "backward" its last five.
        let region = |label, ns| Record::RegionBegin {
            thread: 1,
            label,
            ns,
            id: 0,
            shown: step > 0,
        };
        let region_end = |ns| Record::RegionEnd {
            thread: 1,
            ns,
            id: 0,
        };
        match step % 10 {
            0 => out.extend([region(5, t - 2), region(6, t - 1)]),
            5 => out.extend([region_end(t - 2), region(7, t - 1)]),
            _ => {}
        }
        let after = if q < 2 { last_on_queue[q] } else { None };
        out.push(match after {
            Some(after) => Record::SubmittedAfter {
                node,
                instance,
                thread,
                ns: t,
                after,
            },
            None => Record::Submitted {
                node,
                instance,
                thread,
                ns: t,
            },
        });
        out.push(Record::InstanceQueue {
            node,
            instance,
            queue_id: queues[q].0,
        });
        let mut ready = t + 300;
        if !earlier.is_empty() && rng.below(2) == 0 {
            let (source, source_instance, end) = earlier[rng.below(earlier.len() as u64) as usize];
            out.push(Record::InstanceEdge(InstanceEdge {
                source,
                source_instance,
                target: node,
                target_instance: instance,
                queue_order: false,
            }));
            if step % 3 == 0 {
                out.push(Record::EdgeInstance {
                    edge: (step % u64::from(nodes.max(1))) as u32,
                    instance,
                });
            }
            ready = ready.max(end);
        }
        out.push(Record::TaskBegin {
            node,
            instance,
            thread,
            ns: t + 10,
        });
        out.push(Record::Signal {
            node,
            instance,
            event: 0xe000 + step,
        });
        let took = if role == 3 {
            500 + rng.below(5_000)
        } else {
            40
        };
        out.push(Record::TaskEnd {
            node,
            instance,
            thread,
            ns: t + 10 + took,
        });
        let start = ready.max(device_free[q]) + rng.below(200);
        let duration = 1_000 + rng.below(20_000);
        let end = start + duration;
        if role != 3 {
            device_free[q] = end;
            let status = match rng.below(12) {
                0 => TimingStatus::NoProfiling,
                1 => TimingStatus::Lost,
                _ => TimingStatus::Ok,
            };
            let record = Record::Device(DeviceTimes {
                node,
                instance,
                status,
                start_ns: start,
                end_ns: end,
            });
            late.push((step + 1 + rng.below(3), record));
        }
        earlier.push((node, instance, if role == 3 { t + 10 + took } else { end }));
        if q < 2 {
            last_on_queue[q] = Some((node, instance));
        }
        if rng.below(5) == 0 {
            let label = 3 + rng.below(2) as u32;
            out.push(Record::SpanBegin {
                kind: if label == 3 {
                    SpanKind::Wait
                } else {
                    SpanKind::Barrier
                },
                label,
                thread,
                ns: t + 100,
            });
            t = t.max(end) + 50;
            out.push(Record::SpanEnd {
                kind: if label == 3 {
                    SpanKind::Wait
                } else {
                    SpanKind::Barrier
                },
                thread,
                ns: t,
            });
        }
        if step % 10 == 9 {
            out.extend([region_end(t + 1), region_end(t + 1)]);
        }
        if step == submissions / 2 {
            out.push(Record::Tracing {
                on: false,
                ns: t + 1,
            });
            out.push(Record::Tracing {
                on: true,
                ns: t + 2,
            });
        }
        let (now, later): (Vec<_>, Vec<_>) = late.drain(..).partition(|(at, _)| *at <= step);
        late = later;
        out.extend(now.into_iter().map(|(_, r)| r));
    }
    out.extend(late.into_iter().map(|(_, r)| r));
    // An overlapped task on thread 2 and one left open at the end.
    out.extend([
        Record::RegionBegin {
            thread: 2,
            label: 6,
            ns: t + 10,
            id: 0x77,
            shown: true,
        },
        Record::RegionBegin {
            thread: 2,
            label: 5,
            ns: t + 20,
            id: 0,
            shown: true,
        },
        Record::RegionEnd {
            thread: 2,
            ns: t + 30,
            id: 0x77,
        },
    ]);
    out.push(Record::QueueDestroyed {
        queue_id: 3,
        ns: t + 100_000,
    });
    out
}

/// The per-instance benchmark's stream: a chain of timed memcpys on one
/// in-order queue, announced before they are timed.
fn memcpy_chain(n: u64) -> Vec<Record> {
    let mut out = vec![define(0, 2, 1, 0xd1)];
    let announce = |i: u64| Record::SubmissionAnnounced {
        node: 0,
        instance: i,
        after: (i > 1).then(|| (0, i - 1)),
    };
    out.push(announce(1));
    let t0 = 1_700_000_000_000_000u64;
    for i in 1..=n {
        if i < n {
            out.push(announce(i + 1));
        }
        let t = t0 + i * 5_000;
        out.push(Record::TimedTask {
            node: 0,
            instance: i,
            thread: 1,
            submit_ns: t,
            begin_ns: t + 120,
            end_ns: t + 900,
            event: 0x7f00_0000_0000 + i * 64,
            device_status: TimingStatus::Ok,
            device_start_ns: t + 1_300,
            device_end_ns: t + 1_300 + 700 + (i * 37) % 400,
        });
    }
    out
}

/// An arbitrary stream of the property tests, the `n`th drawn.
fn arbitrary(n: usize) -> Vec<Record> {
    let mut runner = TestRunner::deterministic();
    let strategy = strategies::stream();
    let mut value = Vec::new();
    for _ in 0..=n {
        value = strategy.new_tree(&mut runner).unwrap().current();
    }
    value
}

/// Every case: (name, records, limits).
fn cases() -> Vec<(String, Vec<Record>, Limits)> {
    let small = Limits {
        max_instances: 7,
        max_pending: 4,
        recent_finalised: 16,
    };
    let mut cases = vec![
        (
            "coherent_small".to_string(),
            coherent(1, 5, 40),
            Limits::default(),
        ),
        (
            "coherent_large".to_string(),
            coherent(7, 12, 200),
            Limits::default(),
        ),
        ("coherent_limited".to_string(), coherent(3, 8, 120), small),
        (
            "memcpy_chain".to_string(),
            memcpy_chain(40),
            Limits::default(),
        ),
    ];
    for n in [0, 3, 8, 21] {
        cases.push((format!("arbitrary_{n}"), arbitrary(n), Limits::default()));
    }
    cases.push(("arbitrary_5_limited".to_string(), arbitrary(5), small));
    cases
}

fn golden_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(case)
}

/// Where two byte strings first differ, as a line number and both lines.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let got = String::from_utf8_lossy(got);
    for (i, (a, b)) in want.lines().zip(got.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  golden: {a}\n  now:    {b}", i + 1);
        }
    }
    format!(
        "{} lines golden, {} now",
        want.lines().count(),
        got.lines().count()
    )
}

#[test]
fn every_output_matches_its_golden_file() {
    check_against_goldens(outputs);
}

/// The deferred pipeline (the model alone live, the analyses and the
/// trace replayed from the journal: the untimed subscriber's exit and
/// `syclgraph report` after a kill) writes the very bytes of the live one
/// (the subscriber's with device timing on), file by file.
#[test]
fn the_deferred_outputs_match_the_golden_files() {
    check_against_goldens(deferred_outputs);
}

/// Every output file of a record stream: (file name, bytes).
type Files = Vec<(String, Vec<u8>)>;

fn check_against_goldens(outputs: fn(&[Record], Limits) -> Files) {
    let bless = std::env::var_os("SYCLGRAPH_BLESS").is_some();
    let mut failures = Vec::new();
    for (case, records, limits) in cases() {
        let dir = golden_dir(&case);
        let files = outputs(&records, limits);
        // The same stream twice gives the same bytes (nothing depends on
        // hashing order or time).
        assert_eq!(
            files,
            outputs(&records, limits),
            "{case}: not deterministic"
        );
        if bless {
            fs::create_dir_all(&dir).unwrap();
        }
        for (name, bytes) in files {
            let path = dir.join(&name);
            if bless {
                fs::write(&path, &bytes).unwrap();
                continue;
            }
            match fs::read(&path) {
                Ok(want) if want == bytes => {}
                Ok(want) => failures.push(format!(
                    "{case}/{name} differs: {}",
                    first_difference(&want, &bytes)
                )),
                Err(e) => failures.push(format!("{case}/{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cases_exercise_the_analyses() {
    // The coherent runs have a critical path with device and dependency
    // steps and idle gaps, so the goldens check those files.
    let records = coherent(7, 12, 200);
    let files = outputs(&records, Limits::default());
    let file = |name: &str| {
        let bytes = &files.iter().find(|(n, _)| n == name).unwrap().1;
        String::from_utf8(bytes.clone()).unwrap()
    };
    assert!(file("critical_path.csv").lines().count() > 10);
    assert!(file("idle_gaps.csv").lines().count() > 5);
    assert!(file("kernels.csv").lines().count() > 100);
    assert!(file("instances.dot").contains("queue_order"));
    assert!(file("graph.dot").contains("cluster_sycl_graph_1"));
}
