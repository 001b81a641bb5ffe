//! `idle_gaps.csv` (see [`crate::analyses::idle_gaps`]): columns
//! [`IDLE_GAPS_COLUMNS`]. Rows `total`: per device and per queue and cause,
//! the number of gaps and their idle time, over the whole run (`cause`
//! `busy` gives the time covered by commands, `late` in `count` the commands
//! that came too late to be placed). Rows `gap`: the ten longest gaps per
//! scope with the instances before and after.

use std::io::{self, Write};

use crate::analyses::idle_gaps::{IdleCause, IdleGaps};
use crate::instance_graph::InstanceKey;
use crate::writers::dot_ids::node_dot_id;

/// The idle gaps file.
pub const IDLE_GAPS_CSV: &str = "idle_gaps.csv";

/// The header of `idle_gaps.csv`.
pub const IDLE_GAPS_COLUMNS: [&str; 13] = [
    "row",
    "scope",
    "resource",
    "cause",
    "count",
    "idle_ns",
    "start_ns",
    "end_ns",
    "before_node",
    "before_instance",
    "after_node",
    "after_instance",
    "rank",
];

fn key_fields(key: Option<InstanceKey>) -> [String; 2] {
    match key {
        Some((n, i)) => [node_dot_id(n), i.to_string()],
        None => [String::new(), String::new()],
    }
}

/// Write `idle_gaps.csv` for `idle` to `w`.
pub fn write_idle_gaps_csv<W: Write>(w: W, idle: &IdleGaps) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(IDLE_GAPS_COLUMNS)?;
    for (resource, sweep) in idle.sweeps() {
        let mut total = |cause: &str, count: u64, ns: u64| {
            csv.write_record([
                "total",
                resource.scope(),
                &resource.name(),
                cause,
                &count.to_string(),
                &ns.to_string(),
                "",
                "",
                "",
                "",
                "",
                "",
                "",
            ])
        };
        total("busy", sweep.commands, sweep.busy_ns)?;
        total("late", sweep.late, 0)?;
        for cause in IdleCause::ALL {
            total(
                cause.as_str(),
                sweep.gaps[cause.index()],
                sweep.idle_ns[cause.index()],
            )?;
        }
    }
    for scope in ["device", "queue"] {
        for (rank, gap) in idle.longest(scope).into_iter().enumerate() {
            let [bn, bi] = key_fields(gap.before);
            let [an, ai] = key_fields(Some(gap.after));
            csv.write_record([
                "gap",
                scope,
                &gap.resource.name(),
                gap.cause.as_str(),
                "1",
                &gap.idle_ns().to_string(),
                &gap.start_ns.to_string(),
                &gap.end_ns.to_string(),
                &bn,
                &bi,
                &an,
                &ai,
                &(rank + 1).to_string(),
            ])?;
        }
    }
    csv.flush()
}
