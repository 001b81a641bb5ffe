//! Shared by the `property_*` tests (each names this module with
//! `use crate::property_strategies as strategies;`): proptest strategies
//! for arbitrary record streams and limits, and a driver that applies a
//! stream the way the subscriber does (streaming every handed-out instance
//! through a [`KernelRowWriter`]) while remembering what was handed out when.
//!
//! Id spaces are tiny so that streams collide all the time: repeated
//! NodeDefined/EdgeDefined/String ids, instances named before or after their
//! node, repeated and missing instance records, late records. Strings mix the
//! runtime's real vocabulary with quotes, backslashes, line breaks, control
//! characters and unicode.

#![allow(dead_code)]

use std::collections::HashMap;

use graphviz_rust::dot_structures::{Attribute, EdgeTy, Graph, Stmt, Vertex};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use proptest::test_runner::Config as ProptestConfig;
use syclgraph_graph::dot_ids::unquote;
use syclgraph_graph::record::{
    DeviceTimes, EdgeInfo, InstanceEdge, Metadata, NodeId, NodeInfo, Record, SpanKind, TimingStatus,
};
use syclgraph_graph::{Completed, KernelRowWriter, Limits, NodeKind, Run};

/// Node ids used by records: `0..NODES`.
pub const NODES: NodeId = 6;
/// Edge ids: `0..EDGES`.
pub const EDGES: u32 = 4;
/// Instance numbers: `0..INSTANCES`.
pub const INSTANCES: u64 = 5;
/// String ids: `0..STRINGS` (labels and devices may name one more, never sent).
pub const STRINGS: u32 = 4;
/// Queue ids: `0..QUEUES`.
pub const QUEUES: u64 = 3;
/// Thread numbers: `0..THREADS`.
pub const THREADS: u32 = 3;

/// The proptest configuration of every property: proptest's default case
/// count (256, or `PROPTEST_CASES`), no regression files written into the
/// source tree (shrunk failures become plain regression tests instead).
pub fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Every timing status.
pub const STATUSES: [TimingStatus; 5] = [
    TimingStatus::Ok,
    TimingStatus::NoProfiling,
    TimingStatus::Invalid,
    TimingStatus::Lost,
    TimingStatus::Unavailable,
];

/// Strings the runtime really sends (and a few that look like them).
const WORDS: &[&str] = &[
    "",
    " ",
    "_ZTS1K",
    "_ZTSZ4mainE8MyKernel",
    "_ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_4itemILi1ELb1EEEE_",
    "_Z",
    "_ZN",
    "_Znot a symbol",
    "typeinfo name for ns::Add<float>",
    "virtual_node[0xbeef]",
    "Memory Allocation[0x10]",
    "Memory Transfer (Copy)[0xABC]",
    "Memory Deallocation[0x10]",
    "host task",
    "fill",
    "copy usm",
    "memset",
    "memcpy",
    "barrier",
    "update_host",
    "main",
    "name",
    "<unknown-file>",
    "1024",
    "1026",
    "4096",
    "0x10",
    "queue_order",
    "memory",
    "event",
];

/// node_create user_data strings.
const HINTS: &[&str] = &[
    "command_group_node",
    "memory_transfer_node",
    "memory_transfer_node::memcpy",
    "memory_transfer_node::memset",
    "memory_transfer_node::fill",
    "memory_allocation_node",
    "sub_buffer_creation_node",
    "memory_deallocation_node",
    "host_task",
    "host_acc_create_buffer_lock_node",
    "kernel_fusion_placeholder_node",
    "unknown_node",
    "",
];

/// Metadata keys the model reads (and `name`, which DOT must never emit).
const KEYS: &[&str] = &[
    "kernel_name",
    "kernel_name",
    "sycl_device_name",
    "queue_id",
    "memory_size",
    "size",
    "global_size",
    "local_size",
    "access_mode",
    "memory_object",
    "event",
    "edge_kind",
    "name",
    "label",
];

