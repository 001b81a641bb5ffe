//! One distinct command of the task graph: [`Node`], what the runtime said
//! about it, and the aggregates of its instances ([`NodeTimes`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::duration_samples::DurationSamples;
use crate::instance::Instance;
use crate::kind::{classify, NodeKind};
use crate::record::{Metadata, NodeId, NodeInfo};
use crate::timing::{DurationStats, UntimedCounts};

/// The metadata key for the device name.
pub const DEVICE_NAME_KEY: &str = "sycl_device_name";
/// The metadata key for the device's identity (the runtime's device handle).
pub const DEVICE_HANDLE_KEY: &str = "sycl_device";
/// The metadata key for the queue id.
pub const QUEUE_ID_KEY: &str = "queue_id";
/// Metadata keys read for a command's byte count, first found wins.
pub const BYTES_KEYS: [&str; 2] = ["memory_size", "size"];
/// The metadata key read for a kernel's global size.
pub const GLOBAL_SIZE_KEY: &str = "global_size";
/// The metadata key read for a kernel's local size.
pub const LOCAL_SIZE_KEY: &str = "local_size";

/// What the runtime calls an unknown source file.
const UNKNOWN_FILE: &str = "<unknown-file>";

/// The next [`Node::revision`]; shared by every graph in the process, so a
/// revision never stands for two different node texts.
static NEXT_REVISION: AtomicU64 = AtomicU64::new(1);

/// A node's revision number. It is not part of the node's value: two nodes
/// that differ only in their revision are equal.
#[derive(Clone, Copy, Debug)]
struct Revision(u64);

impl Revision {
    fn next() -> Revision {
        Revision(NEXT_REVISION.fetch_add(1, Ordering::Relaxed))
    }
}

impl PartialEq for Revision {
    fn eq(&self, _: &Revision) -> bool {
        true
    }
}

impl Eq for Revision {}

/// Aggregates over every finalised instance of a node, exact even when
/// instances are dropped from memory, in bounded memory: the durations kept
/// for percentiles are every one up to
/// [`EXACT_LIMIT`](crate::duration_samples::EXACT_LIMIT), a histogram past
/// it ([`DurationSamples`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTimes {
    /// Instances finalised (complete or flushed).
    pub finalised: u64,
    /// Device durations of the instances timed `ok` (device commands only).
    pub device: DurationStats,
    /// Device commands that could not be timed, by reason.
    pub untimed: UntimedCounts,
    /// Host task_begin..task_end durations (every kind).
    pub host: DurationStats,
    /// The device duration of instance 1 (the first submission: for a
    /// kernel, usually the one that pays for JIT compilation and first
    /// touches), when it was timed `ok`. Also counted in `device`.
    pub first_device_ns: Option<u64>,
    /// The `ok` device durations for percentiles: every one, in arrival
    /// order, up to [`EXACT_LIMIT`](crate::duration_samples::EXACT_LIMIT),
    /// then a histogram (at most 32 KiB or so either way).
    durations: DurationSamples,
}

impl NodeTimes {
    /// The `ok` device durations kept for percentiles.
    pub fn durations(&self) -> &DurationSamples {
        &self.durations
    }

    /// Account for one finalised instance (inlined into the model's
    /// finalising, its one caller).
    #[inline(always)]
    pub(crate) fn add(&mut self, kind: NodeKind, instance: &Instance) {
        self.finalised += 1;
        if let Some(ns) = instance.host_ns() {
            self.host.add(ns);
        }
        if kind.is_device_command() {
            match instance.device_ns() {
                Some(ns) => {
                    self.device.add(ns);
                    self.durations.add(ns);
                    if instance.instance == 1 {
                        self.first_device_ns = Some(ns);
                    }
                }
                None => self.untimed.add(instance.timing()),
            }
        }
    }
}

