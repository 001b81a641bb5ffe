//! `syclgraph report --perfetto merged.pftrace JOB`: one Perfetto trace
//! of chosen ranks, made from each rank's own `trace.pftrace`.
//!
//! Which ranks: by default the slowest, the median and the fastest by
//! device time (the sum of the rank's `summary.csv` `total_ns`), the
//! measure the report's per-rank table ranks them by; or the ranks a
//! `--ranks` set names. Each rank's file is read one packet at a time and
//! its packets rewritten by [`crate::trace_rewrite`] (one process per rank,
//! ids unique per rank) into the merged file: memory holds one packet and
//! the ids of the tracks, not a rank's trace.
//!
//! Timestamps are left as each rank's trace has them: its host's clock
//! (the clock the trace declares). Ranks on one host line up; ranks on
//! different hosts do not, which the merge says.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use syclgraph_graph::perfetto::fields::TRACE_PACKET;
use syclgraph_graph::ranks::RankSet;

use crate::load::LoadedJob;
use crate::query::{rows, value_int, value_text};
use crate::trace_rewrite::{MergedIds, RankLabel, RankRewriter};
use crate::wire::{self, put_len_field};

/// A packet longer than this is taken for a broken file (syclgraph's are
/// under a kilobyte; Perfetto's own limit is far below).
const MAX_PACKET: u64 = 64 << 20;

/// A rank chosen for the merged trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    /// The rank.
    pub rank: u64,
    /// Why it was chosen by default (`slowest`, `median`, `fastest`).
    pub why: Vec<&'static str>,
    /// Its device time, when it has one.
    pub device_ns: Option<i64>,
}

/// The ranks with a device time, from the slowest: (rank, device time).
/// The order is the report's: device time, ties by rank.
fn ranks_by_device_time(job: &LoadedJob) -> Result<Vec<(u64, i64)>, String> {
    let (_, found) = rows(
        &job.db,
        "SELECT rank, device_ns FROM ranks WHERE device_ns IS NOT NULL ORDER BY device_ns DESC, rank",
    )?;
    Ok(found
        .iter()
        .filter_map(|r| Some((value_int(&r[0])? as u64, value_int(&r[1])?)))
        .collect())
}

/// The default choice: the slowest, the median and the fastest rank by
/// device time (fewer when fewer ranks have one). With an even number of
/// ranks the median rank is the faster of the two middle ones.
pub fn default_ranks(job: &LoadedJob) -> Result<Vec<Chosen>, String> {
    let by_time = ranks_by_device_time(job)?;
    let n = by_time.len();
    if n == 0 {
        return Err(format!(
            "{}: no rank has a device time (no summary.csv): nothing to choose the merged timeline's ranks by; name them with --ranks",
            job.dir.display()
        ));
    }
    // From the slowest: the median is the (n+1)/2-th fastest.
    let picks = [
        (0, "slowest"),
        (n - 1 - (n - 1) / 2, "median"),
        (n - 1, "fastest"),
    ];
    let mut chosen: Vec<Chosen> = Vec::new();
    for (i, why) in picks {
        let (rank, device) = by_time[i];
        match chosen.iter_mut().find(|c| c.rank == rank) {
            Some(c) => c.why.push(why),
            None => chosen.push(Chosen {
                rank,
                why: vec![why],
                device_ns: Some(device),
            }),
        }
    }
    Ok(chosen)
}

