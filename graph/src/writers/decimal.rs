//! Unsigned numbers written in decimal straight into a byte slice with
//! room for them, for the rows written once per command (`kernels.csv`):
//! no intermediate buffer and no copy call per number, and the long
//! nanosecond timestamps of a row, which share their leading digits with
//! the previous row's, formatted from a cache of those digits.

/// The two-digit strings "00".."99", back to back.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The most bytes [`put_u64`] or [`Timestamps::put`] writes: the 20
/// digits of `u64::MAX` (the timestamp cache copies a fixed 16 bytes, which
/// the caller's slack must allow too: see [`ROOM`]).
pub(crate) const ROOM: usize = 32;

/// The [`ROOM`] bytes of `out` from `at` (one bounds check for a number).
#[inline(always)]
fn window(out: &mut [u8], at: usize) -> &mut [u8; ROOM] {
    (&mut out[at..at + ROOM]).try_into().expect("ROOM bytes")
}

/// Writes the `len` (at most 20) low digits of `v` (zero-padded) at the
/// start of `out`.
#[inline(always)]
fn put_digits(out: &mut [u8; ROOM], mut v: u64, len: usize) {
    let mut i = len.min(20);
    while i >= 2 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        out[i] = PAIRS[r];
        out[i + 1] = PAIRS[r + 1];
    }
    if i == 1 {
        out[0] = b'0' + (v % 10) as u8;
    }
}

/// The decimal digits of `v`.
#[inline(always)]
fn digit_count(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Writes `v` in decimal at `out[at..]` (at least [`ROOM`] bytes there);
/// returns the position after it.
#[inline(always)]
pub(crate) fn put_u64(out: &mut [u8], at: usize, v: u64) -> usize {
    let len = digit_count(v);
    put_digits(window(out, at), v, len);
    at + len
}

/// A timestamp's digits below this are written; those above are copied
/// from the last timestamp written when they are the same.
const LOW: u64 = 1_000_000;
/// The digits of [`LOW`] - 1.
const LOW_DIGITS: usize = 6;

/// The digits of the last timestamp written whose high part (the value /
/// [`LOW`]) is `high`: a row's timestamps, and the next row's, mostly
/// differ in their low digits only.
#[derive(Debug, Default)]
pub(crate) struct Timestamps {
    high: u64,
    text: [u8; 24],
    len: usize,
}

impl Timestamps {
    /// Writes `ns` in decimal at `out[at..]` (at least [`ROOM`] bytes
    /// there), as [`put_u64`] does; returns the position after it.
    #[inline(always)]
    pub(crate) fn put(&mut self, out: &mut [u8], at: usize, ns: u64) -> usize {
        let high = ns / LOW;
        if high != self.high || high == 0 {
            // Other high digits (or a number of six digits or fewer):
            // written whole, and kept when long.
            let end = put_u64(out, at, ns);
            self.high = high;
            self.len = end - at;
            self.text[..self.len].copy_from_slice(&out[at..end]);
            return end;
        }
        // The same high digits: the same length too.
        let w = window(out, at);
        w[..24].copy_from_slice(&self.text);
        let len = self.len.clamp(LOW_DIGITS, 20);
        let mut low = (ns % LOW) as u32;
        let mut i = len;
        for _ in 0..LOW_DIGITS / 2 {
            let r = (low % 100) as usize * 2;
            low /= 100;
            i -= 2;
            w[i] = PAIRS[r];
            w[i + 1] = PAIRS[r + 1];
        }
        at + len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: impl FnOnce(&mut [u8]) -> usize) -> String {
        let mut out = [b'x'; 64];
        let end = f(&mut out);
        String::from_utf8(out[..end].to_vec()).unwrap()
    }

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        let mut t = Timestamps::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut edges = vec![0, 1, 9, 10, 99, 100, 999_999_999, LOW, LOW + 1, u64::MAX];
        edges.extend((0..20).map(|p| 10u64.pow(p)));
        edges.extend((1..20).map(|p| 10u64.pow(p) - 1));
        for i in 0..20_000u64 {
            // Random magnitudes, and runs that share their high digits.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match i % 4 {
                0 => x >> (x % 64),
                1 => 1_700_000_000_000_000_000 + (x % 5_000_000_000),
                2 => x,
                _ => edges[(x % edges.len() as u64) as usize],
            };
            assert_eq!(written(|o| put_u64(o, 3, v))[3..], v.to_string());
            assert_eq!(written(|o| t.put(o, 0, v)), v.to_string(), "{v}");
        }
    }
}
