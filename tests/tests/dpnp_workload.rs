//! A real application nobody here wrote: a dpnp pipeline under syclgraph.
//! Its output is unchanged and its kernels appear with demangled names.

use syclgraph_tests::*;

#[test]
fn dpnp_kernels_appear_with_demangled_names() {
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let traced = run_both("dpnp", || python_command(&script), &[]);
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
