//! Running SQL on a loaded job: `syclgraph query`'s statements and the
//! report's, with their rows as CSV or as values.

use std::io::Write;

use rusqlite::types::Value;
use rusqlite::Connection;

/// The column names and rows of `sql`'s result.
pub type Rows = (Vec<String>, Vec<Vec<Value>>);

/// Runs `sql` and returns its columns and rows (for small results: the
/// report's printed tables).
pub fn rows(db: &Connection, sql: &str) -> Result<Rows, String> {
    let mut stmt = db.prepare(sql).map_err(|e| e.to_string())?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let mut out = Vec::new();
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            values.push(row.get::<_, Value>(i).map_err(|e| e.to_string())?);
        }
        out.push(values);
    }
    Ok((names, out))
}

/// Runs `sql` and writes its result to `out` as CSV with a header, one row
/// at a time. Returns the number of rows.
pub fn write_csv(db: &Connection, sql: &str, out: &mut dyn Write) -> Result<u64, String> {
    let mut stmt = db.prepare(sql).map_err(|e| e.to_string())?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(&names).map_err(|e| e.to_string())?;
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let mut count = 0;
    let mut fields: Vec<String> = Vec::with_capacity(names.len());
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        fields.clear();
        for i in 0..names.len() {
            fields.push(value_text(
                &row.get::<_, Value>(i).map_err(|e| e.to_string())?,
            ));
        }
        writer.write_record(&fields).map_err(|e| e.to_string())?;
        count += 1;
    }
    writer.flush().map_err(|e| e.to_string())?;
    Ok(count)
}

/// A value as the CSV files hold it: NULL is empty, a whole REAL (what
/// `ROUND` gives) has no decimals.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Integer(n) => n.to_string(),
        Value::Real(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        Value::Real(x) => x.to_string(),
        Value::Text(s) => s.clone(),
        Value::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

/// A value as a whole number, when it is one (REAL rounded).
pub fn value_int(value: &Value) -> Option<i64> {
    match value {
        Value::Integer(n) => Some(*n),
        Value::Real(x) => Some(x.round() as i64),
        _ => None,
    }
}
