//! `syclgraph diff`'s answer as text: per compared run (or rank), the span
//! and the critical path before and after, the verdicts counted, one line
//! per node (changed ones first: its verdict, the median's change, the
//! median, 95th percentile and total device time before and after, the
//! instances) and the edges added and removed.

use syclgraph_graph::timing::format_ns;

use crate::node_times::NodeKey;
use crate::verdict::{Verdict, FLOOR_PCT, LEVEL, MIN_TIMED};
use crate::{Diff, NodeChange, RunDiff, Side};

/// Edges listed one by one (per direction); the rest are counted.
const EDGES_SHOWN: usize = 20;

/// The order nodes are listed in: what changed first.
fn rank_of(v: Verdict) -> u8 {
    match v {
        Verdict::Slower => 0,
        Verdict::Faster => 1,
        Verdict::Added => 2,
        Verdict::Removed => 3,
        Verdict::Same => 4,
    }
}

fn change_text(before: u64, after: u64) -> String {
    if before == 0 {
        return String::new();
    }
    format!(
        " ({:+.1}%)",
        (after as f64 - before as f64) * 100.0 / before as f64
    )
}

fn opt_ns(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), format_ns)
}

fn node_line(n: &NodeChange) -> String {
    let side = |s: Option<Side>| s.unwrap_or_default();
    let (b, a) = (side(n.before), side(n.after));
    let rows = match (n.before, n.after) {
        (Some(b), Some(a)) => format!("{} -> {}", b.rows, a.rows),
        (None, Some(a)) => format!("- -> {}", a.rows),
        (Some(b), None) => format!("{} -> -", b.rows),
        (None, None) => String::new(),
    };
    // `same*`: too few timed instances for the test.
    let untested = n.verdict == Verdict::Same && n.p_value.is_none();
    format!(
        "  {:<7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}  {} {}\n",
        format!("{}{}", n.verdict.as_str(), if untested { "*" } else { "" }),
        n.change_pct
            .map_or_else(|| "-".to_string(), |c| format!("{c:+.1}%")),
        opt_ns(b.p50_ns),
        opt_ns(a.p50_ns),
        opt_ns(b.p95_ns),
        opt_ns(a.p95_ns),
        opt_ns(n.before.map(|s| s.total_ns)),
        opt_ns(n.after.map(|s| s.total_ns)),
        rows,
        n.key.kind,
        n.key.label()
    )
}

fn edge_line(sign: char, (from, to, kind): &(NodeKey, NodeKey, String)) -> String {
    format!("  {sign} {kind}: {} -> {}\n", from.label(), to.label())
}

/// One run's (or rank's) block.
pub fn run_text(r: &RunDiff) -> String {
    let mut out = match r.rank {
        Some(rank) => format!("rank {rank}: {} -> {}\n", r.base.display(), r.new.display()),
        None => format!("diff: {} -> {}\n", r.base.display(), r.new.display()),
    };
    match (r.span_before, r.span_after) {
        (Some(b), Some(a)) => out.push_str(&format!(
            "span: {} -> {}{}; critical path: {} -> {}{}\n",
            format_ns(b.span_ns),
            format_ns(a.span_ns),
            change_text(b.span_ns, a.span_ns),
            format_ns(b.path_ns),
            format_ns(a.path_ns),
            change_text(b.path_ns, a.path_ns)
        )),
        _ => out.push_str("span: not known (see the notes below)\n"),
    }
    let counts = r.counts();
    let count = |v: Verdict| counts.get(&v).copied().unwrap_or(0);
    out.push_str(&format!(
        "nodes: {} slower, {} faster, {} same, {} added, {} removed (per-instance device times: rank test at the {LEVEL} level, and the median changed by {FLOOR_PCT}% at least)\n",
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::Same),
        count(Verdict::Added),
        count(Verdict::Removed)
    ));
    if !r.nodes.is_empty() {
        out.push_str(&format!(
            "  {:<7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}  node\n",
            "verdict",
            "change",
            "p50 before",
            "p50 after",
            "p95 before",
            "p95 after",
            "sum before",
            "sum after",
            "instances"
        ));
        let mut nodes: Vec<&NodeChange> = r.nodes.iter().collect();
        nodes.sort_by(|x, y| {
            let size = |n: &NodeChange| n.change_pct.map_or(0.0, f64::abs);
            rank_of(x.verdict)
                .cmp(&rank_of(y.verdict))
                .then(size(y).total_cmp(&size(x)))
                .then(x.key.cmp(&y.key))
        });
        for n in &nodes {
            out.push_str(&node_line(n));
        }
        if nodes
            .iter()
            .any(|n| n.verdict == Verdict::Same && n.p_value.is_none())
        {
            out.push_str(&format!(
                "  same*: fewer than {MIN_TIMED} timed instances on a side, too few for the test\n"
            ));
        }
    }
    out.push_str(&format!(
        "edges: {} added, {} removed\n",
        r.edges_added.len(),
        r.edges_removed.len()
    ));
    for (sign, edges) in [('+', &r.edges_added), ('-', &r.edges_removed)] {
        for e in edges.iter().take(EDGES_SHOWN) {
            out.push_str(&edge_line(sign, e));
        }
        if edges.len() > EDGES_SHOWN {
            out.push_str(&format!("  {sign} … {} more\n", edges.len() - EDGES_SHOWN));
        }
    }
    for note in &r.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// The whole answer.
pub fn diff_text(d: &Diff) -> String {
    let mut out = String::new();
    for (i, r) in d.runs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&run_text(r));
    }
    for (ranks, side) in [
        (&d.ranks_only_before, "the base job"),
        (&d.ranks_only_after, "the new job"),
    ] {
        if !ranks.is_empty() {
            let list: Vec<String> = ranks.iter().map(u64::to_string).collect();
            out.push_str(&format!(
                "ranks only in {side} (not compared): {}\n",
                list.join(", ")
            ));
        }
    }
    out
}