/// Characters that break naive quoting, plus anything at all.
pub fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => select(vec![
            '"', '\\', '\n', '\r', '\t', '\0', '\u{7f}', '\u{85}', '{', '}', '[', ']', '<', '>',
            ';', '=', ',', ' ', '-', '#', '&', 'é', '×', '…', '\u{202e}', '\u{feff}', '😀', 'a',
            'Z', '0', '9', '_', ':', 'n',
        ]),
        1 => any::<char>(),
    ]
}

/// Text from `tricky_char`s.
fn tricky_text(max: usize) -> impl Strategy<Value = String> {
    vec(tricky_char(), 0..max).prop_map(|c| c.into_iter().collect())
}

/// A name, hint or metadata value: a real word, tricky text, or a real
/// prefix followed by tricky text.
pub fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(WORDS).prop_map(String::from),
        2 => tricky_text(12),
        1 => (
            select(&["_Z", "_ZTS", "virtual_node[", "typeinfo name for ", "Memory Allocation["][..]),
            tricky_text(8),
        )
            .prop_map(|(prefix, rest)| format!("{prefix}{rest}")),
    ]
}

/// Metadata pairs, keys mostly the ones the model reads, possibly repeated.
pub fn metadata() -> impl Strategy<Value = Metadata> {
    let key = prop_oneof![
        4 => select(KEYS).prop_map(String::from),
        1 => tricky_string(),
    ];
    vec((key, tricky_string()), 0..4)
}

/// A host timestamp: mostly small (so ends often come before starts), now
/// and then huge (so sums saturate).
pub fn ns() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0..10_000u64,
        1 => Just(0u64),
        1 => (u64::MAX - 10_000)..=u64::MAX,
    ]
}

/// A signal's event: often 0 (host tasks; null user_data).
pub fn event() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 1..=u64::MAX]
}

/// Any timing status.
pub fn status() -> impl Strategy<Value = TimingStatus> {
    select(&STATUSES[..])
}

/// A NodeDefined payload for a node in `0..NODES`.
pub fn node_info() -> impl Strategy<Value = NodeInfo> {
    (
        (0..NODES, any::<u64>()),
        (
            prop_oneof![3 => select(HINTS).prop_map(String::from), 1 => tricky_string()],
            tricky_string(),
        ),
        (
            proptest::option::of(tricky_string()),
            proptest::option::of(prop_oneof![Just(0u32), 1..100u32, any::<u32>()]),
            proptest::option::of(0..5u32),
        ),
        metadata(),
    )
        .prop_map(
            |(
                (id, uid),
                (kind_hint, name),
                (source_file, source_line, source_column),
                metadata,
            )| {
                NodeInfo {
                    id,
                    uid,
                    kind_hint,
                    name,
                    source_file,
                    source_line,
                    source_column,
                    metadata,
                }
            },
        )
}

/// An EdgeDefined payload (self loops and undefined ends included).
pub fn edge_info() -> impl Strategy<Value = EdgeInfo> {
    (0..EDGES, any::<u64>(), 0..NODES, 0..NODES, metadata()).prop_map(
        |(id, uid, source, target, metadata)| EdgeInfo {
            id,
            uid,
            source,
            target,
            metadata,
        },
    )
}

/// Device times for an instance, any status, `end` anywhere around `start`.
pub fn device_times(node: NodeId, instance: u64) -> impl Strategy<Value = DeviceTimes> {
    (status(), ns(), ns()).prop_map(move |(status, start_ns, end_ns)| DeviceTimes {
        node,
        instance,
        status,
        start_ns,
        end_ns,
    })
}

fn span_kind() -> impl Strategy<Value = SpanKind> {
    select(&[SpanKind::Wait, SpanKind::Barrier][..])
}

