//! The files a user opens: graph.dot renders with graphviz and loads with
//! pydot and networkx, every node/edge carries the documented attributes,
//! and nothing half-written is left behind.

use std::process::Command;

use syclgraph_tests::*;

fn pipeline() -> Traced {
    run_both("pipeline", || runtime_command(&program("pipeline")), &[])
}

#[test]
fn graph_dot_has_the_documented_attributes() {
    let traced = pipeline();
    let graph = traced.graph();
    assert!(graph.nodes.len() >= 5);
    for (id, attrs) in &graph.nodes {
        for key in ["kind", "operation", "count", "label"] {
            assert!(attrs.contains_key(key), "{id} lacks {key}: {attrs:?}");
        }
        assert_eq!(
            attrs.contains_key("file"),
            attrs.contains_key("line"),
            "{attrs:?}"
        );
        assert!(!attrs.contains_key("name"));
        assert!(
            !attrs.contains_key("defined"),
            "{id} was never defined: {attrs:?}"
        );
    }
    for (a, b, attrs) in &graph.edges {
        for key in ["kind", "count", "label"] {
            assert!(attrs.contains_key(key), "{a}->{b} lacks {key}");
        }
    }
    // The example's kernels are labelled with their own source lines.
    const SRC: &str = "examples/pipeline.cpp";
    let saxpy = node_at(&graph, SRC, tag_line(SRC, "saxpy")).1;
    assert_eq!(saxpy["kind"], "kernel");
    assert_eq!(saxpy["count"], "3");
    assert!(saxpy["label"].contains("pipeline.cpp:"), "{saxpy:?}");
    let leftovers: Vec<_> = std::fs::read_dir(&traced.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn graph_dot_renders_with_graphviz_and_loads_with_pydot_and_networkx() {
    let traced = pipeline();
    let dot = traced.dir.join("graph.dot");
    let svg = Command::new("dot")
        .arg("-Tsvg")
        .arg(&dot)
        .output()
        .expect("graphviz `dot` is installed by scripts/setup.sh");
    assert!(
        svg.status.success(),
        "{}",
        String::from_utf8_lossy(&svg.stderr)
    );
    let check = r#"
import sys, pydot, networkx
graphs = pydot.graph_from_dot_file(sys.argv[1])
assert len(graphs) == 1
g = networkx.drawing.nx_pydot.read_dot(sys.argv[1])
kinds = {d.get("kind", "").strip('"') for _, d in g.nodes(data=True)}
assert "kernel" in kinds, kinds
print(g.number_of_nodes(), g.number_of_edges())
"#;
    let out = runtime_command(&venv().join("bin/python"))
        .arg("-c")
        .arg(check)
        .arg(&dot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let graph = traced.graph();
    let counts = String::from_utf8_lossy(&out.stdout);
    let mut parts = counts.split_whitespace();
    assert_eq!(parts.next().unwrap(), graph.nodes.len().to_string());
    assert_eq!(parts.next().unwrap(), graph.edges.len().to_string());
}
