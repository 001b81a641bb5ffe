//! The one way syclgraph speaks to the user while the program runs: a
//! line on stderr, prefixed with `syclgraph:`.

/// Prints one line on stderr, prefixed with `syclgraph:`.
pub fn warn(message: impl std::fmt::Display) {
    eprintln!("syclgraph: {message}");
}