/// One arbitrary record.
pub fn record() -> impl Strategy<Value = Record> {
    let node = || 0..NODES;
    let inst = || 0..INSTANCES;
    let thread = || 0..THREADS;
    Union::new_weighted(vec![
        (
            3,
            node_info()
                .prop_map(|i| Record::NodeDefined(Box::new(i)))
                .boxed(),
        ),
        (
            1,
            (node(), metadata())
                .prop_map(|(node, m)| Record::NodeMetadata {
                    node,
                    metadata: Box::new(m),
                })
                .boxed(),
        ),
        (
            2,
            edge_info()
                .prop_map(|i| Record::EdgeDefined(Box::new(i)))
                .boxed(),
        ),
        (
            2,
            (0..EDGES, inst())
                .prop_map(|(edge, instance)| Record::EdgeInstance { edge, instance })
                .boxed(),
        ),
        (
            4,
            (node(), inst(), thread(), ns())
                .prop_map(|(node, instance, thread, ns)| Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                })
                .boxed(),
        ),
        (
            2,
            (node(), inst(), thread(), ns())
                .prop_map(|(node, instance, thread, ns)| Record::TaskBegin {
                    node,
                    instance,
                    thread,
                    ns,
                })
                .boxed(),
        ),
        (
            3,
            (node(), inst(), thread(), ns())
                .prop_map(|(node, instance, thread, ns)| Record::TaskEnd {
                    node,
                    instance,
                    thread,
                    ns,
                })
                .boxed(),
        ),
        (
            1,
            (node(), inst(), thread(), ns(), 0..1_000u64)
                .prop_map(|(node, instance, thread, ns, took)| Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns: ns,
                    end_ns: ns.saturating_add(took),
                })
                .boxed(),
        ),
        (
            2,
            (node(), inst(), event())
                .prop_map(|(node, instance, event)| Record::Signal {
                    node,
                    instance,
                    event,
                })
                .boxed(),
        ),
        (
            3,
            (node(), inst())
                .prop_flat_map(|(n, i)| device_times(n, i))
                .prop_map(Record::Device)
                .boxed(),
        ),
        (
            2,
            (0..=STRINGS, tricky_string())
                .prop_map(|(id, text)| Record::String {
                    id,
                    text: text.into(),
                })
                .boxed(),
        ),
        (
            1,
            (span_kind(), 0..=STRINGS, thread(), ns())
                .prop_map(|(kind, label, thread, ns)| Record::SpanBegin {
                    kind,
                    label,
                    thread,
                    ns,
                })
                .boxed(),
        ),
        (
            1,
            (span_kind(), thread(), ns())
                .prop_map(|(kind, thread, ns)| Record::SpanEnd { kind, thread, ns })
                .boxed(),
        ),
        (
            1,
            (
                0..=STRINGS,
                thread(),
                ns(),
                select(&[0u64, 0, 7][..]),
                any::<bool>(),
            )
                .prop_map(|(label, thread, ns, id, shown)| Record::RegionBegin {
                    thread,
                    label,
                    ns,
                    id,
                    shown,
                })
                .boxed(),
        ),
        (
            1,
            (thread(), ns(), select(&[0u64, 0, 7][..]))
                .prop_map(|(thread, ns, id)| Record::RegionEnd { thread, ns, id })
                .boxed(),
        ),
        (
            1,
            (0..QUEUES, 0..=STRINGS, ns())
                .prop_map(|(queue_id, device, ns)| match ns % 3 {
                    // A device and its parent (a GPU's tile).
                    0 => Record::DeviceDefined {
                        device: 0x1000 + queue_id % 2,
                        parent: if ns % 2 == 0 { 0x2000 } else { 0 },
                    },
                    _ => Record::QueueCreated {
                        queue_id,
                        device,
                        // Two devices of one name, told apart by handle.
                        device_handle: 0x1000 + queue_id % 2,
                        ns,
                    },
                })
                .boxed(),
        ),
        (
            1,
            (0..QUEUES, ns())
                .prop_map(|(queue_id, ns)| Record::QueueDestroyed { queue_id, ns })
                .boxed(),
        ),
        (
            1,
            ((node(), inst()), 0..QUEUES)
                .prop_map(|((node, instance), queue_id)| Record::InstanceQueue {
                    node,
                    instance,
                    queue_id,
                })
                .boxed(),
        ),
        (
            1,
            (1..4u32, node())
                .prop_map(|(graph, node)| Record::GraphMember { graph, node })
                .boxed(),
        ),
        (
            1,
            (1..4u32, node(), node())
                .prop_map(|(graph, source, target)| Record::GraphEdge {
                    graph,
                    source,
                    target,
                })
                .boxed(),
        ),
        (
            1,
            (1..4u32, node(), thread(), ns(), ns())
                .prop_map(
                    |(graph, node, thread, begin_ns, end_ns)| Record::GraphFinalized {
                        graph,
                        node,
                        thread,
                        begin_ns,
                        end_ns,
                    },
                )
                .boxed(),
        ),
        (
            2,
            ((node(), inst()), (node(), inst()), any::<bool>())
                .prop_map(|(source, target, queue_order)| {
                    Record::InstanceEdge(InstanceEdge {
                        source: source.0,
                        source_instance: source.1,
                        target: target.0,
                        target_instance: target.1,
                        queue_order,
                    })
                })
                .boxed(),
        ),
    ])
}

