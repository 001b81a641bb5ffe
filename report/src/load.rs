//! Loads a job directory into an SQLite database: one table per kind of
//! file (`kernels`, `summary`, `critical_path`, `idle_gaps`, `windows`,
//! `regions`)
//! holding every rank's rows with a `rank` column first, and `meta` with
//! one row per rank directory. Rows are streamed from the files into
//! prepared inserts in one transaction; the database is SQLite's private
//! temporary file, so memory stays bounded by its page cache whatever the
//! job's size.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};

use crate::columns::{column_type, table_column, typed_value, CSV_TABLES, META_COLUMNS};
use crate::job::{rank_dirs, RankDir};
use crate::meta_json::{parse_object, MetaValue};

/// A job loaded into its database.
pub struct LoadedJob {
    /// The database: the tables of docs/guide/mpi.md.
    pub db: Connection,
    /// The job directory.
    pub dir: PathBuf,
    /// What was read, and what was not.
    pub coverage: Coverage,
}

/// Which ranks the tables cover, and what could not be loaded.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Coverage {
    /// Rank directories found.
    pub rank_dirs: usize,
    /// The world size `meta.json` gives (the largest one seen).
    pub size: Option<i64>,
    /// Ranks that recorded nothing (`"sampled": false`).
    pub unsampled: Vec<u64>,
    /// Ranks whose files were not finished (`"complete": false`).
    pub incomplete: Vec<u64>,
    /// Rank directories without a readable `meta.json`.
    pub no_meta: Vec<u64>,
    /// Ranks below the world size with no directory.
    pub missing: Vec<u64>,
    /// CSV rows not loaded: a wrong number of fields (a killed rank's last,
    /// cut line) or unreadable bytes.
    pub skipped_rows: u64,
    /// Numbers that did not parse, loaded as NULL.
    pub bad_values: u64,
}

/// The header a table gets when no rank has its file (every rank
/// unsampled): the writer's own, so that the report's SQL runs on an empty
/// table as on a loaded one.
const EMPTY_TABLE_HEADERS: [(&str, &[&str]); 6] = [
    ("kernels", &syclgraph_graph::KERNEL_COLUMNS),
    (
        "summary",
        &syclgraph_graph::writers::summary::NODE_SUMMARY_COLUMNS,
    ),
    (
        "critical_path",
        &syclgraph_graph::writers::critical_path_csv::CRITICAL_PATH_COLUMNS,
    ),
    (
        "idle_gaps",
        &syclgraph_graph::writers::idle_gaps_csv::IDLE_GAPS_COLUMNS,
    ),
    ("windows", &syclgraph_graph::windows::WINDOWS_COLUMNS),
    ("regions", &syclgraph_graph::regions_csv::REGION_COLUMNS),
];

/// Loads every rank directory of `job`.
pub fn load_job(job: &Path) -> Result<LoadedJob, String> {
    let ranks = rank_dirs(job)?;
    if ranks.is_empty() {
        return Err(format!(
            "{}: no rank-NNNNN directory in it (not a job directory)",
            job.display()
        ));
    }
    let db = Connection::open("").map_err(|e| format!("cannot open a temporary database: {e}"))?;
    db.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536; PRAGMA temp_store=FILE;",
    )
    .map_err(|e| e.to_string())?;
    crate::sql::register_functions(&db).map_err(|e| e.to_string())?;
    let mut loader = Loader {
        db: &db,
        tables: HashMap::new(),
        coverage: Coverage::default(),
    };
    loader.coverage.rank_dirs = ranks.len();
    db.execute_batch("BEGIN").map_err(|e| e.to_string())?;
    loader.create_meta()?;
    for rank in &ranks {
        loader.rank(rank)?;
    }
    for (table, header) in EMPTY_TABLE_HEADERS {
        if !loader.tables.contains_key(table) {
            let columns: Vec<String> = header.iter().map(|c| table_column(c)).collect();
            loader.ensure_columns(table, &columns)?;
        }
    }
    db.execute_batch("COMMIT").map_err(|e| e.to_string())?;
    let mut coverage = loader.coverage;
    if let Some(size) = coverage.size {
        let present: std::collections::HashSet<u64> = ranks.iter().map(|r| r.rank).collect();
        coverage.missing = (0..size.max(0) as u64)
            .filter(|r| !present.contains(r))
            .collect();
    }
    Ok(LoadedJob {
        db,
        dir: job.to_path_buf(),
        coverage,
    })
}

struct Loader<'a> {
    db: &'a Connection,
    /// The columns of each CSV table created so far.
    tables: HashMap<String, Vec<String>>,
    coverage: Coverage,
}

