//! UR enqueues that no XPTI node accompanied, counted by UR function.
//!
//! The runtime sends no `node_create` for some commands it enqueues: an
//! in-order queue's `ext_oneapi_submit_barrier` and a profiling tag
//! (`urEnqueueEventsWaitWithBarrier[Ext]`), `mem_advise`
//! (`urEnqueueUSMAdvise`), the marker `ext_oneapi_get_last_event` makes
//! (`urEnqueueEventsWait`). syclgraph sees their UR calls (the hooks, or
//! `ur.call.debug` before them): an enqueue made while no submission of
//! the thread is waiting for its UR call and no task is open there had no
//! node. Such enqueues are not in the graph; they are counted here, a
//! relaxed add each, and the summary says how many of each function.

use std::sync::atomic::{AtomicU64, Ordering};

use ur_sys::ur_function_t;

/// A UR enqueue function syclgraph follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueFunction {
    /// `urEnqueueUSMMemcpy`.
    UsmMemcpy,
    /// `urEnqueueUSMFill`.
    UsmFill,
    /// `urEnqueueUSMMemcpy2D`.
    UsmMemcpy2D,
    /// `urEnqueueKernelLaunchWithArgsExp`.
    KernelLaunchWithArgsExp,
    /// `urEnqueueEventsWait`.
    EventsWait,
    /// `urEnqueueEventsWaitWithBarrier`.
    EventsWaitWithBarrier,
    /// `urEnqueueEventsWaitWithBarrierExt`.
    EventsWaitWithBarrierExt,
    /// `urEnqueueUSMPrefetch`.
    UsmPrefetch,
    /// `urEnqueueUSMAdvise`.
    UsmAdvise,
    /// `urEnqueueTimestampRecordingExp` (a profiling tag on a device that
    /// records timestamps natively).
    TimestampRecordingExp,
    /// `urEnqueueNativeCommandExp` (`ext_codeplay_enqueue_native_command`).
    NativeCommandExp,
}

impl EnqueueFunction {
    /// Every followed enqueue function, in declaration order.
    pub const ALL: [EnqueueFunction; 11] = [
        EnqueueFunction::UsmMemcpy,
        EnqueueFunction::UsmFill,
        EnqueueFunction::UsmMemcpy2D,
        EnqueueFunction::KernelLaunchWithArgsExp,
        EnqueueFunction::EventsWait,
        EnqueueFunction::EventsWaitWithBarrier,
        EnqueueFunction::EventsWaitWithBarrierExt,
        EnqueueFunction::UsmPrefetch,
        EnqueueFunction::UsmAdvise,
        EnqueueFunction::TimestampRecordingExp,
        EnqueueFunction::NativeCommandExp,
    ];

    /// The UR function's name.
    pub const fn name(self) -> &'static str {
        match self {
            EnqueueFunction::UsmMemcpy => "urEnqueueUSMMemcpy",
            EnqueueFunction::UsmFill => "urEnqueueUSMFill",
            EnqueueFunction::UsmMemcpy2D => "urEnqueueUSMMemcpy2D",
            EnqueueFunction::KernelLaunchWithArgsExp => "urEnqueueKernelLaunchWithArgsExp",
            EnqueueFunction::EventsWait => "urEnqueueEventsWait",
            EnqueueFunction::EventsWaitWithBarrier => "urEnqueueEventsWaitWithBarrier",
            EnqueueFunction::EventsWaitWithBarrierExt => "urEnqueueEventsWaitWithBarrierExt",
            EnqueueFunction::UsmPrefetch => "urEnqueueUSMPrefetch",
            EnqueueFunction::UsmAdvise => "urEnqueueUSMAdvise",
            EnqueueFunction::TimestampRecordingExp => "urEnqueueTimestampRecordingExp",
            EnqueueFunction::NativeCommandExp => "urEnqueueNativeCommandExp",
        }
    }

    /// The function of a `ur.call.debug` function id, if followed.
    pub fn of_function_id(id: ur_function_t) -> Option<EnqueueFunction> {
        Some(match id {
            ur_function_t::ENQUEUE_USM_MEMCPY => EnqueueFunction::UsmMemcpy,
            ur_function_t::ENQUEUE_USM_FILL => EnqueueFunction::UsmFill,
            ur_function_t::ENQUEUE_USM_MEMCPY_2D => EnqueueFunction::UsmMemcpy2D,
            ur_function_t::ENQUEUE_KERNEL_LAUNCH_WITH_ARGS_EXP => {
                EnqueueFunction::KernelLaunchWithArgsExp
            }
            ur_function_t::ENQUEUE_EVENTS_WAIT => EnqueueFunction::EventsWait,
            ur_function_t::ENQUEUE_EVENTS_WAIT_WITH_BARRIER => {
                EnqueueFunction::EventsWaitWithBarrier
            }
            ur_function_t::ENQUEUE_EVENTS_WAIT_WITH_BARRIER_EXT => {
                EnqueueFunction::EventsWaitWithBarrierExt
            }
            ur_function_t::ENQUEUE_USM_PREFETCH => EnqueueFunction::UsmPrefetch,
            ur_function_t::ENQUEUE_USM_ADVISE => EnqueueFunction::UsmAdvise,
            ur_function_t::ENQUEUE_TIMESTAMP_RECORDING_EXP => {
                EnqueueFunction::TimestampRecordingExp
            }
            ur_function_t::ENQUEUE_NATIVE_COMMAND_EXP => EnqueueFunction::NativeCommandExp,
            _ => return None,
        })
    }
}