/// The records of one run of an instance, in the runtime's order, each
/// (Submitted, TaskBegin, Signal, TaskEnd, Device) present with probability
/// 7/8, preceded half the time by a definition of its node; so that plenty
/// of instances complete.
pub fn run() -> impl Strategy<Value = Vec<Record>> {
    (
        (0..NODES, 0..INSTANCES, 0..THREADS, ns(), 0..1_000u64),
        (event(), status(), 0..5_000u64),
        proptest::option::weighted(0.5, node_info()),
        vec(0..8u8, 5),
    )
        .prop_map(
            |((node, instance, thread, t, took), (event, status, dur), define, keep)| {
                let mut out = Vec::new();
                if let Some(mut info) = define {
                    info.id = node;
                    out.push(Record::NodeDefined(Box::new(info)));
                }
                let t = t.min(u64::MAX - 10_000);
                let all = [
                    Record::Submitted {
                        node,
                        instance,
                        thread,
                        ns: t,
                    },
                    Record::TaskBegin {
                        node,
                        instance,
                        thread,
                        ns: t + 1,
                    },
                    Record::Signal {
                        node,
                        instance,
                        event,
                    },
                    Record::TaskEnd {
                        node,
                        instance,
                        thread,
                        ns: t + 1 + took,
                    },
                    Record::Device(DeviceTimes {
                        node,
                        instance,
                        status,
                        start_ns: t + 2,
                        end_ns: t.saturating_add(2 + dur),
                    }),
                ];
                out.extend(
                    all.into_iter()
                        .zip(keep)
                        .filter(|(_, k)| *k != 0)
                        .map(|(r, _)| r),
                );
                out
            },
        )
}

/// A stream: single arbitrary records and coherent runs, either in the order
/// generated or shuffled.
pub fn stream() -> impl Strategy<Value = Vec<Record>> {
    let chunk = prop_oneof![
        3 => record().prop_map(|r| vec![r]),
        1 => run(),
    ];
    let ordered = vec(chunk, 0..24).prop_map(|c| c.into_iter().flatten().collect::<Vec<_>>());
    prop_oneof![ordered.clone(), ordered.prop_shuffle()]
}

/// Limits that make the interesting things happen: tiny memory
/// (`max_instances` 0..=3), a tiny pending table (`max_pending` 0..=4; 0
/// acts as 1), or the defaults; `recent_finalised` always large enough to
/// recognise every late record of these small streams.
pub fn limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        3 => (0..=3usize, 0..=4usize).prop_map(|(max_instances, max_pending)| Limits {
            max_instances,
            max_pending,
            ..Limits::default()
        }),
        1 => (0..=3usize).prop_map(|max_instances| Limits {
            max_instances,
            ..Limits::default()
        }),
        1 => (0..=4usize).prop_map(|max_pending| Limits {
            max_pending,
            ..Limits::default()
        }),
        1 => Just(Limits::default()),
    ]
}

/// Any limits at all, including a memory of finalised keys too short to
/// recognise late records (0..=3).
pub fn any_limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        3 => limits(),
        1 => (limits(), 0..=3usize).prop_map(|(l, recent_finalised)| Limits {
            recent_finalised,
            ..l
        }),
    ]
}

