//! Per-instance cost of the graph crate, for profiling: applies the records
//! of N tiny memcpys (one node, N instances, each in queue order after the
//! previous one) the way the subscriber's collector does, streams their
//! `kernels.csv` rows and `trace.pftrace` slices, then writes the exit
//! outputs once.
//!
//! ```sh
//! cargo build --release -p syclgraph-graph --example instance_cost
//! valgrind --tool=callgrind target/release/examples/instance_cost 2000
//! valgrind --tool=callgrind target/release/examples/instance_cost 4000
//! ```
//!
//! (Ir[4000] - Ir[2000]) / 2000 is the cost per instance.

use std::hint::black_box;

use syclgraph_graph::perfetto::{TraceWriter, CLOCK_MONOTONIC};
use syclgraph_graph::record::{NodeInfo, Record, TimingStatus};
use syclgraph_graph::{dot, instances_dot, summary, KernelRowWriter, Run};

fn memcpy_node() -> Record {
    let pairs = [
        ("sym_function_name", "main"),
        ("sym_source_file_name", "/src/app/memcpy_loop.cpp"),
        ("sym_line_no", "42"),
        ("sym_column_no", "9"),
        ("from_source", "true"),
        ("sycl_device_type", "cpu"),
        ("sycl_device", "0x5566aabb"),
        ("sycl_device_name", "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz"),
        ("src_memory_ptr", "140000"),
        ("dest_memory_ptr", "150000"),
        ("memory_size", "64"),
        ("queue_id", "1"),
    ];
    Record::NodeDefined(Box::new(NodeInfo {
        id: 0,
        uid: 0x5566_0000_1234,
        kind_hint: "memory_transfer_node::memcpy".into(),
        name: "main".into(),
        source_file: Some("/src/app/memcpy_loop.cpp".into()),
        source_line: Some(42),
        source_column: Some(9),
        metadata: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }))
}

fn main() -> std::io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let mut graph = Run::new();
    let mut rows = KernelRowWriter::new(Vec::with_capacity(1 << 20))?;
    let mut trace = TraceWriter::new(
        std::io::sink(),
        1,
        "instance_cost",
        &[(CLOCK_MONOTONIC, 1)],
        u64::MAX,
    )?;
    let mut done = Vec::new();
    let mut apply = |graph: &mut Run, r: Record| -> std::io::Result<()> {
        trace.observe(graph, &r);
        graph.apply(r, &mut done);
        for c in done.drain(..) {
            rows.write(graph, &c)?;
            trace.write(graph, &c);
        }
        Ok(())
    };
    apply(&mut graph, memcpy_node())?;
    let t0 = 1_700_000_000_000_000u64;
    // What the collector applies for a timed direct-path memcpy: its
    // announcement on arrival, then the whole instance once timed. The
    // program submits the next memcpy before this one is read, so its
    // queue-order edge is known when this one's slice is written.
    let announce = |i: u64| Record::SubmissionAnnounced {
        node: 0,
        instance: i,
        after: (i > 1).then(|| (0, i - 1)),
    };
    apply(&mut graph, announce(1))?;
    for i in 1..=n {
        if i < n {
            apply(&mut graph, announce(i + 1))?;
        }
        let t = t0 + i * 5_000;
        apply(
            &mut graph,
            Record::TimedTask {
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
            },
        )?;
    }
    graph.finish(&mut done);
    for c in done.drain(..) {
        rows.write(&graph, &c)?;
        trace.write(&graph, &c);
    }
    trace.flush()?;
    rows.flush()?;
    let csv = rows.into_inner()?;
    let mut dot_out = Vec::new();
    dot::write_dot(&mut dot_out, &graph)?;
    let mut summary_out = Vec::new();
    summary::write_summary_csv(&mut summary_out, &graph)?;
    let table = summary::summary_table(&graph);
    let mut instances = Vec::new();
    instances_dot::write_instances_dot(&mut instances, &graph)?;
    black_box((&csv, &dot_out, &summary_out, &table, &instances));
    if std::env::var_os("INSTANCE_COST_DUMP").is_some() {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for part in [
            &csv[..],
            &dot_out,
            &summary_out,
            table.as_bytes(),
            &instances,
        ] {
            out.write_all(part)?;
        }
    }
    Ok(())
}
