//! What the "what would pay" block costs the subscriber's exit, for
//! profiling: a run of N commands (five kernel nodes in turn on one
//! in-order queue, a host wait every 16, the records a timed command
//! reaches the collector as), applied to a [`Run`] as the exit's replay
//! applies them, then the block computed. `WHAT_IF_COST_MODE`: `none` (no
//! schedule kept: the run as before the block), `collect` (the schedule
//! collected, no block), `block` (the default: collected and the block
//! computed). Deterministic.
//!
//! ```sh
//! cargo build --release -p syclgraph-graph --example what_if_cost
//! WHAT_IF_COST_MODE=none valgrind --tool=callgrind target/release/examples/what_if_cost 50000
//! WHAT_IF_COST_MODE=collect valgrind --tool=callgrind target/release/examples/what_if_cost 50000
//! valgrind --tool=callgrind target/release/examples/what_if_cost 50000
//! ```
//!
//! (Ir[collect] - Ir[none]) / N is the collection's cost per command,
//! (Ir[block] - Ir[collect]) the block's (the plan and five replays). Also
//! prints the block's wall time.

use std::hint::black_box;
use std::time::Instant;

use syclgraph_graph::record::{NodeInfo, Record, SpanKind, TimingStatus};
use syclgraph_graph::what_if::EXIT_LIMIT;
use syclgraph_graph::what_if_text::what_would_pay_text;
use syclgraph_graph::Run;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(EXIT_LIMIT as u64);
    let mode = std::env::var("WHAT_IF_COST_MODE").unwrap_or_else(|_| "block".into());
    let mut run = Run::new();
    run.set_schedule_limit(if mode == "none" { 0 } else { n as usize });
    let mut done = Vec::new();
    let mut apply = |run: &mut Run, r: Record| {
        run.apply(r, &mut done);
        done.clear();
    };
    apply(
        &mut run,
        Record::String {
            id: 1,
            text: "cpu".into(),
        },
    );
    apply(
        &mut run,
        Record::QueueCreated {
            queue_id: 1,
            device: 1,
            device_handle: 0xd0,
            ns: 0,
        },
    );
    for node in 0..5u32 {
        apply(
            &mut run,
            Record::NodeDefined(Box::new(NodeInfo {
                id: node,
                name: format!("kernel{node}"),
                kind_hint: "command_group_node".into(),
                metadata: vec![
                    ("kernel_name".into(), format!("kernel{node}")),
                    ("queue_id".into(), "1".into()),
                ],
                ..NodeInfo::default()
            })),
        );
    }
    let t0 = 1_700_000_000_000_000u64;
    let mut previous: Option<(u32, u64)> = None;
    for i in 1..=n {
        let node = (i % 5) as u32;
        let instance = i / 5 + 1;
        apply(
            &mut run,
            Record::SubmissionAnnounced {
                node,
                instance,
                after: previous,
            },
        );
        let t = t0 + i * 5_000;
        apply(
            &mut run,
            Record::TimedTask {
                node,
                instance,
                thread: 1,
                submit_ns: t,
                begin_ns: t + 120,
                end_ns: t + 900,
                event: 0x5555_5f00_0000 + (i % 64) * 0x40,
                device_status: TimingStatus::Ok,
                device_start_ns: t + 1_300,
                device_end_ns: t + 1_300 + 700 + u64::from(node) * 300 + (i * 37) % 400,
            },
        );
        if i % 16 == 0 {
            for (begin, ns) in [(true, t + 950), (false, t + 4_000)] {
                apply(
                    &mut run,
                    if begin {
                        Record::SpanBegin {
                            kind: SpanKind::Wait,
                            label: 1,
                            thread: 1,
                            ns,
                        }
                    } else {
                        Record::SpanEnd {
                            kind: SpanKind::Wait,
                            thread: 1,
                            ns,
                        }
                    },
                );
            }
        }
        previous = Some((node, instance));
    }
    run.finish(&mut done);
    if mode == "block" {
        let at = Instant::now();
        let text = what_would_pay_text(black_box(&run));
        let took = at.elapsed();
        print!("{text}");
        println!(
            "the block: {:.1} ms for {n} commands",
            took.as_secs_f64() * 1e3
        );
    }
    black_box(&run);
}
