//! A real application nobody here wrote: a dpnp pipeline under syclgraph.
//! Its output is unchanged and its kernels appear with demangled names.

use syclgraph_tests::*;

#[test]
fn dpnp_kernels_appear_with_demangled_names() {
    let traced = shared_dpnp_run();
    let graph = traced.graph();
    let kernels: Vec<&String> = graph
        .nodes
        .values()
        .filter(|a| a["kind"] == "kernel")
        .map(|a| &a["operation"])
        .collect();
    assert!(kernels.len() >= 5, "{kernels:?}");
    assert!(
        kernels
            .iter()
            .any(|k| k.starts_with("dpnp::tensor::kernels::")),
        "{kernels:?}"
    );
    assert!(
        kernels.iter().all(|k| !k.contains("typeinfo name for")),
        "{kernels:?}"
    );
    let rows = traced.csv("kernels.csv");
    let kernel_rows = rows.iter().filter(|r| r["kind"] == "kernel").count();
    let kernel_count: u64 = graph
        .nodes
        .values()
        .filter(|a| a["kind"] == "kernel")
        .map(|a| a["count"].parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        kernel_rows as u64, kernel_count,
        "one row per kernel instance"
    );
}

#[test]
fn dpnp_kernels_are_timed_when_the_ur_tracing_layer_is_on() {
    // Python has threads (numpy's pool) before the runtime starts, so
    // syclgraph does not change the environment itself there; with the
    // layer named by the user, dpnp's queues (made without profiling) are
    // timed anyway.
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let traced = run_both(
        "dpnp-layer",
        || {
            let mut cmd = python_command(&script);
            cmd.env("UR_ENABLE_LAYERS", "UR_LAYER_TRACING");
            cmd
        },
        &[],
    );
    let rows = traced.csv("kernels.csv");
    let kernels: Vec<_> = rows.iter().filter(|r| r["kind"] == "kernel").collect();
    assert!(kernels.len() >= 5);
    for row in &kernels {
        assert_eq!(row["timing"], "ok", "{row:?}");
    }
    // Every dependency on an event resolves to the command that produced it.
    let graph = traced.graph();
    let virtual_nodes: Vec<_> = graph.nodes_where("kind", "virtual");
    assert!(virtual_nodes.is_empty(), "{virtual_nodes:?}");
    assert!(!graph.edges.is_empty());
    // Direct-path USM copies (dpnp's host <-> device transfers) are timed too.
    let copies: Vec<_> = rows.iter().filter(|r| r["kind"] == "memcpy").collect();
    assert!(!copies.is_empty());
    assert!(copies.iter().all(|r| r["timing"] == "ok"), "{copies:?}");
}

#[test]
fn dpnp_queues_are_profiled_and_timed_with_only_the_xpti_variables() {
    // Python has threads (numpy's pool) and a changed environment before the
    // runtime starts; syclgraph still turns the UR tracing layer on, safely
    // (a new environ array, nothing freed), so dpnp's queues, made without
    // enable_profiling, give device times and every dependency resolves.
    let traced = shared_dpnp_run();
    let stderr = traced.stderr();
    assert!(
        stderr.contains("device profiling: turned on for"),
        "{stderr}"
    );
    let rows = traced.csv("kernels.csv");
    let kernels: Vec<_> = rows.iter().filter(|r| r["kind"] == "kernel").collect();
    assert!(kernels.len() >= 5);
    assert!(kernels.iter().all(|r| r["timing"] == "ok"), "{kernels:?}");
    let graph = traced.graph();
    assert!(graph.nodes_where("kind", "virtual").is_empty());
}
