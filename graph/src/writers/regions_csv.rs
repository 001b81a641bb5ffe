//! `regions.csv`: one row per region (path of ITT tasks) the program
//! entered, what it cost on the host and what the commands submitted
//! inside it cost on the device ([`crate::regions`]); the "by region"
//! block of the end-of-run summary; and reading the file back (for
//! `syclgraph report --by region`).
//!
//! Columns, in order ([`REGION_COLUMNS`]): `region` (the path, outermost
//! first, joined by [`PATH_SEPARATOR`]), `name` (its innermost task),
//! `depth`, `count` (times entered), `unclosed` (entries still open at the
//! end of the run), `host_ns` and `host_self_ns` (its entries' host time,
//! and the same less the entries begun inside them), then over the
//! commands submitted inside it, nested regions included: `commands`,
//! `timed` (those with device times), `device_ns` (the sum of their
//! `kernels.csv` `duration_ns`), `device_span_ns` (per entry, their first
//! device start to last device end, summed over the entries) and
//! `critical_path_ns` (their time on the critical path). Rows are sorted by
//! `region`, so a region's row comes before the rows inside it.

use std::io::{self, Write};

use crate::critical_path::PathReport;
use crate::regions::{Region, RegionId, PATH_SEPARATOR};
use crate::run::Run;
use crate::timing::format_ns;

/// The file's name in the output directory.
pub const REGIONS_CSV: &str = "regions.csv";

/// The header of `regions.csv`.
pub const REGION_COLUMNS: [&str; 12] = [
    "region",
    "name",
    "depth",
    "count",
    "unclosed",
    "host_ns",
    "host_self_ns",
    "commands",
    "timed",
    "device_ns",
    "device_span_ns",
    "critical_path_ns",
];

/// One row of `regions.csv`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionRow {
    /// The path (`step/backward`).
    pub region: String,
    /// Its innermost task's name.
    pub name: String,
    /// Names in the path.
    pub depth: u64,
    /// Times entered.
    pub count: u64,
    /// Entries still open at the end of the run.
    pub unclosed: u64,
    /// Host time of its entries, ns.
    pub host_ns: u64,
    /// The same less the entries begun inside them, ns.
    pub host_self_ns: u64,
    /// Commands submitted inside it, nested regions included.
    pub commands: u64,
    /// Of those, the ones with device times.
    pub timed: u64,
    /// Their device time, ns.
    pub device_ns: u64,
    /// Per entry, first device start to last device end, summed, ns.
    pub device_span_ns: u64,
    /// Their time on the critical path, ns.
    pub critical_path_ns: u64,
}

impl RegionRow {
    /// The row's fields, as text, in [`REGION_COLUMNS`] order.
    fn fields(&self) -> [String; 12] {
        [
            self.region.clone(),
            self.name.clone(),
            self.depth.to_string(),
            self.count.to_string(),
            self.unclosed.to_string(),
            self.host_ns.to_string(),
            self.host_self_ns.to_string(),
            self.commands.to_string(),
            self.timed.to_string(),
            self.device_ns.to_string(),
            self.device_span_ns.to_string(),
            self.critical_path_ns.to_string(),
        ]
    }
}

/// The rows of a run's regions, sorted by path: every region's totals and
/// its commands' time on the critical path (`path`, the run's critical
/// path: its time per innermost region, added up to every region around
/// it).
pub fn region_rows(run: &Run, path: &PathReport) -> Vec<RegionRow> {
    let regions = run.regions();
    let parent = |id: RegionId| -> Option<&Region> {
        id.checked_sub(1).and_then(|i| regions.get(i as usize))
    };
    let mut critical = vec![0u64; regions.len()];
    for &(id, ns) in &path.region_ns {
        let mut at = id;
        while let Some(r) = parent(at) {
            critical[r.id as usize - 1] = critical[r.id as usize - 1].saturating_add(ns);
            at = r.parent;
        }
    }
    let mut rows: Vec<RegionRow> = regions
        .iter()
        .map(|r| {
            let t = &r.totals;
            RegionRow {
                region: run.region_path(r.id).into_owned(),
                name: run.string(r.label).unwrap_or("").to_owned(),
                depth: r.depth.into(),
                count: t.count,
                unclosed: t.unclosed,
                host_ns: t.host_ns,
                host_self_ns: t.host_self_ns,
                commands: t.commands,
                timed: t.timed,
                device_ns: t.device_ns,
                device_span_ns: t.device_span_ns,
                critical_path_ns: critical[r.id as usize - 1],
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        a.region
            .split(PATH_SEPARATOR)
            .cmp(b.region.split(PATH_SEPARATOR))
            .then(a.depth.cmp(&b.depth))
    });
    rows
}

/// Writes `regions.csv` (the header, then `rows`).
pub fn write_regions_csv<W: Write>(w: W, rows: &[RegionRow]) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(REGION_COLUMNS)?;
    for row in rows {
        csv.write_record(row.fields())?;
    }
    csv.flush()
}

