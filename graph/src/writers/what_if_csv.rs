//! `syclgraph whatif --csv`: one row per scenario, columns
//! [`WHAT_IF_COLUMNS`]: the speedups (`n3=2;n5=inf`), the device time and
//! the critical-path time of the nodes sped up, the recorded span, the
//! predicted span, what it saves and its share of the span (see
//! [`crate::what_if`]).

use std::io::{self, Write};

use crate::analyses::what_if::{factor_text, Prediction, Scenario};
use crate::run::Run;
use crate::writers::dot_ids::node_dot_id;

/// The header of `syclgraph whatif --csv`.
pub const WHAT_IF_COLUMNS: [&str; 8] = [
    "scenario",
    "speedups",
    "device_ns",
    "critical_ns",
    "span_ns",
    "predicted_span_ns",
    "saved_ns",
    "saved_share",
];

/// Writes the header and one row per (scenario, prediction), numbered
/// from 1.
pub fn write_what_if_csv<W: Write>(
    w: W,
    run: &Run,
    scenarios: &[(Scenario, Prediction)],
) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(WHAT_IF_COLUMNS)?;
    let path = run.critical_path().report();
    for (i, (scenario, p)) in scenarios.iter().enumerate() {
        let speedups: Vec<String> = scenario
            .speedups()
            .iter()
            .map(|&(node, factor)| format!("{}={}", node_dot_id(node), factor_text(factor)))
            .collect();
        let device: u64 = scenario
            .speedups()
            .iter()
            .filter_map(|&(node, _)| run.node(node))
            .map(|n| n.times.device.total_ns)
            .sum();
        let critical: u64 = scenario
            .speedups()
            .iter()
            .map(|&(node, _)| path.node_time(node))
            .sum();
        csv.write_record([
            (i + 1).to_string(),
            speedups.join(";"),
            device.to_string(),
            critical.to_string(),
            p.span_ns.to_string(),
            p.predicted_span_ns.to_string(),
            p.saved_ns().to_string(),
            format!("{:.4}", p.saved_share()),
        ])?;
    }
    csv.flush()
}
