//! Bad configuration never changes the traced program: one stderr line
//! naming syclgraph, the program's own output and exit code as untraced.

use syclgraph_tests::*;

fn syclgraph_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("syclgraph:"))
        .collect()
}

#[test]
fn an_unwritable_output_dir_is_one_line_and_no_tracing() {
    let blocker = fresh_dir("unwritable").join("a-file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let untraced = runtime_command(&program("pipeline")).output().unwrap();
    let mut cmd = runtime_command(&program("pipeline"));
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", blocker.join("out"));
    let traced = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&traced.stderr);
    let lines = syclgraph_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("SYCLGRAPH_OUTPUT_DIR"), "{}", lines[0]);
    assert_eq!(traced.status.code(), untraced.status.code());
    assert_eq!(
        strip_profiling(&String::from_utf8_lossy(&traced.stdout)),
        strip_profiling(&String::from_utf8_lossy(&untraced.stdout))
    );
}

#[test]
fn bad_values_warn_once_each_and_tracing_goes_on() {
    let traced = run_both(
        "bad-values",
        || runtime_command(&program("pipeline")),
        &[
            ("SYCLGRAPH_MAX_INSTANCES", "many"),
            ("SYCLGRAPH_DEVICE_TIMING", "perhaps"),
            ("SYCLGRAPH_QUIET", "1"),
        ],
    );
    let stderr = traced.stderr();
    let lines = syclgraph_lines(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].contains("SYCLGRAPH_MAX_INSTANCES"));
    assert!(lines[1].contains("SYCLGRAPH_DEVICE_TIMING"));
    assert!(traced.dir.join("graph.dot").exists());
    assert!(traced.dir.join("kernels.csv").exists());
}
