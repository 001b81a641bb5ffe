//! A handed-out instance holds the first value of each of its records that
//! arrived before it was handed out (the submitting thread and time, begin,
//! end, event, device times — `ok` times ending before they start read as
//! `invalid`), the enqueueing thread of its last TaskBegin (else its first
//! TaskEnd); a Task record is a TaskBegin and a TaskEnd at once (one
//! duplicate when either was there already); repeats are counted as
//! duplicates and records after it was handed out as late, and they never
//! change what was handed out.

use crate::property_strategies as strategies;

use std::collections::HashMap;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::Instance;

/// The instance the documented merge rules make of these records.
fn merge(instance: u64, records: &[&Record]) -> (Instance, u64) {
    let mut i = Instance::new(instance);
    let mut duplicates = 0;
    let mut begin_thread = None;
    let mut end_thread = None;
    let first = |slot: &mut bool, duplicates: &mut u64| {
        if std::mem::replace(slot, true) {
            *duplicates += 1;
            false
        } else {
            true
        }
    };
    let (mut s, mut b, mut e, mut sig, mut d) = (false, false, false, false, false);
    let mut q = false;
    for r in records {
        match **r {
            Record::Submitted { thread, ns, .. } => {
                if first(&mut s, &mut duplicates) {
                    i.submit_ns = Some(ns);
                    i.thread = Some(thread);
                }
            }
            Record::TaskBegin { thread, ns, .. } => {
                begin_thread = Some(thread);
                if first(&mut b, &mut duplicates) {
                    i.begin_ns = Some(ns);
                }
            }
            Record::TaskEnd { thread, ns, .. } => {
                end_thread.get_or_insert(thread);
                if first(&mut e, &mut duplicates) {
                    i.end_ns = Some(ns);
                }
            }
            Record::Task {
                thread,
                begin_ns,
                end_ns,
                ..
            } => {
                begin_thread = Some(thread);
                end_thread.get_or_insert(thread);
                let new_begin = !std::mem::replace(&mut b, true);
                let new_end = !std::mem::replace(&mut e, true);
                if new_begin {
                    i.begin_ns = Some(begin_ns);
                }
                if new_end {
                    i.end_ns = Some(end_ns);
                }
                if !(new_begin && new_end) {
                    duplicates += 1;
                }
            }
            Record::Signal { event, .. } => {
                if first(&mut sig, &mut duplicates) {
                    i.event = Some(event);
                }
            }
            Record::InstanceQueue { queue_id, .. } => {
                if first(&mut q, &mut duplicates) {
                    i.queue = Some(queue_id);
                }
            }
            Record::Device(mut times) => {
                if first(&mut d, &mut duplicates) {
                    if times.status == TimingStatus::Ok && times.end_ns < times.start_ns {
                        times.status = TimingStatus::Invalid;
                    }
                    i.device = Some(times);
                }
            }
            _ => unreachable!(),
        }
    }
    i.task_thread = begin_thread.or(end_thread);
    (i, duplicates)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn instances_merge_their_first_records(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let mut by_key: HashMap<(u32, u64), Vec<(usize, &Record)>> = HashMap::new();
        for (step, r) in records.iter().enumerate() {
            if let Some(key) = instance_key(r) {
                by_key.entry(key).or_default().push((step, r));
            }
        }
        let mut duplicates = 0;
        let mut late = 0;
        for h in &out.handed {
            let all = &by_key[&h.key()];
            let before: Vec<&Record> = all.iter().filter(|(s, _)| *s <= h.step).map(|(_, r)| *r).collect();
            late += (all.len() - before.len()) as u64;
            let (mut expected, dups) = merge(h.key().1, &before);
            duplicates += dups;
            expected.status = h.completed.instance.status;
            // The region comes from the thread's ITT tasks, not from the
            // instance's records (graph/src/regions.rs tests it).
            expected.region = h.completed.instance.region;
            prop_assert_eq!(h.completed.instance, expected, "records {:?}", before);
            let timing = h.completed.instance.timing();
            match h.completed.instance.device {
                Some(d) => prop_assert_eq!(timing, d.status),
                None if h.completed.instance.event.is_some_and(|e| e != 0) => {
                    prop_assert_eq!(timing, TimingStatus::Lost)
                }
                None => prop_assert_eq!(timing, TimingStatus::Unavailable),
            }
        }
        let s = out.graph.stats();
        prop_assert_eq!(s.duplicate_instance_records, duplicates);
        prop_assert_eq!(s.late_records, late);
    }
}
