//! Native commands (`ext_codeplay_enqueue_native_command`): work the program
//! enqueues itself through the backend's API (a kernel built with nvcc, a
//! cuBLAS call) from inside a SYCL command group.
//!
//! The runtime enqueues such a command group with one
//! `urEnqueueNativeCommandExp` call between the command's task_begin and
//! task_end, whose output event spans the native work; its XPTI node says
//! nothing of it (DPC++ 2026.2 names it `unknown`). The UR hook (or
//! `ur.call.debug` before the hooks) tells the recorder, which adds
//! `ur_function=urEnqueueNativeCommandExp` to the node's metadata once per
//! node and thread ([`Recorder::native_command_here`]): the model then
//! classifies it as a `native` device command and waits for its device
//! times like a kernel's.
//!
//! - A host task taking an `interop_handle` makes the same UR call on
//!   CUDA and HIP, from the runtime's host-task thread, without an output
//!   event: it stays a host task (its native work is not seen).
//! - The OpenCL and Level Zero adapters of UR 0.12 refuse the call
//!   (`UR_RESULT_ERROR_UNSUPPORTED_FEATURE`): the runtime throws, the node
//!   stays without a device time, and the refusals are counted here,
//!   under the result the adapter gave ([`NativeRefusals`]).
//!
//! [`Recorder::native_command_here`]: crate::recorder::Recorder::native_command_here

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use syclgraph_graph::kind::{NATIVE_COMMAND, UR_FUNCTION_KEY};
use syclgraph_graph::record::Metadata;
use ur_sys::ur_result_t;

/// The metadata that makes a node a native command.
pub fn native_metadata() -> Metadata {
    vec![(UR_FUNCTION_KEY.to_owned(), NATIVE_COMMAND.to_owned())]
}

/// Native commands the adapter refused: how many, and the result of the
/// last refusal.
#[derive(Default)]
pub struct NativeRefusals {
    count: AtomicU64,
    last_result: AtomicU32,
}

impl NativeRefusals {
    /// Counts one refused `urEnqueueNativeCommandExp` (a relaxed add).
    #[cold]
    pub fn refused(&self, result: ur_result_t) {
        self.last_result.store(result.0, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn snapshot(&self) -> RefusedCounts {
        RefusedCounts {
            count: self.count.load(Ordering::Relaxed),
            last_result: self.last_result.load(Ordering::Relaxed),
        }
    }
}

/// [`NativeRefusals`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefusedCounts {
    /// Refused calls.
    pub count: u64,
    /// The `ur_result_t` of the last one.
    pub last_result: u32,
}

impl RefusedCounts {
    /// The summary's line (`None` when none was refused).
    pub fn summary_line(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let result = ur_result_t(self.last_result);
        Some(format!(
            "native commands: {} refused by the backend (urEnqueueNativeCommandExp returned {result:?}; the program got an exception): their nodes have no device time\n",
            self.count
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_under_the_adapters_result() {
        let refusals = NativeRefusals::default();
        assert_eq!(refusals.snapshot().summary_line(), None);
        refusals.refused(ur_result_t::ERROR_UNSUPPORTED_FEATURE);
        refusals.refused(ur_result_t::ERROR_UNSUPPORTED_FEATURE);
        assert_eq!(
            refusals.snapshot().summary_line().unwrap(),
            "native commands: 2 refused by the backend (urEnqueueNativeCommandExp returned UR_RESULT_ERROR_UNSUPPORTED_FEATURE(44); the program got an exception): their nodes have no device time\n"
        );
    }
}
