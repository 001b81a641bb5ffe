//! `syclgraph report DIR...`: the summary table of earlier runs, read from
//! the files they left, without running anything.
//!
//! For each directory (and each `pid-<pid>/` inside it, the other processes
//! that wrote there): the end-of-run summary (`summary.txt`), the table from
//! `summary.csv`, formatted by the graph crate exactly as the run printed
//! it, and the `untimed:` line counted from `kernels.csv`'s `timing` column.
//! A killed program's journal was converted before ([`crate::leftover`]).
//! A run too long for its exit to compute the "what would pay" block gets
//! it here, from its `run.journal`.

use std::io::Write;
use std::path::{Path, PathBuf};

use syclgraph_graph::record::TimingStatus;
use syclgraph_graph::regions_csv::{read_regions_csv, region_table, REGIONS_CSV};
use syclgraph_graph::summary::{format_table, read_summary_csv, untimed_line};
use syclgraph_graph::timing::UntimedCounts;
use syclgraph_graph::what_if_text::{what_would_pay_text, NOT_AT_EXIT};

use crate::finished_run::replay_run;

/// Prints the report of every directory in `dirs` to `out`, and one
/// `syclgraph:` line per directory that cannot be read to `err`. Returns
/// the exit code: 0, or 2 when any directory failed (the others are still
/// printed).
pub fn report(dirs: &[PathBuf], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut code = 0;
    let mut first = true;
    for dir in dirs {
        match process_dirs(dir) {
            Ok(found) => {
                for pdir in found {
                    match one(&pdir) {
                        Ok(text) => {
                            if !first {
                                let _ = writeln!(out);
                            }
                            first = false;
                            let _ = write!(out, "{text}");
                        }
                        Err(e) => {
                            let _ = writeln!(err, "syclgraph: {e}");
                            code = 2;
                        }
                    }
                }
            }
            Err(e) => {
                let _ = writeln!(err, "syclgraph: {e}");
                code = 2;
            }
        }
    }
    code
}

/// `syclgraph report --by region DIR...`: every region of each process
/// directory, from its `regions.csv`; exit code as [`report`]'s.
pub fn regions(dirs: &[PathBuf], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut code = 0;
    for dir in dirs {
        let found = match process_dirs(dir) {
            Ok(found) => found,
            Err(e) => {
                let _ = writeln!(err, "syclgraph: {e}");
                code = 2;
                continue;
            }
        };
        for pdir in found {
            let file = pdir.join(REGIONS_CSV);
            let rows = std::fs::File::open(&file)
                .map_err(|e| io_reason(&e))
                .and_then(|f| read_regions_csv(std::io::BufReader::new(f)));
            match rows {
                Ok(rows) if rows.is_empty() => {
                    let _ = writeln!(
                        out,
                        "syclgraph: {}: no region (the program began no ITT task, or none reached syclgraph: INTEL_LIBITTNOTIFY64)",
                        pdir.display()
                    );
                }
                Ok(rows) => {
                    let _ = write!(
                        out,
                        "syclgraph: regions of {}\n{}",
                        pdir.display(),
                        region_table(&rows, rows.len())
                    );
                }
                Err(e) => {
                    let _ = writeln!(err, "syclgraph: {}: {e}", file.display());
                    code = 2;
                }
            }
        }
    }
    code
}

/// `dir` and its `pid-<pid>/` subdirectories that hold a `summary.csv`.
fn process_dirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| format!("{}: cannot read it ({})", dir.display(), io_reason(&e)))?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    let mut found = Vec::new();
    if dir.join("summary.csv").is_file() {
        found.push(dir.to_path_buf());
    }
    let mut subdirs: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot list it ({})", dir.display(), io_reason(&e)))?
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.strip_prefix("pid-")?.parse().ok()?;
            let path = e.path();
            path.join("summary.csv").is_file().then_some((pid, path))
        })
        .collect();
    subdirs.sort();
    found.extend(subdirs.into_iter().map(|(_, p)| p));
    if found.is_empty() {
        return Err(format!(
            "{}: no summary.csv in it (not a syclgraph output directory, or its program ended before the first snapshot)",
            dir.display()
        ));
    }
    Ok(found)
}

