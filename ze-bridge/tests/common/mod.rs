//! Helpers shared by the tests that need a DPC++ runtime.

/// Skips a test that needs what is missing, or fails it when
/// `SYCLGRAPH_REQUIRE_RUNTIME=1` (CI) says it must run.
pub fn skip(reason: &str) {
    assert!(
        std::env::var("SYCLGRAPH_REQUIRE_RUNTIME").as_deref() != Ok("1"),
        "SYCLGRAPH_REQUIRE_RUNTIME=1 but {reason} (run scripts/setup.sh)"
    );
    eprintln!("skipped: {reason}");
}
