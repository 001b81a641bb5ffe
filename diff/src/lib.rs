//! What changed between two syclgraph runs: `syclgraph diff BASE NEW`.
//!
//! Per node, matched by kind, operation and source location
//! ([`node_times::NodeKey`]): the rows, the timed instances' total, median
//! and 95th percentile before and after, the median's change and a
//! [`verdict::Verdict`] from a rank test on the per-instance device times
//! ([`rank_test`], from `kernels.csv`, streamed); the graph's edges added and
//! removed (`graph.dot`, [`graph_edges`]); the span and the critical path's
//! length before and after (`summary.txt`'s critical path line). Two MPI job
//! directories are compared rank by rank ([`compare_jobs`]). [`text`] and
//! [`csv_out`] write the answer.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod csv_out;
pub mod graph_edges;
pub mod node_times;
pub mod rank_test;
pub mod text;
pub mod verdict;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syclgraph_graph::critical_path_text::read_critical_path_line;
use syclgraph_graph::timing::percentile;

use graph_edges::{read_edges, EdgeKey};
use node_times::{read_kernels, NodeKey, NodeTimes};
use verdict::{change_pct, judge, Verdict};

/// One side of a node's comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Side {
    /// Rows (instances), timed or not.
    pub rows: u64,
    /// Instances timed `ok`.
    pub timed: u64,
    /// Their total device time, ns.
    pub total_ns: u64,
    /// Their median (nearest rank), ns.
    pub p50_ns: Option<u64>,
    /// Their 95th percentile (nearest rank), ns.
    pub p95_ns: Option<u64>,
}

impl Side {
    fn of(times: &NodeTimes) -> Side {
        Side {
            rows: times.rows,
            timed: times.durations.len() as u64,
            total_ns: times.durations.iter().sum(),
            p50_ns: percentile(&times.durations, 50.0),
            p95_ns: percentile(&times.durations, 95.0),
        }
    }
}

/// One node's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeChange {
    /// The node.
    pub key: NodeKey,
    /// In the base run (`None`: added).
    pub before: Option<Side>,
    /// In the new run (`None`: removed).
    pub after: Option<Side>,
    /// The median's change, percent.
    pub change_pct: Option<f64>,
    /// The rank test's two-sided p-value, when there was a test.
    pub p_value: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The span and the critical path's length of one run, ns (as its
/// summary printed them: three significant digits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// First submission to last device end.
    pub span_ns: u64,
    /// The critical path's length.
    pub path_ns: u64,
}

/// Two runs (or one rank of two jobs) compared.
#[derive(Clone, Debug, PartialEq)]
pub struct RunDiff {
    /// The rank, for a job's rank; `None` for two runs.
    pub rank: Option<u64>,
    /// The base run's directory.
    pub base: PathBuf,
    /// The new run's directory.
    pub new: PathBuf,
    /// Every node of either run, by key.
    pub nodes: Vec<NodeChange>,
    /// Edges only the new run's graph has.
    pub edges_added: Vec<EdgeKey>,
    /// Edges only the base run's graph has.
    pub edges_removed: Vec<EdgeKey>,
    /// The base run's span, when its summary.txt said it.
    pub span_before: Option<Span>,
    /// The new run's.
    pub span_after: Option<Span>,
    /// What could not be compared (a graph.dot or summary.txt missing).
    pub notes: Vec<String>,
}

impl RunDiff {
    /// The nodes slower by `pct` percent or more (by their median).
    pub fn slower_by(&self, pct: f64) -> impl Iterator<Item = &NodeChange> + '_ {
        self.nodes
            .iter()
            .filter(move |n| n.verdict == Verdict::Slower && n.change_pct.is_some_and(|c| c >= pct))
    }

    /// How many nodes got each verdict.
    pub fn counts(&self) -> BTreeMap<Verdict, usize> {
        let mut counts = BTreeMap::new();
        for n in &self.nodes {
            *counts.entry(n.verdict).or_default() += 1;
        }
        counts
    }
}

/// The whole comparison: one [`RunDiff`] for two runs, one per rank of two
/// jobs, and the ranks only one job has.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// The compared runs (ranks in order).
    pub runs: Vec<RunDiff>,
    /// Ranks only in the base job.
    pub ranks_only_before: Vec<u64>,
    /// Ranks only in the new job.
    pub ranks_only_after: Vec<u64>,
}

