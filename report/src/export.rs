//! `syclgraph export --parquet`: every table of a loaded job written as a
//! Parquet dataset, `<out>/<table>/rank=<N>/part-0.parquet`, each file
//! holding one rank's rows with the `rank` column too (hive partitioning
//! for the engines that read it, the column for those that do not).
//! Snappy-compressed. Rows are read from the database in rank order and
//! written in row groups of at most [`ROW_GROUP_ROWS`] rows, so memory
//! stays bounded by one row group whatever the job's size.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use rusqlite::types::Value;

use crate::columns::{ColumnType, CSV_TABLES};
use crate::load::LoadedJob;

/// The most rows one row group holds.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExportCounts {
    /// Parquet files written.
    pub files: u64,
    /// Rows written, over all tables.
    pub rows: u64,
}

/// The tables exported: `meta` and the CSV tables.
pub fn exported_tables() -> Vec<&'static str> {
    std::iter::once("meta")
        .chain(CSV_TABLES.iter().map(|(t, _)| *t))
        .collect()
}

/// Writes every table of `job` under `out`.
pub fn export_parquet(job: &LoadedJob, out: &Path) -> Result<ExportCounts, String> {
    let mut counts = ExportCounts::default();
    for table in exported_tables() {
        export_table(job, table, &out.join(table), &mut counts)?;
    }
    Ok(counts)
}

fn export_table(
    job: &LoadedJob,
    table: &str,
    out: &Path,
    counts: &mut ExportCounts,
) -> Result<(), String> {
    let columns = table_columns(job, table)?;
    let schema = schema(&columns).map_err(|e| e.to_string())?;
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    // Rows were loaded rank by rank: rowid order is rank order.
    let mut stmt = job
        .db
        .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
        .map_err(|e| e.to_string())?;
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let mut current: Option<(i64, SerializedFileWriter<std::fs::File>)> = None;
    let mut group: Vec<Vec<Value>> = columns.iter().map(|_| Vec::new()).collect();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let rank: i64 = row.get(0).map_err(|e| e.to_string())?;
        if current.as_ref().is_some_and(|(r, _)| *r != rank) || group[0].len() >= ROW_GROUP_ROWS {
            if let Some((_, writer)) = current.as_mut() {
                write_group(writer, &columns, &mut group)?;
            }
        }
        if current.as_ref().is_none_or(|(r, _)| *r != rank) {
            if let Some((_, writer)) = current.take() {
                writer.close().map_err(|e| e.to_string())?;
            }
            let dir = partition_dir(out, rank);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let path = dir.join("part-0.parquet");
            let file =
                std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let writer = SerializedFileWriter::new(file, schema.clone(), props.clone())
                .map_err(|e| e.to_string())?;
            current = Some((rank, writer));
            counts.files += 1;
        }
        for (i, values) in group.iter_mut().enumerate() {
            values.push(row.get::<_, Value>(i).map_err(|e| e.to_string())?);
        }
        counts.rows += 1;
    }
    if let Some((_, mut writer)) = current.take() {
        write_group(&mut writer, &columns, &mut group)?;
        writer.close().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `<out>/rank=<rank>/`.
pub fn partition_dir(out: &Path, rank: i64) -> PathBuf {
    out.join(format!("rank={rank}"))
}

/// The columns of `table` with their declared types.
fn table_columns(job: &LoadedJob, table: &str) -> Result<Vec<(String, ColumnType)>, String> {
    let mut stmt = job
        .db
        .prepare(&format!(
            "SELECT name, type FROM pragma_table_info('{table}') ORDER BY cid"
        ))
        .map_err(|e| e.to_string())?;
    let columns = stmt
        .query_map([], |r| {
            let name: String = r.get(0)?;
            let ty: String = r.get(1)?;
            Ok((
                name,
                match ty.as_str() {
                    "INTEGER" => ColumnType::Int,
                    "REAL" => ColumnType::Real,
                    _ => ColumnType::Text,
                },
            ))
        })
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok(columns)
}

fn schema(columns: &[(String, ColumnType)]) -> parquet::errors::Result<Arc<Type>> {
    let mut fields = Vec::new();
    for (name, ty) in columns {
        let (physical, logical) = match ty {
            ColumnType::Int => (PhysicalType::INT64, None),
            ColumnType::Real => (PhysicalType::DOUBLE, None),
            ColumnType::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        };
        let repetition = if name == "rank" {
            Repetition::REQUIRED
        } else {
            Repetition::OPTIONAL
        };
        fields.push(Arc::new(
            Type::primitive_type_builder(name, physical)
                .with_repetition(repetition)
                .with_logical_type(logical)
                .build()?,
        ));
    }
    Ok(Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    ))
}

/// Writes the buffered rows as one row group and empties the buffers.
fn write_group(
    writer: &mut SerializedFileWriter<std::fs::File>,
    columns: &[(String, ColumnType)],
    group: &mut [Vec<Value>],
) -> Result<(), String> {
    if group.first().is_none_or(|g| g.is_empty()) {
        return Ok(());
    }
    let e = |e: parquet::errors::ParquetError| e.to_string();
    let mut rg = writer.next_row_group().map_err(e)?;
    let mut i = 0;
    while let Some(mut col) = rg.next_column().map_err(e)? {
        let values = &group[i];
        let required = columns[i].0 == "rank";
        let levels: Vec<i16> = values
            .iter()
            .map(|v| !matches!(v, Value::Null) as i16)
            .collect();
        let levels = (!required).then_some(levels.as_slice());
        match col.untyped() {
            ColumnWriter::Int64ColumnWriter(w) => {
                let data: Vec<i64> = values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Integer(n) => Some(*n),
                        Value::Real(x) => Some(*x as i64),
                        _ => None,
                    })
                    .collect();
                w.write_batch(&data, levels, None).map_err(e)?;
            }
            ColumnWriter::DoubleColumnWriter(w) => {
                let data: Vec<f64> = values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Real(x) => Some(*x),
                        Value::Integer(n) => Some(*n as f64),
                        _ => None,
                    })
                    .collect();
                w.write_batch(&data, levels, None).map_err(e)?;
            }
            ColumnWriter::ByteArrayColumnWriter(w) => {
                let data: Vec<ByteArray> = values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Null => None,
                        other => Some(ByteArray::from(crate::query::value_text(other).as_str())),
                    })
                    .collect();
                w.write_batch(&data, levels, None).map_err(e)?;
            }
            _ => return Err("unexpected Parquet column type".into()),
        }
        col.close().map_err(e)?;
        i += 1;
    }
    rg.close().map_err(e)?;
    for g in group.iter_mut() {
        g.clear();
    }
    Ok(())
}
