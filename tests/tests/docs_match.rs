//! The documentation names what the program writes and reads: the CSV
//! headers and column tables of the outputs reference
//! (`docs/guide/outputs.md`) are a real run's headers, the graph.dot
//! attribute tables list every attribute the demo's graph.dot has (and
//! nothing it could not have), the files it lists are the files a run
//! writes; every `SYCLGRAPH_*` variable the docs name is read by
//! `subscriber/src/config.rs` (or the scripts and tests), every one
//! config.rs reads is in the configuration page's table, and that page's
//! option table lists the options `syclgraph run --help` prints.

use std::collections::BTreeSet;

use syclgraph_tests::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// The reference of the output files.
fn outputs_page() -> String {
    read("docs/guide/outputs.md")
}

/// The options and environment variables.
fn configuration_page() -> String {
    read("docs/guide/configuration.md")
}

/// Every Markdown page of the documentation: the README, `docs/` and
/// `docs/guide/`, by path.
fn all_docs() -> Vec<(String, String)> {
    let mut docs = vec![("README.md".to_string(), read("README.md"))];
    for dir in ["docs", "docs/guide"] {
        let mut paths: Vec<_> = std::fs::read_dir(repo_root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        paths.sort();
        for path in paths {
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            docs.push((name.clone(), read(&name)));
        }
    }
    docs
}

/// The names in backticks in the first cell of each row of the table that
/// follows `marker` (the second cell when the first is a row number).
fn table_names(text: &str, marker: &str) -> BTreeSet<String> {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} is not in the page"));
    let mut names = BTreeSet::new();
    let mut in_table = false;
    for line in text[start..].lines().skip(1) {
        if !line.starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        in_table = true;
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // cells[0] is empty (before the first |).
        let first = if cells[1] == "#" || cells[1].parse::<u32>().is_ok() {
            cells[2]
        } else {
            cells[1]
        };
        for (i, part) in first.split('`').enumerate() {
            if i % 2 == 1 {
                names.insert(part.to_string());
            }
        }
    }
    assert!(!names.is_empty(), "no table after {marker:?}");
    names
}

/// The fenced-code lines of a page that start with `prefix`.
fn code_lines<'t>(text: &'t str, prefix: &str) -> Vec<&'t str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced && line.trim_start().starts_with(prefix) {
            out.push(line.trim());
        }
    }
    out
}

#[test]
fn documented_csv_headers_and_columns_are_a_real_runs() {
    let traced = pipeline_run();
    let text = outputs_page();
    for (file, first, table) in [
        ("kernels.csv", "name,kind,node_id,", "| # | Column |"),
        (
            "summary.csv",
            "node_id,kind,name,",
            "| Column | Unit | Meaning |\n|---|---|---|\n| `node_id`",
        ),
    ] {
        let real = std::fs::read_to_string(traced.dir.join(file)).unwrap();
        let header = real.lines().next().unwrap();
        let documented = code_lines(&text, first);
        assert!(!documented.is_empty(), "no {file} excerpt in the guide");
        assert_eq!(documented[0], header, "{file}'s header in the guide");
        // Each documented row has as many fields as the header.
        let columns = header.split(',').count();
        for row in &documented[1..] {
            assert_eq!(row.split(',').count(), columns, "{file} excerpt row {row}");
        }
        let in_table = table_names(&text, table);
        let real_columns: BTreeSet<String> = header.split(',').map(String::from).collect();
        assert_eq!(in_table, real_columns, "{file}'s column table");
    }
}

