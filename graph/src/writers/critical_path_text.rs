//! The critical path's block on stderr at exit: the span, the path's
//! length and what it waited for, each device's busy share and idle time by
//! cause, the nodes with the most time on the path and the longest gap
//! (see [`crate::analyses::critical_path`] and [`crate::analyses::idle_gaps`]).

use crate::analyses::critical_path::{GapCause, PathReport};
use crate::analyses::idle_gaps::IdleCause;
use crate::run::Run;
use crate::timing::{format_ns, parse_formatted_ns};
use crate::writers::dot_ids::node_dot_id;

/// `part` of `whole` as a percentage with one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The first line of the block, `critical path: N steps, LENGTH of a SPAN
/// span ...`, read back from a summary's text (the first such line): the
/// steps, the path's length and the span, ns (three significant digits).
pub fn read_critical_path_line(summary: &str) -> Option<(u64, u64, u64)> {
    let line = summary
        .lines()
        .find_map(|l| l.strip_prefix("critical path: "))?;
    let (steps, rest) = line.split_once(" steps, ")?;
    let (length, rest) = rest.split_once(" of a ")?;
    let (span, _) = rest.split_once(" span")?;
    Some((
        steps.parse().ok()?,
        parse_formatted_ns(length)?,
        parse_formatted_ns(span)?,
    ))
}

/// The stderr block: span, critical path length, device busy share, idle
/// time by cause and the nodes with the most time on the critical path.
pub fn critical_path_text(graph: &Run, report: &PathReport) -> String {
    /// Nodes listed.
    const TOP: usize = 5;
    let Some(end) = report.end_ns else {
        return String::new();
    };
    let idle = graph.idle_gaps();
    let span = report.span_ns();
    let mut out = String::new();
    out.push_str(&format!(
        "critical path: {} steps, {} of a {} span (first submission to last device end)\n",
        report.total_steps(),
        format_ns(report.length_ns()),
        format_ns(span)
    ));
    let on_path: u64 = report.node_ns.iter().map(|n| n.1).sum();
    let gaps: Vec<String> = GapCause::ALL
        .iter()
        .filter(|c| report.gap_ns[c.index()] > 0)
        .map(|c| format!("{} {}", c.as_str(), format_ns(report.gap_ns[c.index()])))
        .collect();
    out.push_str(&format!(
        "  on it: running {}, waiting {}\n",
        format_ns(on_path),
        if gaps.is_empty() {
            "0".to_string()
        } else {
            gaps.join(", ")
        }
    ));
    // Per device; per queue when no command named its device (USM only).
    let sweeps = idle.sweeps();
    let scope = if sweeps.iter().any(|(r, _)| r.scope() == "device") {
        "device"
    } else {
        "queue"
    };
    for (resource, sweep) in sweeps {
        if resource.scope() != scope {
            continue;
        }
        let from = report.first_ns.unwrap_or(0);
        let until = sweep.last_end_ns().unwrap_or(end).max(end);
        let causes: Vec<String> = IdleCause::ALL
            .iter()
            .filter(|c| sweep.idle_ns[c.index()] > 0)
            .map(|c| format!("{} {}", c.as_str(), format_ns(sweep.idle_ns[c.index()])))
            .collect();
        out.push_str(&format!(
            "  {} {}: busy {} of the span; idle between commands {}{}\n",
            scope,
            resource.name(),
            percent(sweep.busy_ns, until.saturating_sub(from)),
            format_ns(sweep.idle_total_ns()),
            if causes.is_empty() {
                String::new()
            } else {
                format!(" ({})", causes.join(", "))
            }
        ));
    }
    let length = report.length_ns();
    for &(node, ns) in report.node_ns.iter().take(TOP) {
        let name = graph.node(node).map_or_else(
            || format!("node {node}"),
            |n| match n.location() {
                Some(loc) => format!("{} ({loc})", n.operation),
                None => n.operation.clone(),
            },
        );
        out.push_str(&format!(
            "  {:>6} {:>9}  {} {}\n",
            percent(ns, length),
            format_ns(ns),
            node_dot_id(node),
            name
        ));
    }
    if let Some(gap) = idle.longest(scope).first() {
        out.push_str(&format!(
            "  longest {scope} gap: {} ({}) before {}#{}; idle_gaps.csv has the ten longest\n",
            format_ns(gap.idle_ns()),
            gap.cause.as_str(),
            node_dot_id(gap.after.0),
            gap.after.1
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_reads_back() {
        let text = "kind ...\ncritical path: 17 steps, 2.32 ms of a 3.43 ms span (first submission to last device end)\n  on it: ...\n";
        assert_eq!(
            read_critical_path_line(text),
            Some((17, 2_320_000, 3_430_000))
        );
        assert_eq!(
            read_critical_path_line("no device commands recorded\n"),
            None
        );
    }
}
