//! Unsigned numbers written in decimal straight into a byte slice with
//! room for them, for the rows written once per command (`kernels.csv`):
//! no intermediate buffer and no copy call per number; and the digits a
//! row patches into a template of its node's last row (the low digits of
//! a long nanosecond timestamp, a number of a known length).

/// The two-digit strings "00".."99", back to back.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The room [`put_u64`] and [`put_digits_at`] need: the 20 digits of
/// `u64::MAX`, rounded up to the fixed-size window they write through.
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

/// The timestamps of a row are patched in their low [`LOW_DIGITS`]
/// digits only: those above (the value / `LOW`) are the template's.
pub(crate) const LOW: u64 = 1_000_000;
/// The digits of [`LOW`] - 1.
pub(crate) const LOW_DIGITS: usize = 6;

/// Writes `v`'s `len` (at most 20) low digits, zero-padded, at
/// `out[at..at + len]` (at least [`ROOM`] bytes there).
#[inline(always)]
pub(crate) fn put_digits_at(out: &mut [u8], at: usize, v: u64, len: usize) {
    put_digits(window(out, at), v, len);
}

/// Writes the [`LOW_DIGITS`] low digits of `v`, zero-padded, at
/// `out[end - LOW_DIGITS..end]`.
#[inline(always)]
pub(crate) fn put_low_digits(out: &mut [u8], end: usize, v: u64) {
    let w: &mut [u8; LOW_DIGITS] = (&mut out[end - LOW_DIGITS..end])
        .try_into()
        .expect("LOW_DIGITS bytes");
    let low = (v % LOW) as u32;
    let (a, b) = (low / 10_000, low % 10_000);
    let (c, d) = (b / 100, b % 100);
    w[0..2].copy_from_slice(pair(a));
    w[2..4].copy_from_slice(pair(c));
    w[4..6].copy_from_slice(pair(d));
}

/// The two digits of `v` (below 100).
#[inline(always)]
fn pair(v: u32) -> &'static [u8; 2] {
    let i = v as usize * 2;
    PAIRS[i..i + 2].try_into().expect("a pair")
}

/// The numbers written with as many digits as `v`: `(digits, first,
/// last)`.
pub(crate) fn same_length(v: u64) -> (usize, u64, u64) {
    let len = digit_count(v);
    let first = if len == 1 {
        0
    } else {
        10u64.pow(len as u32 - 1)
    };
    let last = if len == 20 {
        u64::MAX
    } else {
        10u64.pow(len as u32) - 1
    };
    (len, first, last)
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
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut edges = vec![0, 1, 9, 10, 99, 100, 999_999_999, LOW, LOW + 1, u64::MAX];
        edges.extend((0..20).map(|p| 10u64.pow(p)));
        edges.extend((1..20).map(|p| 10u64.pow(p) - 1));
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match i % 4 {
                0 => x >> (x % 64),
                1 => 1_700_000_000_000_000_000 + (x % 5_000_000_000),
                2 => x,
                _ => edges[(x % edges.len() as u64) as usize],
            };
            let text = v.to_string();
            assert_eq!(written(|o| put_u64(o, 3, v))[3..], text);
            let (len, first, last) = same_length(v);
            assert_eq!(len, text.len());
            assert!(first <= v && v <= last);
            assert_eq!(first.to_string().len(), len);
            assert_eq!(last.to_string().len(), len);
            assert!(first == 0 || (first - 1).to_string().len() < len);
            assert!(last == u64::MAX || (last + 1).to_string().len() > len);
            assert_eq!(
                written(|o| {
                    put_digits_at(o, 2, v, len);
                    2 + len
                })[2..],
                text
            );
            if v >= LOW {
                // Another number's digits, its low ones patched to v's.
                let other = v - x % (v % LOW + 1);
                let patched = written(|o| {
                    let end = put_u64(o, 1, other);
                    put_low_digits(o, end, v);
                    end
                });
                assert_eq!(patched[1..], text, "{other}");
            }
        }
    }
}