#[test]
fn documented_graph_attributes_are_the_ones_written() {
    let traced = pipeline_run();
    // A SYCL graph's attributes come from a program that records one.
    let sycl_graphs = run_both(
        "docs-attrs-sycl-graphs",
        || {
            let mut cmd = runtime_command(&program("sycl_graphs"));
            cmd.args(["record", "--settle-ms", "300"]);
            cmd
        },
        &[],
    );
    // The demo's one `event` edge (its host task -> memcpy `depends_on`)
    // is written only when the host task has not finished by the time the
    // memcpy is submitted: the runtime sends no edge_create for a
    // dependency on an event already complete, so on a loaded machine the
    // demo can write none. The `depends_on` chain of usm_chain reaches us
    // through the UR enqueue wait lists, which carry the event whatever
    // its state: its `event` edges are certain (tests/tests/dependencies.rs).
    let depends_on = run_traced(
        "docs-attrs-depends-on",
        runtime_command(&program("usm_chain")),
        &[],
    );
    assert!(
        depends_on.output.status.success(),
        "{}",
        depends_on.stderr()
    );
    let (graph, graph2, graph3) = (traced.graph(), sycl_graphs.graph(), depends_on.graph());
    let text = outputs_page();
    let node_doc = table_names(&text, "**Node attributes.**");
    let edge_doc = table_names(&text, "**Edge attributes.**");
    let written = |attrs: &mut dyn Iterator<Item = &Attrs>| -> BTreeSet<String> {
        attrs.flat_map(|a| a.keys().cloned()).collect()
    };
    let node_real = written(&mut graph.nodes.values().chain(graph2.nodes.values()));
    let edge_real = written(
        &mut graph
            .edges
            .iter()
            .chain(&graph2.edges)
            .chain(&graph3.edges)
            .map(|(_, _, a)| a),
    );
    // Everything written is documented.
    for key in &node_real {
        assert!(
            node_doc.contains(key),
            "node attribute {key} is not documented"
        );
    }
    for key in &edge_real {
        assert!(
            edge_doc.contains(key),
            "edge attribute {key} is not documented"
        );
    }
    // Everything documented is written by the demo, but `defined` (only on
    // a node whose definition never arrived).
    for key in &node_doc {
        if key != "defined" {
            assert!(
                node_real.contains(key),
                "documented node attribute {key} not written"
            );
        }
    }
    // An edge is marked critical only when two consecutive steps of the
    // path are linked by a data dependency: a path made of host, queue and
    // device steps alone (the demo's, on a loaded machine) marks none.
    let linked_steps = [traced, &sycl_graphs].iter().any(|t| {
        t.csv("critical_path.csv")
            .iter()
            .any(|r| r["gap_cause"] == "dependency")
    });
    for key in &edge_doc {
        if !linked_steps && matches!(key.as_str(), "critical" | "penwidth") {
            continue;
        }
        assert!(
            edge_real.contains(key),
            "documented edge attribute {key} not written"
        );
    }
    // instances.dot: every node attribute written is in its table.
    let instances = DotGraph::read(&traced.dir.join("instances.dot"));
    let inst_real = written(&mut instances.nodes.values());
    let inst_doc_attrs: BTreeSet<String> = text
        [text.find("| Where | Attribute | Meaning |").unwrap()..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .flat_map(|l| {
            let cell = l.split('|').nth(2).unwrap_or("");
            cell.split('`')
                .enumerate()
                .filter(|(i, _)| i % 2 == 1)
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(inst_doc_attrs.contains("node_id"), "{inst_doc_attrs:?}");
    for key in &inst_real {
        assert!(
            inst_doc_attrs.contains(key),
            "instances.dot attribute {key} is not documented"
        );
    }
}

#[test]
fn documented_files_are_the_files_written() {
    let traced = pipeline_run();
    let written: BTreeSet<String> = std::fs::read_dir(&traced.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let text = outputs_page();
    // The list at the start of the page, up to its first file's own section.
    let outputs = &text[..text.find("\n## ").unwrap()];
    let listed: BTreeSet<String> = outputs
        .lines()
        .filter(|l| l.starts_with("- "))
        .flat_map(|l| {
            l.split('`')
                .enumerate()
                .filter(|(i, _)| i % 2 == 1)
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        })
        .filter(|name| name.ends_with(".csv") || name.ends_with(".dot"))
        .collect();
    let files: BTreeSet<String> = written
        .iter()
        .filter(|n| n.ends_with(".csv") || n.ends_with(".dot"))
        .cloned()
        .collect();
    assert_eq!(listed, files, "the files outputs.md lists first");
    // The journal the analyses were replayed from is gone after a normal exit.
    assert!(
        text.contains("`.syclgraph-journal`") && !written.contains(".syclgraph-journal"),
        "{written:?}"
    );
    for name in &files {
        assert!(
            text.contains(&format!("\n## {name}\n")),
            "no section for {name}"
        );
    }
}

/// `SYCLGRAPH_*` names in `text`.
fn variables(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("SYCLGRAPH_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].trim_end_matches('_');
        if name.len() > "SYCLGRAPH_".len() {
            out.insert(name.to_string());
        }
        rest = &tail[end..];
    }
    out
}

#[test]
fn documented_variables_exist_and_every_setting_is_documented() {
    let config = read("subscriber/src/config.rs");
    // The settings: string literals before the unit tests.
    let code = &config[..config.find("#[cfg(test)]").unwrap_or(config.len())];
    let read_by_config: BTreeSet<String> = code
        .split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .filter(|s| s.starts_with("SYCLGRAPH_") && variables(s).len() == 1)
        .map(|s| variables(s).into_iter().next().unwrap())
        .collect();
    assert!(read_by_config.len() >= 9, "{read_by_config:?}");
    let text = configuration_page();
    let table = table_names(&text, "| Variable | Default |");
    assert_eq!(
        table, read_by_config,
        "configuration.md's variable table and config.rs"
    );
    // Any other SYCLGRAPH_ name in the docs belongs to the scripts or tests.
    let mut elsewhere = String::new();
    for dir in ["scripts", "tests/src", "tests/tests"] {
        for entry in std::fs::read_dir(repo_root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() && path.file_name().unwrap() != "docs_match.rs" {
                elsewhere.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    let known = variables(&elsewhere);
    for (doc, text) in all_docs() {
        for name in variables(&text) {
            assert!(
                read_by_config.contains(&name) || known.contains(&name),
                "{doc} names {name}, which nothing reads"
            );
        }
    }
}

#[test]
fn documented_timing_values_are_the_ones_written() {
    use syclgraph_graph::record::TimingStatus;
    let documented = table_names(&outputs_page(), "**`timing` values.**");
    let written: BTreeSet<String> = TimingStatus::ALL
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    assert_eq!(documented, written);
}

/// The long options in `text` (`--output`, `--no-device-timing`, ...).
fn long_options(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
        .filter(|w| w.len() > 2 && w.starts_with("--") && !w.starts_with("---"))
        .map(String::from)
        .collect()
}

#[test]
fn documented_run_options_are_the_ones_the_command_takes() {
    let out = std::process::Command::new(syclgraph_exe())
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success(), "syclgraph run --help: {out:?}");
    // The option lines of the help (`  -o, --output <DIR>`), not the prose.
    let help = String::from_utf8_lossy(&out.stdout);
    let option_lines: Vec<&str> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .collect();
    let mut offered = long_options(&option_lines.join("\n"));
    // clap's own, documented beside the table.
    assert!(offered.remove("--help") && offered.remove("--version"));
    let documented: BTreeSet<String> = long_options(
        &table_names(&configuration_page(), "| Option | Variable |")
            .into_iter()
            .collect::<Vec<_>>()
            .join(" "),
    );
    assert!(documented.len() >= 10, "{documented:?}");
    assert_eq!(
        documented, offered,
        "configuration.md's option table and syclgraph run --help"
    );
}
