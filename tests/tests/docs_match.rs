//! The documentation names what the program writes and reads, checked
//! against the program itself (its `--help`, a real run's files), so that
//! what other changes add is checked without this file knowing it:
//! - the CSV headers and column tables of the outputs reference
//!   (`docs/guide/outputs.md`) are a real run's headers, the graph.dot
//!   attribute tables list every attribute the demo's graph.dot has (and
//!   nothing it could not have);
//! - the files outputs.md lists, the README's Outputs bullets and `syclgraph
//!   run --help`'s Outputs paragraph are the files a run writes;
//! - every `SYCLGRAPH_*` variable the docs name is read by
//!   `subscriber/src/config.rs` (or the scripts and tests), every one
//!   config.rs reads is in the configuration page's table;
//! - the configuration page's option table lists the options `syclgraph
//!   run --help` prints; every `syclgraph WORD` the README and the guide
//!   write is a subcommand `syclgraph --help` lists, given only options its
//!   own `--help` lists; each subcommand is named in the README and the
//!   guide, and each of its options in the guide;
//! - every sentence saying which signals sent to syclgraph reach the
//!   program names those of `syclgraph run --help`;
//! - the README links every page of `docs/`, the guide's index every guide
//!   page, and the README's workspace table has every workspace member.

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
        (
            "regions.csv",
            "region,name,depth,",
            "| Column | Unit | Meaning |\n|---|---|---|\n| `region`",
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
    let written = files_written();
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
                .flat_map(|(_, s)| file_names(s))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(listed, written, "the files outputs.md lists first");
    // The journal the analyses were replayed from is gone after a normal exit.
    let all: Vec<_> = std::fs::read_dir(&traced.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        text.contains("`.syclgraph-journal`") && !all.iter().any(|n| n == ".syclgraph-journal"),
        "{all:?}"
    );
    for name in written.iter().filter(|n| !n.ends_with(".txt")) {
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

/// The long options `syclgraph <command> --help` lists on its option lines
/// (`  -o, --output <DIR>`, not the prose), less clap's own `--help` and
/// `--version` (documented beside the tables).
fn offered_options(command: &str) -> BTreeSet<String> {
    let out = std::process::Command::new(syclgraph_exe())
        .args([command, "--help"])
        .output()
        .unwrap();
    assert!(out.status.success(), "syclgraph {command} --help: {out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    let option_lines: Vec<&str> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .collect();
    let mut offered = long_options(&option_lines.join("\n"));
    assert!(offered.remove("--help") && offered.remove("--version"));
    offered
}

#[test]
fn documented_run_options_are_the_ones_the_command_takes() {
    let offered = offered_options("run");
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

/// `syclgraph <args>`'s stdout (a `--help`).
fn help(args: &[&str]) -> String {
    let out = std::process::Command::new(syclgraph_exe())
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "syclgraph {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines of the `heading:` section of a clap help (`Commands:`,
/// `Options:`): from the heading to the next blank line.
fn help_section<'h>(help: &'h str, heading: &str) -> Vec<&'h str> {
    help.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// The subcommands `syclgraph --help` lists (clap's `help` left out).
fn subcommands() -> Vec<String> {
    let top = help(&["--help"]);
    let names: Vec<String> = help_section(&top, "Commands:")
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(String::from)
        .collect();
    assert!(names.len() >= 4, "{top}");
    names
}

/// One subcommand's options, from its `--help`: every spelling (`-o`,
/// `--output`) and whether it takes a value.
struct Options(Vec<(String, bool)>);

impl Options {
    fn of(subcommand: &str) -> Options {
        let text = help(&[subcommand, "--help"]);
        let mut found = Vec::new();
        for line in help_section(&text, "Options:") {
            let line = line.trim_start();
            if !line.starts_with('-') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let takes_value = words.iter().any(|w| w.starts_with('<'));
            for word in words.iter().take_while(|w| w.starts_with('-')) {
                found.push((word.trim_end_matches(',').to_string(), takes_value));
            }
        }
        assert!(found.iter().any(|(n, _)| n == "--help"), "{text}");
        Options(found)
    }

    /// Whether `name` (`--top`, `-o`) is one, and takes a value.
    fn get(&self, name: &str) -> Option<bool> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// The long options, clap's own left out.
    fn long(&self) -> BTreeSet<String> {
        self.0
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| n.starts_with("--") && n != "--help" && n != "--version")
            .collect()
    }
}

/// The code of a Markdown page: its fenced blocks' lines, its inline code
/// spans, and its headings (where the guide names commands too), each with
/// whether it is code (a heading is prose that may name a command).
fn code_of(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            out.push((line.to_string(), true));
        } else if line.starts_with('#') {
            out.push((line.trim_start_matches('#').trim().to_string(), false));
        }
    }
    // Inline spans, on the text with its fenced blocks left out.
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    out.extend(
        prose
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| (s.replace('\n', " "), true)),
    );
    out
}