/// One instance handed out by `apply` or `finish`.
#[derive(Clone, Debug)]
pub struct Handed {
    /// Index of the record whose `apply` handed it out; the stream's length
    /// for `finish`.
    pub step: usize,
    /// What was handed out.
    pub completed: Completed,
    /// Its node's kind and operation when it was handed out.
    pub kind: NodeKind,
    /// Its node's operation when it was handed out.
    pub operation: String,
    /// Whether the KernelRowWriter wrote a row for it.
    pub wrote_row: bool,
}

impl Handed {
    /// The (node, instance) key.
    pub fn key(&self) -> (NodeId, u64) {
        (self.completed.node, self.completed.instance.instance)
    }
}

/// What driving a stream produced.
pub struct Outcome {
    /// The graph after `finish`.
    pub graph: Run,
    /// Every instance handed out, in order.
    pub handed: Vec<Handed>,
    /// The streamed kernels.csv.
    pub kernels_csv: Vec<u8>,
    /// Rows the writer counted.
    pub rows: u64,
}

/// Apply `records` to a graph with `limits` the way the subscriber does:
/// after each record (and after `finish`) stream what was handed out through
/// a [`KernelRowWriter`]; `after_each(graph, step)` runs after each step.
pub fn drive_with(
    records: &[Record],
    limits: Limits,
    mut after_each: impl FnMut(&Run, usize),
) -> Outcome {
    let mut graph = Run::with_limits(limits);
    let mut rows = KernelRowWriter::new(Vec::new()).expect("header");
    let mut handed = Vec::new();
    let mut done = Vec::new();
    let mut take = |graph: &Run, step: usize, done: &mut Vec<Completed>| {
        for completed in done.drain(..) {
            let node = graph
                .node(completed.node)
                .expect("a handed-out instance's node exists");
            let wrote_row = rows.write(graph, &completed).expect("write row");
            handed.push(Handed {
                step,
                completed,
                kind: node.kind,
                operation: node.operation.clone(),
                wrote_row,
            });
        }
    };
    for (step, record) in records.iter().enumerate() {
        graph.apply(record.clone(), &mut done);
        take(&graph, step, &mut done);
        after_each(&graph, step);
    }
    graph.finish(&mut done);
    take(&graph, records.len(), &mut done);
    after_each(&graph, records.len());
    rows.flush().expect("flush");
    let count = rows.rows();
    Outcome {
        graph,
        handed,
        kernels_csv: rows.into_inner().expect("into_inner"),
        rows: count,
    }
}

/// Two drives of streams that should mean the same give the same
/// kernels.csv, handed-out instances (and their status), stats, instance
/// graph and graph files.
pub fn same_outcome(a: &Outcome, b: &Outcome) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        String::from_utf8_lossy(&a.kernels_csv),
        String::from_utf8_lossy(&b.kernels_csv)
    );
    prop_assert_eq!(a.rows, b.rows);
    let keys = |o: &Outcome| {
        o.handed
            .iter()
            .map(|h| (h.key(), h.completed.instance.status))
            .collect::<Vec<_>>()
    };
    prop_assert_eq!(keys(a), keys(b));
    prop_assert_eq!(a.graph.stats(), b.graph.stats());
    prop_assert_eq!(
        a.graph.instance_graph().edges(),
        b.graph.instance_graph().edges()
    );
    prop_assert_eq!(
        syclgraph_graph::instances_dot::render_instances_dot(&a.graph),
        syclgraph_graph::instances_dot::render_instances_dot(&b.graph)
    );
    prop_assert_eq!(
        syclgraph_graph::dot::render_dot(&a.graph),
        syclgraph_graph::dot::render_dot(&b.graph)
    );
    Ok(())
}

/// [`drive_with`] without a per-step check.
pub fn drive(records: &[Record], limits: Limits) -> Outcome {
    drive_with(records, limits, |_, _| {})
}

/// The (node, instance) key a record names, if it is an instance record.
pub fn instance_key(record: &Record) -> Option<(NodeId, u64)> {
    match *record {
        Record::Submitted { node, instance, .. }
        | Record::SubmittedAfter { node, instance, .. }
        | Record::SignalledTask { node, instance, .. }
        | Record::SubmittedTask { node, instance, .. }
        | Record::SubmissionAnnounced { node, instance, .. }
        | Record::TimedTask { node, instance, .. }
        | Record::TaskBegin { node, instance, .. }
        | Record::TaskEnd { node, instance, .. }
        | Record::Task { node, instance, .. }
        | Record::Signal { node, instance, .. }
        | Record::InstanceQueue { node, instance, .. } => Some((node, instance)),
        Record::Device(d) => Some((d.node, d.instance)),
        _ => None,
    }
}

