//! The windows in which tracing was on (start/stop at run time), and how
//! the outputs name them: `windows.csv`, one line in the stderr summary and
//! a comment at the top of `graph.dot`.

use std::io::{self, Write};

use crate::timing::format_ns;

/// Windows kept one by one; past this many, later ones are counted and
/// their total time summed, not listed.
pub const MAX_WINDOWS: usize = 10_000;

/// One window of tracing, host CLOCK_MONOTONIC ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Tracing started.
    pub start_ns: u64,
    /// Tracing stopped (`None`: still on when the outputs were written).
    pub end_ns: Option<u64>,
}

/// The windows, from [`Record::Tracing`](crate::record::Record::Tracing) records.
#[derive(Clone, Debug, Default)]
pub struct Windows {
    list: Vec<Window>,
    /// Windows past [`MAX_WINDOWS`].
    pub not_listed: u64,
    /// Is a window past [`MAX_WINDOWS`] open, and since when.
    open_unlisted: Option<u64>,
    /// Total time of the closed windows past [`MAX_WINDOWS`], ns.
    pub not_listed_ns: u64,
}

impl Windows {
    /// Tracing went on (`on`) or off at `ns`. A start while a window is
    /// open, or a stop while none is, changes nothing.
    pub fn tracing(&mut self, on: bool, ns: u64) {
        if let Some(start) = self.open_unlisted {
            if !on {
                self.not_listed_ns += ns.saturating_sub(start);
                self.open_unlisted = None;
            }
            return;
        }
        let open = self.list.last().is_some_and(|w| w.end_ns.is_none());
        match (on, open) {
            (true, false) if self.list.len() < MAX_WINDOWS => self.list.push(Window {
                start_ns: ns,
                end_ns: None,
            }),
            (true, false) => {
                self.not_listed += 1;
                self.open_unlisted = Some(ns);
            }
            (false, true) => {
                if let Some(w) = self.list.last_mut() {
                    w.end_ns = Some(ns.max(w.start_ns));
                }
            }
            _ => {}
        }
    }

    /// The windows listed, in order.
    pub fn list(&self) -> &[Window] {
        &self.list
    }
}

/// The header of `windows.csv`.
pub const WINDOWS_COLUMNS: [&str; 5] = ["window", "start_ns", "end_ns", "duration_ns", "still_on"];

/// `windows.csv`: `window,start_ns,end_ns,duration_ns` (host
/// CLOCK_MONOTONIC); an open window's end is written as `end_ns`, the time
/// the outputs were written, and `still_on` says so.
pub fn write_windows_csv(w: &mut dyn Write, windows: &[Window], end_ns: u64) -> io::Result<()> {
    writeln!(w, "{}", WINDOWS_COLUMNS.join(","))?;
    for (i, win) in windows.iter().enumerate() {
        let end = win.end_ns.unwrap_or(end_ns.max(win.start_ns));
        writeln!(
            w,
            "{},{},{},{},{}",
            i + 1,
            win.start_ns,
            end,
            end - win.start_ns,
            u8::from(win.end_ns.is_none())
        )?;
    }
    Ok(())
}

/// One line naming the windows, for the stderr summary and a comment in
/// graph.dot: `recorded: 2 windows, 1.20 s in all: [t0+0 ns, t0+1.00 s]
/// ...` (times relative to the first start; the first few only).
pub fn windows_line(windows: &[Window], end_ns: u64) -> String {
    /// Windows spelled out; the rest are counted.
    const SHOWN: usize = 4;
    let Some(first) = windows.first() else {
        return "recorded: no window (tracing never started)".to_owned();
    };
    let t0 = first.start_ns;
    let total: u64 = windows
        .iter()
        .map(|w| w.end_ns.unwrap_or(end_ns).saturating_sub(w.start_ns))
        .sum();
    let mut line = format!(
        "recorded: {} window{}, {} in all (host CLOCK_MONOTONIC, start {} ns):",
        windows.len(),
        if windows.len() == 1 { "" } else { "s" },
        format_ns(total),
        t0
    );
    for w in windows.iter().take(SHOWN) {
        let end = match w.end_ns {
            Some(e) => format!("+{}", format_ns(e - t0)),
            None => "end".to_owned(),
        };
        line.push_str(&format!(" [+{}, {}]", format_ns(w.start_ns - t0), end));
    }
    if windows.len() > SHOWN {
        line.push_str(&format!(" … {} more", windows.len() - SHOWN));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_and_stops_pair_and_repeats_change_nothing() {
        let mut w = Windows::default();
        w.tracing(false, 5);
        w.tracing(true, 10);
        w.tracing(true, 12);
        w.tracing(false, 20);
        w.tracing(false, 25);
        w.tracing(true, 30);
        assert_eq!(
            w.list(),
            &[
                Window {
                    start_ns: 10,
                    end_ns: Some(20)
                },
                Window {
                    start_ns: 30,
                    end_ns: None
                }
            ]
        );
        let mut csv = Vec::new();
        write_windows_csv(&mut csv, w.list(), 45).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "window,start_ns,end_ns,duration_ns,still_on\n1,10,20,10,0\n2,30,45,15,1\n"
        );
        assert!(windows_line(w.list(), 45).starts_with("recorded: 2 windows, 25 ns in all"));
    }

    #[test]
    fn windows_past_the_limit_are_counted() {
        let mut w = Windows::default();
        for i in 0..(MAX_WINDOWS as u64 + 3) {
            w.tracing(true, i * 10);
            w.tracing(false, i * 10 + 4);
        }
        assert_eq!(w.list().len(), MAX_WINDOWS);
        assert_eq!(w.not_listed, 3);
        assert_eq!(w.not_listed_ns, 12);
    }
}
