//! The what-if replay over random schedules: with nothing changed it gives
//! back the recorded span to the nanosecond (the span the critical path
//! measured on its own), whatever the records; on coherent runs (the
//! golden generator's: dependencies, two in-order queues and an
//! out-of-order one, waits, host tasks, untimed commands, late device
//! records) a speedup never lengthens the span, a larger factor never
//! saves less, and naming no node changes nothing.

use proptest::prelude::*;
use syclgraph_graph::what_if::{predict, top_device_nodes, Scenario};
use syclgraph_graph::{Limits, Record, Run};

use crate::golden_outputs::coherent;
use crate::property_strategies as strategies;

/// `records` applied to a run that keeps its whole schedule, finished.
fn finished(records: Vec<Record>, limits: Limits) -> Run {
    let mut run = Run::with_limits(limits);
    run.set_schedule_limit(usize::MAX);
    let mut done = run.apply_all(records);
    run.finish(&mut done);
    run
}

proptest! {
    #![proptest_config(strategies::config())]

    #[test]
    fn nothing_changed_gives_back_the_recorded_span(
        records in strategies::stream(),
        limits in strategies::limits(),
    ) {
        let run = finished(records, limits);
        let plan = run.schedule().plan().expect("the whole schedule");
        let path = run.critical_path().report();
        prop_assert_eq!(plan.recorded().span_ns, path.span_ns());
        prop_assert_eq!(plan.recorded().first_ns, path.first_ns);
        prop_assert_eq!(plan.recorded().last_end_ns, path.end_ns);
        let p = predict(&plan, &Scenario::new());
        prop_assert_eq!(p.predicted_span_ns, p.span_ns);
        // Every instance's and every wait's time, too.
        let times = plan.replay_times(|_| 1.0);
        for (i, &end) in times.ends.iter().enumerate() {
            prop_assert_eq!(end, plan.recorded_end(i));
        }
        for (w, &end) in times.wait_ends.iter().enumerate() {
            prop_assert_eq!(end, plan.recorded_wait_end(w));
        }
        // Speeding up a node by 1 is no change either.
        let mut same = Scenario::new();
        for node in run.nodes() {
            same.speed_up(node.id, 1.0);
        }
        prop_assert_eq!(predict(&plan, &same).predicted_span_ns, p.span_ns);
    }

    #[test]
    fn on_coherent_runs_faster_never_costs_time(
        seed in any::<u64>(),
        nodes in 1u32..12,
        submissions in 1u64..160,
    ) {
        let run = finished(coherent(seed, nodes, submissions), Limits::default());
        let plan = run.schedule().plan().expect("the whole schedule");
        let path = run.critical_path().report();
        prop_assert_eq!(plan.recorded().span_ns, path.span_ns());
        prop_assert_eq!(plan.cycles_broken(), 0);
        let span = plan.recorded().span_ns;
        let mut all = Scenario::new();
        for node in top_device_nodes(&run, usize::MAX) {
            let mut last = span;
            for factor in [1.5, 2.0, 4.0, f64::INFINITY] {
                let mut one = Scenario::new();
                one.speed_up(node, factor);
                let p = predict(&plan, &one);
                prop_assert!(p.predicted_span_ns <= last, "n{node} {factor}x: {p:?} after {last}");
                last = p.predicted_span_ns;
            }
            all.speed_up(node, f64::INFINITY);
        }
        prop_assert!(predict(&plan, &all).predicted_span_ns <= span);
    }
}

/// The golden cases' runs, large: the replay is exact at every size.
#[test]
fn large_coherent_runs_are_given_back_exactly() {
    for (seed, nodes, submissions) in [(1, 40, 5_000), (7, 3, 3_000), (99, 200, 8_000)] {
        let run = finished(coherent(seed, nodes, submissions), Limits::default());
        let plan = run.schedule().plan().expect("the whole schedule");
        assert_eq!(plan.instances() as u64, submissions);
        assert!(plan.waits() > 0);
        assert_eq!(
            plan.recorded().span_ns,
            run.critical_path().report().span_ns()
        );
    }
}
