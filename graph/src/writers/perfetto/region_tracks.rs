//! The regions' device projections in the trace: for each region (path
//! of ITT tasks) with timed commands, a track of its own under the
//! process, `region <path> (device)`, with one slice per entry from its
//! commands' first device start to their last device end (Nsight Systems'
//! projection of a range onto the GPU), written once, at the end.
//!
//! The [`MAX_REGION_TRACKS`] regions with the most device time get a
//! track; the entries' projections kept by the model
//! ([`crate::regions::MAX_KEPT_PROJECTIONS`]) are their slices. Two
//! entries of one region whose projections overlap (the device still ran
//! one step's work when the next began) go on lanes `#2`, `#3`, ... up to
//! [`MAX_LANES_PER_REGION`]; past that a slice is moved to begin where the
//! last lane's one before it ended.
//!
//! Also here: the track of a thread's overlapped ITT tasks (an overlapped
//! task may end inside a nested task begun after it, which one track
//! cannot show), `host thread N overlapped tasks`.

use std::fmt::Write as _;
use std::io::Write;

use super::TraceWriter;
use crate::model::TaskGraph;
use crate::regions::{Projection, RegionId};

/// Regions given a projection track, those with the most device time.
pub const MAX_REGION_TRACKS: usize = 32;

/// Lanes per region for projections that overlap.
pub const MAX_LANES_PER_REGION: usize = 8;

/// The first summary-track index of the projection tracks (0 and 1 are the
/// critical path and the windows).
const FIRST_INDEX: u64 = 16;

/// The first uuid of the overlapped ITT tasks' tracks (one per thread; a
/// track that holds slices may have a large uuid).
const OVERLAPPED_TRACKS: u64 = 1 << 41;

impl<W: Write> TraceWriter<W> {
    /// The track of `thread`'s overlapped ITT tasks, `host thread N
    /// overlapped tasks` (described the first time).
    pub(super) fn overlapped_track(&mut self, thread: u32) -> u64 {
        let uuid = OVERLAPPED_TRACKS + u64::from(thread);
        if self.overlapped_threads.insert(thread) {
            let name = format!("host thread {thread} overlapped tasks");
            let d = super::descriptor(uuid, Some(super::PROCESS_TRACK), name);
            self.push(&d);
        }
        uuid
    }

    /// Writes the projection tracks of `graph`'s regions (see the module
    /// docs).
    pub fn write_region_tracks(&mut self, graph: &TaskGraph) {
        let mut regions: Vec<(RegionId, u64)> = graph
            .regions()
            .iter()
            .filter(|r| r.totals.timed > 0)
            .map(|r| (r.id, r.totals.device_ns))
            .collect();
        regions.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        regions.truncate(MAX_REGION_TRACKS);
        let projections = graph.region_tracker().projections();
        let mut index = FIRST_INDEX;
        for (region, _) in regions {
            let mut mine: Vec<Projection> = projections
                .iter()
                .filter(|p| p.region == region)
                .copied()
                .collect();
            mine.sort_by_key(|p| (p.start_ns, p.end_ns));
            // Greedy lanes: each slice on the first lane free at its start.
            let mut lanes: Vec<(u64, Vec<Projection>)> = Vec::new();
            for p in mine {
                let free = lanes.iter().position(|(end, _)| *end <= p.start_ns);
                match free {
                    Some(i) => {
                        lanes[i].0 = p.end_ns;
                        lanes[i].1.push(p);
                    }
                    None if lanes.len() < MAX_LANES_PER_REGION => lanes.push((p.end_ns, vec![p])),
                    None => {
                        let (end, lane) = lanes.last_mut().expect("full");
                        *end = (*end).max(p.end_ns);
                        lane.push(p);
                    }
                }
            }
            let path = graph.region_path(region);
            for (lane, (_, items)) in lanes.iter().enumerate() {
                let mut name = format!("region {path} (device)");
                if lane > 0 {
                    let _ = write!(name, " #{}", lane + 1);
                }
                self.write_summary_track(index, &name, items, |_, p, label| {
                    label.push_str(&path);
                    (p.start_ns, p.end_ns)
                });
                index += 1;
            }
        }
    }
}
