//! Writing the output files: each one atomically (a `.tmp` file in the same
//! directory, flushed, fsynced, renamed over the target), so a reader never
//! sees half a file and a crash leaves the previous one.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::model::TaskGraph;
use crate::run::Run;
use crate::writers::critical_path_csv::{write_critical_path_csv, CRITICAL_PATH_CSV};
use crate::writers::dot::write_dot;
use crate::writers::idle_gaps_csv::{write_idle_gaps_csv, IDLE_GAPS_CSV};
use crate::writers::kernels_csv::write_kernel_rows;
use crate::writers::regions_csv::{region_rows, write_regions_csv, REGIONS_CSV};
use crate::writers::summary::write_summary_csv;

/// The task graph file.
pub const GRAPH_DOT: &str = "graph.dot";
/// The summary file: one row per device command node.
pub const SUMMARY_CSV: &str = "summary.csv";
/// The per-instance file.
pub const KERNELS_CSV: &str = "kernels.csv";

/// `path` with `.tmp` appended to its file name.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Write `path` through `write`: into `path.tmp` in the same directory, then
/// flush, fsync, rename over `path` and fsync the directory (best effort).
/// On any error the temporary file is removed and `path` is left untouched.
pub fn write_atomically<F>(path: &Path, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let tmp = tmp_path(path);
    let result = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        write(&mut w)?;
        w.flush()?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Write `graph.dot`, `summary.csv`, `critical_path.csv`, `idle_gaps.csv`
/// and `regions.csv` into `dir` (created if missing).
/// `kernels.csv` is streamed by the subscriber; see [`write_kernels_csv`].
pub fn write_all(dir: &Path, graph: &Run) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    write_atomically(&dir.join(GRAPH_DOT), |w| write_dot(w, graph))?;
    write_atomically(&dir.join(SUMMARY_CSV), |w| write_summary_csv(w, graph))?;
    write_critical_files(dir, graph)
}

/// Write `critical_path.csv`, `idle_gaps.csv` and `regions.csv` (which
/// has each region's time on the critical path) into `dir`.
pub fn write_critical_files(dir: &Path, graph: &Run) -> io::Result<()> {
    let report = graph.critical_path().report();
    write_atomically(&dir.join(CRITICAL_PATH_CSV), |w| {
        write_critical_path_csv(w, graph, &report)
    })?;
    let regions = region_rows(graph, &report);
    write_atomically(&dir.join(REGIONS_CSV), |w| write_regions_csv(w, &regions))?;
    write_atomically(&dir.join(IDLE_GAPS_CSV), |w| {
        write_idle_gaps_csv(w, graph.idle_gaps())
    })
}

/// Write `kernels.csv` into `dir` all at once from the instances the graph
/// kept (see [`write_kernel_rows`]); returns the number of rows.
pub fn write_kernels_csv(dir: &Path, graph: &TaskGraph) -> io::Result<u64> {
    fs::create_dir_all(dir)?;
    let mut rows = 0;
    write_atomically(&dir.join(KERNELS_CSV), |w| {
        rows = write_kernel_rows(w, graph)?;
        Ok(())
    })?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomically(&path, |w| w.write_all(b"one")).unwrap();
        write_atomically(&path, |w| w.write_all(b"two")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert!(!tmp_path(&path).exists());
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        write_atomically(&path, |w| w.write_all(b"good")).unwrap();
        let err = write_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        assert_eq!(fs::read_to_string(&path).unwrap(), "good");
        assert!(!tmp_path(&path).exists());
    }

    #[test]
    fn tmp_is_beside_the_target() {
        assert_eq!(
            tmp_path(Path::new("/x/y/graph.dot")),
            PathBuf::from("/x/y/graph.dot.tmp")
        );
    }
}
