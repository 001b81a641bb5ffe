//! `syclgraph`: the command that traces a DPC++ program with
//! libsyclgraph.so (`syclgraph run -- PROGRAM`) and prints the summary of
//! an earlier run (`syclgraph report DIR`).
//!
//! Modules, in the order a run uses them: [`cli`] (the command line),
//! [`program`] (which file runs), [`ldso`] (the libraries it loads),
//! [`locate`] (libsyclgraph.so and the runtime's libxptifw.so), [`env`]
//! (the variables set for the program), [`signals`] and [`launch`] (running
//! it), [`outputs`] (where the files went); [`launcher`] and [`job`] when
//! the program is an MPI launcher or a rank of a job; [`killed`] (a
//! program that did not finish its files: its journal converted before
//! `syclgraph run` exits); [`leftover`] (the journal a killed program
//! left, converted) and [`report`] for `syclgraph report`; [`job_report`] for an MPI job's report, `syclgraph
//! query` and `syclgraph export`; [`finished_run`] (a finished run's
//! directory, checked and replayed) and [`whatif`] for `syclgraph whatif`;
//! [`diff`] for `syclgraph diff`.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod cli;
mod diff;
mod env;
mod environment;
mod finished_run;
mod job;
mod job_report;
mod killed;
mod launch;
mod launcher;
mod ldso;
mod leftover;
mod locate;
mod outputs;
mod program;
mod report;
mod run;
mod signals;
mod whatif;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Action::Run(args) => run::run(args),
        cli::Action::Report(args) => report_action(&args),
        cli::Action::Whatif(args) => whatif::whatif(
            &args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
        cli::Action::Diff(args) => diff::diff(
            &args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
        cli::Action::Query(args) => job_report::query(
            &args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
        cli::Action::Export(args) => job_report::export(
            &args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
    };
    ExitCode::from(code)
}

/// `syclgraph report`: converts the journals killed programs left in the
/// directories ([`leftover`]), then reports them.
fn report_action(args: &cli::ReportArgs) -> u8 {
    let mut converted = true;
    for dir in &args.dirs {
        converted &= leftover::convert_leftovers(dir, &mut std::io::stderr().lock());
    }
    let code = if args.by.is_some() {
        if job_report::is_job(&args.dirs) {
            job_report::regions(
                &args.dirs[0],
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            )
        } else {
            report::regions(
                &args.dirs,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            )
        }
    } else if job_report::is_job(&args.dirs) {
        job_report::report(
            args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )
    } else if args.perfetto.is_some() {
        job_report::perfetto_needs_a_job(args, &mut std::io::stderr().lock())
    } else {
        report::report(
            &args.dirs,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )
    };
    if converted {
        code
    } else {
        code.max(2)
    }
}