/// The ranks of `set`, by rank: every rank below the world size (or up
/// to the highest rank directory when no `meta.json` gives one). A set
/// that reaches past the job is an error that says which ranks it has.
pub fn listed_ranks(job: &LoadedJob, set: &RankSet) -> Result<Vec<Chosen>, String> {
    let (_, dirs) = rows(&job.db, "SELECT rank FROM meta ORDER BY rank")?;
    let highest_dir = dirs.iter().filter_map(|r| value_int(&r[0])).max();
    let end = match (job.coverage.size, highest_dir) {
        (Some(size), Some(dir)) => (size - 1).max(dir),
        (Some(size), None) => size - 1,
        (None, Some(dir)) => dir,
        (None, None) => -1,
    };
    if let Some(last) = set.last() {
        if i64::from(last) > end {
            return Err(format!(
                "--ranks {set}: the job {} has ranks 0-{end} only",
                job.dir.display()
            ));
        }
    }
    let device: std::collections::HashMap<u64, i64> =
        ranks_by_device_time(job)?.into_iter().collect();
    Ok((0..=end.max(-1))
        .map(|r| r as u64)
        .filter(|r| set.contains(*r as u32))
        .map(|rank| Chosen {
            rank,
            why: Vec::new(),
            device_ns: device.get(&rank).copied(),
        })
        .collect())
}

/// What the merge did with one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankMerged {
    /// The rank.
    pub rank: u64,
    /// Packets written.
    pub packets: u64,
    /// Why its trace was not merged whole (no directory, no trace,
    /// cut, unreadable packets), or `None`.
    pub problem: Option<String>,
}

/// The merged trace written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// Per chosen rank, in the order written.
    pub ranks: Vec<RankMerged>,
    /// The hosts of the chosen ranks (from `meta.json`), sorted, each once.
    pub hosts: Vec<String>,
}

impl Merged {
    /// The ranks whose trace was not merged whole.
    pub fn incomplete(&self) -> impl Iterator<Item = &RankMerged> {
        self.ranks.iter().filter(|r| r.problem.is_some())
    }
}

/// One rank's directory and host, from the `meta` table.
fn rank_places(job: &LoadedJob) -> Result<Vec<(u64, Option<String>, PathBuf)>, String> {
    let (_, found) = rows(&job.db, "SELECT rank, host, dir FROM meta")?;
    Ok(found
        .iter()
        .filter_map(|r| {
            let host = match &r[1] {
                Value::Text(h) if !h.is_empty() => Some(h.clone()),
                _ => None,
            };
            Some((
                value_int(&r[0])? as u64,
                host,
                PathBuf::from(value_text(&r[2])),
            ))
        })
        .collect())
}

/// Writes `out`: the traces of `chosen`'s ranks in that order, each
/// rank's packets rewritten. Only `out` itself failing is an error; a
/// rank whose trace is missing or broken is merged as far as it reads
/// and said in the result.
pub fn write_merged(job: &LoadedJob, chosen: &[Chosen], out: &Path) -> Result<Merged, String> {
    let places = rank_places(job)?;
    let mut hosts: Vec<String> = chosen
        .iter()
        .filter_map(|c| places.iter().find(|p| p.0 == c.rank)?.1.clone())
        .collect();
    hosts.sort();
    hosts.dedup();
    let note = (hosts.len() > 1)
        .then(|| "clock: this host's own; not aligned with ranks on other hosts".to_string());
    refuse_an_input(out, &places)?;
    let file =
        File::create(out).map_err(|e| format!("{}: cannot create it ({e})", out.display()))?;
    let mut writer = BufWriter::new(file);
    let mut ids = MergedIds::default();
    let mut merged = Vec::new();
    for (index, c) in chosen.iter().enumerate() {
        let place = places.iter().find(|p| p.0 == c.rank);
        let label = RankLabel {
            rank: c.rank,
            host: place.and_then(|p| p.1.clone()),
            note: note
                .as_ref()
                .map(|n| match place.and_then(|p| p.1.as_ref()) {
                    Some(host) => format!("{n} ({host})"),
                    None => n.clone(),
                }),
        };
        let result = match place {
            None => RankMerged {
                rank: c.rank,
                packets: 0,
                problem: Some("no rank directory".into()),
            },
            Some((_, _, dir)) => {
                let mut rewriter = RankRewriter::new(index as u64, label);
                merge_rank(
                    c.rank,
                    &dir.join("trace.pftrace"),
                    &mut rewriter,
                    &mut ids,
                    &mut writer,
                )
                .map_err(|e| format!("{}: {e}", out.display()))?
            }
        };
        merged.push(result);
    }
    writer
        .flush()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(Merged {
        ranks: merged,
        hosts,
    })
}

