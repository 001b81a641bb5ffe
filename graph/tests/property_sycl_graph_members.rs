//! A SYCL graph's members come out of the runtime in whatever order it
//! schedules them (a topological order of the graph, which need not be the
//! order they were recorded in), each with the edges into it from members
//! appended before it; a nested graph's members are appended again inside
//! the graph that replayed it. Whatever the order, the model keeps the
//! graph's members and edges exactly: graph.dot draws each member once, in
//! the cluster of the first graph that has it, every edge once, and the
//! graph node's `members` names them all.

use crate::common;
use crate::property_strategies as strategies;

use std::collections::BTreeSet;

use proptest::prelude::*;
use syclgraph_graph::record::{NodeId, Record};
use syclgraph_graph::{render_dot, Run};

/// A random DAG on `n` nodes (ids 1..=n): edges only from a lower to a
/// higher id, so the ids are one topological order.
fn dag() -> impl Strategy<Value = (u32, BTreeSet<(NodeId, NodeId)>)> {
    (1u32..8).prop_flat_map(|n| {
        let pairs: Vec<(NodeId, NodeId)> = (1..=n)
            .flat_map(|a| (a + 1..=n).map(move |b| (a, b)))
            .collect();
        let len = pairs.len();
        (
            Just(n),
            proptest::collection::vec(any::<bool>(), len).prop_map(move |keep| {
                pairs
                    .iter()
                    .zip(keep)
                    .filter(|(_, k)| *k)
                    .map(|(p, _)| *p)
                    .collect()
            }),
        )
    })
}

/// The members of `n` nodes in a topological order of `edges` chosen by
/// `priority` (among the ready members, the one of lowest priority first).
fn append_order(n: u32, edges: &BTreeSet<(NodeId, NodeId)>, priority: &[u32]) -> Vec<NodeId> {
    let mut done: Vec<NodeId> = Vec::new();
    while done.len() < n as usize {
        let ready = (1..=n)
            .filter(|m| !done.contains(m))
            .filter(|m| edges.iter().all(|(a, b)| b != m || done.contains(a)))
            .min_by_key(|m| priority[*m as usize % priority.len()])
            .expect("a DAG always has a ready member");
        done.push(ready);
    }
    done
}

/// The records of graph `graph` appended in `order`: each member, then the
/// edges into it; then its finalisation (node `replay`).
fn appends(
    graph: u32,
    order: &[NodeId],
    edges: &BTreeSet<(NodeId, NodeId)>,
    replay: NodeId,
) -> Vec<Record> {
    let mut out = Vec::new();
    for &m in order {
        out.push(Record::GraphMember { graph, node: m });
        for &(a, b) in edges {
            if b == m {
                out.push(Record::GraphEdge {
                    graph,
                    source: a,
                    target: b,
                });
            }
        }
    }
    out.push(Record::GraphFinalized {
        graph,
        node: replay,
        thread: 1,
        begin_ns: 10,
        end_ns: 20,
    });
    out
}

/// The memcpy nodes 1..=n and the graph nodes `replays`, defined.
fn definitions(n: u32, replays: &[NodeId]) -> Vec<Record> {
    let mut out: Vec<Record> = (1..=n)
        .map(|id| common::node(id, "", "memcpy", Some(("g.cpp", id)), &[]))
        .collect();
    for &r in replays {
        out.push(common::node(
            r,
            "sycl_graph",
            &format!("graph {r}"),
            None,
            &[],
        ));
    }
    out
}

/// What graph.dot of `records` draws (parsed): the members named by graph
/// `graph`'s node, every `sycl_graph` edge (an edge two graphs share is
/// drawn once, in the first one's number), the nodes of each cluster; and
/// the model's edges of `graph`.
type Drawn = (
    Vec<String>,
    BTreeSet<(String, String)>,
    Vec<(String, Vec<String>)>,
    BTreeSet<(String, String)>,
);

fn drawn(records: &[Record], graph: u32, replay: NodeId) -> Drawn {
    let mut run = Run::new();
    let mut done = Vec::new();
    for r in records {
        run.apply(r.clone(), &mut done);
    }
    run.finish(&mut done);
    let dot = strategies::parse_dot(&render_dot(&run)).expect("graph.dot parses");
    let members = dot.nodes[&format!("n{replay}")]
        .get("members")
        .map(|m| m.split(' ').map(str::to_owned).collect())
        .unwrap_or_default();
    let edges = dot
        .edges
        .iter()
        .filter(|(_, _, a)| a.get("kind").map(String::as_str) == Some("sycl_graph"))
        .map(|(a, b, _)| (a.clone(), b.clone()))
        .collect();
    let mut clusters: Vec<(String, Vec<String>)> = dot.clusters.into_iter().collect();
    clusters.sort();
    let model = run
        .graph()
        .sycl_graphs()
        .iter()
        .find(|g| g.number == graph)
        .map(|g| {
            g.edges
                .iter()
                .map(|(s, t)| (format!("n{s}"), format!("n{t}")))
                .collect()
        })
        .unwrap_or_default();
    (members, edges, clusters, model)
}

