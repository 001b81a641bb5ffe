//! The collector's journal (`.syclgraph-journal` in the output directory):
//! every record the outputs were given during the run, encoded by
//! [`syclgraph_graph::journal`] and appended in order through a buffer,
//! written with the `kernels.csv` rows, and kept at exit as `run.journal`
//! ([`Journal::keep`]) for `syclgraph whatif`; a killed program leaves it
//! for `syclgraph report`. With device timing off it is also read back at
//! exit, every output replayed from it
//! ([`syclgraph_graph::replay::Replay`]).
//!
//! The file is opened read+write and kept open: a run whose output
//! directory is removed still reads its journal back. A write that fails
//! (the disk is full) is said once on stderr and cut back to the last whole
//! record; from then on records are counted as not journalled, never
//! waited for.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use syclgraph_graph::journal::JOURNAL_FILE;
use syclgraph_graph::journal::{append_record, JournalReader, JOURNAL_HEADER, RUN_JOURNAL};
use syclgraph_graph::record::Record;

use crate::warn;

/// Bytes buffered before they are written without waiting for the flush.
const WRITE_ABOVE: usize = 1 << 20;

/// The journal of one run.
pub struct Journal {
    path: PathBuf,
    /// `None`: it could not be created.
    file: Option<File>,
    /// True once a write failed: nothing more is written.
    failed: bool,
    /// Encoded records not written yet.
    buf: Vec<u8>,
    /// Records in `buf`.
    buffered: u64,
    /// Bytes of whole records in the file.
    on_disk: u64,
    /// Records in the file.
    journalled: u64,
    /// Records that could not be journalled (or read back).
    lost: u64,
}

impl Journal {
    /// Creates (truncates) the journal in `dir`; says once on stderr if it
    /// cannot (then every record is counted as not journalled).
    pub fn create(dir: &Path) -> Journal {
        Journal::open(dir.join(JOURNAL_FILE))
    }

