//! Devices told apart by identity on the real runtime
//! (`tests/programs/sub_devices.cpp`): the CPU device split into two
//! sub-devices of one name, an in-order queue on each (one source line
//! submits to both), and in `root` mode a queue on the root device as well.
//! Each device has its own `device_id`, busy share, idle gaps and Perfetto
//! track group; the oracle is the program's own profiling (durations equal
//! to the nanosecond, gaps between commands equal up to the clock
//! calibration).

use std::collections::BTreeMap;
use std::process::Command;

use syclgraph_tests::*;

type Row = BTreeMap<String, String>;

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

fn traced(mode: &str) -> Traced {
    let make = || {
        let mut cmd = runtime_command(&program("sub_devices"));
        cmd.arg(mode);
        cmd
    };
    let t = run_both(&format!("sub-devices-{mode}"), make, &[]);
    assert!(t.output.status.success(), "{}", t.stderr());
    t
}

/// The program's own kernels: queue label → [(start, end, duration)] by
/// instance (device clock).
fn own_kernels(t: &Traced) -> BTreeMap<String, Vec<(u64, u64, u64)>> {
    let lines = profiling_lines(&t.stdout());
    let mut out: BTreeMap<String, Vec<(u64, u64, u64)>> = BTreeMap::new();
    for ((label, instance), &duration) in &lines {
        if label.contains('_') {
            continue;
        }
        let at = |what: &str| lines[&(format!("{label}_{what}"), *instance)];
        let list = out.entry(label.clone()).or_default();
        assert_eq!(list.len() as u64 + 1, *instance);
        list.push((at("start"), at("end"), duration));
    }
    out
}

/// Each of the program's kernels is one kernels.csv row (same duration to
/// the nanosecond): the `device_id` of each queue's kernels.
fn device_of_queues(
    t: &Traced,
    own: &BTreeMap<String, Vec<(u64, u64, u64)>>,
) -> BTreeMap<String, String> {
    let rows = t.csv("kernels.csv");
    let mut out = BTreeMap::new();
    for (queue, kernels) in own {
        for &(_, _, duration) in kernels {
            let row: Vec<&Row> = rows
                .iter()
                .filter(|r| r["kind"] == "kernel" && r["duration_ns"] == duration.to_string())
                .collect();
            assert_eq!(row.len(), 1, "{queue} kernel of {duration} ns: {row:?}");
            let id = row[0]["device_id"].clone();
            let before = out.insert(queue.clone(), id.clone());
            assert!(
                before.as_ref().is_none_or(|b| *b == id),
                "{queue}: {before:?} and {id}"
            );
        }
    }
    out
}

/// `idle_gaps.csv`'s `total` rows of one device: cause → (count, ns).
fn device_totals(t: &Traced, resource: &str) -> BTreeMap<String, (u64, u64)> {
    t.csv("idle_gaps.csv")
        .into_iter()
        .filter(|r| r["row"] == "total" && r["scope"] == "device" && r["resource"] == resource)
        .map(|r| (r["cause"].clone(), (num(&r, "count"), num(&r, "idle_ns"))))
        .collect()
}

/// The tracks of trace.pftrace: uuid → (parent uuid, name).
fn tracks(t: &Traced) -> BTreeMap<u64, (u64, String)> {
    let code = format!(
        "from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb\n\
         t = pb.Trace(); t.ParseFromString(open({:?}, 'rb').read())\n\
         for p in t.packet:\n\
         \x20   if p.HasField('track_descriptor'):\n\
         \x20       d = p.track_descriptor\n\
         \x20       print(d.uuid, d.parent_uuid, d.name)\n",
        t.dir.join("trace.pftrace").display().to_string()
    );
    let out = python_command_c(&code).output().expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let uuid = parts.next().unwrap().parse().unwrap();
            let parent = parts.next().unwrap().parse().unwrap();
            (uuid, (parent, parts.next().unwrap_or("").to_string()))
        })
        .collect()
}

fn track_named<'t>(
    tracks: &'t BTreeMap<u64, (u64, String)>,
    name: &str,
) -> (u64, &'t (u64, String)) {
    let found: Vec<_> = tracks.iter().filter(|(_, (_, n))| n == name).collect();
    assert_eq!(found.len(), 1, "track {name:?} in {tracks:?}");
    (*found[0].0, found[0].1)
}

