//! `syclgraph whatif DIR [--speedup LOCATION=FACTOR]... [--csv]`: what
//! making commands faster would save, predicted by replaying the run's
//! `run.journal` with their device durations divided by the factors (the
//! model: [`syclgraph_graph::what_if`]). All the `--speedup`s are one
//! scenario; without any, each of the five nodes with the most device time
//! is made twice as fast on its own (the summary's "what would pay" table),
//! a scenario each.

use std::io::Write;

use syclgraph_graph::what_if::{
    nodes_at, predict, what_would_pay, Prediction, Scenario, PAYOFF_FACTOR, PAYOFF_NODES,
};
use syclgraph_graph::what_if_csv::write_what_if_csv;
use syclgraph_graph::what_if_text::{node_label, payoff_table, scenario_text};
use syclgraph_graph::Run;

use crate::cli::WhatIfArgs;
use crate::finished_run::replay_run;

/// Runs `syclgraph whatif`; the answer on `out`, one `syclgraph:` line on
/// `err` for bad input. Returns the exit code: 0, or 2 on bad input.
pub fn whatif(args: &WhatIfArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match answer(args, out, err) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "syclgraph: whatif: {e}");
            2
        }
    }
}

fn answer(args: &WhatIfArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), String> {
    let (run, note) = replay_run(&args.dir)?;
    if let Some(note) = note {
        let _ = writeln!(err, "syclgraph: whatif: {note}");
    }
    let plan = run
        .schedule()
        .plan()
        .ok_or("the run's schedule was not kept whole")?;
    let written = if args.speedups.is_empty() {
        let rows = what_would_pay(&run, &plan, PAYOFF_NODES, PAYOFF_FACTOR);
        if rows.is_empty() {
            return Err(format!(
                "{}: no device command was timed in this run: nothing to speed up",
                args.dir.display()
            ));
        }
        if args.csv {
            let answers: Vec<(Scenario, Prediction)> = rows
                .iter()
                .map(|row| {
                    let mut s = Scenario::new();
                    s.speed_up(row.node, row.factor);
                    (s, row.prediction)
                })
                .collect();
            write_what_if_csv(&mut *out, &run, &answers)
        } else {
            out.write_all(payoff_table(&run, &rows).as_bytes())
        }
    } else {
        let scenario = scenario_of(args, &run)?;
        let prediction = predict(&plan, &scenario);
        if args.csv {
            write_what_if_csv(&mut *out, &run, &[(scenario, prediction)])
        } else {
            out.write_all(scenario_text(&run, &scenario, &prediction).as_bytes())
        }
    };
    written.map_err(|e| format!("cannot write the answer: {e}"))
}

/// The one scenario of the `--speedup`s: every node each location names
/// that had device time, at its factor.
fn scenario_of(args: &WhatIfArgs, run: &Run) -> Result<Scenario, String> {
    let mut scenario = Scenario::new();
    for (location, factor) in &args.speedups {
        let nodes = nodes_at(run, location);
        if nodes.is_empty() {
            return Err(format!(
                "{location}: no node of {} is there (a node id such as n3, FILE:LINE or an operation name: see graph.dot or kernels.csv)",
                args.dir.display()
            ));
        }
        let timed: Vec<_> = nodes
            .iter()
            .copied()
            .filter(|&n| run.node(n).is_some_and(|n| n.times.device.count > 0))
            .collect();
        if timed.is_empty() {
            let names: Vec<String> = nodes.iter().map(|&n| node_label(run, n)).collect();
            return Err(format!(
                "{location}: {} had no device time in this run: nothing to speed up",
                names.join(", ")
            ));
        }
        for node in timed {
            scenario.speed_up(node, *factor);
        }
    }
    Ok(scenario)
}