fn ids(nodes: impl IntoIterator<Item = NodeId>) -> BTreeSet<String> {
    nodes.into_iter().map(|n| format!("n{n}")).collect()
}

proptest! {
    #![proptest_config(strategies::config())]

    #[test]
    fn any_append_order_keeps_the_members_and_edges(
        (n, edges) in dag(),
        p1 in proptest::collection::vec(any::<u32>(), 8),
        p2 in proptest::collection::vec(any::<u32>(), 8),
    ) {
        let replay = 100;
        let (a, b) = (append_order(n, &edges, &p1), append_order(n, &edges, &p2));
        let mut records = definitions(n, &[replay]);
        let mut other = records.clone();
        records.extend(appends(1, &a, &edges, replay));
        other.extend(appends(1, &b, &edges, replay));
        let (members_a, edges_a, clusters_a, model_a) = drawn(&records, 1, replay);
        let (members_b, edges_b, clusters_b, model_b) = drawn(&other, 1, replay);
        // Members in append order, each once; the same set either way.
        let want: Vec<String> = a.iter().map(|m| format!("n{m}")).collect();
        prop_assert_eq!(&members_a, &want);
        prop_assert_eq!(
            members_a.iter().cloned().collect::<BTreeSet<_>>(),
            members_b.iter().cloned().collect::<BTreeSet<_>>()
        );
        let want_edges: BTreeSet<(String, String)> =
            edges.iter().map(|(s, t)| (format!("n{s}"), format!("n{t}"))).collect();
        prop_assert_eq!(&edges_a, &want_edges);
        prop_assert_eq!(&edges_b, &want_edges);
        prop_assert_eq!(&model_a, &want_edges);
        prop_assert_eq!(&model_b, &want_edges);
        // One cluster, drawing every member once.
        for clusters in [&clusters_a, &clusters_b] {
            prop_assert_eq!(clusters.len(), 1);
            let drawn: Vec<&String> = clusters[0].1.iter().collect();
            prop_assert_eq!(drawn.len(), n as usize);
            prop_assert_eq!(drawn.into_iter().cloned().collect::<BTreeSet<_>>(), ids(1..=n));
        }
    }

    #[test]
    fn a_nested_graphs_members_are_the_outer_graphs_too(
        (n, edges) in dag(),
        p in proptest::collection::vec(any::<u32>(), 8),
        before in 0u32..3,
    ) {
        // The inner graph (members 1..=n) finalised first; the outer one
        // appends `before` commands of its own (ids 50..), then the inner
        // graph's in some order, each of them after the last of its own.
        let (inner, outer) = (100, 101);
        let order = append_order(n, &edges, &p);
        let own: Vec<NodeId> = (50..50 + before).collect();
        let mut records = definitions(n, &[inner, outer]);
        for &m in &own {
            records.push(common::node(m, "", "memset", Some(("g.cpp", m)), &[]));
        }
        records.extend(appends(1, &order, &edges, inner));
        let mut outer_edges = edges.clone();
        for w in own.windows(2) {
            outer_edges.insert((w[0], w[1]));
        }
        if let (Some(&last), Some(&first)) = (own.last(), order.first()) {
            outer_edges.insert((last, first));
        }
        let outer_order: Vec<NodeId> = own.iter().chain(order.iter()).copied().collect();
        records.extend(appends(2, &outer_order, &outer_edges, outer));
        let (members, drawn_edges, clusters, model) = drawn(&records, 2, outer);
        let want: Vec<String> = outer_order.iter().map(|m| format!("n{m}")).collect();
        prop_assert_eq!(members, want);
        let want_edges: BTreeSet<(String, String)> =
            outer_edges.iter().map(|(s, t)| (format!("n{s}"), format!("n{t}"))).collect();
        // The outer graph has all its edges; each drawn once (the inner
        // graph's edges are the outer graph's too).
        prop_assert_eq!(model, want_edges.clone());
        prop_assert_eq!(drawn_edges, want_edges);
        // Each node drawn once: the inner graph's in its cluster, the outer
        // graph's own in the outer cluster.
        let all: Vec<&String> = clusters.iter().flat_map(|(_, nodes)| nodes).collect();
        prop_assert_eq!(all.len(), n as usize + before as usize);
        for (name, nodes) in &clusters {
            let set: BTreeSet<String> = nodes.iter().cloned().collect();
            if name.ends_with("_1") {
                prop_assert_eq!(set, ids(1..=n));
            } else {
                prop_assert_eq!(set, ids(own.iter().copied()));
            }
        }
    }
}
