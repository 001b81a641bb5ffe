//! The graph crate's integration tests, one module per behaviour (each
//! was its own test binary: linking about 40 of them took most of the test
//! build). Run one module with a filter on its path:
//! `cargo test -p syclgraph-graph --test graph_tests dot_output::`.

mod buffer_accessor_edges;
mod common;
mod critical_path_csv_reference;
mod critical_path_oracle;
mod device_before_signal;
mod devices_by_identity;
mod dot_output;
mod duplicate_node_defined;
mod edges_before_nodes;
mod golden_outputs;
mod host_tasks;
mod instance_limits;
mod instance_queue_rows;
mod instances_dot_text;
mod kernels_csv_reference;
mod kernels_csv_rows;
mod ordering_violations;
mod property_announced_records;
mod property_combined_records;
mod property_critical_path;
mod property_dot_round_trip;
mod property_generator_coverage;
mod property_instance_graph;
mod property_instance_merge;
mod property_instances_handed_out_once;
mod property_kernel_rows;
mod property_never_panics;
mod property_node_counts;
mod property_order_independence;
mod property_stats_consistent;
mod property_strategies;
mod property_summary_totals;
mod property_sycl_graph_members;
mod property_what_if;
mod queues_and_spans;
mod record_order_shuffles;
mod repeated_submissions;
mod replay_rows;
mod summary_percentiles;
mod task_end_without_begin;
mod unknown_node_ids;
mod usm_memcpy_nodes;
mod what_if_model;
mod write_all_files;

/// Every `.rs` file of this folder is a module above: with `autotests =
/// false` cargo builds no file that is left out, and its tests would
/// silently not run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if path.extension().is_some_and(|e| e == "rs") && stem != "main" {
            files += 1;
            assert!(
                main.lines().any(|l| l == format!("mod {stem};")),
                "tests/{stem}.rs is not a module of tests/main.rs"
            );
        }
    }
    assert!(files > 1, "{files} test files in {}", dir.display());
}
