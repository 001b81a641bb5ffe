//! write_all puts graph.dot, summary.csv, critical_path.csv and idle_gaps.csv
//! into the directory (creating it),
//! write_kernels_csv adds kernels.csv, and no .tmp file is left behind.

use crate::common;
use common::*;
use std::fs;
use syclgraph_graph::{render_dot, write_all, write_kernels_csv};

#[test]
fn files_in_a_new_directory() {
    let mut r = vec![kernel(0, "_ZTS1K", "/k.cpp", 1)];
    r.extend(device_run(0, 1, 0, 100, 42));
    let (g, _) = build(r);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out/run1");
    write_all(&dir, &g).unwrap();
    assert_eq!(write_kernels_csv(&dir, &g).unwrap(), 1);

    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "critical_path.csv",
            "graph.dot",
            "idle_gaps.csv",
            "kernels.csv",
            "regions.csv",
            "summary.csv"
        ]
    );
    assert_eq!(
        fs::read_to_string(dir.join("graph.dot")).unwrap(),
        render_dot(&g)
    );
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(
        summary.lines().nth(1),
        Some("n0,kernel,K,/k.cpp,1,1,42,42,42,42,42,42,1.0000,42,0,0,,,0.0000,42,1.0000")
    );
    let kernels = fs::read_to_string(dir.join("kernels.csv")).unwrap();
    assert_eq!(kernels.lines().count(), 2);

    // Writing again replaces the files.
    write_all(&dir, &syclgraph_graph::Run::new()).unwrap();
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1);
}
