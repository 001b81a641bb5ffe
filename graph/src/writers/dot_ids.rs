//! The DOT ids of the nodes of `graph.dot` (`n<id>`) and `instances.dot`
//! (`i<node>_<instance>`), which the CSV files name too, and the quoting of
//! DOT strings: shared by every writer, so that no writer imports another.

use graphviz_rust::dot_structures::{Attribute, Id};

use crate::instance_graph::InstanceKey;
use crate::record::NodeId;

/// The DOT id of a node: `n<id>`.
pub fn node_dot_id(id: NodeId) -> String {
    let mut text = String::with_capacity(11);
    push_node_dot_id(&mut text, id);
    text
}

/// Appends [`node_dot_id`] to `out` (no allocation of its own).
pub fn push_node_dot_id(out: &mut String, id: NodeId) {
    out.push('n');
    out.push_str(itoa::Buffer::new().format(id));
}

/// A DOT quoted string holding `text` exactly: `\` and `"` are escaped, a
/// line break becomes `\n` (a line break in labels), tabs and other control
/// characters become spaces.
pub fn quote(text: &str) -> Id {
    let mut out = String::with_capacity(text.len() + 2);
    push_quoted(&mut out, text);
    Id::Escaped(out)
}

/// Appends `text` to `out` as [`quote`] writes it, quotes included.
pub(crate) fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    if !text
        .chars()
        .any(|c| c.is_control() || c == '\\' || c == '"')
    {
        out.push_str(text);
        out.push('"');
        return;
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("\\n");
                }
            }
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The text of a DOT id as [`quote`] wrote it: quotes removed, `\\`, `\"`
/// and `\n` decoded (other escapes are kept as written). Plain and HTML ids
/// are returned as they are.
pub fn unquote(id: &Id) -> String {
    let raw = match id {
        Id::Escaped(s) => s.as_str(),
        Id::Plain(s) | Id::Html(s) | Id::Anonymous(s) => return s.clone(),
    };
    let inner = raw
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('n') => out.push('\n'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One `key="value"` attribute.
pub(crate) fn attr(key: &str, value: impl AsRef<str>) -> Attribute {
    Attribute(Id::Plain(key.to_string()), quote(value.as_ref()))
}

/// The DOT id of a submission: `i<node>_<instance>`.
pub fn instance_dot_id((node, instance): InstanceKey) -> String {
    format!("i{node}_{instance}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for text in [
            "plain",
            "with \"quotes\"",
            "back\\slash\\",
            "two\nlines",
            "tmpl<int, Foo<\"x\">>",
            "\\n is not a newline",
            "",
            "ünïcödé ×3",
        ] {
            let id = quote(text);
            assert_eq!(unquote(&id), text, "{id:?}");
        }
    }

    #[test]
    fn quoting_escapes_what_dot_needs() {
        assert_eq!(
            quote("a\"b\\c\nd\te"),
            Id::Escaped("\"a\\\"b\\\\c\\nd e\"".into())
        );
        assert_eq!(unquote(&quote("x\r\ny\rz")), "x\ny\nz");
    }
}
