//! Writing the output files: each one atomically (a `.tmp` file in the same
//! directory, flushed, renamed over the target), so a reader never sees
//! half a file and a program killed while writing leaves the previous one.
//!
//! No file is fsynced: a rename is atomic against the death of the process
//! (the kernel keeps what was written and writes its page cache back as for
//! any file), which is what a traced program meets (a signal, the scheduler's
//! `SIGKILL`, the out-of-memory killer). Only a crash of the machine itself
//! could then leave an empty file, and a run's outputs are remade from its
//! journal (`syclgraph report`). The fsyncs cost the exit 5 to 8 ms for a
//! 50,000-kernel run here (nine files; more on a parallel file system), and
//! the collector two every second for the graph-file snapshots.

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

/// The subscriber's claim on an output directory while it writes there:
/// the file holds the writer's pid (removed at its end).
pub const OWNER_FILE: &str = ".syclgraph-owner";

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
/// flush and rename over `path` (see the module docs: no fsync).
/// On any error the temporary file is removed and `path` is left untouched.
pub fn write_atomically<F>(path: &Path, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let mut batch = AtomicBatch::default();
    batch.write(path, write)?;
    batch.commit()
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
    let mut batch = AtomicBatch::default();
    write_critical_files_into(&mut batch, dir, graph)?;
    batch.commit()
}

/// [`write_critical_files`] into `batch`: renamed by its
/// [`AtomicBatch::commit`].
pub fn write_critical_files_into(
    batch: &mut AtomicBatch,
    dir: &Path,
    graph: &Run,
) -> io::Result<()> {
    let report = graph.critical_path().report();
    batch.write(&dir.join(CRITICAL_PATH_CSV), |w| {
        write_critical_path_csv(w, graph, &report)
    })?;
    let regions = region_rows(graph, &report);
    batch.write(&dir.join(REGIONS_CSV), |w| write_regions_csv(w, &regions))?;
    batch.write(&dir.join(IDLE_GAPS_CSV), |w| {
        write_idle_gaps_csv(w, graph.idle_gaps())
    })
}

/// Several files written atomically together, for the exit: each is
/// written into its `.tmp` file first ([`AtomicBatch::write`]); then
/// [`AtomicBatch::commit`] renames each over its target in the order
/// written. A failed write leaves every target untouched and removes the
/// `.tmp` files (as does dropping a batch not committed); a failed rename
/// leaves the files renamed before it.
#[derive(Default)]
pub struct AtomicBatch {
    /// The target of each written (and flushed) `.tmp` file.
    written: Vec<PathBuf>,
}

impl AtomicBatch {
    /// Writes `path`'s `.tmp` file through `write` and flushes it; on an
    /// error the `.tmp` file is removed (and the whole batch when dropped).
    pub fn write<F>(&mut self, path: &Path, write: F) -> io::Result<()>
    where
        F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    {
        let tmp = tmp_path(path);
        match write_file(&tmp, write) {
            Ok(_) => {
                self.written.push(path.to_path_buf());
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Renames every written file over its target, in the order written,
    /// as [`write_atomically`] does for one file.
    pub fn commit(mut self) -> io::Result<()> {
        let written = std::mem::take(&mut self.written);
        let mut result = Ok(());
        for path in &written {
            let tmp = tmp_path(path);
            if result.is_ok() {
                result = fs::rename(&tmp, path);
                if result.is_ok() {
                    continue;
                }
            }
            // Not renamed (an earlier rename failed).
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

impl Drop for AtomicBatch {
    fn drop(&mut self) {
        for path in self.written.drain(..) {
            let _ = fs::remove_file(tmp_path(&path));
        }
    }
}

/// Creates `path` and writes it through `write`, buffered; returns the
/// file flushed.
fn write_file<F>(path: &Path, write: F) -> io::Result<File>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let mut w = BufWriter::new(File::create(path)?);
    write(&mut w)?;
    w.flush()?;
    w.into_inner().map_err(|e| e.into_error())
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
    fn a_batch_renames_all_or_leaves_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        let mut batch = AtomicBatch::default();
        batch.write(&a, |w| w.write_all(b"one")).unwrap();
        batch.write(&b, |w| w.write_all(b"two")).unwrap();
        batch.commit().unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "one");
        assert_eq!(fs::read_to_string(&b).unwrap(), "two");
        let mut batch = AtomicBatch::default();
        batch.write(&a, |w| w.write_all(b"new")).unwrap();
        let err = batch
            .write(&b, |_| Err(io::Error::other("boom")))
            .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        drop(batch);
        assert_eq!(fs::read_to_string(&a).unwrap(), "one");
        assert!(!tmp_path(&a).exists() && !tmp_path(&b).exists());
    }

    #[test]
    fn tmp_is_beside_the_target() {
        assert_eq!(
            tmp_path(Path::new("/x/y/graph.dot")),
            PathBuf::from("/x/y/graph.dot.tmp")
        );
    }
}
