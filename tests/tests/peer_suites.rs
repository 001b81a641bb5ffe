//! Other people's test suites under syclgraph (issue 13, item 4): the quick
//! subset of the pytest suites the dpctl and dpnp wheels ship, run untraced
//! and traced by `scripts/peer-suites.sh --quick`. It stands for a user who
//! traces a Python SYCL application's own test run: every test must have the
//! same outcome traced as untraced, with no crash and no hang (per-test
//! timeouts). The full run is `scripts/peer-suites.sh --full`.

use std::process::Command;
use std::time::Duration;

use syclgraph_tests::*;

#[test]
fn dpctl_and_dpnp_suites_give_the_same_results_traced() {
    subscriber();
    venv();
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/peer-suites.sh"))
        .arg("--quick");
    let out = output_within(cmd, Duration::from_secs(600));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "peer-suites.sh failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    for suite in ["dpctl", "dpnp"] {
        let line = |run: &str| {
            stdout
                .lines()
                .find(|l| l.starts_with(&format!("peer-suites: {suite} {run}:")))
                .unwrap_or_else(|| panic!("no {suite} {run} line:\n{stdout}"))
                .split_once(':')
                .unwrap()
                .1
                .split_once(':')
                .unwrap()
                .1
                .split(" [")
                .next()
                .unwrap()
                .trim()
                .to_owned()
        };
        let (untraced, traced) = (line("untraced"), line("traced"));
        assert_eq!(traced, untraced, "{suite}");
        let passed: u32 = untraced.split(' ').next().unwrap().parse().unwrap();
        assert!(
            passed > 100,
            "{suite}: only {passed} tests passed: {untraced}"
        );
    }
}
