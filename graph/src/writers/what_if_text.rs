//! The what-if answers as text: the "what would pay" block of the
//! end-of-run summary (each of the nodes with the most device time made
//! twice as fast on its own, with what the replay says it saves; see
//! [`crate::what_if`]) and `syclgraph whatif`'s answer for one scenario.

use crate::analyses::what_if::{
    factor_text, what_would_pay, Payoff, Prediction, Scenario, PAYOFF_FACTOR, PAYOFF_NODES,
};
use crate::record::NodeId;
use crate::run::Run;
use crate::timing::format_ns;
use crate::writers::dot_ids::node_dot_id;

/// The first words of the block's line when the run was too long for the
/// exit to replay (`syclgraph report` looks for them).
pub const NOT_AT_EXIT: &str = "what would pay: not computed at exit";

/// `n3 main (tests/programs/whatif.cpp:97)`.
pub fn node_label(run: &Run, node: NodeId) -> String {
    let name = run.node(node).map_or_else(
        || format!("node {node}"),
        |n| match n.location() {
            Some(loc) => format!("{} ({loc})", n.operation),
            None => n.operation.clone(),
        },
    );
    format!("{} {name}", node_dot_id(node))
}

/// `part` of `whole` in percent, one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The "what would pay" block of the summary: empty when no device command
/// was timed; one line saying why when the run's schedule was not kept
/// whole (more instances than its limit).
pub fn what_would_pay_text(run: &Run) -> String {
    let schedule = run.schedule();
    if !run
        .nodes()
        .any(|n| n.kind.is_device_command() && n.times.device.total_ns > 0)
    {
        return String::new();
    }
    let Some(plan) = schedule.plan() else {
        return format!(
            "{NOT_AT_EXIT} ({} commands, more than the {} it replays); `syclgraph report` on the output directory computes it from run.journal\n",
            schedule.instances_seen(),
            schedule.limit()
        );
    };
    let rows = what_would_pay(run, &plan, PAYOFF_NODES, PAYOFF_FACTOR);
    payoff_table(run, &rows)
}

/// The table of `rows` (see [`what_would_pay_text`]).
pub fn payoff_table(run: &Run, rows: &[Payoff]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut out = format!(
        "what would pay: each node {}× faster on its own, the run replayed (syclgraph whatif for other changes)\n",
        factor_text(first.factor)
    );
    out.push_str(&format!(
        "  {:>9} {:>7} {:>9} {:>9}  node\n",
        "saves", "of span", "device", "on path"
    ));
    for row in rows {
        out.push_str(&format!(
            "  {:>9} {:>7} {:>9} {:>9}  {}\n",
            format_ns(row.prediction.saved_ns()),
            percent(row.prediction.saved_ns(), row.prediction.span_ns),
            format_ns(row.device_ns),
            format_ns(row.critical_ns),
            node_label(run, row.node)
        ));
    }
    out
}

/// `syclgraph whatif`'s answer for one scenario: what was sped up, the
/// recorded and predicted spans and the saving.
pub fn scenario_text(run: &Run, scenario: &Scenario, prediction: &Prediction) -> String {
    let path = run.critical_path().report();
    let mut out = String::from("what if:\n");
    for &(node, factor) in scenario.speedups() {
        let device = run.node(node).map_or(0, |n| n.times.device.total_ns);
        out.push_str(&format!(
            "  {} {}× faster (device {}, on the critical path {})\n",
            node_label(run, node),
            factor_text(factor),
            format_ns(device),
            format_ns(path.node_time(node))
        ));
    }
    out.push_str(&format!(
        "recorded span:  {} (first submission to last device end)\n",
        format_ns(prediction.span_ns)
    ));
    out.push_str(&format!(
        "predicted span: {}\n",
        format_ns(prediction.predicted_span_ns)
    ));
    out.push_str(&format!(
        "saves:          {} ({} of the span)\n",
        format_ns(prediction.saved_ns()),
        percent(prediction.saved_ns(), prediction.span_ns)
    ));
    out
}
