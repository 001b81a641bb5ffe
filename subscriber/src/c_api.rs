//! The C API of `include/syclgraph.h`: start and stop tracing from the
//! program, any thread, any time; never blocks. Found at run time with
//! `dlsym` ([`crate::exports`]).

use std::ffi::c_int;
use std::panic::catch_unwind;

use crate::session;

/// Starts tracing (C API). Returns 1 when tracing was stopped and is now
/// on, 0 otherwise (already on, finishing, or syclgraph not tracing).
/// Any thread, any time; never blocks.
#[no_mangle]
pub extern "C" fn syclgraph_start() -> c_int {
    catch_unwind(|| match session::current() {
        Some(s) => c_int::from(s.resume()),
        None => {
            session::asked_before_start(true);
            0
        }
    })
    .unwrap_or(0)
}

/// Stops tracing (C API). Returns 1 when tracing was on and is now
/// stopped, 0 otherwise. Commands submitted before are still timed.
#[no_mangle]
pub extern "C" fn syclgraph_stop() -> c_int {
    catch_unwind(|| match session::current() {
        Some(s) => c_int::from(s.pause()),
        None => {
            session::asked_before_start(false);
            0
        }
    })
    .unwrap_or(0)
}

/// 1 while tracing is on (new submissions are recorded), else 0.
#[no_mangle]
pub extern "C" fn syclgraph_is_active() -> c_int {
    catch_unwind(|| c_int::from(session::recorder().is_some_and(|r| r.running()))).unwrap_or(0)
}
