//! `syclgraph report` on a job directory: the views of [`crate::sql`]
//! written as `report/*.csv` and printed as short tables (the top N rows).

use std::path::Path;

use rusqlite::types::Value;
use syclgraph_graph::timing::format_ns;

use crate::load::{Coverage, LoadedJob};
use crate::query::{rows, value_int, value_text, write_csv};
use crate::sql;

/// The files the report writes, with the query behind each.
pub const REPORT_FILES: [(&str, &str); 4] = [
    ("operations.csv", sql::OPERATIONS),
    ("ranks.csv", sql::RANKS),
    ("regions.csv", sql::REGIONS),
    (
        "op_rank.csv",
        "SELECT * FROM op_rank ORDER BY kind, name, source_file, source_line, rank",
    ),
];

/// Creates the report's views on a loaded job (once).
pub fn create_views(job: &LoadedJob) -> Result<(), String> {
    job.db.execute_batch(sql::VIEWS).map_err(|e| e.to_string())
}

/// Writes `report/*.csv` into `out_dir` and returns the printed report:
/// the coverage line, the `top` most imbalanced operations and the `top`
/// ranks furthest from the median.
pub fn report(job: &LoadedJob, out_dir: &Path, top: usize) -> Result<String, String> {
    std::fs::create_dir_all(out_dir)
        .map_err(|e| format!("{}: cannot create it ({e})", out_dir.display()))?;
    for (file, query) in REPORT_FILES {
        let path = out_dir.join(file);
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        write_csv(&job.db, query, &mut f).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut text = format!(
        "syclgraph: job {}: {}\n",
        job.dir.display(),
        coverage_line(&job.coverage)
    );
    let (_, ops) = rows(&job.db, sql::OPERATIONS)?;
    text.push_str(&format!(
        "per operation, device time per rank, most imbalanced first ({} of {}; all in {}):\n",
        ops.len().min(top),
        ops.len(),
        out_dir.join("operations.csv").display()
    ));
    let mut table = vec![row_of(&[
        "kind", "name", "source", "ranks", "calls", "min", "median", "max", "mean", "stddev",
        "slowest", "excess",
    ])];
    for op in ops.iter().take(top) {
        let ns =
            |i: usize| value_int(&op[i]).map_or("-".to_string(), |n| format_ns(n.max(0) as u64));
        table.push(vec![
            value_text(&op[0]),
            cut_text(&value_text(&op[1]), 32),
            source(&op[2], &op[3]),
            value_text(&op[4]),
            value_text(&op[5]),
            ns(6),
            ns(7),
            ns(8),
            ns(9),
            ns(10),
            value_int(&op[11]).map_or("-".to_string(), |r| format!("rank {r}")),
            value_int(&op[12]).map_or("-".to_string(), |_| format!("+{}", ns(12))),
        ]);
    }
    text.push_str(&aligned(&table, 3));
    let (_, ranks) = rows(&job.db, sql::RANKS_BY_DISTANCE)?;
    text.push_str(&format!(
        "per rank, furthest from the median device time first ({} of {}; all in {}):\n",
        ranks.len().min(top),
        ranks.len(),
        out_dir.join("ranks.csv").display()
    ));
    let mut table = vec![row_of(&[
        "rank",
        "host",
        "device",
        "vs median",
        "span",
        "critical path",
        "busy",
        "untimed",
        "dropped",
    ])];
    for r in ranks.iter().take(top) {
        let ns =
            |i: usize| value_int(&r[i]).map_or("-".to_string(), |n| format_ns(n.max(0) as u64));
        let signed = match value_int(&r[10]) {
            Some(n) if n < 0 => format!("-{}", format_ns(n.unsigned_abs())),
            Some(n) => format!("+{}", format_ns(n as u64)),
            None => "-".into(),
        };
        let share = match &r[7] {
            Value::Real(x) => format!("{:.1}%", x * 100.0),
            _ => "-".into(),
        };
        let state = match (value_int(&r[2]), value_int(&r[3])) {
            (Some(0), _) => " (not sampled)",
            (_, Some(0)) => " (incomplete)",
            _ => "",
        };
        table.push(vec![
            format!("{}{state}", value_text(&r[0])),
            value_text(&r[1]),
            ns(4),
            signed,
            ns(5),
            ns(6),
            share,
            value_text(&r[8]),
            value_text(&r[9]),
        ]);
    }
    text.push_str(&aligned(&table, 1));
    text.push_str(&regions(job, Some((top, &out_dir.join("regions.csv"))))?);
    Ok(text)
}

/// The regions across ranks (the program's ITT tasks, [`sql::REGIONS`]):
/// per region the device time of the commands submitted inside it on its
/// fastest, median and slowest rank. With `cut` (`top`, the file that has
/// them all) only the `top` regions with the most device time, under a
/// heading; all of them otherwise. Empty when no rank entered a region.
pub fn regions(job: &LoadedJob, cut: Option<(usize, &Path)>) -> Result<String, String> {
    let (_, regions) = rows(&job.db, sql::REGIONS)?;
    if regions.is_empty() {
        return Ok(String::new());
    }
    let shown = cut.map_or(regions.len(), |(top, _)| top.min(regions.len()));
    let mut text = match cut {
        Some((_, file)) => format!(
            "by region (ITT tasks), device time of the commands inside per rank, most on the slowest rank first ({shown} of {}; all in {}):\n",
            regions.len(),
            file.display()
        ),
        None => String::new(),
    };
    let mut table = vec![row_of(&[
        "region", "ranks", "entered", "commands", "min", "median", "max", "slowest", "excess",
    ])];
    for r in regions.iter().take(shown) {
        let ns =
            |i: usize| value_int(&r[i]).map_or("-".to_string(), |n| format_ns(n.max(0) as u64));
        table.push(vec![
            cut_text(&value_text(&r[0]), 48),
            value_text(&r[3]),
            value_text(&r[4]),
            value_text(&r[5]),
            ns(6),
            ns(7),
            ns(8),
            value_int(&r[9]).map_or("-".to_string(), |n| format!("rank {n}")),
            value_int(&r[10]).map_or("-".to_string(), |_| format!("+{}", ns(10))),
        ]);
    }
    text.push_str(&aligned(&table, 1));
    Ok(text)
}

/// `4 rank directories (world size 4), 3 traced; not sampled: 2; ...`.
pub fn coverage_line(c: &Coverage) -> String {
    let list = |v: &[u64]| {
        v.iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let traced = c.rank_dirs - c.unsampled.len();
    let mut line = format!("{} rank directories", c.rank_dirs);
    if let Some(size) = c.size {
        line.push_str(&format!(" (world size {size})"));
    }
    line.push_str(&format!(", {traced} traced"));
    for (what, ranks) in [
        ("not sampled", &c.unsampled),
        ("incomplete", &c.incomplete),
        ("no meta.json", &c.no_meta),
        ("missing", &c.missing),
    ] {
        if !ranks.is_empty() {
            line.push_str(&format!("; {what}: {}", list(ranks)));
        }
    }
    if c.skipped_rows > 0 {
        line.push_str(&format!(
            "; {} cut or unreadable CSV rows skipped",
            c.skipped_rows
        ));
    }
    if c.bad_values > 0 {
        line.push_str(&format!(
            "; {} numbers that did not parse loaded as empty",
            c.bad_values
        ));
    }
    line
}

/// `file:line`, the file's last component only; `-` when unknown.
fn source(file: &Value, line: &Value) -> String {
    match file {
        Value::Text(f) if !f.is_empty() => {
            let short = f.rsplit('/').next().unwrap_or(f);
            format!("{short}:{}", value_text(line))
        }
        _ => "-".into(),
    }
}

fn row_of(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// `text` cut to `max` characters.
fn cut_text(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// Columns padded to their widest cell; the first `left` columns are
/// left-aligned, the others right-aligned.
fn aligned(table: &[Vec<String>], left: usize) -> String {
    let columns = table.first().map_or(0, |r| r.len());
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in table {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = " ".repeat(widths[i] - cell.chars().count());
                if i < left {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