/// Every `syclgraph WORD ...` in `code`: WORD, the words after it up to the
/// end of the shell command, and whether it must be a command (`syclgraph`
/// starts the code, or is a path's last part: `target/release/syclgraph
/// report`), not prose (`a syclgraph output directory`).
fn command_uses(code: &str) -> Vec<(String, Vec<String>, bool)> {
    let mut uses = Vec::new();
    let mut rest = code;
    let start = code.trim_start().trim_start_matches("$ ");
    while let Some(at) = rest.find("syclgraph ") {
        let before = rest[..at].chars().last();
        let at_start = rest[at..].len() == start.len();
        let tail = &rest[at + "syclgraph ".len()..];
        rest = tail;
        if before.is_some_and(|c| !(c.is_whitespace() || "/'\"`($".contains(c))) {
            continue;
        }
        let words: Vec<String> = tail
            .split_whitespace()
            .take_while(|w| !["|", ";", "&&", "||", "#", ">", "2>"].contains(w))
            .map(|w| w.trim_matches(|c| "[]()`,".contains(c)).to_string())
            .collect();
        if let Some((first, after)) = words.split_first() {
            if first.starts_with(|c: char| c.is_ascii_lowercase()) {
                uses.push((
                    first.clone(),
                    after.to_vec(),
                    at_start || before == Some('/'),
                ));
            }
        }
    }
    uses
}

/// The README and every page of the user guide (`docs/user-guide.md`,
/// `docs/guide/`), by path.
fn user_docs() -> Vec<(String, String)> {
    all_docs()
        .into_iter()
        .filter(|(name, _)| {
            name == "README.md" || name == "docs/user-guide.md" || name.starts_with("docs/guide/")
        })
        .collect()
}

#[test]
fn documented_commands_and_their_options_are_the_programs() {
    let names = subcommands();
    let options: Vec<(String, Options)> =
        names.iter().map(|n| (n.clone(), Options::of(n))).collect();
    let docs = user_docs();
    // The examples the helps give are held to the same (as prose: their
    // lines are not all commands).
    let mut helps = help(&["--help"]);
    for name in &names {
        helps.push_str(&help(&[name, "--help"]));
    }
    let mut named = BTreeSet::new();
    let helps_code: Vec<(String, bool)> = helps.lines().map(|l| (l.to_string(), false)).collect();
    for (doc, text) in docs
        .iter()
        .map(|(d, t)| (d.as_str(), code_of(t)))
        .chain([("--help", helps_code)])
    {
        for (code, is_code) in text {
            for (word, after, must) in command_uses(&code) {
                // In code only a subcommand's name may follow `syclgraph `;
                // a heading may say `syclgraph user guide`.
                let Some((_, opts)) = options.iter().find(|(n, _)| *n == word) else {
                    assert!(
                        !(is_code && must),
                        "{doc} names `syclgraph {word}`, which is no subcommand of {names:?}:\n{code}"
                    );
                    continue;
                };
                if doc != "--help" {
                    named.insert((doc.starts_with("docs/guide/"), word.clone()));
                }
                // The options given to it, up to the program (`run`) or
                // the end: each is one of its own.
                let mut words = after.iter();
                while let Some(w) = words.next() {
                    if w == "--" {
                        break;
                    }
                    if w.starts_with('-') && w.len() > 1 {
                        let name = w.split('=').next().unwrap();
                        let Some(takes_value) = opts.get(name) else {
                            panic!("{doc}: `syclgraph {word}` has no option {name}:\n{code}");
                        };
                        if takes_value && !w.contains('=') {
                            words.next();
                        }
                    } else if word == "run" {
                        break;
                    }
                }
            }
        }
    }
    // Each subcommand is named in the README and in the guide.
    for name in &names {
        assert!(
            named.contains(&(false, name.clone())),
            "the README never names `syclgraph {name}`"
        );
        assert!(
            named.contains(&(true, name.clone())),
            "no page of docs/guide/ names `syclgraph {name}`"
        );
    }
    // Each option of each subcommand is in the guide.
    let guide: String = docs
        .iter()
        .filter(|(n, _)| n.starts_with("docs/guide/"))
        .map(|(_, t)| t.as_str())
        .collect();
    let in_guide = long_options(&guide);
    for (name, opts) in &options {
        for option in opts.long() {
            assert!(
                in_guide.contains(&option),
                "`syclgraph {name} {option}` is in no page of docs/guide/"
            );
        }
    }
}

/// The `SIG*` names in `text`.
fn signal_names(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            w.len() > 3 && w.starts_with("SIG") && w[3..].bytes().all(|b| b.is_ascii_uppercase())
        })
        .map(String::from)
        .collect()
}

