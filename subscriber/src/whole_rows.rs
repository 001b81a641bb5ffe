//! A file writer that only ever puts whole CSV rows on disk.
//!
//! The CSV writer's internal buffer spills to its writer whenever it fills,
//! which can be in the middle of a row; a program killed right then would
//! leave a torn last line in `kernels.csv`. [`WholeRows`] keeps everything in
//! memory until `flush`, which the CSV writer only calls after it has handed
//! over every complete record — so the file grows by whole rows only. A
//! write that fails part-way (the disk fills) is cut back to the last whole
//! row.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// Buffers writes in memory; `flush` appends them to the file in one write.
pub struct WholeRows {
    file: File,
    pending: Vec<u8>,
    /// Length of the file's whole rows.
    on_disk: u64,
}

impl WholeRows {
    /// Rows go to `file`.
    pub fn new(file: File) -> WholeRows {
        let on_disk = file.metadata().map(|m| m.len()).unwrap_or(0);
        WholeRows {
            file,
            pending: Vec::with_capacity(64 * 1024),
            on_disk,
        }
    }

    /// Bytes waiting for the next flush.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

impl Write for WholeRows {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            if let Err(e) = self.file.write_all(&self.pending) {
                // Part of the rows may have reached the file (a full disk
                // takes what fits): cut it back to the last whole row.
                let _ = self.file.set_len(self.on_disk);
                let _ = self.file.seek(SeekFrom::Start(self.on_disk));
                return Err(e);
            }
            self.on_disk += self.pending.len() as u64;
            self.pending.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_reaches_the_file_before_flush() {
        let dir = std::env::temp_dir().join(format!("whole-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rows.csv");
        let mut w = WholeRows::new(File::create(&path).unwrap());
        w.write_all(b"a,b\nc,").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        assert_eq!(w.pending(), 6);
        w.write_all(b"d\n").unwrap();
        w.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a,b\nc,d\n");
        assert_eq!(w.pending(), 0);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
