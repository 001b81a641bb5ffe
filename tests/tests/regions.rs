//! Device time by the program's own regions (issue 43): ITT tasks from
//! Python (`ittapi`, around dpctl copies and dpnp work) and from C++
//! (the ittnotify collector protocol, `tests/programs/itt.hpp`), nested,
//! sibling, repeated, on several threads at once, overlapped, in two
//! domains of one name, left open at exit, around a host task; and capture
//! by name (`SYCLGRAPH_REGION`), alone and with `SYCLGRAPH_START=paused`
//! and ITT resume. The oracle is the programs' own count of what they
//! submitted in each region, checked against `kernels.csv` and
//! `regions.csv`; device sums against the rows' own durations.

use std::collections::BTreeMap;

use syclgraph_tests::*;

type Row = BTreeMap<String, String>;

/// The program's own counts: its `<word> <path> <n>` lines, `-` (no
/// region) as the empty path.
fn counts(stdout: &str, word: &str) -> BTreeMap<String, u64> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next() == Some(word)).then_some(())?;
            let path = parts.next()?;
            let n = parts.next()?.parse().ok()?;
            Some((if path == "-" { "" } else { path }.to_owned(), n))
        })
        .collect()
}

/// Whether a command of region `path` is inside `region` (nested ones
/// included).
fn inside(path: &str, region: &str) -> bool {
    !path.is_empty() && (path == region || path.starts_with(&format!("{region}/")))
}

fn number(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} of {row:?}"))
}

/// The device span (first start to last end) of timed `rows`.
fn span(rows: &[&Row]) -> u64 {
    let start = rows.iter().map(|r| number(r, "start_ns")).min().unwrap();
    let end = rows.iter().map(|r| number(r, "end_ns")).max().unwrap();
    end - start
}

/// What a traced run of a region program must show.
struct Expected<'a> {
    /// Device commands submitted with exactly each path open.
    device: BTreeMap<String, u64>,
    /// Host tasks likewise.
    host: BTreeMap<String, u64>,
    /// Regions whose commands the program does not count (a library's).
    uncounted: &'a [&'a str],
    /// (region, times entered, of those never closed).
    entries: &'a [(&'a str, u64, u64)],
    /// (region, commands per entry): a repeated region whose entries'
    /// projections are checked one by one (its entries follow each other
    /// on one thread, each submitting that many timed commands).
    repeated: (&'a str, usize),
}

/// Checks `kernels.csv`, `regions.csv`, the summary and the trace of a
/// run against what the program counted.
fn check_regions(traced: &Traced, want: &Expected) {
    let stderr = traced.stderr();
    let rows = traced.csv("kernels.csv");
    let regions = traced.csv("regions.csv");
    let uncounted = |p: &str| want.uncounted.iter().any(|u| inside(p, u) || inside(u, p));
    // Every command has the region it was submitted in, its innermost.
    let mut by_region: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_region.entry(r["region"].as_str()).or_default().push(r);
    }
    for (path, &n) in &want.device {
        let got = by_region.get(path.as_str()).map_or(0, Vec::len) as u64;
        assert_eq!(got, n, "kernels.csv rows in {path:?}; stderr:\n{stderr}");
    }
    for path in by_region.keys() {
        assert!(
            want.device.contains_key(*path) || uncounted(path),
            "rows in {path:?}, which the program did not submit in"
        );
    }
    for u in want.uncounted {
        assert!(
            by_region.get(u).is_some_and(|r| !r.is_empty()),
            "no rows in {u}"
        );
    }
    // Each region's row: its entries, and its commands' device time equal
    // to their rows' durations (nested regions included).
    assert!(
        !regions.is_empty(),
        "no regions.csv rows; stderr:\n{stderr}"
    );
    for row in &regions {
        let path = row["region"].as_str();
        assert!(
            !row["name"].starts_with("tbb"),
            "oneTBB's own task: {row:?}"
        );
        let mine: Vec<&Row> = rows.iter().filter(|r| inside(&r["region"], path)).collect();
        let timed: Vec<&Row> = mine
            .iter()
            .copied()
            .filter(|r| r["timing"] == "ok")
            .collect();
        let device: u64 = timed.iter().map(|r| number(r, "duration_ns")).sum();
        assert_eq!(number(row, "device_ns"), device, "{row:?}");
        assert_eq!(number(row, "timed"), timed.len() as u64, "{row:?}");
        if !uncounted(path) {
            let submitted: u64 = want
                .device
                .iter()
                .chain(&want.host)
                .filter(|(p, _)| inside(p, path))
                .map(|(_, n)| n)
                .sum();
            assert_eq!(number(row, "commands"), submitted, "{row:?}");
        }
        if number(row, "count") == 1 && !timed.is_empty() {
            assert_eq!(number(row, "device_span_ns"), span(&timed), "{row:?}");
        }
        assert!(
            number(row, "host_self_ns") <= number(row, "host_ns"),
            "{row:?}"
        );
    }
    let row_of = |path: &str| {
        regions
            .iter()
            .find(|r| r["region"] == path)
            .unwrap_or_else(|| panic!("no regions.csv row {path:?}: {regions:?}"))
    };
    for &(path, count, unclosed) in want.entries {
        let row = row_of(path);
        assert_eq!(
            (number(row, "count"), number(row, "unclosed")),
            (count, unclosed),
            "{row:?}"
        );
    }
    // A repeated region: each entry's projection, summed.
    let (path, per_entry) = want.repeated;
    let mut mine: Vec<&Row> = rows.iter().filter(|r| inside(&r["region"], path)).collect();
    assert!(mine.iter().all(|r| r["timing"] == "ok"), "{mine:?}");
    mine.sort_by_key(|r| number(r, "submit_ns"));
    let projected: u64 = mine.chunks(per_entry).map(span).sum();
    assert_eq!(number(row_of(path), "device_span_ns"), projected);
    assert!(stderr.contains("by region (ITT tasks"), "{stderr}");
    // The trace: the projections and the tasks' slices (check_pftrace.py).
    let report = check_pftrace(&traced.dir, false);
    assert!(!report.contains(" 0 region projections"), "{report}");
}

