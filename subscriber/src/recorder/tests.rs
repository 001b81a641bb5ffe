//! The hot path on the real XPTI framework library (the runtime's
//! `libxptifw.so`, found as the subscriber finds it), feeding a real
//! inbox. Events are plain `trace_event_data_t` values without payload.
use super::*;
use std::ffi::CStr;
use std::time::Duration;

/// A recorder on an inbox of `capacity`, or `None` (the test is skipped)
/// when the framework library is not there and the runtime is not
/// required (`SYCLGRAPH_REQUIRE_RUNTIME=1` makes it fail instead).
fn recorder(capacity: usize, paused: bool) -> Option<(Recorder, Arc<Inbox>)> {
    let xpti = match Xpti::load() {
        Ok(x) => x,
        Err(e) if std::env::var("SYCLGRAPH_REQUIRE_RUNTIME").as_deref() != Ok("1") => {
            eprintln!("skipped: {e}");
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let inbox = Arc::new(Inbox::new(capacity));
    let recorder = Recorder::new(
        xpti,
        inbox.clone(),
        TimingSlot::new(Duration::ZERO),
        Arc::new(Counters::default()),
        false,
        0,
        paused,
    );
    Some((recorder, inbox))
}

fn drain(inbox: &Inbox) -> Vec<Record> {
    std::iter::from_fn(|| inbox.pop())
        .map(|item| match item {
            Item::Record(record) => record,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// A node_create event of a code location without payload.
fn event(unique_id: u64) -> xpti_sys::trace_event_data_t {
    // SAFETY: trace_event_data_t is plain C data (integers and
    // pointers); all zeros is a valid value (no payload, no metadata).
    let mut e: xpti_sys::trace_event_data_t = unsafe { std::mem::zeroed() };
    e.unique_id = unique_id;
    e.instance_id = 1;
    e
}

#[test]
fn spans_are_pushed_in_order_and_a_label_is_sent_once() {
    let Some((recorder, inbox)) = recorder(16, false) else {
        return;
    };
    recorder.span(SpanKind::Wait, true, "queue.wait[0x1]", None);
    recorder.span(SpanKind::Wait, false, "", None);
    recorder.span(SpanKind::Wait, true, "queue.wait[0x2]", None);
    let records = drain(&inbox);
    let [Record::String { id, text }, Record::SpanBegin {
        label: first,
        thread,
        ns: begin,
        ..
    }, Record::SpanEnd {
        thread: end_thread,
        ns: end,
        ..
    }, Record::SpanBegin { label: second, .. }] = records.as_slice()
    else {
        panic!("{records:?}");
    };
    assert_eq!(&**text, "queue.wait");
    assert_eq!((*first, *second), (*id, *id));
    assert_eq!(thread, end_thread);
    assert!(begin <= end, "{begin} > {end}");
    assert_eq!(recorder.counters.snapshot(), Default::default());
}

#[test]
fn while_paused_submissions_are_counted_not_recorded() {
    let Some((recorder, inbox)) = recorder(16, true) else {
        return;
    };
    let mut e = event(7);
    // SAFETY: `e` lives for the calls.
    let r = unsafe { EventRef::new(&mut e) }.unwrap();
    // SAFETY: a NUL-terminated literal.
    let kind = unsafe { CText::new(c"command_group_node".as_ptr()) };
    recorder.node_create(r, kind);
    recorder.task(true, r);
    recorder.task(false, r);
    recorder.span(SpanKind::Wait, true, "wait", None);
    assert!(drain(&inbox).is_empty());
    let counts = recorder.counters.snapshot();
    assert_eq!((counts.while_stopped, counts.after_finish), (1, 0));
}

/// One submission (node_create, task_begin, the UR call's output
/// event for a direct-path `kind`, task_end) on a new thread that then
/// ends, as the runtime's host-task and TBB threads do.
fn submit_on_a_new_thread(recorder: &Recorder, unique_id: u64, kind: &'static CStr) {
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut e = event(unique_id);
            // SAFETY: `e` lives for the calls.
            let r = unsafe { EventRef::new(&mut e) }.unwrap();
            // SAFETY: a NUL-terminated literal.
            let kind_text = unsafe { CText::new(kind.as_ptr()) };
            recorder.node_create(r, kind_text);
            recorder.task(true, r);
            if kind.to_bytes().starts_with(b"memory_transfer_node::") {
                recorder.direct_command_event(0);
            }
            recorder.task(false, r);
        });
    });
}

#[test]
fn each_thread_keeps_its_own_state_and_number() {
    let Some((recorder, inbox)) = recorder(64, false) else {
        return;
    };
    // The direct path (held submission, one record at the task's end)
    // on one thread, the general path on the next, the direct path
    // again on a third: nothing one thread kept may leak into another.
    submit_on_a_new_thread(&recorder, 1, c"memory_transfer_node::memcpy");
    submit_on_a_new_thread(&recorder, 2, c"command_group_node");
    submit_on_a_new_thread(&recorder, 3, c"memory_transfer_node::memcpy");
    let records = drain(&inbox);
    let [Record::NodeDefined(_), Record::SubmittedTask {
        instance: 1,
        thread: first,
        submit_ns,
        after: None,
        begin_ns,
        end_ns,
        event: Some(0),
        ..
    }, Record::Submitted {
        instance: 2,
        thread: second,
        ns: second_submit,
        ..
    }, Record::Task {
        instance: 2,
        thread: second_task,
        begin_ns: second_begin,
        end_ns: second_end,
        ..
    }, Record::SubmittedTask {
        instance: 3,
        thread: third,
        ..
    }] = records.as_slice()
    else {
        panic!("{records:?}");
    };
    assert!(submit_ns <= begin_ns && begin_ns <= end_ns, "{records:?}");
    assert!(second_submit <= second_begin && second_begin <= second_end);
    assert_eq!(second, second_task);
    assert!(first != second && second != third && first != third);
    assert_eq!(recorder.counters.snapshot(), Default::default());
}

/// A direct-path memcpy whose UR call never came (no `direct_command_event`).
fn memcpy_without_its_ur_call(recorder: &Recorder, unique_id: u64) {
    let mut e = event(unique_id);
    // SAFETY: `e` lives for the calls.
    let r = unsafe { EventRef::new(&mut e) }.unwrap();
    // SAFETY: a NUL-terminated literal.
    let kind = unsafe { CText::new(c"memory_transfer_node::memcpy".as_ptr()) };
    recorder.node_create(r, kind);
    recorder.task(true, r);
    recorder.task(false, r);
}

#[test]
fn a_memcpy_without_its_ur_call_is_sent_untimed_unless_ur_calls_are_followed() {
    let Some((recorder, inbox)) = recorder(16, false) else {
        return;
    };
    // Device timing off: no UR hooks, no UR stream. The submission goes
    // out whole at its task's end, without a device event.
    memcpy_without_its_ur_call(&recorder, 1);
    memcpy_without_its_ur_call(&recorder, 2);
    let records = drain(&inbox);
    let [Record::NodeDefined(_), Record::SubmittedTask {
        instance: 1,
        submit_ns,
        after: None,
        begin_ns,
        end_ns,
        event: None,
        ..
    }, Record::SubmittedTask {
        instance: 2,
        submit_ns: second_submit,
        event: None,
        ..
    }] = records.as_slice()
    else {
        panic!("{records:?}");
    };
    assert!(submit_ns <= begin_ns && begin_ns <= end_ns && end_ns <= second_submit);
    // UR calls followed: a memcpy that made no UR call was recorded
    // into a SYCL graph, not run; it is not sent as a submission.
    recorder
        .counters
        .ur_hooks_active
        .store(true, Ordering::Relaxed);
    memcpy_without_its_ur_call(&recorder, 3);
    let records = drain(&inbox);
    assert!(
        !records.iter().any(|r| matches!(
            r,
            Record::SubmittedTask { .. } | Record::Submitted { .. } | Record::TaskEnd { .. }
        )),
        "{records:?}"
    );
    assert_eq!(recorder.counters.snapshot().queue_full, 0);
}

#[test]
fn a_full_inbox_drops_and_counts_each_record() {
    let Some((recorder, inbox)) = recorder(1, false) else {
        return;
    };
    // A new label: its String fills the inbox, the SpanBegin is lost.
    recorder.span(SpanKind::Barrier, true, "barrier", None);
    recorder.span(SpanKind::Barrier, false, "", None);
    assert_eq!(recorder.counters.snapshot().queue_full, 2);
    assert!(matches!(drain(&inbox).as_slice(), [Record::String { .. }]));
    recorder.span(SpanKind::Barrier, false, "", None);
    assert_eq!(drain(&inbox).len(), 1);
    assert_eq!(recorder.counters.snapshot().queue_full, 2);
}

#[test]
fn after_the_exit_drain_started_events_are_counted_as_late() {
    let Some((recorder, inbox)) = recorder(16, false) else {
        return;
    };
    recorder
        .lifecycle_state()
        .store(FINISHING, Ordering::Release);
    recorder.span(SpanKind::Wait, true, "wait", None);
    recorder.queue(true, None);
    recorder.count_without_event();
    assert!(drain(&inbox).is_empty());
    let counts = recorder.counters.snapshot();
    assert_eq!((counts.after_finish, counts.without_event), (2, 1));
}
