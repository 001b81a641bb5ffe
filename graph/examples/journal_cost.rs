//! Per-memcpy cost of the journal's codec, for profiling: appends the two
//! records a tiny memcpy reaches the collector as (`SubmissionAnnounced`,
//! then `TimedTask`, with realistic values) N times, then reads them all
//! back; `JOURNAL_COST_MODE=append` stops after the appends. Deterministic.
//!
//! ```sh
//! cargo build --release -p syclgraph-graph --example journal_cost
//! valgrind --tool=callgrind target/release/examples/journal_cost 20000
//! valgrind --tool=callgrind target/release/examples/journal_cost 40000
//! ```
//!
//! (Ir[40000] - Ir[20000]) / 20000 is the cost per memcpy's pair; with
//! `JOURNAL_COST_MODE=append` the append alone, the rest is the read-back.
//! Prints the journal's bytes per pair.

use std::hint::black_box;

use syclgraph_graph::journal::{append_record, JournalReader, JOURNAL_HEADER};
use syclgraph_graph::record::{Record, TimingStatus};

fn main() -> std::io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let append_only = std::env::var("JOURNAL_COST_MODE").is_ok_and(|m| m == "append");
    let mut journal = Vec::with_capacity(64 * n as usize + 64);
    journal.extend_from_slice(JOURNAL_HEADER);
    let t0 = 1_700_000_000_000_000u64;
    for i in 1..=n {
        let announced = Record::SubmissionAnnounced {
            node: 0,
            instance: i,
            after: (i > 1).then(|| (0, i - 1)),
        };
        append_record(black_box(&announced), &mut journal);
        let t = t0 + i * 5_000;
        let timed = Record::TimedTask {
            node: 0,
            instance: i,
            thread: 1,
            submit_ns: t,
            begin_ns: t + 120,
            end_ns: t + 900,
            event: 0x5555_5f00_0000 + (i % 64) * 0x40,
            device_status: TimingStatus::Ok,
            device_start_ns: t + 1_300,
            device_end_ns: t + 1_300 + 700 + (i * 37) % 400,
        };
        append_record(black_box(&timed), &mut journal);
    }
    black_box(&journal);
    let body = journal.len() - JOURNAL_HEADER.len();
    println!("{:.1} bytes per pair", body as f64 / n as f64);
    if append_only {
        return Ok(());
    }
    let mut records = 0u64;
    for record in JournalReader::new(&journal[..])? {
        black_box(record?);
        records += 1;
    }
    assert_eq!(records, 2 * n);
    Ok(())
}
