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

/// The room [`put_u64`] needs: the 20 digits of `u64::MAX`, rounded up
/// to the fixed-size window it writes through.
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
pub(crate) fn digit_count(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Writes `v` in decimal at `out[at..]` (at least [`ROOM`] bytes there);
/// returns the position after it. Numbers below 10^8 (a row's durations,
/// queues, threads) take a few branches and pair copies, no loop.
#[inline(always)]
pub(crate) fn put_u64(out: &mut [u8], at: usize, v: u64) -> usize {
    let w = window(out, at);
    let len = if v < 10_000 {
        put_small(w, v as u32)
    } else if v < 100_000_000 {
        let v = v as u32;
        let n = put_small(w, v / 10_000);
        put_four(&mut w[n..n + 4], v % 10_000);
        n + 4
    } else {
        let len = digit_count(v);
        put_digits(w, v, len);
        len
    };
    at + len
}

/// Writes `v` (below 10^4) at the start of `w`; returns its digits.
#[inline(always)]
fn put_small(w: &mut [u8; ROOM], v: u32) -> usize {
    if v < 100 {
        if v < 10 {
            w[0] = b'0' + v as u8;
            1
        } else {
            w[..2].copy_from_slice(pair(v));
            2
        }
    } else {
        let (high, low) = (v / 100, v % 100);
        if high < 10 {
            w[0] = b'0' + high as u8;
            w[1..3].copy_from_slice(pair(low));
            3
        } else {
            w[..2].copy_from_slice(pair(high));
            w[2..4].copy_from_slice(pair(low));
            4
        }
    }
}

/// Writes the four digits of `v` (below 10^4), zero-padded, in `w`.
#[inline(always)]
fn put_four(w: &mut [u8], v: u32) {
    w[..2].copy_from_slice(pair(v / 100));
    w[2..4].copy_from_slice(pair(v % 100));
}

/// The timestamps of a row are patched in their low [`LOW_DIGITS`]
/// digits only: those above (the value / `LOW`) are the template's.
pub(crate) const LOW: u64 = 1_000_000;
/// The digits of [`LOW`] - 1.
pub(crate) const LOW_DIGITS: usize = 6;

/// Writes the [`LOW_DIGITS`] low digits of `v`, zero-padded, at
/// `out[end - LOW_DIGITS..end]`.
#[inline(always)]
pub(crate) fn put_low_digits(out: &mut [u8], end: usize, v: u64) {
    let w: &mut [u8; LOW_DIGITS] = (&mut out[end - LOW_DIGITS..end])
        .try_into()
        .expect("LOW_DIGITS bytes");
    let low = (v % LOW) as u32;
    w[..2].copy_from_slice(pair(low / 10_000));
    put_four(&mut w[2..], low % 10_000);
}

/// A number's low digits a template patches: up to this many.
pub(crate) const TAIL_DIGITS: usize = 4;

/// Writes the `k` (1 to [`TAIL_DIGITS`]) low digits of `v`, zero-padded,
/// at `out[end - k..end]`.
#[inline(always)]
pub(crate) fn put_tail_digits(out: &mut [u8], end: usize, v: u64, k: usize) {
    let low = (v % 10_000) as u32;
    match k {
        4 => put_four(&mut out[end - 4..end], low),
        3 => {
            out[end - 3] = b'0' + (low / 100 % 10) as u8;
            out[end - 2..end].copy_from_slice(pair(low % 100));
        }
        2 => out[end - 2..end].copy_from_slice(pair(low % 100)),
        _ => out[end - 1] = b'0' + (low % 10) as u8,
    }
}

/// Rewrites, in the decimal number `old` that ends at `out[..end]`, the
/// digits where `new` (as many digits) differs from it: after a carry,
/// mostly one or two.
pub(crate) fn put_changed_digits(out: &mut [u8], end: usize, mut old: u64, mut new: u64) {
    let mut at = end;
    while old != new {
        at -= 1;
        out[at] = b'0' + (new % 10) as u8;
        old /= 10;
        new /= 10;
    }
}

/// The numbers a template made from `v` can be patched to with
/// [`put_tail_digits`]: those of as many digits, the same above the
/// [`TAIL_DIGITS`] low ones. Returns `(digits to patch, first, last)`.
pub(crate) fn tail_range(v: u64) -> (usize, u64, u64) {
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
    let block = v - v % 10_000;
    (
        len.min(TAIL_DIGITS),
        first.max(block),
        last.min(block.saturating_add(9_999)),
    )
}

/// The two digits of `v` (below 100).
#[inline(always)]
fn pair(v: u32) -> &'static [u8; 2] {
    let i = v as usize * 2;
    PAIRS[i..i + 2].try_into().expect("a pair")
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
            let (k, first, last) = tail_range(v);
            assert_eq!(k, text.len().min(TAIL_DIGITS));
            assert!(first <= v && v <= last);
            for w in [first, last] {
                // The same length, the same digits above the low k.
                let wt = w.to_string();
                assert_eq!(wt.len(), text.len(), "{w} {v}");
                assert_eq!(wt[..wt.len() - k], text[..text.len() - k]);
            }
            for w in [first.wrapping_sub(1), last.wrapping_add(1)] {
                let wt = w.to_string();
                assert!(
                    wt.len() != text.len() || wt[..wt.len() - k] != text[..text.len() - k],
                    "{w} {v}"
                );
            }
            let other = first + x % (last - first).saturating_add(1).max(1);
            let patched = written(|o| {
                let end = put_u64(o, 1, other);
                put_tail_digits(o, end, v, k);
                end
            });
            assert_eq!(patched[1..], text, "{other}");
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
