//! `syclgraph`: the command that traces a DPC++ program with
//! libsyclgraph.so (`syclgraph run -- PROGRAM`) and prints the summary of
//! an earlier run (`syclgraph report DIR`).
//!
//! Modules, in the order a run uses them: [`cli`] (the command line),
//! [`program`] (which file runs), [`ldso`] (the libraries it loads),
//! [`locate`] (libsyclgraph.so and the runtime's libxptifw.so), [`env`]
//! (the variables set for the program), [`signals`] and [`launch`] (running
//! it), [`outputs`] (where the files went); [`launcher`] and [`job`] when
//! the program is an MPI launcher or a rank of a job; [`report`] for
//! `syclgraph report`.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod cli;
mod env;
mod environment;
mod job;
mod launch;
mod launcher;
mod ldso;
mod locate;
mod outputs;
mod program;
mod report;
mod run;
mod signals;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Action::Run(args) => run::run(args),
        cli::Action::Report(args) => report::report(
            &args.dirs,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
    };
    ExitCode::from(code)
}