impl Diff {
    /// Whether some node of some run is slower by `pct` percent or more.
    pub fn any_slower_by(&self, pct: f64) -> bool {
        self.runs.iter().any(|r| r.slower_by(pct).next().is_some())
    }
}

/// The span line of `dir/summary.txt`, if it has one.
fn span_of(dir: &Path) -> Option<Span> {
    let text = std::fs::read_to_string(dir.join("summary.txt")).ok()?;
    let (_, path_ns, span_ns) = read_critical_path_line(&text)?;
    Some(Span { span_ns, path_ns })
}

/// Compares the runs in `base` and `new` (output directories); `Err` is
/// one line naming the file and what is wrong with it.
pub fn compare_runs(base: &Path, new: &Path, rank: Option<u64>) -> Result<RunDiff, String> {
    let before = read_kernels(&base.join("kernels.csv"))?;
    let after = read_kernels(&new.join("kernels.csv"))?;
    let mut keys: BTreeMap<NodeKey, (Option<NodeTimes>, Option<NodeTimes>)> = BTreeMap::new();
    for (k, t) in before {
        keys.entry(k).or_default().0 = Some(t);
    }
    for (k, t) in after {
        keys.entry(k).or_default().1 = Some(t);
    }
    let nodes = keys
        .into_iter()
        .map(|(key, (b, a))| {
            let (before, after) = (b.as_ref().map(Side::of), a.as_ref().map(Side::of));
            let change = match (before.and_then(|s| s.p50_ns), after.and_then(|s| s.p50_ns)) {
                (Some(x), Some(y)) => change_pct(x, y),
                _ => None,
            };
            let (verdict, p_value) = match (&b, &a) {
                (Some(b), Some(a)) => judge(&b.durations, &a.durations, change),
                (None, _) => (Verdict::Added, None),
                (_, None) => (Verdict::Removed, None),
            };
            NodeChange {
                key,
                before,
                after,
                change_pct: change,
                p_value,
                verdict,
            }
        })
        .collect();
    let mut notes = Vec::new();
    let mut edges = |dir: &Path| match read_edges(&dir.join("graph.dot")) {
        Ok(e) => Some(e),
        Err(e) => {
            notes.push(format!("edges not compared: {e}"));
            None
        }
    };
    let (edges_before, edges_after) = (edges(base), edges(new));
    let (edges_added, edges_removed) = match (edges_before, edges_after) {
        (Some(b), Some(a)) => (
            a.difference(&b).cloned().collect(),
            b.difference(&a).cloned().collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    };
    let (span_before, span_after) = (span_of(base), span_of(new));
    for (dir, span) in [(base, span_before), (new, span_after)] {
        if span.is_none() {
            notes.push(format!(
                "{}: no critical path line in its summary.txt: its span is not known",
                dir.display()
            ));
        }
    }
    Ok(RunDiff {
        rank,
        base: base.to_path_buf(),
        new: new.to_path_buf(),
        nodes,
        edges_added,
        edges_removed,
        span_before,
        span_after,
        notes,
    })
}

/// Compares two MPI job directories rank by rank: `base_ranks` and
/// `new_ranks` are their (rank, directory) lists.
pub fn compare_jobs(
    base_ranks: &[(u64, PathBuf)],
    new_ranks: &[(u64, PathBuf)],
) -> Result<Diff, String> {
    let before: BTreeMap<u64, &PathBuf> = base_ranks.iter().map(|(r, d)| (*r, d)).collect();
    let after: BTreeMap<u64, &PathBuf> = new_ranks.iter().map(|(r, d)| (*r, d)).collect();
    let both: BTreeSet<u64> = before
        .keys()
        .filter(|r| after.contains_key(r))
        .copied()
        .collect();
    let mut runs = Vec::new();
    for rank in &both {
        runs.push(compare_runs(before[rank], after[rank], Some(*rank))?);
    }
    Ok(Diff {
        runs,
        ranks_only_before: before
            .keys()
            .filter(|r| !both.contains(r))
            .copied()
            .collect(),
        ranks_only_after: after
            .keys()
            .filter(|r| !both.contains(r))
            .copied()
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_dir(name: &str, kernels: &str, dot: &str, summary: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-diff-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("kernels.csv"), kernels).unwrap();
        std::fs::write(dir.join("graph.dot"), dot).unwrap();
        std::fs::write(dir.join("summary.txt"), summary).unwrap();
        dir
    }

    const HEADER: &str = "name,kind,node_id,timing,duration_ns,source_file,source_line\n";

    fn rows(name: &str, line: u32, durations: impl Iterator<Item = u64>) -> String {
        durations
            .map(|d| format!("{name},kernel,n0,ok,{d},a.cpp,{line}\n"))
            .collect()
    }

    #[test]
    fn nodes_edges_and_spans_are_compared() {
        let dot_before = r#"digraph syclgraph {
  n0[kind="kernel" operation="a" file="a.cpp" line="1"]
  n1[kind="kernel" operation="b" file="a.cpp" line="2"]
  n2[kind="host_task" operation="host task" file="a.cpp" line="3"]
  n0 -> n1 [kind="memory"]
  n1 -> n2 [kind="event"]
}"#;
        let dot_after = r#"digraph syclgraph {
  n5[kind="kernel" operation="b" file="a.cpp" line="2"]
  n7[kind="kernel" operation="a" file="a.cpp" line="1"]
  n9[kind="kernel" operation="c" file="a.cpp" line="4"]
  n7 -> n5 [kind="memory"]
  n5 -> n9 [kind="event"]
}"#;
        let base = run_dir(
            "base",
            &format!(
                "{HEADER}{}{}{}",
                rows("a", 1, (0..30).map(|i| 1_000 + i)),
                rows("b", 2, (0..30).map(|i| 5_000 + 3 * i)),
                rows("gone", 9, [7].into_iter())
            ),
            dot_before,
            "critical path: 3 steps, 2.00 ms of a 4.00 ms span (first submission to last device end)\n",
        );
        let new = run_dir(
            "new",
            &format!(
                "{HEADER}{}{}{}",
                rows("a", 1, (0..30).map(|i| 2_000 + 2 * i)),
                rows("b", 2, (0..30).map(|i| 5_001 + 3 * i)),
                rows("c", 4, [7].into_iter())
            ),
            dot_after,
            "critical path: 3 steps, 3.00 ms of a 5.00 ms span (first submission to last device end)\n",
        );
        let d = compare_runs(&base, &new, None).unwrap();
        let verdicts: Vec<(String, Verdict)> = d
            .nodes
            .iter()
            .map(|n| (n.key.operation.clone(), n.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("a".to_string(), Verdict::Slower),
                ("b".to_string(), Verdict::Same),
                ("c".to_string(), Verdict::Added),
                ("gone".to_string(), Verdict::Removed),
            ]
        );
        assert_eq!(d.slower_by(50.0).count(), 1);
        assert_eq!(d.slower_by(150.0).count(), 0);
        let edge = |e: &EdgeKey| format!("{} -> {} {}", e.0.operation, e.1.operation, e.2);
        assert_eq!(
            d.edges_added.iter().map(edge).collect::<Vec<_>>(),
            ["b -> c event"]
        );
        assert_eq!(
            d.edges_removed.iter().map(edge).collect::<Vec<_>>(),
            ["b -> host task event"]
        );
        assert_eq!(
            (d.span_before, d.span_after),
            (
                Some(Span {
                    span_ns: 4_000_000,
                    path_ns: 2_000_000
                }),
                Some(Span {
                    span_ns: 5_000_000,
                    path_ns: 3_000_000
                })
            )
        );
        let text = text::run_text(&d);
        assert!(text.contains("span: 4.00 ms -> 5.00 ms (+25.0%)"), "{text}");
        assert!(
            text.contains("edges: 1 added, 1 removed\n  + event: b (a.cpp:2) -> c (a.cpp:4)"),
            "{text}"
        );
        let mut csv = Vec::new();
        csv_out::write_diff_csv(
            &mut csv,
            &Diff {
                runs: vec![d],
                ranks_only_before: vec![],
                ranks_only_after: vec![],
            },
        )
        .unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().next().unwrap(), csv_out::DIFF_COLUMNS.join(","));
        assert!(
            csv.contains("\n,kernel,c,a.cpp,4,added,,,,1,,1,,7,,7,,7\n"),
            "{csv}"
        );
        for dir in [base, new] {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}