/// What [`quote`](syclgraph_graph::dot_ids::quote) keeps of a text, as
/// [`unquote`](syclgraph_graph::dot_ids::unquote) reads it back: CR LF and lone
/// CR become LF, other control characters a space.
pub fn dot_text(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' => out.push('\n'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Attributes by key, decoded with `unquote`.
pub type Attrs = HashMap<String, String>;

/// `graph.dot` as graphviz-rust reads it back.
#[derive(Debug, Default)]
pub struct ParsedDot {
    /// Node id → attributes.
    pub nodes: HashMap<String, Attrs>,
    /// (source, target, attributes), in file order.
    pub edges: Vec<(String, String, Attrs)>,
    /// Every attribute key, of the graph, node and edge defaults, nodes and
    /// edges.
    pub keys: Vec<String>,
    /// The nodes a `rank="sink"` subgraph puts last.
    pub ranked_last: Vec<String>,
    /// SYCL graph clusters (`cluster_sycl_graph_<n>`) → the nodes they name.
    pub clusters: HashMap<String, Vec<String>>,
}

fn attrs(list: &[Attribute], keys: &mut Vec<String>) -> Attrs {
    keys.extend(list.iter().map(|a| unquote(&a.0)));
    list.iter()
        .map(|a| (unquote(&a.0), unquote(&a.1)))
        .collect()
}

/// Parse DOT text with `graphviz_rust::parse`; an error when it does not
/// parse or is not the digraph of nodes and simple edges we write.
pub fn parse_dot(text: &str) -> Result<ParsedDot, String> {
    let stmts = match graphviz_rust::parse(text)? {
        Graph::DiGraph { stmts, .. } => stmts,
        Graph::Graph { .. } => return Err("not a digraph".into()),
    };
    let mut out = ParsedDot::default();
    for s in stmts {
        match s {
            Stmt::Node(n) => {
                let a = attrs(&n.attributes, &mut out.keys);
                if out.nodes.insert(unquote(&n.id.0), a).is_some() {
                    return Err(format!("node {:?} twice", n.id.0));
                }
            }
            Stmt::Edge(e) => {
                let a = attrs(&e.attributes, &mut out.keys);
                match e.ty {
                    EdgeTy::Pair(Vertex::N(x), Vertex::N(y)) => {
                        out.edges.push((unquote(&x.0), unquote(&y.0), a))
                    }
                    other => return Err(format!("unexpected edge form {other:?}")),
                }
            }
            Stmt::GAttribute(g) => {
                use graphviz_rust::dot_structures::GraphAttributes as G;
                let (G::Graph(l) | G::Node(l) | G::Edge(l)) = g;
                attrs(&l, &mut out.keys);
            }
            Stmt::Attribute(a) => {
                attrs(&[a], &mut out.keys);
            }
            // graph.dot's subgraphs: `last` (`rank="sink"`, the commands
            // seen after every connected one) and one cluster per SYCL
            // graph, each naming nodes declared above.
            Stmt::Subgraph(sub) => {
                let sub_id = unquote(&sub.id);
                for stmt in sub.stmts {
                    match stmt {
                        Stmt::Attribute(a) => {
                            attrs(&[a], &mut out.keys);
                        }
                        Stmt::Node(n) if n.attributes.is_empty() => {
                            let id = unquote(&n.id.0);
                            if !out.nodes.contains_key(&id) {
                                return Err(format!("subgraph names undeclared node {id}"));
                            }
                            if sub_id.starts_with("cluster_sycl_graph_") {
                                out.clusters.entry(sub_id.clone()).or_default().push(id);
                            } else {
                                out.ranked_last.push(id);
                            }
                        }
                        other => return Err(format!("unexpected in subgraph: {other:?}")),
                    }
                }
            }
        }
    }
    Ok(out)
}
