//! The what-if replay on runs made by rule: each run is generated from its
//! parameters with constant latencies (a command starts 10 ns after its
//! last constraint, a wait returns 7 ns after what it waited for), so the
//! run with a kernel really `k` times faster can be generated too, and the
//! prediction must equal its span exactly: a host loop that turns from
//! device-bound to host-bound, a loop that waits for each kernel, a device
//! that runs one command at a time, a host task between two kernels.

use syclgraph_graph::record::{DeviceTimes, InstanceEdge, NodeId, Record, TimingStatus};
use syclgraph_graph::what_if::{nodes_at, predict, Scenario};
use syclgraph_graph::Run;

use crate::common::{host_run, kernel, node, string, wait_begin, wait_end};

/// A command starts this long after its last constraint.
const LATENCY: u64 = 10;
/// A wait returns this long after what it waited for ended.
const WAKE: u64 = 7;

/// Records of a run, with a finished [`Run`] keeping its whole schedule.
struct Built {
    records: Vec<Record>,
}

impl Built {
    fn new(queues: &[(u64, u64)]) -> Built {
        let mut records = vec![string(1, "cpu"), string(2, "queue.wait")];
        for &(queue_id, device) in queues {
            records.push(Record::QueueCreated {
                queue_id,
                device: 1,
                device_handle: device,
                ns: 0,
            });
        }
        Built { records }
    }

    fn kernel_node(&mut self, id: NodeId, line: u32, queue: u64) {
        let Record::NodeDefined(mut info) = kernel(id, "spin", "tests/w.cpp", line) else {
            unreachable!()
        };
        info.metadata.retain(|(k, _)| k != "queue_id");
        info.metadata.push(("queue_id".into(), queue.to_string()));
        self.records.push(Record::NodeDefined(info));
    }

    /// A timed command: submitted at `submit`, after `after` on its
    /// in-order queue, running `start..end`.
    fn command(
        &mut self,
        key: (NodeId, u64),
        submit: u64,
        after: Option<(NodeId, u64)>,
        (start, end): (u64, u64),
    ) {
        let (node, instance) = key;
        self.records.push(match after {
            Some(after) => Record::SubmittedAfter {
                node,
                instance,
                thread: 1,
                ns: submit,
                after,
            },
            None => Record::Submitted {
                node,
                instance,
                thread: 1,
                ns: submit,
            },
        });
        self.records.push(Record::SignalledTask {
            node,
            instance,
            thread: 1,
            begin_ns: submit + 1,
            end_ns: submit + 2,
            event: 0xe000 + instance,
        });
        self.records.push(Record::Device(DeviceTimes {
            node,
            instance,
            status: TimingStatus::Ok,
            start_ns: start,
            end_ns: end,
        }));
    }

    fn depends(&mut self, source: (NodeId, u64), target: (NodeId, u64)) {
        self.records.push(Record::InstanceEdge(InstanceEdge {
            source: source.0,
            source_instance: source.1,
            target: target.0,
            target_instance: target.1,
            queue_order: false,
        }));
    }

    fn wait(&mut self, begin: u64, end: u64) {
        self.records.push(wait_begin(2, 1, begin));
        self.records.push(wait_end(1, end));
    }

    fn run(&self) -> Run {
        let mut run = Run::new();
        run.set_schedule_limit(usize::MAX);
        let mut done = run.apply_all(self.records.clone());
        run.finish(&mut done);
        run
    }
}

/// `iterations` of: host work `host`, then a kernel of `kernel` ns on an
/// in-order queue, not waited for.
fn turns(host: u64, kernel: u64, iterations: u64) -> Built {
    let mut b = Built::new(&[(1, 0xd0)]);
    b.kernel_node(0, 10, 1);
    let mut queue_end = 0;
    for i in 1..=iterations {
        let submit = i * host;
        let start = submit.max(queue_end) + LATENCY;
        queue_end = start + kernel;
        let after = (i > 1).then_some((0, i - 1));
        b.command((0, i), submit, after, (start, queue_end));
    }
    b
}

/// `iterations` of: a kernel of `kernel` ns, a wait for it, host work `host`.
fn lockstep(host: u64, kernel: u64, iterations: u64) -> Built {
    let mut b = Built::new(&[(1, 0xd0)]);
    b.kernel_node(0, 20, 1);
    let mut t = 100;
    for i in 1..=iterations {
        let start = t + LATENCY;
        let end = start + kernel;
        let after = (i > 1).then_some((0, i - 1));
        b.command((0, i), t, after, (start, end));
        b.wait(t + 3, end + WAKE);
        t = end + WAKE + host;
    }
    b
}

/// The span of `b`'s run and its prediction with `node` `factor` times faster.
fn predicted(b: &Built, location: &str, factor: f64) -> (u64, u64) {
    let run = b.run();
    let plan = run.schedule().plan().expect("the whole schedule");
    let mut scenario = Scenario::new();
    for node in nodes_at(&run, location) {
        scenario.speed_up(node, factor);
    }
    assert!(!scenario.speedups().is_empty(), "{location} names no node");
    let p = predict(&plan, &scenario);
    assert_eq!(p.span_ns, run.critical_path().report().span_ns());
    (p.span_ns, p.predicted_span_ns)
}

