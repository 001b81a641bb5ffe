//! kernels.csv written by the replay at exit ([`Replay::with_rows`], the
//! subscriber's mode without device timing) is the same bytes as the rows
//! the live model streams ([`Run::apply_to_graph`], the timed mode), for
//! any record stream and limits, and the replay's run is unchanged by the
//! rows it writes.

use crate::common;
use crate::property_strategies as strategies;

use common::streamed_rows;
use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::perfetto::TraceWriter;
use syclgraph_graph::record::Record;
use syclgraph_graph::replay::Replay;
use syclgraph_graph::{KernelRowWriter, Limits};

/// The time the replay's "now" is taken at.
const NOW_NS: u64 = 9_000_000_000;

/// kernels.csv as the replay writes it at exit, and the replay's stats.
fn replayed_rows(records: &[Record], limits: Limits, with_rows: bool) -> (Vec<u8>, String) {
    let replay = Replay::new(limits, None::<TraceWriter<Vec<u8>>>);
    let mut replay = replay.with_rows(KernelRowWriter::new(Vec::new()).unwrap());
    if !with_rows {
        replay.take_rows().unwrap();
    }
    for record in records {
        replay.apply(record.clone());
    }
    replay.finish(NOW_NS);
    let rows = match replay.take_rows().unwrap() {
        Some(rows) => rows.into_inner().unwrap(),
        None => Vec::new(),
    };
    let run = replay.into_run();
    let stats = format!(
        "{:#?} {:?}",
        run.stats(),
        run.critical_path().report().steps.len()
    );
    (rows, stats)
}

/// The replayed rows are the streamed rows, and writing them changes
/// nothing else of the replayed run.
fn same_rows(records: &[Record], limits: Limits) -> Result<(), TestCaseError> {
    let streamed = streamed_rows(records, limits);
    let (replayed, with) = replayed_rows(records, limits, true);
    prop_assert_eq!(
        String::from_utf8_lossy(&replayed),
        String::from_utf8_lossy(&streamed)
    );
    let (none, without) = replayed_rows(records, limits, false);
    prop_assert!(none.is_empty());
    prop_assert_eq!(with, without, "the rows changed the replayed run");
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn replayed_rows_are_the_streamed_rows(records in stream(), limits in limits()) {
        same_rows(&records, limits)?;
    }

    #[test]
    fn replayed_rows_are_the_streamed_rows_of_coherent_runs(records in run(), limits in any_limits()) {
        same_rows(&records, limits)?;
    }
}

/// A stream with device commands gives rows at all (the comparison above
/// is not between two empty files).
#[test]
fn the_streams_have_rows() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut with_rows, mut rows) = (0, 0);
    for _ in 0..32 {
        let records = stream().new_tree(&mut runner).unwrap().current();
        let (replayed, _) = replayed_rows(&records, Limits::default(), true);
        let lines = replayed.iter().filter(|&&b| b == b'\n').count();
        if lines > 1 {
            with_rows += 1;
            rows += lines - 1;
        }
    }
    // The deterministic runner's draws: 12 runs with rows, 36 rows in all.
    assert!(
        with_rows >= 8 && rows >= 24,
        "{with_rows} of 32 runs had rows, {rows} rows in all"
    );
}
