//! The generator behind the `property_*` tests reaches every oddity they are
//! about: every record variant and timing status, device ends before starts,
//! null events, instance edges, repeated definitions, records before their node, strings
//! with quotes, backslashes, line breaks and unicode, and graphs where
//! instances complete, are flushed, evicted, dropped or followed by late and
//! duplicate records. Without this, a property could pass vacuously.

use crate::property_strategies as strategies;

use std::collections::{HashMap, HashSet};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use strategies::*;
use syclgraph_graph::record::Record;
use syclgraph_graph::InstanceStatus;

#[test]
fn streams_reach_every_oddity() {
    let mut runner = TestRunner::deterministic();
    let streams = stream();
    let limits_s = limits();
    let mut seen: HashMap<&'static str, u32> = HashMap::new();
    let mut hit = |what: &'static str, yes: bool| {
        if yes {
            *seen.entry(what).or_default() += 1;
        }
    };
    for _ in 0..500 {
        let records = streams.new_tree(&mut runner).unwrap().current();
        let limits = limits_s.new_tree(&mut runner).unwrap().current();
        let mut defined = HashSet::new();
        let mut begun = HashSet::new();
        let mut edges = HashSet::new();
        let mut strings = HashSet::new();
        for r in &records {
            match r {
                Record::String { id, text } => {
                    hit("string", true);
                    hit("repeated string id", !strings.insert(*id));
                    hit("quote", text.contains('"'));
                    hit("backslash", text.contains('\\'));
                    hit("newline", text.contains('\n'));
                    hit("unicode", !text.is_ascii());
                }
                Record::NodeDefined(info) => {
                    hit("node defined", true);
                    hit("repeated node id", !defined.insert(info.id));
                    let all = format!("{}{}{:?}", info.kind_hint, info.name, info.metadata);
                    hit("quote in node", all.contains('"'));
                    hit("newline in node", info.name.contains('\n'));
                    hit("mangled", info.name.starts_with("_Z"));
                    hit("virtual", info.name.starts_with("virtual_node["));
                }
                Record::NodeMetadata { node, .. } => {
                    hit("node metadata", true);
                    hit("metadata for unknown node", !defined.contains(node));
                }
                Record::EdgeDefined(info) => {
                    hit("edge defined", true);
                    hit("repeated edge id", !edges.insert(info.id));
                    hit(
                        "edge before its nodes",
                        !defined.contains(&info.source) || !defined.contains(&info.target),
                    );
                }
                Record::EdgeInstance { edge, .. } => {
                    hit("edge instance", true);
                    hit("edge instance before edge", !edges.contains(edge));
                }
                // Not generated: property_combined_records and
                // property_announced_records make them from these streams'
                // Signal and Submitted records.
                Record::SignalledTask { .. }
                | Record::SubmittedAfter { .. }
                | Record::SubmittedTask { .. }
                | Record::SubmissionAnnounced { .. }
                | Record::TimedTask { .. } => {}
                Record::Submitted { node, .. } => {
                    hit("submitted", true);
                    hit("submitted before node", !defined.contains(node));
                }
                Record::TaskBegin { node, instance, .. } => {
                    hit("task begin", true);
                    begun.insert((*node, *instance));
                }
                Record::TaskEnd { node, instance, .. } => {
                    hit("task end", true);
                    hit(
                        "task end without begin",
                        !begun.contains(&(*node, *instance)),
                    );
                }
                Record::Task { node, instance, .. } => {
                    hit("task begin and end in one record", true);
                    begun.insert((*node, *instance));
                }
                Record::Signal { event, .. } => {
                    hit("signal", true);
                    hit("null event", *event == 0);
                    hit("event", *event != 0);
                }
                Record::Device(d) => {
                    hit("device", true);
                    hit(d.status.as_str(), true);
                    hit("end before start", d.end_ns < d.start_ns);
                    hit(
                        "ok end before start",
                        d.end_ns < d.start_ns && d.status.as_str() == "ok",
                    );
                }
                Record::SpanBegin { .. } => hit("span begin", true),
                Record::SpanEnd { .. } => hit("span end", true),
                Record::RegionBegin { id, .. } => {
                    hit("region begin", true);
                    hit("overlapped region begin", *id != 0);
                }
                Record::RegionEnd { .. } => hit("region end", true),
                Record::QueueCreated { .. } => hit("queue created", true),
                Record::DeviceDefined { .. } => hit("device defined", true),
                Record::QueueDestroyed { .. } => hit("queue destroyed", true),
                Record::Tracing { .. } => hit("tracing", true),
                Record::InstanceQueue { .. } => hit("instance queue", true),
                Record::GraphMember { .. } => hit("sycl graph member", true),
                Record::GraphEdge { .. } => hit("sycl graph edge", true),
                Record::GraphFinalized {
                    end_ns, begin_ns, ..
                } => {
                    hit("sycl graph finalized", true);
                    hit("sycl graph finalized backwards", end_ns < begin_ns);
                }
                Record::InstanceEdge(e) => {
                    hit("instance edge", true);
                    hit(
                        "instance self edge",
                        (e.source, e.source_instance) == (e.target, e.target_instance),
                    );
                }
            }
        }
        let out = drive(&records, limits);
        let s = out.graph.stats();
        let complete = |h: &&Handed| h.completed.instance.status == InstanceStatus::Complete;
        hit("complete", out.handed.iter().any(|h| complete(&h)));
        hit(
            "complete device command",
            out.handed.iter().any(|h| complete(&h) && h.wrote_row),
        );
        hit(
            "flushed",
            out.handed
                .iter()
                .any(|h| h.completed.instance.status == InstanceStatus::Flushed),
        );
        hit(
            "timed",
            out.handed
                .iter()
                .any(|h| h.completed.instance.device_ns().is_some()),
        );
        hit("evicted", s.pending_evicted > 0);
        hit("dropped", s.instances_dropped > 0);
        hit("late", s.late_records > 0);
        hit(
            "duplicate instance record",
            s.duplicate_instance_records > 0,
        );
        hit("unknown edge record", s.unknown_edge_records > 0);
        hit("unmatched span end", s.unmatched_span_ends > 0);
        hit("open span", s.open_spans > 0);
        hit("undefined node", s.undefined_nodes > 0);
        hit("row", out.rows > 0);
        hit("instance graph cut", out.graph.instance_graph().cut());
        hit(
            "instance graph edge",
            !out.graph.instance_graph().edges().is_empty(),
        );
    }
    let expected = [
        "string",
        "repeated string id",
        "quote",
        "backslash",
        "newline",
        "unicode",
        "node defined",
        "repeated node id",
        "quote in node",
        "newline in node",
        "mangled",
        "virtual",
        "node metadata",
        "metadata for unknown node",
        "edge defined",
        "repeated edge id",
        "edge before its nodes",
        "edge instance",
        "edge instance before edge",
        "submitted",
        "submitted before node",
        "task begin",
        "task end",
        "task end without begin",
        "task begin and end in one record",
        "signal",
        "null event",
        "event",
        "device",
        "ok",
        "no_profiling",
        "invalid",
        "lost",
        "unavailable",
        "end before start",
        "ok end before start",
        "span begin",
        "span end",
        "queue created",
        "queue destroyed",
        "instance queue",
        "sycl graph member",
        "sycl graph edge",
        "sycl graph finalized",
        "instance edge",
        "complete",
        "complete device command",
        "flushed",
        "timed",
        "evicted",
        "dropped",
        "late",
        "duplicate instance record",
        "unknown edge record",
        "unmatched span end",
        "open span",
        "undefined node",
        "row",
        "instance graph cut",
        "instance graph edge",
    ];
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|w| !seen.contains_key(w))
        .collect();
    assert!(
        missing.is_empty(),
        "never generated: {missing:?}\nseen: {seen:?}"
    );
    eprintln!("{seen:?}");
}
