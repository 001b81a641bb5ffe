//! A node's last `kernels.csv` row, kept as the template of its next ones.
//!
//! Consecutive instances of a node mostly differ in their numbers only:
//! the same queue, device, thread, timing status and region, timestamps
//! that share all but their low digits. A row of the same [`RowKey`] as
//! the template, and an instance number of as many digits, is the
//! template's bytes with the instance number and the timestamps' low
//! digits patched in and its duration written between the template's two
//! parts; any other row makes the template again ([`RowTemplate::build`]).

use crate::record::TimingStatus;
use crate::regions::RegionId;
use crate::writers::decimal::{
    digit_count, put_changed_digits, put_low_digits, put_tail_digits, put_u64, tail_range, LOW,
    LOW_DIGITS, ROOM,
};

/// A row's timestamps: `submit_ns`, `start_ns`, `end_ns`.
pub(crate) type Times = [Option<u64>; 3];

/// A timestamp's part in a [`RowKey`] when it is absent.
const ABSENT: u64 = u64::MAX;

/// What a row's bytes depend on, besides its node's text (cached by
/// [`Node::revision`](crate::Node::revision)), its instance number's
/// digits, its timestamps' low digits and its duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowKey {
    /// Per timestamp, its value / [`LOW`] ([`ABSENT`] for none).
    highs: [u64; 3],
    /// The instance's own queue.
    queue: Option<u64>,
    /// The device's index, and the lengths its text was made from.
    device: Option<(usize, usize)>,
    /// The submitting thread.
    thread: Option<u32>,
    /// The timing status.
    timing: TimingStatus,
    /// The region's id and the length of its path (`None`: an empty
    /// column).
    region: Option<(RegionId, usize)>,
}

impl RowKey {
    /// The key of a row: `device` as `(index, lengths its text is made
    /// from)`, `region` as `(id, path length)` when the column is not
    /// empty.
    #[inline(always)]
    pub(crate) fn new(
        times: &Times,
        queue: Option<u64>,
        device: Option<(usize, usize)>,
        thread: Option<u32>,
        timing: TimingStatus,
        region: Option<(RegionId, usize)>,
    ) -> RowKey {
        RowKey {
            highs: times.map(|t| t.map_or(ABSENT, |ns| ns / LOW)),
            queue,
            device,
            thread,
            timing,
            region,
        }
    }
}

/// The texts a row is made of besides its numbers, each escaped.
pub(crate) struct RowText<'a> {
    /// `name,kind,node_id,`.
    pub(crate) lead: &'a [u8],
    /// The `queue_id` column when the instance has no queue of its own.
    pub(crate) queue: &'a [u8],
    /// `device,device_id` (without a known device: the node's device name
    /// alone, and the label is left empty).
    pub(crate) device: &'a [u8],
    /// `,global_size,local_size,bytes,source_file,source_line,`.
    pub(crate) rest: &'a [u8],
    /// The `region` column.
    pub(crate) region: &'a [u8],
}

/// The template: a row's bytes up to its duration (`head`) and after it
/// (`tail`), and where its numbers are in `head`.
#[derive(Debug, Default)]
pub(crate) struct RowTemplate {
    /// `None` until made, and while rows cannot patch it (a timestamp of
    /// [`LOW_DIGITS`] digits or fewer).
    key: Option<RowKey>,
    /// The columns `name` to `end_ns`, and the `,` after them.
    head: Vec<u8>,
    /// Where the instance number ends in `head`, and how many of its low
    /// digits a row patches.
    instance_end: usize,
    instance_digits: usize,
    /// The instance numbers a row may patch in: of as many digits, the
    /// same above those patched ([`tail_range`]).
    instance_first: u64,
    instance_last: u64,
    /// Where each timestamp's digits end in `head` (0: none), and how
    /// many they are.
    time_ends: [usize; 3],
    time_lens: [usize; 3],
    /// `,timing`, the columns `global_size` to `region` and the `\n`.
    tail: Vec<u8>,
}

impl RowTemplate {
    /// Whether a row of `key`, `instance` and `times` is this template
    /// patched. A row that differs from it in its timestamps' high digits
    /// only (each timestamp as many digits) first has them written into
    /// the template ([`rebase`](RowTemplate::rebase)): a template outlives
    /// the millisecond boundaries its timestamps cross.
    #[inline(always)]
    pub(crate) fn fits(&mut self, key: &RowKey, instance: u64, times: &Times) -> bool {
        let Some(kept) = &self.key else {
            return false;
        };
        if instance < self.instance_first || instance > self.instance_last {
            return false;
        }
        kept == key || self.rebase(key, times)
    }