/// Checks one device against the program's own kernels on it and the
/// kernels.csv rows that name it; returns its `label name`.
fn check_device(t: &Traced, label: &str, own: &[(u64, u64, u64)]) -> String {
    let rows: Vec<Row> = t
        .csv("kernels.csv")
        .into_iter()
        .filter(|r| r["device_id"] == label)
        .collect();
    assert!(!rows.is_empty());
    let name = rows[0]["device"].clone();
    assert!(!name.is_empty(), "{rows:?}");
    // One queue per device here, memsets (direct-path USM, no device in
    // their metadata) included.
    assert!(
        rows.iter().all(|r| r["queue_id"] == rows[0]["queue_id"]),
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| r["kind"] == "memset"), "{rows:?}");
    let mut spans: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r["timing"] == "ok")
        .map(|r| (num(r, "start_ns"), num(r, "end_ns")))
        .collect();
    assert_eq!(spans.len(), rows.len(), "untimed rows: {rows:?}");
    spans.sort();
    // The kernels on it, in the program's order, are its rows' kernels:
    // same durations, same gaps between starts (device clock against host
    // clock: equal up to the calibration, a few µs at most).
    let mut kernels: Vec<&Row> = rows.iter().filter(|r| r["kind"] == "kernel").collect();
    kernels.sort_by_key(|r| num(r, "start_ns"));
    let durations: Vec<u64> = kernels.iter().map(|r| num(r, "duration_ns")).collect();
    assert_eq!(durations, own.iter().map(|k| k.2).collect::<Vec<_>>());
    for (pair, rows) in own.windows(2).zip(kernels.windows(2)) {
        let theirs = pair[1].0 - pair[0].0;
        let ours = num(rows[1], "start_ns") - num(rows[0], "start_ns");
        assert!(
            ours.abs_diff(theirs) < 5_000,
            "{ours} vs {theirs}: {rows:?}"
        );
    }
    // In-order queue on its own device: nothing overlaps, so busy is the
    // sum of its commands, and the idle time is what lies between them.
    let busy: u64 = spans.iter().map(|(s, e)| e - s).sum();
    let between = spans.last().unwrap().1 - spans[0].0 - busy;
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:?}");
    let resource = format!("{label} {name}");
    let totals = device_totals(t, &resource);
    assert_eq!(
        totals.get("busy"),
        Some(&(spans.len() as u64, busy)),
        "{resource}: {totals:?}"
    );
    let idle: u64 = totals
        .iter()
        .filter(|(c, _)| !["busy", "late"].contains(&c.as_str()))
        .map(|(_, (_, ns))| ns)
        .sum();
    assert_eq!(idle, between, "{resource}: {totals:?}");
    // Its own stderr line.
    let line = format!("  device {resource}: busy ");
    assert_eq!(
        t.stderr().matches(&line).count(),
        1,
        "{line:?} in:\n{}",
        t.stderr()
    );
    resource
}

/// Every device queue track sits in the track group of its rows' device,
/// and a sub-device's group under its parent's.
fn check_tracks(t: &Traced, parents: &[(&str, Option<&str>)]) {
    let tracks = tracks(t);
    let rows = t.csv("kernels.csv");
    for (label, parent) in parents {
        let row = rows.iter().find(|r| r["device_id"] == *label).unwrap();
        let display = format!("{label} {}", row["device"]);
        let (group, (group_parent, _)) = track_named(&tracks, &format!("device {display}"));
        match parent {
            Some(p) => {
                let (parent_uuid, _) =
                    track_named(&tracks, &format!("device {p} {}", row["device"]));
                assert_eq!(*group_parent, parent_uuid, "{display}: {tracks:?}");
            }
            None => assert_eq!(*group_parent, 1, "{display}: {tracks:?}"),
        }
        let queue = format!("queue {} {display}", row["queue_id"]);
        let (_, (queue_parent, _)) = track_named(&tracks, &queue);
        assert_eq!(*queue_parent, group, "{queue}: {tracks:?}");
    }
}

fn check_report(t: &Traced, resources: &[String]) {
    let out = Command::new(syclgraph_exe())
        .arg("report")
        .arg(&t.dir)
        .output()
        .expect("run syclgraph report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for r in resources {
        assert!(
            text.contains(&format!("  device {r}: busy ")),
            "{r} in:\n{text}"
        );
    }
}

#[test]
fn two_sub_devices_of_one_name_are_two_devices() {
    let t = traced("subs");
    let own = own_kernels(&t);
    let devices = device_of_queues(&t, &own);
    // Both sub-devices of the first device named (the root, their parent).
    assert_eq!(devices["sub0"], "0.0", "{devices:?}");
    assert_eq!(devices["sub1"], "0.1", "{devices:?}");
    let a = check_device(&t, "0.0", &own["sub0"]);
    let b = check_device(&t, "0.1", &own["sub1"]);
    // One name, two devices: the merged line of old is gone.
    assert_eq!(a.split_once(' ').unwrap().1, b.split_once(' ').unwrap().1);
    let merged = format!("  device {}:", a.split_once(' ').unwrap().1);
    assert!(!t.stderr().contains(&merged), "{}", t.stderr());
    check_tracks(&t, &[("0.0", Some("0")), ("0.1", Some("0"))]);
    check_report(&t, &[a, b]);
}

#[test]
fn a_root_queue_beside_its_sub_devices_queues() {
    let t = traced("root");
    let own = own_kernels(&t);
    let devices = device_of_queues(&t, &own);
    // The root device is the sub-devices' parent, labelled when they were.
    assert_eq!(devices["sub0"], "0.0", "{devices:?}");
    assert_eq!(devices["sub1"], "0.1", "{devices:?}");
    assert_eq!(devices["root"], "0", "{devices:?}");
    let resources = vec![
        check_device(&t, "0", &own["root"]),
        check_device(&t, "0.0", &own["sub0"]),
        check_device(&t, "0.1", &own["sub1"]),
    ];
    check_tracks(&t, &[("0", None), ("0.0", Some("0")), ("0.1", Some("0"))]);
    check_report(&t, &resources);
}