/// An error when `out` is a rank's own `trace.pftrace`: creating it
/// would empty the trace before it is read.
fn refuse_an_input(out: &Path, places: &[(u64, Option<String>, PathBuf)]) -> Result<(), String> {
    let Ok(out_file) = out.canonicalize() else {
        return Ok(()); // not there yet: no rank's trace
    };
    for (rank, _, dir) in places {
        if dir.join("trace.pftrace").canonicalize().ok().as_ref() == Some(&out_file) {
            return Err(format!(
                "{}: that is rank {rank}'s own trace; write the merged timeline elsewhere",
                out.display()
            ));
        }
    }
    Ok(())
}

/// Streams one rank's trace into `out`. The error is `out`'s; the rank's
/// own problems are in the result.
fn merge_rank(
    rank: u64,
    trace: &Path,
    rewriter: &mut RankRewriter,
    ids: &mut MergedIds,
    out: &mut impl Write,
) -> std::io::Result<RankMerged> {
    let mut merged = RankMerged {
        rank,
        packets: 0,
        problem: None,
    };
    let file = match File::open(trace) {
        Ok(f) => f,
        Err(e) => {
            merged.problem = Some(if e.kind() == ErrorKind::NotFound {
                "no trace.pftrace".into()
            } else {
                format!("{}: {e}", trace.display())
            });
            return Ok(merged);
        }
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut packet = Vec::new();
    let mut body = Vec::new();
    let mut framed = Vec::new();
    let mut unreadable = 0u64;
    loop {
        match next_field(&mut reader, &mut packet) {
            Ok(None) => break,
            Ok(Some(TRACE_PACKET)) => {}
            Ok(Some(_)) => {
                // Not a packet (a `Trace` has no other field): left out.
                unreadable += 1;
                continue;
            }
            Err(cut) => {
                merged.problem = Some(format!(
                    "trace.pftrace is cut after {} packets ({cut}): merged as far as it reads",
                    merged.packets + unreadable
                ));
                break;
            }
        }
        body.clear();
        if rewriter.rewrite_packet(ids, &packet, &mut body).is_err() {
            unreadable += 1;
            continue;
        }
        framed.clear();
        put_len_field(&mut framed, TRACE_PACKET, &body);
        out.write_all(&framed)?;
        merged.packets += 1;
    }
    if unreadable > 0 {
        let what = format!("{unreadable} unreadable packets left out");
        merged.problem = Some(match merged.problem.take() {
            Some(p) => format!("{p}; {what}"),
            None => what,
        });
    }
    Ok(merged)
}

/// Reads the next top-level field of a `Trace` into `bytes`: its number,
/// `None` at a clean end, an error when the file ends inside a field or
/// is not a trace.
fn next_field(reader: &mut impl Read, bytes: &mut Vec<u8>) -> Result<Option<u32>, String> {
    let Some(key) = read_varint(reader)? else {
        return Ok(None);
    };
    if key & 7 != u64::from(wire::LEN) {
        return Err(format!("a field of wire type {} at the top level", key & 7));
    }
    let len = read_varint(reader)?.ok_or("a packet's length is cut")?;
    if len > MAX_PACKET {
        return Err(format!("a packet of {len} bytes"));
    }
    bytes.clear();
    let got = reader
        .take(len)
        .read_to_end(bytes)
        .map_err(|e| e.to_string())?;
    if got as u64 != len {
        return Err(format!("its last packet has {got} of {len} bytes"));
    }
    Ok(Some((key >> 3) as u32))
}

/// A varint from `reader`; `None` at the end of the file before its first
/// byte.
fn read_varint(reader: &mut impl Read) -> Result<Option<u64>, String> {
    let mut value = 0u64;
    for i in 0..10 {
        let mut byte = [0u8];
        match reader.read_exact(&mut byte) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof && i == 0 => return Ok(None),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Err("a varint is cut".into()),
            Err(e) => return Err(e.to_string()),
        }
        value |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err("a varint is longer than 10 bytes".into())
}
