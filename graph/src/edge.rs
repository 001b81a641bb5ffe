//! Dependencies between nodes: [`Edge`] and its [`EdgeKind`].

use crate::names::{access_mode_name, address_text};
use crate::record::{EdgeId, EdgeInfo, Metadata, NodeId};

/// The metadata key for an accessor's access mode.
pub const ACCESS_MODE_KEY: &str = "access_mode";
/// The metadata key for the memory object (buffer) of an accessor dependency.
pub const MEMORY_OBJECT_KEY: &str = "memory_object";
/// The metadata key for the event of an event dependency.
pub const EVENT_KEY: &str = "event";
/// syclgraph's own metadata key: an edge the subscriber made itself (not from
/// edge_create) names its kind here, e.g. `queue_order`.
pub const EDGE_KIND_KEY: &str = "edge_kind";

/// Why one node depends on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// Through a memory object (an accessor, or an allocation's release):
    /// the edge metadata has `access_mode` and/or `memory_object`.
    Memory,
    /// Through an event (`depends_on`, or anything the runtime did not
    /// describe further).
    Event,
    /// Program order on an in-order queue (only from `edge_kind` metadata).
    QueueOrder,
}

impl EdgeKind {
    /// The lowercase word used in the outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Memory => "memory",
            EdgeKind::Event => "event",
            EdgeKind::QueueOrder => "queue_order",
        }
    }

    /// The kind an edge's metadata implies: an explicit `edge_kind` first,
    /// then memory when `access_mode` or `memory_object` is present, event
    /// otherwise.
    pub fn from_metadata(metadata: &[(String, String)]) -> EdgeKind {
        let has = |key: &str| metadata.iter().any(|(k, _)| k == key);
        let explicit = metadata
            .iter()
            .find(|(k, _)| k == EDGE_KIND_KEY)
            .map(|(_, v)| v.trim());
        match explicit {
            Some("memory") => EdgeKind::Memory,
            Some("event") => EdgeKind::Event,
            Some("queue_order") => EdgeKind::QueueOrder,
            _ if has(ACCESS_MODE_KEY) || has(MEMORY_OBJECT_KEY) => EdgeKind::Memory,
            _ => EdgeKind::Event,
        }
    }
}

impl std::fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One distinct dependency, `source` → `target` (the producer first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Our id for the edge.
    pub id: EdgeId,
    /// The runtime's unique_id of the edge event.
    pub uid: u64,
    /// The producer.
    pub source: NodeId,
    /// The node that waits for `source`.
    pub target: NodeId,
    /// Why.
    pub kind: EdgeKind,
    /// The accessor's access mode (`read`, `write`, `read_write`, ...), when known.
    pub access_mode: Option<String>,
    /// The memory object, when known (hex address).
    pub memory_object: Option<String>,
    /// The event of an event dependency, when known (hex address).
    pub event: Option<String>,
    /// Every metadata pair the runtime sent.
    pub metadata: Metadata,
    /// How many times the runtime created this edge: 1 for the
    /// [`EdgeDefined`](crate::record::Record::EdgeDefined) record plus one per
    /// [`EdgeInstance`](crate::record::Record::EdgeInstance) record.
    pub count: u64,
}

impl Edge {
    /// An edge from its first definition.
    pub(crate) fn from_info(info: EdgeInfo) -> Edge {
        let mut edge = Edge {
            id: info.id,
            uid: info.uid,
            source: info.source,
            target: info.target,
            kind: EdgeKind::Event,
            access_mode: None,
            memory_object: None,
            event: None,
            metadata: Vec::new(),
            count: 1,
        };
        edge.merge_metadata(info.metadata);
        edge
    }

    /// Add metadata pairs (keys already present keep their value) and derive
    /// the kind and the named fields again.
    pub(crate) fn merge_metadata(&mut self, metadata: Metadata) {
        crate::node::merge_pairs(&mut self.metadata, metadata);
        let get = |key: &str| {
            self.metadata
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        self.access_mode = get(ACCESS_MODE_KEY).map(access_mode_name);
        self.memory_object = get(MEMORY_OBJECT_KEY).map(address_text);
        self.event = get(EVENT_KEY).map(address_text);
        self.kind = EdgeKind::from_metadata(&self.metadata);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(pairs: &[(&str, &str)]) -> Metadata {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn accessor_edges_are_memory_edges() {
        let e = Edge::from_info(EdgeInfo {
            id: 0,
            uid: 9,
            source: 1,
            target: 2,
            metadata: md(&[("access_mode", "1026"), ("memory_object", "4096")]),
        });
        assert_eq!(e.kind, EdgeKind::Memory);
        assert_eq!(e.access_mode.as_deref(), Some("read_write"));
        assert_eq!(e.memory_object.as_deref(), Some("0x1000"));
        assert_eq!(e.count, 1);
    }

    #[test]
    fn release_edges_have_only_a_memory_object() {
        assert_eq!(
            EdgeKind::from_metadata(&md(&[("memory_object", "0x10")])),
            EdgeKind::Memory
        );
    }

    #[test]
    fn event_and_bare_edges_are_event_edges() {
        assert_eq!(
            EdgeKind::from_metadata(&md(&[("event", "1")])),
            EdgeKind::Event
        );
        assert_eq!(EdgeKind::from_metadata(&[]), EdgeKind::Event);
    }

    #[test]
    fn explicit_kind_wins() {
        assert_eq!(
            EdgeKind::from_metadata(&md(&[("edge_kind", "queue_order"), ("event", "1")])),
            EdgeKind::QueueOrder
        );
    }
}
