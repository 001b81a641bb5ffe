//! The tests on the real runtime, one module per former test file (each
//! was its own test binary: linking about 30 of them took a large part of
//! the test build, and each built the test programs again). Run one module
//! with a filter on its path:
//! `cargo test --workspace --test runtime_tests docs_match::`.

mod bad_configuration;
mod buffer_graph;
mod cli_run;
mod config_matrix;
mod critical_path;
mod dependencies;
mod device_timing;
mod docs_match;
mod dpnp_workload;
mod faults;
mod features;
mod gpu_check;
mod graph_readability;
mod host_tasks_and_usm;
mod install;
mod instances;
mod killed_jobs;
mod leftover_journal;
mod loaded_start;
mod mpi_ranks;
mod mpi_report;
mod mpi_timeline;
mod native_commands;
mod output_files;
mod peer_suites;
mod perfetto_trace;
mod regions;
mod robust_exit;
mod robust_fork;
mod robust_signals;
mod robust_threads;
mod run_diff;
mod runtime_versions;
mod start_stop;
mod sub_devices;
mod sycl_graphs;
mod sycl_graphs_level_zero;
mod sycl_graphs_styles;
mod untimed;
mod what_if;

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
