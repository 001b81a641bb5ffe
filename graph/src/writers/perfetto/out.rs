//! The trace's output buffer, written in place: a zeroed block of bytes
//! and how many are used, so that a packet is stored straight into it
//! (no stack copy, no `memcpy` call, no `Vec` capacity check per byte).

/// Bytes written so far and room after them ([`Out::room`]).
#[derive(Debug)]
pub(super) struct Out {
    bytes: Vec<u8>,
    used: usize,
}

impl Out {
    /// An empty buffer with `n` bytes of room.
    pub(super) fn with_room(n: usize) -> Out {
        Out {
            bytes: vec![0; n],
            used: 0,
        }
    }

    /// At least `max` bytes to write after what is written (grown if
    /// needed); [`Out::commit`] says how many were used.
    #[inline(always)]
    pub(super) fn room(&mut self, max: usize) -> &mut [u8] {
        if self.bytes.len() - self.used < max {
            self.grow(max);
        }
        &mut self.bytes[self.used..]
    }

    #[cold]
    fn grow(&mut self, max: usize) {
        let len = (self.used + max).max(2 * self.bytes.len());
        self.bytes.resize(len, 0);
    }

    /// Keeps the first `n` bytes written into [`Out::room`].
    #[inline(always)]
    pub(super) fn commit(&mut self, n: usize) {
        self.used += n;
    }

    /// Appends `b`.
    pub(super) fn extend_from_slice(&mut self, b: &[u8]) {
        self.room(b.len())[..b.len()].copy_from_slice(b);
        self.used += b.len();
    }

    /// What is written.
    pub(super) fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.used]
    }

    /// Bytes written.
    pub(super) fn len(&self) -> usize {
        self.used
    }

    /// Whether nothing is written.
    pub(super) fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Forgets what is written (the room stays).
    pub(super) fn clear(&mut self) {
        self.used = 0;
    }
}

impl Default for Out {
    fn default() -> Self {
        Out::with_room(0)
    }
}