/// One distinct node (code location + payload), as first described by the
/// runtime, with its instances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Our id.
    pub id: NodeId,
    /// Whether a NodeDefined arrived; `false` for a node only named by other
    /// records (an edge end, an instance) so far.
    pub defined: bool,
    /// The runtime's unique_id.
    pub uid: Option<u64>,
    /// The node_create user_data string.
    pub kind_hint: String,
    /// The payload name as sent.
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// What it does: demangled kernel name, operation (`memcpy`, `fill`,
    /// `host task`, ...) or command name.
    pub operation: String,
    /// The submitting function, when the runtime named it.
    pub function: Option<String>,
    /// Device name (metadata `sycl_device_name`).
    pub device: Option<String>,
    /// Device identity (metadata `sycl_device`: the runtime's device handle).
    pub device_handle: Option<u64>,
    /// The queue its metadata names (`queue_id`), parsed.
    queue_id: Option<u64>,
    /// Every distinct queue id (metadata `queue_id`) sent for it, in order.
    pub queue_ids: Vec<String>,
    /// Source file, when known.
    pub source_file: Option<String>,
    /// Source line, when known.
    pub source_line: Option<u32>,
    /// Source column, when known.
    pub source_column: Option<u32>,
    /// Every metadata pair, in arrival order (first value of a key kept).
    pub metadata: Metadata,
    /// Submissions seen (Submitted records): the instance count.
    pub submissions: u64,
    /// The finalised instances kept in memory (bounded by
    /// [`Limits::max_instances`](crate::Limits::max_instances) over the graph).
    pub instances: Vec<Instance>,
    /// Aggregates over every finalised instance.
    pub times: NodeTimes,
    /// Changes whenever the graph changes what the node says (see
    /// [`Node::revision`]).
    revision: Revision,
}

impl Node {
    /// A node known only by its id so far.
    pub(crate) fn placeholder(id: NodeId) -> Node {
        Node {
            id,
            defined: false,
            uid: None,
            kind_hint: String::new(),
            name: String::new(),
            kind: NodeKind::Other,
            operation: format!("undefined node {id}"),
            function: None,
            device: None,
            device_handle: None,
            queue_id: None,
            queue_ids: Vec::new(),
            source_file: None,
            source_line: None,
            source_column: None,
            metadata: Vec::new(),
            submissions: 0,
            instances: Vec::new(),
            times: NodeTimes::default(),
            revision: Revision::next(),
        }
    }

    /// A number that changes (to one no other node in the process had)
    /// whenever the graph defines the node or merges metadata into it, so a
    /// writer can cache text derived from the node's strings and metadata by
    /// (id, revision). Clones share it; a node changed by hand through its
    /// public fields keeps it.
    pub fn revision(&self) -> u64 {
        self.revision.0
    }

    /// Apply a NodeDefined. The first definition sets everything; a later one
    /// only fills what is still unknown and merges metadata.
    pub(crate) fn define(&mut self, info: NodeInfo) {
        let first = !self.defined;
        self.defined = true;
        if first {
            self.uid = Some(info.uid);
            self.kind_hint = info.kind_hint;
            self.name = info.name;
        } else if self.uid.is_none() {
            self.uid = Some(info.uid);
        }
        if self.source_file.is_none() {
            self.source_file = info
                .source_file
                .filter(|f| !f.trim().is_empty() && f.trim() != UNKNOWN_FILE);
        }
        if self.source_line.is_none() {
            self.source_line = info.source_line.filter(|&l| l != 0);
        }
        if self.source_column.is_none() {
            self.source_column = info.source_column.filter(|&c| c != 0);
        }
        self.merge_metadata(info.metadata);
    }

    /// Merge metadata (existing keys keep their value) and derive the kind,
    /// operation, device and queues again.
    pub(crate) fn merge_metadata(&mut self, metadata: Metadata) {
        self.revision = Revision::next();
        for (k, v) in &metadata {
            if k == QUEUE_ID_KEY && !self.queue_ids.iter().any(|q| q == v) {
                self.queue_ids.push(v.clone());
            }
        }
        merge_pairs(&mut self.metadata, metadata);
        self.derive();
    }