    fn open(path: PathBuf) -> Journal {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path);
        let file = match file {
            Ok(f) => Some(f),
            Err(e) => {
                warn(format_args!(
                    "cannot write {}: {e}; run.journal will miss every record (syclgraph whatif, and syclgraph report after a kill)",
                    path.display()
                ));
                None
            }
        };
        let mut buf = Vec::with_capacity(64 * 1024);
        buf.extend_from_slice(JOURNAL_HEADER);
        Journal {
            path,
            failed: file.is_none(),
            file,
            buf,
            buffered: 0,
            on_disk: 0,
            journalled: 0,
            lost: 0,
        }
    }

    /// Appends `record` (buffered; see [`Journal::flush`]).
    pub fn append(&mut self, record: &Record) {
        if self.failed {
            self.lost += 1;
            return;
        }
        append_record(record, &mut self.buf);
        self.buffered += 1;
        if self.buf.len() > WRITE_ABOVE {
            self.flush();
        }
    }

    /// Writes the buffered records to the file.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if let (Some(file), false) = (&mut self.file, self.failed) {
            match file.write_all(&self.buf) {
                Ok(()) => {
                    self.on_disk += self.buf.len() as u64;
                    self.journalled += self.buffered;
                    self.buffered = 0;
                }
                Err(e) => {
                    // Part of the buffer may have reached the file: cut it
                    // back to the last whole record.
                    let _ = file.set_len(self.on_disk);
                    let _ = file.seek(SeekFrom::Start(self.on_disk));
                    warn(format_args!(
                        "{}: {e}; no more records are journalled (run.journal misses them: syclgraph whatif, and syclgraph report after a kill)",
                        self.path.display()
                    ));
                    self.failed = true;
                }
            }
        }
        self.lost += self.buffered;
        self.buf.clear();
        self.buffered = 0;
    }

    /// Whether the file was created (records are journalled until a write
    /// fails).
    pub fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// Records not journalled, or not read back: the analyses and the
    /// trace miss them.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Bytes of records in the file.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        self.on_disk
    }

    /// Hands every journalled record to `each`, in order, from the start of
    /// the file; records that do not read back are counted in
    /// [`Journal::lost`].
    pub fn replay(&mut self, mut each: impl FnMut(Record)) {
        self.flush();
        let Some(file) = &mut self.file else {
            return;
        };
        let mut read = 0;
        let result = (|| -> io::Result<()> {
            file.seek(SeekFrom::Start(0))?;
            for record in JournalReader::new(&*file)? {
                each(record?);
                read += 1;
            }
            Ok(())
        })();
        // A journal whose header could not be written reads back nothing.
        let result = result.or_else(|e| {
            if read == self.journalled {
                Ok(())
            } else {
                Err(e)
            }
        });
        if let Err(e) = result {
            warn(format_args!(
                "{}: {e}; {} records could not be read back",
                self.path.display(),
                self.journalled - read
            ));
            self.lost += self.journalled - read;
        }
    }

    /// Removes the file (the replay is done).
    pub fn remove(&mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.path);
    }

    /// The run ended: renames the file to [`RUN_JOURNAL`] in its directory
    /// (a rename, nothing copied), for `syclgraph whatif` to replay; a
    /// journal that misses records is removed instead (a replay of it
    /// would answer for another run).
    pub fn keep(&mut self) {
        self.flush();
        if self.lost > 0 || self.file.is_none() {
            self.remove();
            return;
        }
        self.file = None;
        let kept = self.path.with_file_name(RUN_JOURNAL);
        if std::fs::rename(&self.path, &kept).is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn records(n: u64) -> Vec<Record> {
        (0..n)
            .map(|i| Record::Tracing {
                on: i % 2 == 0,
                ns: 1_000 + i,
            })
            .collect()
    }

    fn read_back(journal: &mut Journal) -> Vec<Record> {
        let mut out = Vec::new();
        journal.replay(|r| out.push(r));
        out
    }

    #[test]
    fn a_whole_journal_is_kept_as_run_journal_and_one_that_lost_records_is_not() {
        let dir = fresh_dir("keep");
        let mut journal = Journal::create(&dir);
        for r in &records(10) {
            journal.append(r);
        }
        journal.keep();
        assert!(!dir.join(JOURNAL_FILE).exists());
        let kept = std::fs::read(dir.join(RUN_JOURNAL)).unwrap();
        let back: Vec<Record> = JournalReader::new(&kept[..])
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(back, records(10));
        std::fs::remove_file(dir.join(RUN_JOURNAL)).unwrap();
        let mut lossy = Journal::create(&dir);
        lossy.append(&records(1)[0]);
        lossy.lost = 1;
        lossy.keep();
        assert!(!dir.join(JOURNAL_FILE).exists() && !dir.join(RUN_JOURNAL).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn records_read_back_in_order_and_the_file_is_removed() {
        let dir = fresh_dir("order");
        let mut journal = Journal::create(&dir);
        let want = records(1000);
        for (i, r) in want.iter().enumerate() {
            journal.append(r);
            if i % 300 == 0 {
                journal.flush();
            }
        }
        assert!(dir.join(JOURNAL_FILE).exists());
        assert_eq!(read_back(&mut journal), want);
        assert_eq!(journal.lost(), 0);
        assert!(journal.bytes() > 0);
        journal.remove();
        assert!(!dir.join(JOURNAL_FILE).exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_removed_directory_still_reads_back() {
        let dir = fresh_dir("removed");
        let mut journal = Journal::create(&dir);
        let want = records(50);
        for r in &want[..20] {
            journal.append(r);
        }
        journal.flush();
        std::fs::remove_dir_all(&dir).unwrap();
        for r in &want[20..] {
            journal.append(r);
        }
        assert_eq!(read_back(&mut journal), want);
        assert_eq!(journal.lost(), 0);
        journal.remove();
    }

    #[test]
    fn a_journal_that_cannot_be_created_counts_every_record() {
        let dir = fresh_dir("missing").join("not-there");
        let mut journal = Journal::create(&dir);
        for r in &records(7) {
            journal.append(r);
        }
        assert!(read_back(&mut journal).is_empty());
        assert_eq!(journal.lost(), 7);
    }

    #[test]
    fn a_full_disk_is_counted_never_waited_for() {
        let mut journal = Journal::open(PathBuf::from("/dev/full"));
        if journal.file.is_none() {
            return; // no /dev/full here
        }
        for r in &records(10) {
            journal.append(r);
        }
        journal.flush();
        for r in &records(5) {
            journal.append(r);
        }
        assert!(read_back(&mut journal).is_empty());
        assert_eq!(journal.lost(), 15);
    }
}