fn span(b: &Built) -> u64 {
    b.run().critical_path().report().span_ns()
}

#[test]
fn a_loop_that_turns_host_bound_is_predicted_exactly() {
    // Kernels 2.5x the host work: device-bound; 2x faster still is; 4x
    // faster the host sets the pace.
    let base = turns(1_000, 2_500, 20);
    for (factor, faster) in [(2.0, 1_250), (4.0, 625), (f64::INFINITY, 0)] {
        let (recorded, prediction) = predicted(&base, "tests/w.cpp:10", factor);
        assert_eq!(recorded, span(&base));
        assert_eq!(prediction, span(&turns(1_000, faster, 20)), "{factor}x");
    }
    // What the critical path's share times the factor would say is wrong
    // once the host takes over: the path is all kernel.
    let run = base.run();
    let path = run.critical_path().report();
    let naive = span(&base) - path.node_time(0) * 3 / 4;
    assert!(naive < span(&turns(1_000, 625, 20)) * 9 / 10);
}

#[test]
fn work_after_a_wait_moves_by_what_the_kernel_saved() {
    let base = lockstep(300, 2_000, 10);
    for (factor, faster) in [(2.0, 1_000), (4.0, 500)] {
        let (_, prediction) = predicted(&base, "n0", factor);
        assert_eq!(prediction, span(&lockstep(300, faster, 10)), "{factor}x");
    }
}

#[test]
fn a_host_bound_loop_saves_only_the_last_kernel() {
    let base = turns(3_000, 1_000, 10);
    let (recorded, prediction) = predicted(&base, "spin", 2.0);
    assert_eq!(recorded - prediction, 500);
    assert_eq!(prediction, span(&turns(3_000, 500, 10)));
}

/// Two kernels submitted together on an out-of-order queue of a device
/// that ran one at a time: the second waited for the device.
fn serial_device(first: u64, second: u64, overlap: bool) -> Built {
    let mut b = Built::new(&[(1, 0xd0)]);
    b.kernel_node(0, 30, 1);
    b.kernel_node(1, 31, 1);
    let a_end = 100 + LATENCY + first;
    b.command((0, 1), 100, None, (100 + LATENCY, a_end));
    let b_start = if overlap {
        100 + LATENCY
    } else {
        a_end + LATENCY
    };
    b.command((1, 1), 101, None, (b_start, b_start + second));
    b
}

#[test]
fn a_device_that_ran_one_command_at_a_time_keeps_doing_so() {
    let base = serial_device(4_000, 1_000, false);
    let (_, prediction) = predicted(&base, "n0", 2.0);
    assert_eq!(prediction, span(&serial_device(2_000, 1_000, false)));
    // A device that ran both at once holds neither back: speeding the
    // shorter one up saves nothing, the longer one its time.
    let concurrent = serial_device(1_000, 4_000, true);
    let (recorded, prediction) = predicted(&concurrent, "n0", 2.0);
    assert_eq!(prediction, recorded);
    let (recorded, prediction) = predicted(&concurrent, "n1", 2.0);
    assert_eq!(recorded - prediction, 2_000);
}

#[test]
fn a_host_task_passes_on_what_its_dependency_saved() {
    // Kernel A, a host task that runs 5 µs once A ended, kernel B after it.
    let make = |a: u64| {
        let mut b = Built::new(&[(1, 0xd0)]);
        b.kernel_node(0, 40, 1);
        b.records.push(node(
            1,
            "command_group_node",
            "host task",
            Some(("tests/w.cpp", 41)),
            &[("kernel_name", "host task"), ("queue_id", "1")],
        ));
        b.kernel_node(2, 42, 1);
        let a_end = 110 + a;
        b.command((0, 1), 100, None, (110, a_end));
        b.records.extend(host_run(1, 1, 1, 101, 1));
        b.depends((0, 1), (1, 1));
        b.depends((1, 1), (2, 1));
        b.command((2, 1), 102, None, (a_end + 5_000, a_end + 5_500));
        b
    };
    let (recorded, prediction) = predicted(&make(8_000), "n0", 4.0);
    assert_eq!(recorded - prediction, 6_000);
    assert_eq!(prediction, span(&make(2_000)));
    // The host task itself has no device time: naming it changes nothing.
    let (recorded, prediction) = predicted(&make(8_000), "n1", 4.0);
    assert_eq!(recorded, prediction);
}

#[test]
fn locations_name_nodes_by_id_file_and_line_or_operation() {
    let mut b = Built::new(&[(1, 0xd0)]);
    b.kernel_node(0, 10, 1);
    b.kernel_node(1, 11, 1);
    let run = b.run();
    assert_eq!(nodes_at(&run, "n1"), [1]);
    assert_eq!(nodes_at(&run, "n9"), [] as [NodeId; 0]);
    assert_eq!(nodes_at(&run, "w.cpp:11"), [1]);
    assert_eq!(nodes_at(&run, "tests/w.cpp:10"), [0]);
    assert_eq!(nodes_at(&run, "s/w.cpp:10"), [] as [NodeId; 0]);
    assert_eq!(nodes_at(&run, "spin"), [0, 1]);
    assert_eq!(nodes_at(&run, "w.cpp:12"), [] as [NodeId; 0]);
}