    /// Writes the high digits of `times` into the template when `key`
    /// differs from its own in them only, each timestamp present as in
    /// the template and of as many digits; whether it did.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, key: &RowKey, times: &Times) -> bool {
        let Some(kept) = &mut self.key else {
            return false;
        };
        let others = RowKey {
            highs: kept.highs,
            ..*key
        };
        if others != *kept {
            return false;
        }
        let same_shape =
            times
                .iter()
                .zip(&self.time_ends)
                .zip(&self.time_lens)
                .all(|((ns, &end), &len)| match *ns {
                    Some(ns) => end != 0 && digit_count(ns) == len,
                    None => end == 0,
                });
        if !same_shape {
            return false;
        }
        for ((&end, old), new) in self.time_ends.iter().zip(kept.highs).zip(key.highs) {
            if end != 0 {
                // The digits above the low ones are those of the high part.
                put_changed_digits(&mut self.head, end - LOW_DIGITS, old, new);
            }
        }
        kept.highs = key.highs;
        true
    }

    /// Makes the template from a row: its key, instance number,
    /// timestamps and texts.
    pub(crate) fn build(&mut self, key: RowKey, instance: u64, times: &Times, text: &RowText) {
        let mut num = itoa::Buffer::new();
        let head = &mut self.head;
        head.clear();
        head.extend_from_slice(text.lead);
        let (digits, first, last) = tail_range(instance);
        self.instance_digits = digits;
        self.instance_first = first;
        self.instance_last = last;
        head.extend_from_slice(num.format(instance).as_bytes());
        self.instance_end = head.len();
        head.push(b',');
        match key.queue {
            Some(q) => head.extend_from_slice(num.format(q).as_bytes()),
            None => head.extend_from_slice(text.queue),
        }
        head.push(b',');
        head.extend_from_slice(text.device);
        if key.device.is_none() {
            head.push(b',');
        }
        head.push(b',');
        if let Some(t) = key.thread {
            head.extend_from_slice(num.format(t).as_bytes());
        }
        head.push(b',');
        let mut patchable = true;
        for ((end, len), ns) in self
            .time_ends
            .iter_mut()
            .zip(&mut self.time_lens)
            .zip(times)
        {
            *end = 0;
            if let Some(ns) = *ns {
                let digits = num.format(ns).as_bytes();
                *len = digits.len();
                head.extend_from_slice(digits);
                *end = head.len();
                patchable &= ns >= LOW;
            }
            head.push(b',');
        }
        let tail = &mut self.tail;
        tail.clear();
        tail.push(b',');
        tail.extend_from_slice(key.timing.as_str().as_bytes());
        tail.extend_from_slice(text.rest);
        tail.extend_from_slice(text.region);
        tail.push(b'\n');
        self.key = patchable.then_some(key);
    }

    /// The most bytes [`put`](RowTemplate::put) writes, with the room its
    /// numbers need.
    #[inline(always)]
    pub(crate) fn room(&self) -> usize {
        self.head.len() + ROOM + self.tail.len()
    }

    /// Writes the row at `out[at..]` ([`room`](RowTemplate::room) bytes
    /// there): the template's, with `instance` and the low digits of
    /// `times` patched in when `patch` (a row [`fits`](RowTemplate::fits)
    /// it), as it is otherwise (it was just made from this row); returns
    /// the position after it.
    #[inline(always)]
    pub(crate) fn put(
        &self,
        out: &mut [u8],
        at: usize,
        instance: u64,
        times: &Times,
        duration: Option<u64>,
        patch: bool,
    ) -> usize {
        let head = &self.head[..];
        let out = &mut out[at..];
        out[..head.len()].copy_from_slice(head);
        if patch {
            put_tail_digits(out, self.instance_end, instance, self.instance_digits);
            for (&end, ns) in self.time_ends.iter().zip(times) {
                if let Some(ns) = *ns {
                    debug_assert!(end >= LOW_DIGITS);
                    put_low_digits(out, end, ns);
                }
            }
        }
        let mut n = head.len();
        if let Some(d) = duration {
            n = put_u64(out, n, d);
        }
        out[n..n + self.tail.len()].copy_from_slice(&self.tail);
        at + n + self.tail.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row a template writes, patched (`patch`) or as just made.
    fn row(
        t: &RowTemplate,
        instance: u64,
        times: &Times,
        duration: Option<u64>,
        patch: bool,
    ) -> String {
        let mut out = vec![0u8; t.room() + 7];
        let end = t.put(&mut out, 7, instance, times, duration, patch);
        String::from_utf8(out[7..end].to_vec()).unwrap()
    }

    #[test]
    fn a_patched_template_writes_the_row_a_new_one_would() {
        let text = RowText {
            lead: b"k,kernel,n3,",
            queue: b"9",
            device: b"cpu,0",
            rest: b",,,64,a.cpp,7,",
            region: b"r",
        };
        let mut kept = RowTemplate::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut patched, mut instance, mut t) = (0, 0u64, 1_700_000_000_000_000u64);
        for i in 0..50_000u64 {
            // Mostly the next instance a little later; now and then a
            // jump, another thread or a missing time.
            instance = match rand() % 50 {
                0 => rand() >> (rand() % 64),
                1 => 10u64.pow((rand() % 20) as u32) - rand() % 2,
                _ => instance.wrapping_add(1),
            };
            t = match rand() % 100 {
                0 => rand() % 3_000_000,
                1 => rand(),
                _ => t.wrapping_add(rand() % 20_000),
            };
            let times = [
                (rand() % 30 != 0).then_some(t),
                (rand() % 30 != 0).then(|| t.wrapping_add(rand() % 2_000)),
                Some(t.wrapping_add(2_000 + rand() % 5_000)),
            ];
            let duration = (rand() % 10 != 0).then(|| rand() >> (rand() % 64));
            let thread = Some((i / 1000 % 2) as u32);
            let key = RowKey::new(&times, Some(1), None, thread, TimingStatus::Ok, None);
            let mut fresh = RowTemplate::default();
            fresh.build(key, instance, &times, &text);
            let want = row(&fresh, instance, &times, duration, false);
            let fits = kept.fits(&key, instance, &times);
            if fits {
                patched += 1;
            } else {
                kept.build(key, instance, &times, &text);
            }
            assert_eq!(row(&kept, instance, &times, duration, fits), want);
        }
        assert!(patched > 30_000, "{patched}");
    }
}