    /// Recompute everything that comes from the strings.
    fn derive(&mut self) {
        if !self.defined {
            return;
        }
        let c = classify(&self.kind_hint, &self.name, &self.metadata);
        self.kind = c.kind;
        self.operation = c.operation;
        self.function = c.function;
        self.device = self.metadata_value(DEVICE_NAME_KEY).map(str::to_string);
        self.device_handle = self
            .metadata_value(DEVICE_HANDLE_KEY)
            .and_then(parse_handle)
            .filter(|&h| h != 0);
        self.queue_id = self
            .metadata_value(QUEUE_ID_KEY)
            .and_then(|q| q.parse().ok());
    }

    /// The queue its metadata names (`queue_id`).
    pub fn queue_id(&self) -> Option<u64> {
        self.queue_id
    }

    /// The value of a metadata key.
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The byte count of a memory command (metadata `memory_size` or `size`).
    pub fn bytes(&self) -> Option<&str> {
        BYTES_KEYS.iter().find_map(|k| self.metadata_value(k))
    }

    /// `file:line` (or just `file`) when the source file is known.
    pub fn location(&self) -> Option<String> {
        let file = self.source_file.as_deref()?;
        Some(match self.source_line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        })
    }

    /// The queue ids joined by `;` (usually just one).
    pub fn queue_text(&self) -> Option<String> {
        (!self.queue_ids.is_empty()).then(|| self.queue_ids.join(";"))
    }
}

/// A handle as metadata writes it: decimal, or `0x` hex.
pub fn parse_handle(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Append the pairs whose key is not present yet (first value wins; a key
/// repeated inside `new` keeps its first value too).
pub(crate) fn merge_pairs(into: &mut Metadata, new: Metadata) {
    for (k, v) in new {
        if !into.iter().any(|(have, _)| *have == k) {
            into.push((k, v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(metadata: &[(&str, &str)]) -> NodeInfo {
        NodeInfo {
            id: 3,
            uid: 77,
            kind_hint: "command_group_node".into(),
            name: "_ZTS3Foo".into(),
            source_file: Some("app.cpp".into()),
            source_line: Some(12),
            source_column: None,
            metadata: metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn definition_fills_and_derives() {
        let mut n = Node::placeholder(3);
        assert!(!n.defined);
        n.define(info(&[
            ("kernel_name", "_ZTS3Foo"),
            ("sycl_device_name", "Intel CPU"),
            ("sycl_device", "1440"),
            ("queue_id", "2"),
        ]));
        assert!(n.defined);
        assert_eq!(n.kind, NodeKind::Kernel);
        assert_eq!(n.operation, "Foo");
        assert_eq!(n.device.as_deref(), Some("Intel CPU"));
        assert_eq!(n.device_handle, Some(0x5a0));
        assert_eq!(n.queue_ids, ["2"]);
        assert_eq!(n.location().as_deref(), Some("app.cpp:12"));
    }

    #[test]
    fn unknown_file_and_line_zero_are_none() {
        let mut n = Node::placeholder(0);
        let mut i = info(&[]);
        i.source_file = Some("<unknown-file>".into());
        i.source_line = Some(0);
        n.define(i);
        assert_eq!(n.source_file, None);
        assert_eq!(n.source_line, None);
        assert_eq!(n.location(), None);
    }

    #[test]
    fn later_metadata_keeps_existing_keys_and_can_classify() {
        let mut n = Node::placeholder(0);
        let mut i = info(&[("queue_id", "1")]);
        i.name = "main".into();
        n.define(i);
        assert_eq!(n.kind, NodeKind::Kernel); // command_group_node fallback
        assert_eq!(n.operation, "main");
        n.merge_metadata(vec![
            ("kernel_name".into(), "fill".into()),
            ("queue_id".into(), "9".into()),
        ]);
        assert_eq!(n.kind, NodeKind::Fill);
        assert_eq!(n.metadata_value("queue_id"), Some("1"));
        assert_eq!(n.queue_ids, ["1", "9"]);
    }

    #[test]
    fn bytes_prefer_memory_size() {
        let mut n = Node::placeholder(0);
        n.define(info(&[("size", "8"), ("memory_size", "64")]));
        assert_eq!(n.bytes(), Some("64"));
    }
}
