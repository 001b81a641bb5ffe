//! A run's `kernels.csv`, streamed: per node (kind, operation and source
//! location), how many rows it has and the device durations of those timed
//! `ok`. Only the durations are kept (8 bytes per timed row).

use std::collections::HashMap;
use std::path::Path;

/// What a node is matched by across runs: its kind, its operation and its
/// source location (empty when the runtime gave none). Two nodes of one run
/// with the same key (scheduler commands without a location, one per
/// buffer) are one node here.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeKey {
    /// `kernel`, `memcpy`, ...
    pub kind: String,
    /// The operation (`kernels.csv`'s `name`, `graph.dot`'s `operation`).
    pub operation: String,
    /// The source file, or empty.
    pub file: String,
    /// The source line, or empty.
    pub line: String,
}

impl NodeKey {
    /// `memcpy (examples/pipeline.cpp:106)`, or the operation alone.
    pub fn label(&self) -> String {
        if self.file.is_empty() {
            self.operation.clone()
        } else if self.line.is_empty() {
            format!("{} ({})", self.operation, self.file)
        } else {
            format!("{} ({}:{})", self.operation, self.file, self.line)
        }
    }
}

/// One node's rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTimes {
    /// Rows (instances), timed or not.
    pub rows: u64,
    /// The durations of the rows timed `ok`, ascending once read.
    pub durations: Vec<u64>,
}

/// The columns read; any other is ignored (a later syclgraph may add some).
const NEEDED: [&str; 6] = [
    "kind",
    "name",
    "source_file",
    "source_line",
    "timing",
    "duration_ns",
];

/// Reads `path` (a `kernels.csv`) into its nodes; `Err` is one line saying
/// what is wrong.
pub fn read_kernels(path: &Path) -> Result<Vec<(NodeKey, NodeTimes)>, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{shown}: no such file"),
        _ => format!("{shown}: {e}"),
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .buffer_capacity(1 << 20)
        .from_reader(file);
    let header = reader
        .byte_headers()
        .map_err(|e| format!("{shown}: {e}"))?
        .clone();
    let mut at = [0usize; NEEDED.len()];
    for (slot, name) in at.iter_mut().zip(NEEDED) {
        *slot = header
            .iter()
            .position(|h| h == name.as_bytes())
            .ok_or_else(|| {
                format!(
                    "{shown}: not the kernels.csv this syclgraph writes (its header has no {name} column; another syclgraph's format, or another file)"
                )
            })?;
    }
    let [kind, name, file_at, line_at, timing, duration] = at;
    let mut index: HashMap<Box<[u8]>, usize> = HashMap::new();
    let mut nodes: Vec<(NodeKey, NodeTimes)> = Vec::new();
    let mut key = Vec::with_capacity(256);
    let mut record = csv::ByteRecord::new();
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| format!("{shown}: {e}"))?
    {
        let field = |i: usize| record.get(i).unwrap_or(b"");
        key.clear();
        for i in [kind, name, file_at, line_at] {
            key.extend_from_slice(field(i));
            key.push(0);
        }
        let slot = match index.get(&key[..]) {
            Some(&s) => s,
            None => {
                let text = |i: usize| String::from_utf8_lossy(field(i)).into_owned();
                nodes.push((
                    NodeKey {
                        kind: text(kind),
                        operation: text(name),
                        file: text(file_at),
                        line: text(line_at),
                    },
                    NodeTimes::default(),
                ));
                index.insert(key.clone().into_boxed_slice(), nodes.len() - 1);
                nodes.len() - 1
            }
        };
        let times = &mut nodes[slot].1;
        times.rows += 1;
        if field(timing) == b"ok" {
            let text = field(duration);
            let ns = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| {
                    let line = record.position().map_or(0, |p| p.line());
                    format!(
                        "{shown}: line {line}: duration_ns {:?} is not a number of ns",
                        String::from_utf8_lossy(text)
                    )
                })?;
            times.durations.push(ns);
        }
    }
    for (_, times) in &mut nodes {
        times.durations.sort_unstable();
    }
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_group_by_kind_operation_and_location() {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-diff-kernels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kernels.csv");
        std::fs::write(
            &path,
            "name,kind,node_id,timing,duration_ns,source_file,source_line,extra\n\
             main,kernel,n1,ok,30,a.cpp,7,x\n\
             main,kernel,n2,ok,10,a.cpp,8,x\n\
             main,kernel,n1,ok,20,a.cpp,7,x\n\
             main,kernel,n1,lost,,a.cpp,7,x\n\
             \"Memory Transfer (Copy)\",copy,n5,ok,4,,,x\n\
             \"Memory Transfer (Copy)\",copy,n9,unavailable,,,,x\n",
        )
        .unwrap();
        let nodes = read_kernels(&path).unwrap();
        let summary: Vec<(String, u64, Vec<u64>)> = nodes
            .iter()
            .map(|(k, t)| (k.label(), t.rows, t.durations.clone()))
            .collect();
        assert_eq!(
            summary,
            [
                ("Memory Transfer (Copy)".to_string(), 2, vec![4]),
                ("main (a.cpp:7)".to_string(), 3, vec![20, 30]),
                ("main (a.cpp:8)".to_string(), 1, vec![10]),
            ]
        );
        std::fs::write(&path, "name,kind,timing\nx,kernel,ok\n").unwrap();
        let e = read_kernels(&path).unwrap_err();
        assert!(e.contains("no source_file column"), "{e}");
        std::fs::write(
            &path,
            "kind,name,source_file,source_line,timing,duration_ns\nkernel,k,,,ok,12x\n",
        )
        .unwrap();
        let e = read_kernels(&path).unwrap_err();
        assert!(e.contains("line 2: duration_ns \"12x\""), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
