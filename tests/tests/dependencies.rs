//! Dependencies the runtime never reports as edges: `depends_on` between
//! USM commands (from the UR enqueue wait lists), dependencies on events
//! the scheduler only knows as `virtual_node[...]`, and the `copy usm`
//! command that one user memcpy becomes after a host task.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/usm_chain.cpp";

/// The out-of-order chain's edges, by tag, and the cross-queue edge.
fn assert_depends_on_edges(traced: &Traced) {
    let graph = traced.graph();
    let id = |label: &str| node_at(&graph, SRC, tag_line(SRC, label)).0.clone();
    let ooo = [
        "ooo_memset",
        "ooo_fill",
        "ooo_iota",
        "ooo_axpy",
        "ooo_memcpy",
        "ooo_host_task",
        "ooo_memcpy_back",
    ];
    let ids: Vec<String> = ooo.iter().map(|l| id(l)).collect();
    let mut found: Vec<(String, String)> = graph
        .edges
        .iter()
        .filter(|(a, b, _)| ids.contains(a) && ids.contains(b))
        .map(|(a, b, _)| {
            let name = |n: &String| ooo[ids.iter().position(|x| x == n).unwrap()].to_owned();
            (name(a), name(b))
        })
        .collect();
    found.sort();
    let mut want: Vec<(String, String)> = [
        ("ooo_memset", "ooo_iota"),
        ("ooo_fill", "ooo_axpy"),
        ("ooo_iota", "ooo_axpy"),
        ("ooo_axpy", "ooo_memcpy"),
        ("ooo_memcpy", "ooo_host_task"),
        ("ooo_host_task", "ooo_memcpy_back"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    want.sort();
    assert_eq!(found, want, "the program's depends_on, exactly");
    for (a, b, attrs) in &graph.edges {
        if ids.contains(a) && ids.contains(b) {
            assert_eq!(attrs["kind"], "event", "{a}->{b}: {attrs:?}");
        }
    }
    // Across queues: an in-order kernel waiting on an out-of-order fill.
    let (fill, axpy) = (id("x_fill_ooo"), id("x_axpy_ino"));
    assert!(graph.edges.iter().any(|(a, b, _)| *a == fill && *b == axpy));
}

/// The stderr line saying UR calls were followed on ur.call.debug all along.
const VIA_LAYER: &str = "UR calls: followed on ur.call.debug all along";

/// The stderr line saying the UR tracing layer stayed in the call chain
/// after the hooks took over.
const LAYER_KEPT: &str = "UR tracing layer: stayed in the runtime's call chain";

#[test]
fn every_depends_on_is_an_edge_between_the_right_nodes() {
    let traced = shared_run("usm_chain");
    assert_depends_on_edges(traced);
}

#[test]
fn depends_on_edges_are_the_same_through_hooks_and_through_the_tracing_layer() {
    // Settled: the work runs once syclgraph moved from ur.call.debug to the
    // adapter's dispatch table, so the hooks see every enqueue.
    let settled = || {
        let mut cmd = runtime_command(&program("usm_chain"));
        cmd.args(["--settle-ms", "500"]);
        cmd
    };
    // The hooks, and the tracing layer taken out of the call chain after them.
    let hooks = run_both("deps-hooks", settled, &[]);
    assert!(!hooks.stderr().contains(VIA_LAYER), "{}", hooks.stderr());
    assert!(!hooks.stderr().contains(LAYER_KEPT), "{}", hooks.stderr());
    assert_depends_on_edges(&hooks);
    // The hooks with the layer kept: UR's own call log wants it.
    let kept = run_both(
        "deps-hooks-layer-kept",
        settled,
        &[("UR_LOG_TRACING", "level:error;output:stderr")],
    );
    assert!(
        kept.stderr()
            .contains(&format!("{LAYER_KEPT} (UR_LOG_TRACING is set)")),
        "{}",
        kept.stderr()
    );
    assert_depends_on_edges(&kept);
    let layer = run_both("deps-layer", settled, &[("SYCLGRAPH_UR_HOOKS", "0")]);
    assert!(
        layer
            .stderr()
            .contains(&format!("{VIA_LAYER} (SYCLGRAPH_UR_HOOKS=0)")),
        "{}",
        layer.stderr()
    );
    assert_depends_on_edges(&layer);
}

#[test]
fn one_user_memcpy_is_one_timed_node_at_its_line() {
    let traced = shared_run("usm_chain");
    let graph = traced.graph();
    assert!(
        graph.nodes.values().all(|a| a["operation"] != "copy usm"),
        "the scheduler's copy usm is merged into the user's memcpy"
    );
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    for label in ["ooo_memcpy", "ooo_memcpy_back", "ooo_memset", "ino_memcpy"] {
        let found = rows_at(&rows, SRC, tag_line(SRC, label));
        assert_eq!(found.len(), 1, "{label}: {found:?}");
        assert_eq!(found[0]["timing"], "ok", "{label}");
        let want = measured[&(label.to_owned(), 0)];
        assert_eq!(found[0]["duration_ns"], want.to_string(), "{label}");
    }
}

/// The settled usm_chain program with `env` set for the untraced and the
/// traced run alike, each bounded (a hang fails the test).
fn usm_chain_with(test: &str, env: &'static [(&'static str, &'static str)]) -> Traced {
    let make = || {
        let mut cmd = runtime_command(&program("usm_chain"));
        cmd.args(["--settle-ms", "500"]);
        cmd.envs(env.iter().copied());
        cmd
    };
    run_both_within(test, make, &[], std::time::Duration::from_secs(90))
}

/// Regression (issue 13): with one UR adapter the runtime's loader calls it
/// directly, and probing with a made-up handle crashed every traced program.
/// The hooks now sit in the runtime's table of UR entry points, which every
/// call passes through either way: same edges, same times, the cheap path.
#[test]
fn one_adapter_keeps_the_hooks_the_edges_and_the_times() {
    for (test, env) in [
        (
            "deps-opencl-only",
            &[("ONEAPI_DEVICE_SELECTOR", "opencl:cpu")][..],
        ),
        (
            "deps-no-level-zero",
            &[("ONEAPI_DEVICE_SELECTOR", "!level_zero:*")][..],
        ),
    ] {
        let traced = usm_chain_with(test, env);
        let stderr = traced.stderr();
        assert!(!stderr.contains(VIA_LAYER), "{test}: {stderr}");
        assert!(!stderr.contains(LAYER_KEPT), "{test}: {stderr}");
        assert_depends_on_edges(&traced);
        let measured = profiling_lines(&traced.stdout());
        let rows = traced.csv("kernels.csv");
        let found = rows_at(&rows, SRC, tag_line(SRC, "ooo_memcpy"));
        assert_eq!(found.len(), 1, "{test}: {found:?}");
        assert_eq!(found[0]["timing"], "ok", "{test}");
        let want = measured[&("ooo_memcpy".to_owned(), 0)];
        assert_eq!(found[0]["duration_ns"], want.to_string(), "{test}");
    }
}

/// Regression (issue 13): `UR_ENABLE_LAYERS=UR_LAYER_FULL_VALIDATION` made
/// the traced program spin for good: syclgraph appended its layer after a
/// `;` (the runtime splits at commas only), and started its own UR loader
/// alongside the runtime's. Now it finishes, with the user's layers kept.
#[test]
fn validation_layers_neither_hang_nor_lose_edges() {
    for (test, env) in [
        (
            "deps-full-validation",
            &[("UR_ENABLE_LAYERS", "UR_LAYER_FULL_VALIDATION")][..],
        ),
        (
            "deps-validation",
            &[("UR_ENABLE_LAYERS", "UR_LAYER_VALIDATION")][..],
        ),
    ] {
        let traced = usm_chain_with(test, env);
        let stderr = traced.stderr();
        assert!(!stderr.contains(VIA_LAYER), "{test}: {stderr}");
        assert_depends_on_edges(&traced);
    }
}
