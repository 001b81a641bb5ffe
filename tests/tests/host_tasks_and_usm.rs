//! Host tasks, waits and USM commands: each at its own source line with the
//! right kind and count; host tasks wired to the kernels whose buffers they use.

use syclgraph_tests::*;

#[test]
fn host_tasks_are_nodes_wired_by_their_buffers() {
    const SRC: &str = "tests/programs/host_tasks.cpp";
    let traced = run_both(
        "host_tasks",
        || runtime_command(&program("host_tasks")),
        &[],
    );
    let graph = traced.graph();
    let at = |label: &str| node_at(&graph, SRC, tag_line(SRC, label));
    for label in [
        "ht_sum",
        "ht_negate",
        "ht_first",
        "ht_second",
        "ht_sum_scaled",
        "ht_join",
    ] {
        let (_, attrs) = at(label);
        assert_eq!(attrs["kind"], "host_task", "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "1");
    }
    for label in ["ht_iota", "ht_scale"] {
        assert_eq!(at(label).1["kind"], "kernel", "{label}");
    }
    // ht_sum reads the buffer ht_iota wrote: through the map to the host.
    let (iota, _) = at("ht_iota");
    let (sum, _) = at("ht_sum");
    assert!(graph.reaches(iota, sum), "{:?}", graph.edges);
    let modes_into_sum: Vec<&str> = graph
        .edges
        .iter()
        .filter(|(_, b, _)| b == sum)
        .filter_map(|(_, _, a)| a.get("access_mode").map(String::as_str))
        .collect();
    assert!(modes_into_sum.contains(&"read"), "{modes_into_sum:?}");
    // ht_sum_scaled waits for both ht_sum's result and ht_scale's kernel.
    let (scaled, _) = at("ht_sum_scaled");
    assert!(graph.reaches(sum, scaled));
    assert!(graph.reaches(at("ht_scale").0, scaled));

    // Where the host blocked: each queue.wait at its own line.
    let stderr = traced.stderr();
    for wait in ["ht_queue_wait", "ht_queue_wait_and_throw"] {
        let at = format!("queue.wait {SRC}:{}", tag_line(SRC, wait));
        assert!(stderr.contains(&at), "{at} in:\n{stderr}");
    }

    // Host tasks are not device commands: no kernels.csv rows for them.
    let rows = traced.csv("kernels.csv");
    assert!(rows_at(&rows, SRC, tag_line(SRC, "ht_sum")).is_empty());
    assert_eq!(rows_at(&rows, SRC, tag_line(SRC, "ht_iota")).len(), 1);
}

#[test]
fn usm_commands_keep_their_kinds_lines_and_counts() {
    const SRC: &str = "tests/programs/usm_chain.cpp";
    let traced = shared_run("usm_chain");
    let graph = traced.graph();
    let at = |label: &str| node_at(&graph, SRC, tag_line(SRC, label));
    for (label, kind) in [
        ("ooo_memset", "memset"),
        ("ooo_fill", "fill"),
        ("ooo_iota", "kernel"),
        ("ooo_axpy", "kernel"),
        ("ooo_memcpy", "memcpy"),
        ("ooo_host_task", "host_task"),
        ("ooo_memcpy_back", "memcpy"),
        ("ino_memset", "memset"),
        ("ino_iota", "kernel"),
        ("ino_scale", "kernel"),
    ] {
        let (_, attrs) = at(label);
        assert_eq!(attrs["kind"], kind, "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "1", "{label}");
    }
    // Kernels launched through USM are timed exactly like the application sees.
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    for label in ["ooo_iota", "ooo_axpy", "ino_iota", "ino_scale"] {
        let found = rows_at(&rows, SRC, tag_line(SRC, label));
        assert_eq!(found.len(), 1, "{label}");
        let want = measured[&(label.to_owned(), 0)];
        assert_eq!(found[0]["duration_ns"], want.to_string(), "{label}");
    }
}