/// How many enqueues of each [`EnqueueFunction`] came without a node.
#[derive(Default)]
pub struct UnseenEnqueues([AtomicU64; EnqueueFunction::ALL.len()]);

impl UnseenEnqueues {
    /// Counts one enqueue of `function` that had no node.
    #[inline]
    pub fn count(&self, function: EnqueueFunction) {
        self.0[function as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now, in [`EnqueueFunction::ALL`] order.
    pub fn snapshot(&self) -> UnseenCounts {
        UnseenCounts(std::array::from_fn(|i| self.0[i].load(Ordering::Relaxed)))
    }
}

/// The counts of [`UnseenEnqueues`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnseenCounts(pub [u64; EnqueueFunction::ALL.len()]);

impl UnseenCounts {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The summary's line (`None` when there were none): the total, then
    /// `<function> <count>` for each function that had some, most first.
    pub fn summary_line(&self) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let mut counted: Vec<(EnqueueFunction, u64)> = EnqueueFunction::ALL
            .into_iter()
            .zip(self.0)
            .filter(|&(_, n)| n > 0)
            .collect();
        counted.sort_by_key(|&(f, n)| (std::cmp::Reverse(n), f as usize));
        let each: Vec<String> = counted
            .iter()
            .map(|(f, n)| format!("{} {n}", f.name()))
            .collect();
        Some(format!(
            "without a node: {total} UR enqueue(s) the runtime sent no XPTI node for (in-order barriers, profiling tags, mem_advise, markers; not in the outputs): {}\n",
            each.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_is_counted_under_its_own_name() {
        let unseen = UnseenEnqueues::default();
        unseen.count(EnqueueFunction::UsmAdvise);
        unseen.count(EnqueueFunction::EventsWaitWithBarrierExt);
        unseen.count(EnqueueFunction::EventsWaitWithBarrierExt);
        let counts = unseen.snapshot();
        assert_eq!(counts.total(), 3);
        assert_eq!(
            counts.summary_line().unwrap(),
            "without a node: 3 UR enqueue(s) the runtime sent no XPTI node for (in-order barriers, profiling tags, mem_advise, markers; not in the outputs): urEnqueueEventsWaitWithBarrierExt 2, urEnqueueUSMAdvise 1\n"
        );
        assert_eq!(UnseenCounts::default().summary_line(), None);
    }

    #[test]
    fn function_ids_map_to_their_names() {
        for f in EnqueueFunction::ALL {
            assert_eq!(EnqueueFunction::ALL[f as usize], f);
        }
        assert_eq!(
            EnqueueFunction::of_function_id(ur_function_t::ENQUEUE_USM_ADVISE),
            Some(EnqueueFunction::UsmAdvise)
        );
        assert_eq!(
            EnqueueFunction::of_function_id(ur_function_t::QUEUE_CREATE),
            None
        );
    }
}
