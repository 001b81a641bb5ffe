//! LEB128 varints (protobuf's): seven bits a byte, low bits first, the top
//! bit set on every byte but the last. The Perfetto writer's hand-laid
//! packets and the journal's codec both lay them out with [`put_varint`].

/// The most bytes one `u64` takes as a varint.
pub(crate) const MAX_VARINT_LEN: usize = 10;

/// Writes `v` as a varint into `a` from index `n` and returns the index
/// after it (`a` must have [`MAX_VARINT_LEN`] bytes free from `n`).
#[inline(always)]
pub(crate) fn put_varint(a: &mut [u8], mut n: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        a[n] = (v as u8 & 0x7f) | 0x80;
        v >>= 7;
        n += 1;
    }
    a[n] = v as u8;
    n + 1
}