/// The report of one process's directory.
fn one(dir: &Path) -> Result<String, String> {
    let summary = dir.join("summary.csv");
    let file = std::fs::File::open(&summary)
        .map_err(|e| format!("{}: {}", summary.display(), io_reason(&e)))?;
    let lines = read_summary_csv(std::io::BufReader::new(file))
        .map_err(|e| format!("{}: {e}", summary.display()))?;
    let mut text = format!("syclgraph: outputs in {}\n", dir.display());
    // The run's own end-of-run summary (critical path, waits, losses,
    // windows), written at exit; a killed program has none.
    match std::fs::read_to_string(dir.join("summary.txt")) {
        Ok(end_of_run) => {
            text.push_str(&with_what_would_pay(dir, end_of_run));
            text.push_str("per node (summary.csv):\n");
        }
        Err(_) => text.push_str(
            "no summary.txt (the program did not exit normally): no critical path, host waits or losses\n",
        ),
    }
    text.push_str(&format_table(&lines));
    let kernels = dir.join("kernels.csv");
    if kernels.is_file() {
        let untimed = count_untimed(&kernels).map_err(|e| format!("{}: {e}", kernels.display()))?;
        text.push_str(&untimed_line(&untimed));
    } else {
        text.push_str("untimed: not known (no kernels.csv)\n");
    }
    Ok(text)
}

/// `summary.txt`'s text with its "what would pay" block computed from
/// `run.journal` when the run was too long for its exit to compute it (the
/// line saying so is replaced; it stays when the journal cannot be
/// replayed, with why after it).
fn with_what_would_pay(dir: &Path, end_of_run: String) -> String {
    let Some(at) = end_of_run.find(NOT_AT_EXIT) else {
        return end_of_run;
    };
    let line_end = end_of_run[at..]
        .find('\n')
        .map_or(end_of_run.len(), |e| at + e + 1);
    let block = match replay_run(dir) {
        Ok((run, _)) => what_would_pay_text(&run),
        Err(e) => format!(
            "{}  (not computed now either: {e})\n",
            &end_of_run[at..line_end].trim_end()
        ),
    };
    format!("{}{block}{}", &end_of_run[..at], &end_of_run[line_end..])
}

/// Untimed rows of `kernels.csv` by their `timing` word.
fn count_untimed(path: &Path) -> Result<UntimedCounts, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| e.to_string())?;
    let column = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .position(|h| h == "timing")
        .ok_or("no timing column in the header")?;
    let mut counts = UntimedCounts::default();
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(|e| e.to_string())? {
        let word = record.get(column).unwrap_or("");
        let status = TimingStatus::from_name(word).ok_or_else(|| {
            let line = record.position().map_or(0, |p| p.line());
            let words: Vec<&str> = TimingStatus::ALL.iter().map(|s| s.as_str()).collect();
            format!(
                "line {line}: timing {word:?} is not one of {}",
                words.join(", ")
            )
        })?;
        counts.add(status);
    }
    Ok(counts)
}