impl Loader<'_> {
    fn create_meta(&mut self) -> Result<(), String> {
        let columns: Vec<String> = META_COLUMNS
            .iter()
            .map(|c| format!("{} {}", quote(c), column_type(c).sql()))
            .collect();
        self.db
            .execute_batch(&format!(
                "CREATE TABLE meta (rank INTEGER, {})",
                columns.join(", ")
            ))
            .map_err(|e| e.to_string())
    }

    fn rank(&mut self, rank: &RankDir) -> Result<(), String> {
        let meta = read_meta(&rank.dir.join("meta.json"));
        let mut row: Vec<Value> = vec![Value::Integer(rank.rank as i64)];
        let mut sampled = true;
        match &meta {
            Some(fields) => {
                for column in &META_COLUMNS[..12] {
                    let value = fields.iter().find(|(k, _)| k == column).map(|(_, v)| v);
                    row.push(match value {
                        None | Some(MetaValue::Null) => Value::Null,
                        Some(MetaValue::Bool(b)) => Value::Integer(*b as i64),
                        Some(MetaValue::Int(n)) => Value::Integer(*n),
                        Some(MetaValue::Real(x)) => Value::Real(*x),
                        Some(MetaValue::Text(s)) | Some(MetaValue::Array(s)) => {
                            Value::Text(s.clone())
                        }
                    });
                }
                let flag = |name: &str| {
                    fields
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                };
                if flag("sampled") == Some(MetaValue::Bool(false)) {
                    sampled = false;
                    self.coverage.unsampled.push(rank.rank);
                }
                if flag("complete") == Some(MetaValue::Bool(false)) {
                    self.coverage.incomplete.push(rank.rank);
                }
                if let Some(MetaValue::Int(size)) = flag("size") {
                    self.coverage.size = Some(self.coverage.size.map_or(size, |s| s.max(size)));
                }
            }
            None => {
                self.coverage.no_meta.push(rank.rank);
                row.extend(std::iter::repeat_n(Value::Null, 12));
            }
        }
        row.push(
            match std::fs::read_to_string(rank.dir.join("summary.txt")) {
                Ok(text) => Value::Integer(dropped_count(&text) as i64),
                Err(_) => Value::Null,
            },
        );
        row.push(Value::Text(rank.dir.display().to_string()));
        let marks = vec!["?"; row.len()].join(",");
        self.db
            .prepare_cached(&format!("INSERT INTO meta VALUES ({marks})"))
            .and_then(|mut s| s.execute(params_from_iter(row.iter())))
            .map_err(|e| e.to_string())?;
        if !sampled {
            return Ok(());
        }
        for (table, file) in CSV_TABLES {
            let path = rank.dir.join(file);
            if path.is_file() {
                self.csv(table, &path, rank.rank)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Creates `table`, or adds the columns it lacks.
    fn ensure_columns(&mut self, table: &str, columns: &[String]) -> Result<(), String> {
        match self.tables.get_mut(table) {
            None => {
                let defs: Vec<String> = columns
                    .iter()
                    .map(|c| format!("{} {}", quote(c), column_type(c).sql()))
                    .collect();
                let sep = if defs.is_empty() { "" } else { ", " };
                self.db
                    .execute_batch(&format!(
                        "CREATE TABLE {table} (rank INTEGER{sep}{})",
                        defs.join(", ")
                    ))
                    .map_err(|e| e.to_string())?;
                self.tables.insert(table.to_string(), columns.to_vec());
            }
            Some(known) => {
                for c in columns {
                    if !known.contains(c) {
                        self.db
                            .execute_batch(&format!(
                                "ALTER TABLE {table} ADD COLUMN {} {}",
                                quote(c),
                                column_type(c).sql()
                            ))
                            .map_err(|e| e.to_string())?;
                        known.push(c.clone());
                    }
                }
            }
        }
        Ok(())
    }

    fn csv(&mut self, table: &str, path: &Path, rank: u64) -> Result<(), String> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(|e| e.to_string())?;
        let header = reader.headers().map_err(|e| e.to_string())?.clone();
        let columns: Vec<String> = header.iter().map(table_column).collect();
        if columns.iter().any(|c| c.is_empty() || c == "rank") {
            return Err("a column without a name in the header".into());
        }
        self.ensure_columns(table, &columns)?;
        let types: Vec<_> = columns.iter().map(|c| column_type(c)).collect();
        let names: Vec<String> = columns.iter().map(|c| quote(c)).collect();
        let marks = vec!["?"; columns.len() + 1].join(",");
        let mut insert = self
            .db
            .prepare_cached(&format!(
                "INSERT INTO {table} (rank, {}) VALUES ({marks})",
                names.join(", ")
            ))
            .map_err(|e| e.to_string())?;
        let mut record = csv::StringRecord::new();
        let mut row: Vec<Value> = Vec::with_capacity(columns.len() + 1);
        loop {
            match reader.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(_) => {
                    self.coverage.skipped_rows += 1;
                    continue;
                }
            }
            if record.len() != columns.len() {
                self.coverage.skipped_rows += 1;
                continue;
            }
            row.clear();
            row.push(Value::Integer(rank as i64));
            for (ty, field) in types.iter().zip(record.iter()) {
                row.push(typed_value(*ty, field).unwrap_or_else(|| {
                    self.coverage.bad_values += 1;
                    Value::Null
                }));
            }
            insert
                .execute(params_from_iter(row.iter()))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// `meta.json`'s fields, or None when it is missing or unreadable.
fn read_meta(path: &Path) -> Option<Vec<(String, MetaValue)>> {
    parse_object(&std::fs::read_to_string(path).ok()?).ok()
}

/// The instances a run's `summary.txt` says were dropped (its `dropped:`
/// line: not kept in memory, flushed early); 0 without that line.
pub fn dropped_count(summary_txt: &str) -> u64 {
    summary_txt
        .lines()
        .filter_map(|l| l.strip_prefix("dropped: "))
        .flat_map(|l| l.split(", "))
        .filter_map(|part| part.split(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// A column name as an SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_line() {
        assert_eq!(dropped_count("a\nb\n"), 0);
        assert_eq!(
            dropped_count(
                "x\ndropped: 12 instances not kept in memory (limit 5000), 3 instances flushed early from a full pending table (limit 10)\n"
            ),
            15
        );
    }
}