fn python_regions<'a>(args: &'a [&'a str]) -> impl Fn() -> std::process::Command + 'a {
    move || {
        let mut cmd = python_command(&repo_root().join("tests/programs/regions.py"));
        cmd.args(args);
        cmd
    }
}

fn cpp_regions() -> std::process::Command {
    runtime_command(&program("regions"))
}

/// The environment that makes syclgraph the ITT collector, and more.
fn itt_env<'a>(more: &[(&'a str, &'a str)]) -> Vec<(&'a str, String)> {
    let mut env = vec![(
        "INTEL_LIBITTNOTIFY64",
        subscriber().to_string_lossy().into_owned(),
    )];
    env.extend(more.iter().map(|&(k, v)| (k, v.to_owned())));
    env
}

fn as_pairs<'a>(env: &'a [(&'a str, String)]) -> Vec<(&'a str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn python_tasks_give_every_copy_its_region_and_regions_their_device_time() {
    let env = itt_env(&[]);
    let traced = run_both("regions-python", python_regions(&["3"]), &as_pairs(&env));
    let stdout = traced.stdout();
    let device = counts(&stdout, "copies");
    assert_eq!(device.values().sum::<u64>(), 29, "{stdout}");
    check_regions(
        &traced,
        &Expected {
            device,
            host: BTreeMap::new(),
            uncounted: &["dpnp_ops"],
            entries: &[
                ("step", 3, 0),
                ("step/forward", 3, 0),
                ("step/backward", 3, 0),
                ("step/backward/grad", 3, 0),
                ("worker", 2, 0),
                ("dpnp_ops", 1, 0),
                ("overlap", 1, 0),
                ("overlap/inner", 1, 0),
                ("tail", 1, 1),
            ],
            repeated: ("step", 7),
        },
    );
    // dpnp's kernels (mangled templates) are told apart by their region.
    let rows = traced.csv("kernels.csv");
    assert!(
        rows.iter().any(|r| r["kind"] == "kernel"
            && r["region"] == "dpnp_ops"
            && r["name"].contains("dpnp")),
        "{rows:?}"
    );
}

#[test]
fn cpp_tasks_on_threads_around_a_host_task_in_two_domains() {
    let env = itt_env(&[]);
    let traced = run_both("regions-cpp", cpp_regions, &as_pairs(&env));
    let stdout = traced.stdout();
    let device = counts(&stdout, "commands");
    let host = counts(&stdout, "host_tasks");
    assert_eq!(host.get("io"), Some(&1), "{stdout}");
    check_regions(
        &traced,
        &Expected {
            device,
            host,
            uncounted: &[],
            entries: &[
                ("solve", 4, 0),
                ("solve/assemble", 4, 0),
                ("solve/iterate", 4, 0),
                ("solve/iterate/norm", 4, 0),
                ("worker", 6, 0),
                ("worker/chunk", 6, 0),
                ("io", 1, 0),
                ("after", 1, 0),
                ("shared", 1, 0),
                ("lib:shared", 1, 0),
                ("phase", 1, 0),
                ("phase/inner", 1, 0),
                ("tail", 1, 1),
            ],
            repeated: ("solve", 5),
        },
    );
    let rows = traced.csv("kernels.csv");
    // The two threads' chunks, at once.
    let threads: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["region"] == "worker/chunk")
        .map(|r| r["thread_id"].as_str())
        .collect();
    assert_eq!(threads.len(), 2, "{threads:?}");
    // The copy behind the host task was enqueued by the runtime after the
    // host task, while this thread was in "after": it is still "io"'s,
    // where it was submitted.
    let after_host = rows_at(
        &rows,
        "tests/programs/regions.cpp",
        tag_line("tests/programs/regions.cpp", "io_after_host"),
    );
    assert_eq!(after_host.len(), 1, "{rows:?}");
    assert_eq!(after_host[0]["region"], "io");
    let kernels = rows_at(
        &rows,
        "tests/programs/regions.cpp",
        tag_line("tests/programs/regions.cpp", "assemble_kernel"),
    );
    assert!(kernels.len() == 4 && kernels.iter().all(|r| r["region"] == "solve/assemble"));
}

/// The rows of windows.csv.
fn windows(traced: &Traced) -> usize {
    traced.csv("windows.csv").len()
}

#[test]
fn capture_by_name_records_exactly_the_copies_inside_backward() {
    let env = itt_env(&[("SYCLGRAPH_REGION", "backward")]);
    let traced = run_traced(
        "regions-capture",
        python_regions(&["3", "--no-dpnp"])(),
        &as_pairs(&env),
    );
    let stderr = traced.stderr();
    assert!(traced.output.status.success(), "{stderr}");
    let rows = traced.csv("kernels.csv");
    // 3 copies in backward and 1 in grad inside it, per step.
    assert_eq!(rows.len(), 12, "{rows:?}\n{stderr}");
    assert!(rows
        .iter()
        .all(|r| inside(&r["region"], "step/backward") && r["timing"] == "ok"));
    assert_eq!(windows(&traced), 3, "{stderr}");
    let regions = traced.csv("regions.csv");
    let commands = |path: &str| {
        regions
            .iter()
            .find(|r| r["region"] == path)
            .map(|r| (number(r, "count"), number(r, "commands")))
    };
    // Every region is still entered; only backward's commands recorded.
    assert_eq!(commands("step"), Some((3, 12)));
    assert_eq!(commands("step/forward"), Some((3, 0)));
    assert_eq!(commands("step/backward/grad"), Some((3, 3)));
    assert_eq!(commands("worker"), Some((2, 0)));
    assert!(stderr.contains("not recorded: "), "{stderr}");
}

#[test]
fn capture_by_name_composes_with_a_paused_start_and_itt_resume() {
    // Tracing starts at step 1 (ittapi.resume()): backward's copies of
    // steps 1 and 2 only.
    let env = itt_env(&[
        ("SYCLGRAPH_REGION", "backward"),
        ("SYCLGRAPH_START", "paused"),
    ]);
    let traced = run_traced(
        "regions-capture-paused",
        python_regions(&["3", "1", "--no-dpnp"])(),
        &as_pairs(&env),
    );
    let stderr = traced.stderr();
    let rows = traced.csv("kernels.csv");
    assert_eq!(rows.len(), 8, "{rows:?}\n{stderr}");
    assert!(rows.iter().all(|r| inside(&r["region"], "step/backward")));
    assert_eq!(windows(&traced), 2, "{stderr}");
}

#[test]
fn capture_by_name_from_two_threads_and_a_name_never_entered() {
    let env = itt_env(&[("SYCLGRAPH_REGION", "chunk")]);
    let traced = run_traced("regions-capture-threads", cpp_regions(), &as_pairs(&env));
    let stderr = traced.stderr();
    let rows = traced.csv("kernels.csv");
    // Both threads' chunks (2 copies, 3 times each), not the main thread's
    // commands submitted meanwhile.
    assert_eq!(rows.len(), 12, "{rows:?}\n{stderr}");
    assert!(rows.iter().all(|r| r["region"] == "worker/chunk"));
    let threads: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["thread_id"].as_str()).collect();
    assert_eq!(threads.len(), 2, "{threads:?}");

    let env = itt_env(&[("SYCLGRAPH_REGION", "nosuch")]);
    let traced = run_traced("regions-capture-never", cpp_regions(), &as_pairs(&env));
    let stderr = traced.stderr();
    assert!(traced.output.status.success(), "{stderr}");
    assert!(traced.csv("kernels.csv").is_empty());
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("\"nosuch\""))
        .collect();
    assert_eq!(
        said,
        ["SYCLGRAPH_REGION=\"nosuch\": no ITT task of that name began on any thread; nothing was recorded"],
        "{stderr}"
    );
}