/// Reads `regions.csv` back (columns found by name; columns added later are
/// passed over). The error names the line and what is wrong with it.
pub fn read_regions_csv<R: io::Read>(r: R) -> Result<Vec<RegionRow>, String> {
    let mut csv = csv::ReaderBuilder::new().has_headers(false).from_reader(r);
    let mut records = csv.records();
    let header = match records.next() {
        Some(Ok(h)) => h,
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("the file is empty".to_string()),
    };
    let mut at = [0usize; REGION_COLUMNS.len()];
    for (slot, name) in at.iter_mut().zip(REGION_COLUMNS) {
        *slot = header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "line 1 is not the regions.csv header (no {name} column; wanted {})",
                REGION_COLUMNS.join(",")
            )
        })?;
    }
    let mut rows = Vec::new();
    for (i, record) in records.enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| format!("line {line}: {e}"))?;
        let field = |n: usize| record.get(at[n]).unwrap_or("");
        let number = |n: usize| -> Result<u64, String> {
            field(n).parse().map_err(|_| {
                format!(
                    "line {line}: {} {:?} is not a whole number",
                    REGION_COLUMNS[n],
                    field(n)
                )
            })
        };
        rows.push(RegionRow {
            region: field(0).to_owned(),
            name: field(1).to_owned(),
            depth: number(2)?,
            count: number(3)?,
            unclosed: number(4)?,
            host_ns: number(5)?,
            host_self_ns: number(6)?,
            commands: number(7)?,
            timed: number(8)?,
            device_ns: number(9)?,
            device_span_ns: number(10)?,
            critical_path_ns: number(11)?,
        });
    }
    Ok(rows)
}

/// Regions the summary's "by region" block shows; the rest are summed on
/// one line.
pub const REGIONS_SHOWN: usize = 8;

/// The table of `rows` as `syclgraph report --by region` prints it (and,
/// cut to the `shown` with the most device time, the summary's "by
/// region" block): one line per region, then a line for the rest. Empty
/// when there are no regions.
pub fn region_table(rows: &[RegionRow], shown: usize) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut order: Vec<&RegionRow> = rows.iter().collect();
    let cut = shown < rows.len();
    if cut {
        order.sort_by(|a, b| {
            b.device_ns
                .cmp(&a.device_ns)
                .then(b.host_ns.cmp(&a.host_ns))
                .then(a.region.cmp(&b.region))
        });
    }
    let width = order
        .iter()
        .take(shown)
        .map(|r| r.region.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 48);
    let mut out = format!(
        "{:<width$} {:>6} {:>9} {:>8} {:>9} {:>9} {:>9}\n",
        "region", "count", "host", "commands", "device", "span", "critical"
    );
    for r in order.iter().take(shown) {
        let mut name: String = r.region.chars().take(width).collect();
        if r.unclosed > 0 {
            name = format!("{name}*");
        }
        out.push_str(&format!(
            "{name:<width$} {:>6} {:>9} {:>8} {:>9} {:>9} {:>9}\n",
            r.count,
            format_ns(r.host_ns),
            r.commands,
            time_or_dash(r.timed, r.device_ns),
            time_or_dash(r.timed, r.device_span_ns),
            time_or_dash(r.timed, r.critical_path_ns),
        ));
    }
    if cut {
        let rest = &order[shown..];
        out.push_str(&format!(
            "… {} more regions (regions.csv has them all)\n",
            rest.len()
        ));
    }
    if rows.iter().any(|r| r.unclosed > 0) {
        out.push_str("* still open when the run ended (closed at its last event)\n");
    }
    out
}

/// A time, or `-` when no command of the region was timed.
fn time_or_dash(timed: u64, ns: u64) -> String {
    if timed == 0 {
        "-".to_owned()
    } else {
        format_ns(ns)
    }
}

/// The summary's "by region" block: a heading and the regions with the
/// most device time ([`REGIONS_SHOWN`]); empty when the program entered
/// no region.
pub fn region_block(rows: &[RegionRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "by region (ITT tasks; device time of the commands submitted inside, nested included):\n",
    );
    for line in region_table(rows, REGIONS_SHOWN).lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}
