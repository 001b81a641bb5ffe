//! A snapshot of environment variables: syclgraph's own, which the program
//! inherits, read once and passed to whoever looks a variable up.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// A snapshot of environment variables.
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
}

impl Env {
    /// syclgraph's own environment, which the program inherits.
    pub fn current() -> Env {
        Env {
            vars: std::env::vars_os().collect(),
        }
    }

    /// An environment of these pairs only (for tests).
    #[cfg(test)]
    pub fn from_pairs<S: AsRef<OsStr>>(pairs: impl IntoIterator<Item = (S, S)>) -> Env {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        }
    }

    /// The value of `name`; `None` when unset or empty.
    pub fn get(&self, name: &str) -> Option<&OsString> {
        self.vars.get(OsStr::new(name)).filter(|v| !v.is_empty())
    }
}