/// An I/O error without the `(os error N)` tail.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const SUMMARY: &str =
        "node_id,kind,name,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share,critical_ns\n\
        n0,kernel,saxpy,3,50655,16885,4979,32601,13075,32601,0.8000,7\n\
        n4,memcpy,memcpy,2,0,,,,,,0.0000,0\n";

    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-report-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn run(dirs: &[PathBuf]) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = report(dirs, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn table_and_untimed_line_per_process_directory() {
        let dir = scratch("ok");
        fs::write(dir.join("summary.csv"), SUMMARY).unwrap();
        fs::write(
            dir.join("kernels.csv"),
            "kind,name,timing\nkernel,saxpy,ok\nmemcpy,memcpy,no_profiling\nmemcpy,memcpy,no_profiling\n",
        )
        .unwrap();
        fs::write(dir.join("summary.txt"), "the run's own summary\n").unwrap();
        fs::create_dir_all(dir.join("pid-12")).unwrap();
        fs::write(dir.join("pid-12/summary.csv"), SUMMARY).unwrap();
        let (code, out, err) = run(std::slice::from_ref(&dir));
        assert_eq!((code, err.as_str()), (0, ""));
        let blocks: Vec<&str> = out.split("\n\n").collect();
        assert_eq!(blocks.len(), 2, "{out}");
        let first: Vec<&str> = blocks[0].lines().collect();
        assert_eq!(first[0], format!("syclgraph: outputs in {}", dir.display()));
        assert_eq!(first[1], "the run's own summary");
        assert_eq!(first[2], "per node (summary.csv):");
        let first = &first[2..];
        assert!(first[1].starts_with("kind    name"), "{out}");
        // The share comes from the totals (the only timed row: all of it),
        // not from the file's device_share column.
        assert!(
            first[2].contains("50.7 µs") && first[2].ends_with(" 100.0%  n0"),
            "{out}"
        );
        assert!(
            first[3].starts_with("memcpy  memcpy") && first[3].contains(" - "),
            "{out}"
        );
        assert_eq!(first[4], "untimed: 2 no_profiling");
        assert!(
            blocks[1].ends_with("untimed: not known (no kernels.csv)\n"),
            "{out}"
        );
        assert!(
            blocks[1].contains("\nno summary.txt (the program did not exit normally)"),
            "{out}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A run too long for its exit's "what would pay" block gets it from
    /// its run.journal.
    #[test]
    fn what_would_pay_is_computed_from_the_journal_when_the_exit_did_not() {
        use syclgraph_graph::journal::{append_record, JOURNAL_HEADER, RUN_JOURNAL};
        use syclgraph_graph::record::{DeviceTimes, NodeInfo, Record, TimingStatus};
        let dir = scratch("pay");
        fs::write(dir.join("summary.csv"), SUMMARY).unwrap();
        let mut journal = JOURNAL_HEADER.to_vec();
        let kernel = NodeInfo {
            id: 0,
            name: "saxpy".into(),
            kind_hint: "command_group_node".into(),
            source_file: Some("a.cpp".into()),
            source_line: Some(7),
            metadata: vec![("kernel_name".into(), "saxpy".into())],
            ..NodeInfo::default()
        };
        let mut records = vec![Record::NodeDefined(Box::new(kernel))];
        for i in 1..=3u64 {
            let t = i * 10_000;
            records.push(Record::Submitted {
                node: 0,
                instance: i,
                thread: 1,
                ns: t,
            });
            records.push(Record::SignalledTask {
                node: 0,
                instance: i,
                thread: 1,
                begin_ns: t + 1,
                end_ns: t + 2,
                event: 0xe0 + i,
            });
            records.push(Record::Device(DeviceTimes {
                node: 0,
                instance: i,
                status: TimingStatus::Ok,
                start_ns: t + 100,
                end_ns: t + 8_100,
            }));
        }
        for r in &records {
            append_record(r, &mut journal);
        }
        fs::write(dir.join(RUN_JOURNAL), journal).unwrap();
        fs::write(
            dir.join("summary.txt"),
            format!("before\n{NOT_AT_EXIT} (60000 commands, more than the 50000 it replays); ...\nafter\n"),
        )
        .unwrap();
        let text = one(&dir).unwrap();
        assert!(!text.contains(NOT_AT_EXIT), "{text}");
        assert!(
            text.contains("before\nwhat would pay: each node 2× faster"),
            "{text}"
        );
        assert!(text.contains("  n0 saxpy (a.cpp:7)\nafter\n"), "{text}");
        // Three independent kernels, the host submitting every 10 µs: only
        // half of the last one's 8 µs is saved, of the 28.1 µs span.
        assert!(text.contains("    4.00 µs   14.2%"), "{text}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_directories_give_one_line_each_and_exit_2() {
        let dir = scratch("bad");
        let empty = dir.join("empty");
        fs::create_dir_all(&empty).unwrap();
        let file = dir.join("file");
        fs::write(&file, "").unwrap();
        let broken = dir.join("broken");
        fs::create_dir_all(&broken).unwrap();
        fs::write(broken.join("summary.csv"), "kind,name\n").unwrap();
        let good = dir.join("good");
        fs::create_dir_all(&good).unwrap();
        fs::write(good.join("summary.csv"), SUMMARY).unwrap();
        let dirs = [
            dir.join("missing"),
            file.clone(),
            empty.clone(),
            broken.clone(),
            good,
        ];
        let (code, out, err) = run(&dirs);
        assert_eq!(code, 2);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines,
            [
                format!("syclgraph: {}: cannot read it (no such file or directory)", dirs[0].display()),
                format!("syclgraph: {}: not a directory", file.display()),
                format!(
                    "syclgraph: {}: no summary.csv in it (not a syclgraph output directory, or its program ended before the first snapshot)",
                    empty.display()
                ),
                format!(
                    "syclgraph: {}/summary.csv: line 1 is not the summary.csv header (no node_id column; wanted {})",
                    broken.display(),
                    syclgraph_graph::summary::NODE_SUMMARY_COLUMNS.join(",")
                ),
            ]
        );
        assert!(
            out.contains("saxpy"),
            "the good one is still printed: {out}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
