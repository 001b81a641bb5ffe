//! The tables of a job and the type of each column, decided by the
//! column's name so that every rank's file, the SQLite tables and the
//! Parquet files agree on it.

/// A column's type in SQLite and in Parquet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// A whole number (`INTEGER`; Parquet `INT64`).
    Int,
    /// A fraction (`REAL`; Parquet `DOUBLE`).
    Real,
    /// Text (`TEXT`; Parquet UTF-8 `BYTE_ARRAY`).
    Text,
}

impl ColumnType {
    /// The SQLite type name.
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Int => "INTEGER",
            ColumnType::Real => "REAL",
            ColumnType::Text => "TEXT",
        }
    }
}

/// The tables read from each rank's CSV files: (table, file).
pub const CSV_TABLES: [(&str, &str); 6] = [
    ("kernels", "kernels.csv"),
    ("summary", "summary.csv"),
    ("critical_path", "critical_path.csv"),
    ("idle_gaps", "idle_gaps.csv"),
    ("windows", "windows.csv"),
    ("regions", "regions.csv"),
];

/// The `meta` table's columns after `rank`: the fields of `meta.json`, then
/// `dropped` (from `summary.txt`) and `dir` (the rank's directory).
pub const META_COLUMNS: [&str; 14] = [
    "size",
    "local_rank",
    "host",
    "pid",
    "program",
    "args",
    "start_time_ns",
    "syclgraph_version",
    "runtime_version",
    "rank_from",
    "sampled",
    "complete",
    "dropped",
    "dir",
];

const INT_NAMES: [&str; 24] = [
    "rank",
    "count",
    "instance",
    "step",
    "source_line",
    "steady_count",
    "before_instance",
    "after_instance",
    "gap_rank",
    "pid",
    "size",
    "local_rank",
    "window",
    "still_on",
    "queue_id",
    "thread_id",
    "sampled",
    "complete",
    "dropped",
    "bytes",
    "depth",
    "unclosed",
    "commands",
    "timed",
];

/// The type of `column` (a table's column name, after [`table_column`]).
pub fn column_type(column: &str) -> ColumnType {
    if column.ends_with("_ns") || INT_NAMES.contains(&column) {
        ColumnType::Int
    } else if column.ends_with("_share") {
        ColumnType::Real
    } else {
        ColumnType::Text
    }
}

/// The table's name for a file's column: the file's own `rank` column
/// (`idle_gaps.csv`'s rank of a gap among the longest) becomes `gap_rank`,
/// as `rank` is the MPI rank in every table.
pub fn table_column(header: &str) -> String {
    if header == "rank" {
        "gap_rank".to_string()
    } else {
        header.to_string()
    }
}

/// `value` as SQLite stores it in a column of type `ty`: empty is NULL; a
/// number that does not parse is NULL and counted by the caller (`None`).
pub fn typed_value(ty: ColumnType, value: &str) -> Option<rusqlite::types::Value> {
    use rusqlite::types::Value;
    if value.is_empty() {
        return Some(Value::Null);
    }
    match ty {
        ColumnType::Text => Some(Value::Text(value.to_string())),
        ColumnType::Int => value.parse::<i64>().ok().map(Value::Integer),
        ColumnType::Real => value.parse::<f64>().ok().map(Value::Real),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    #[test]
    fn types_by_name() {
        assert_eq!(column_type("start_ns"), ColumnType::Int);
        assert_eq!(column_type("count"), ColumnType::Int);
        assert_eq!(column_type("device_share"), ColumnType::Real);
        assert_eq!(column_type("name"), ColumnType::Text);
        assert_eq!(column_type("device_id"), ColumnType::Text);
        assert_eq!(table_column("rank"), "gap_rank");
        assert_eq!(typed_value(ColumnType::Int, ""), Some(Value::Null));
        assert_eq!(typed_value(ColumnType::Int, "12"), Some(Value::Integer(12)));
        assert_eq!(typed_value(ColumnType::Int, "1x"), None);
        assert_eq!(typed_value(ColumnType::Real, "0.5"), Some(Value::Real(0.5)));
    }
}
