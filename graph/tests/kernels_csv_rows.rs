//! kernels.csv: the exact header, one row per device command instance, times
//! only when timed, and the streamed rows equal the all-at-once ones.

use crate::common;
use common::*;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::{write_kernel_rows, KernelRowWriter, Run};

fn records() -> Vec<Record> {
    let mut r = vec![
        node(
            0,
            "command_group_node",
            "_ZTSZ4mainE3Mul",
            Some(("/src/k, \"quoted\".cpp", 7)),
            &[
                ("kernel_name", "_ZTSZ4mainE3Mul"),
                ("sycl_device_name", "cpu"),
                ("queue_id", "2"),
                ("global_size", "1024,1,1"),
                ("local_size", "64,1,1"),
            ],
        ),
        node(
            1,
            "command_group_node",
            "host task",
            None,
            &[("kernel_name", "host task")],
        ),
        node(
            2,
            "memory_allocation_node",
            "Memory Allocation[0x1]",
            None,
            &[],
        ),
        node(
            3,
            "command_group_node",
            "fill",
            None,
            &[("kernel_name", "fill"), ("size", "256")],
        ),
    ];
    r.extend(device_run(0, 1, 5, 1_000, 250));
    r.extend(host_run(1, 1, 0, 2_000, 10));
    r.extend(host_run(2, 1, 0, 3_000, 10));
    r.push(submitted(3, 1, 0, 4_000));
    r.push(end(3, 1, 0, 4_010));
    r.push(device_untimed(3, 1, TimingStatus::NoProfiling));
    r
}

#[test]
fn header_and_rows() {
    let (g, _) = build(records());
    let mut out = Vec::new();
    assert_eq!(write_kernel_rows(&mut out, &g).unwrap(), 2);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "name,kind,node_id,instance,queue_id,device,device_id,thread_id,submit_ns,start_ns,end_ns,duration_ns,timing,global_size,local_size,bytes,source_file,source_line,region\n\
         main::Mul,kernel,n0,1,2,cpu,,5,1000,1100,1350,250,ok,\"1024,1,1\",\"64,1,1\",,\"/src/k, \"\"quoted\"\".cpp\",7,\n\
         fill,fill,n3,1,,,,0,4000,,,,no_profiling,,,256,,,\n"
    );
}

#[test]
fn streamed_rows_equal_all_at_once() {
    let mut g = Run::new();
    let mut w = KernelRowWriter::new(Vec::new()).unwrap();
    let mut done = Vec::new();
    let mut written = Vec::new();
    for r in records() {
        g.apply(r, &mut done);
        for c in done.drain(..) {
            written.push(w.write(&g, &c).unwrap());
        }
    }
    g.finish(&mut done);
    assert!(done.is_empty());
    // Order of finalisation: kernel, host task, alloc, fill.
    assert_eq!(written, [true, false, false, true]);
    let streamed = String::from_utf8(w.into_inner().unwrap()).unwrap();

    let mut all = Vec::new();
    write_kernel_rows(&mut all, &g).unwrap();
    assert_eq!(streamed, String::from_utf8(all).unwrap());
}