#[test]
fn documented_forwarded_signals_are_the_ones_run_passes_on() {
    let run = help(&["run", "--help"]);
    let paragraph: String = run
        .split("\n\n")
        .find(|p| p.starts_with("Signals:"))
        .expect("a Signals paragraph in syclgraph run --help")
        .to_string();
    let forwarded = signal_names(&paragraph);
    assert!(forwarded.contains("SIGTERM"), "{paragraph}");
    // Every sentence of the docs that says which signals sent to syclgraph
    // reach the program names exactly those.
    let mut said = BTreeSet::new();
    for (doc, text) in user_docs() {
        let flat = text.replace('\n', " ");
        for sentence in flat.split(". ").filter(|s| s.contains("sent to syclgraph")) {
            let names = signal_names(sentence);
            if names.is_empty() {
                continue;
            }
            assert_eq!(names, forwarded, "{doc}: {sentence}");
            said.insert(doc.clone());
        }
    }
    for doc in ["README.md", "docs/guide/configuration.md"] {
        assert!(
            said.contains(doc),
            "{doc} does not list the signals passed on"
        );
    }
}

/// The file names (`name.ext`) in `text`, of the kinds a run writes.
fn file_names(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| {
            [
                ".csv", ".dot", ".txt", ".pftrace", ".svg", ".json", ".parquet", ".journal",
            ]
            .iter()
            .any(|ext| w.len() > ext.len() && w.ends_with(ext))
        })
        .map(String::from)
        .collect()
}

/// The files a default run writes (its output directory, the hidden
/// files left out: the live journal is `run.journal` after a normal exit).
fn files_written() -> BTreeSet<String> {
    std::fs::read_dir(&pipeline_run().dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect()
}

/// The file `syclgraph run` itself adds to a run's directory: `graph.svg`,
/// rendered from graph.dot when Graphviz is installed (cli/src/outputs.rs).
const RENDERED_BY_THE_LAUNCHER: &str = "graph.svg";

#[test]
fn the_outputs_run_help_and_the_readme_list_are_the_files_a_run_writes() {
    let written = files_written();
    assert!(written.len() >= 9, "{written:?}");
    let run = help(&["run", "--help"]);
    let paragraph = run
        .split("\n\n")
        .find(|p| p.starts_with("Outputs:"))
        .expect("an Outputs paragraph in syclgraph run --help");
    let mut expected = written.clone();
    expected.insert(RENDERED_BY_THE_LAUNCHER.to_string());
    assert_eq!(
        file_names(paragraph),
        expected,
        "syclgraph run --help's Outputs paragraph"
    );
    // The README's Outputs section: one bullet per file, named first.
    let readme = read("README.md");
    let section = &readme[readme.find("\n## Outputs\n").expect("an Outputs section")..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    let bullets: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    assert_eq!(bullets, written, "the README's Outputs bullets");
}

#[test]
fn the_readme_links_every_page_and_lists_every_crate() {
    let readme = read("README.md");
    // Every page of docs/ and docs/guide/ is linked from the README, and
    // every guide page from the guide's index.
    let index = read("docs/user-guide.md");
    for (doc, _) in all_docs().iter().filter(|(n, _)| n != "README.md") {
        assert!(
            readme.contains(&format!("]({doc}")),
            "the README does not link {doc}"
        );
        if let Some(page) = doc.strip_prefix("docs/") {
            if page.starts_with("guide/") {
                assert!(
                    index.contains(&format!("]({page}")),
                    "docs/user-guide.md does not link {doc}"
                );
            }
        }
    }
    // The workspace table: every member's folder, and only folders that exist.
    let manifest = read("Cargo.toml");
    let members = &manifest[manifest.find("members = [").unwrap()..];
    let members = &members[..members.find(']').unwrap()];
    let table = table_names(&readme, "| Path | What it is |");
    for member in members
        .split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, m)| m)
    {
        let top = format!("{}/", member.split('/').next().unwrap());
        assert!(
            table.contains(&top),
            "the README's workspace table lacks {top} ({member})"
        );
    }
    for path in &table {
        assert!(
            repo_root().join(path).exists(),
            "the README's workspace table names {path}, which is not there"
        );
    }
}

#[test]
fn documented_whatif_and_diff_options_are_the_ones_they_take() {
    let page = configuration_page();
    for command in ["whatif", "diff"] {
        let offered = offered_options(command);
        let section = &page[page
            .find(&format!("## `syclgraph {command}`"))
            .unwrap_or_else(|| panic!("no section for syclgraph {command}"))..];
        let documented = long_options(
            &table_names(section, "| Option | Meaning |")
                .into_iter()
                .collect::<Vec<_>>()
                .join(" "),
        );
        assert_eq!(
            documented, offered,
            "configuration.md's syclgraph {command} table and its --help"
        );
    }
    // The what-to-optimise page shows both, and the CSV headers it names
    // are the code's.
    let guide = read("docs/guide/what-to-optimise.md");
    let what_if = syclgraph_graph::what_if_csv::WHAT_IF_COLUMNS.join(",");
    assert!(
        guide.contains(&what_if) && page.contains(&what_if),
        "{what_if}"
    );
    let diff_header = syclgraph_diff_columns();
    assert!(page.contains(&diff_header), "{diff_header}");
}

/// `syclgraph diff --csv`'s header, as the command prints it.
fn syclgraph_diff_columns() -> String {
    let dir = &shared_run("usm_chain").dir;
    let out = std::process::Command::new(syclgraph_exe())
        .arg("diff")
        .arg(dir)
        .arg(dir)
        .arg("--csv")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string()
}
