//! Writing records into the journal: the hot records' fixed layouts
//! ([`Hot`]) and the general layout (see the module doc of
//! [`crate::journal`]).

use super::*;

/// A record's bytes laid out on the stack, then appended to the journal in
/// one copy (no capacity check per byte).
pub(super) struct Fixed {
    pub(super) a: [u8; FIXED_MAX],
    pub(super) n: usize,
}

impl Fixed {
    #[inline(always)]
    pub(super) fn new(tag: u8) -> Fixed {
        let mut a = [0; FIXED_MAX];
        a[0] = tag;
        Fixed { a, n: 1 }
    }

    #[inline(always)]
    pub(super) fn byte(&mut self, b: u8) {
        self.a[self.n] = b;
        self.n += 1;
    }

    #[inline(always)]
    pub(super) fn uint(&mut self, v: u64) {
        self.n = put_varint(&mut self.a, self.n, v);
    }

    /// `to` as the zig-zag difference from `from`, the timestamp before it.
    #[inline(always)]
    pub(super) fn delta(&mut self, from: u64, to: u64) {
        self.uint(zigzag(to.wrapping_sub(from) as i64));
    }

    #[inline(always)]
    pub(super) fn pair(&mut self, (node, instance): (u32, u64)) {
        self.uint(node.into());
        self.uint(instance);
    }

    #[inline(always)]
    pub(super) fn opt_pair(&mut self, after: Option<(u32, u64)>) {
        match after {
            None => self.byte(0),
            Some(p) => {
                self.byte(1);
                self.pair(p);
            }
        }
    }

    #[inline(always)]
    pub(super) fn opt_uint(&mut self, v: Option<u64>) {
        match v {
            None => self.byte(0),
            Some(v) => {
                self.byte(1);
                self.uint(v);
            }
        }
    }

    #[inline(always)]
    pub(super) fn bytes(&self) -> &[u8] {
        &self.a[..self.n]
    }
}

/// Appends `v` as a varint to `out`.
pub(super) fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut a = [0; MAX_VARINT_LEN];
    let n = put_varint(&mut a, 0, v);
    out.extend_from_slice(&a[..n]);
}

pub(super) fn push_str(out: &mut Vec<u8>, s: &str) {
    push_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

pub(super) fn push_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            push_str(out, s);
        }
    }
}

pub(super) fn push_opt_u32(out: &mut Vec<u8>, v: Option<u32>) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            push_varint(out, v.into());
        }
    }
}

pub(super) fn push_metadata(out: &mut Vec<u8>, metadata: &Metadata) {
    push_varint(out, metadata.len() as u64);
    for (key, value) in metadata {
        push_str(out, key);
        push_str(out, value);
    }
}

/// A hot record's fixed layout: `N` bytes built on the stack at offsets
/// that are constants once inlined, appended with one copy of a constant
/// length (no varint loop, no capacity check per field).
pub(super) struct Hot<const N: usize> {
    pub(super) a: [u8; N],
    pub(super) n: usize,
}

impl<const N: usize> Hot<N> {
    #[inline(always)]
    pub(super) fn new(tag: u8) -> Hot<N> {
        let mut a = [0; N];
        a[0] = tag;
        Hot { a, n: 1 }
    }

    /// A layout's continuation, with no tag.
    #[inline(always)]
    pub(super) fn untagged() -> Hot<N> {
        Hot { a: [0; N], n: 0 }
    }

    #[inline(always)]
    pub(super) fn put<const W: usize>(&mut self, bytes: [u8; W]) {
        self.a[self.n..self.n + W].copy_from_slice(&bytes);
        self.n += W;
    }

    #[inline(always)]
    pub(super) fn u32(&mut self, v: u32) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    pub(super) fn u64(&mut self, v: u64) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    pub(super) fn i32(&mut self, v: i32) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    pub(super) fn byte(&mut self, b: u8) {
        self.put([b]);
    }

    #[inline(always)]
    pub(super) fn append_to(&self, out: &mut Vec<u8>) {
        debug_assert_eq!(self.n, N, "a fixed layout filled exactly");
        out.extend_from_slice(&self.a);
    }
}

/// `to - from` when it fits an `i32` (a timestamp after `from` in a
/// fixed layout).
#[inline(always)]
pub(super) fn short_delta(from: u64, to: u64) -> Option<i32> {
    i32::try_from(to.wrapping_sub(from) as i64).ok()
}

/// Appends one record's encoding to `out` (no allocation besides `out` growing).
///
/// The hot records take their fixed layout when their instances fit 32
/// bits and their timestamps are each within an `i32` of the one before;
/// every other record, and a hot one past those bounds, the general layout.
pub fn append_record(record: &Record, out: &mut Vec<u8>) {
    match *record {
        Record::SubmissionAnnounced {
            node,
            instance,
            after,
        } => match (u32::try_from(instance), after) {
            (Ok(instance), None) => {
                let mut h = Hot::<9>::new(tag::ANNOUNCED_FIXED);
                h.u32(node);
                h.u32(instance);
                return h.append_to(out);
            }
            (Ok(instance), Some((after_node, after_instance))) => {
                if let Ok(after_instance) = u32::try_from(after_instance) {
                    let mut h = Hot::<17>::new(tag::ANNOUNCED_AFTER_FIXED);
                    h.u32(node);
                    h.u32(instance);
                    h.u32(after_node);
                    h.u32(after_instance);
                    return h.append_to(out);
                }
            }
            (Err(_), _) => {}
        },
        Record::TimedTask {
            node,
            instance,
            thread,
            submit_ns,
            begin_ns,
            end_ns,
            event,
            device_status,
            device_start_ns,
            device_end_ns,
        } => {
            if let (Ok(instance), Some(begin), Some(end), Some(start), Some(device_end)) = (
                u32::try_from(instance),
                short_delta(submit_ns, begin_ns),
                short_delta(begin_ns, end_ns),
                short_delta(end_ns, device_start_ns),
                short_delta(device_start_ns, device_end_ns),
            ) {
                let mut h = Hot::<46>::new(tag::TIMED_TASK_FIXED);
                h.u32(node);
                h.u32(instance);
                h.u32(thread);
                h.u64(submit_ns);
                h.i32(begin);
                h.i32(end);
                h.u64(event);
                h.byte(status_byte(device_status));
                h.i32(start);
                h.i32(device_end);
                return h.append_to(out);
            }
        }
        Record::SubmittedTask {
            node,
            instance,
            thread,
            submit_ns,
            after,
            begin_ns,
            end_ns,
            event,
        } => {
            let after = match after {
                None => Some(None),
                Some((after_node, after_instance)) => u32::try_from(after_instance)
                    .ok()
                    .map(|after_instance| Some((after_node, after_instance))),
            };
            if let (Ok(instance), Some(after), Some(begin), Some(end)) = (
                u32::try_from(instance),
                after,
                short_delta(submit_ns, begin_ns),
                short_delta(begin_ns, end_ns),
            ) {
                // The tag says whether `after` and `event` follow.
                let tag = tag::SUBMITTED_TASK_FIXED
                    + u8::from(after.is_some())
                    + 2 * u8::from(event.is_some());
                let mut h = Hot::<29>::new(tag);
                h.u32(node);
                h.u32(instance);
                h.u32(thread);
                h.u64(submit_ns);
                h.i32(begin);
                h.i32(end);
                h.append_to(out);
                if let Some((after_node, after_instance)) = after {
                    let mut h = Hot::<8>::untagged();
                    h.u32(after_node);
                    h.u32(after_instance);
                    h.append_to(out);
                }
                if let Some(event) = event {
                    out.extend_from_slice(&event.to_le_bytes());
                }
                return;
            }
        }
        _ => {}
    }
    append_general(record, out);
}

/// Appends `record` in the general layout (kept out of line: the hot
/// records' fixed layouts stay a small function).
#[inline(never)]
pub(super) fn append_general(record: &Record, out: &mut Vec<u8>) {
    let f = match *record {
        Record::String { id, ref text } => {
            out.push(tag::STRING);
            push_varint(out, id.into());
            push_str(out, text);
            return;
        }
        Record::NodeDefined(ref info) => {
            out.push(tag::NODE_DEFINED);
            push_varint(out, info.id.into());
            push_varint(out, info.uid);
            push_str(out, &info.kind_hint);
            push_str(out, &info.name);
            push_opt_str(out, info.source_file.as_deref());
            push_opt_u32(out, info.source_line);
            push_opt_u32(out, info.source_column);
            push_metadata(out, &info.metadata);
            return;
        }
        Record::NodeMetadata { node, ref metadata } => {
            out.push(tag::NODE_METADATA);
            push_varint(out, node.into());
            push_metadata(out, metadata);
            return;
        }
        Record::EdgeDefined(ref info) => {
            out.push(tag::EDGE_DEFINED);
            push_varint(out, info.id.into());
            push_varint(out, info.uid);
            push_varint(out, info.source.into());
            push_varint(out, info.target.into());
            push_metadata(out, &info.metadata);
            return;
        }
        Record::EdgeInstance { edge, instance } => {
            let mut f = Fixed::new(tag::EDGE_INSTANCE);
            f.pair((edge, instance));
            f
        }
        Record::Submitted {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::SUBMITTED, node, instance, thread, ns),
        Record::TaskBegin {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::TASK_BEGIN, node, instance, thread, ns),
        Record::TaskEnd {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::TASK_END, node, instance, thread, ns),
        Record::Task {
            node,
            instance,
            thread,
            begin_ns,
            end_ns,
        } => {
            let mut f = node_thread_ns(tag::TASK, node, instance, thread, begin_ns);
            f.delta(begin_ns, end_ns);
            f
        }
        Record::SignalledTask {
            node,
            instance,
            thread,
            begin_ns,
            end_ns,
            event,
        } => {
            let mut f = node_thread_ns(tag::SIGNALLED_TASK, node, instance, thread, begin_ns);
            f.delta(begin_ns, end_ns);
            f.uint(event);
            f
        }
        Record::SubmittedAfter {
            node,
            instance,
            thread,
            ns,
            after,
        } => {
            let mut f = node_thread_ns(tag::SUBMITTED_AFTER, node, instance, thread, ns);
            f.pair(after);
            f
        }
        Record::SubmittedTask {
            node,
            instance,
            thread,
            submit_ns,
            after,
            begin_ns,
            end_ns,
            event,
        } => {
            let mut f = node_thread_ns(tag::SUBMITTED_TASK, node, instance, thread, submit_ns);
            f.opt_pair(after);
            f.delta(submit_ns, begin_ns);
            f.delta(begin_ns, end_ns);
            f.opt_uint(event);
            f
        }
        Record::SubmissionAnnounced {
            node,
            instance,
            after,
        } => {
            let mut f = Fixed::new(tag::SUBMISSION_ANNOUNCED);
            f.pair((node, instance));
            f.opt_pair(after);
            f
        }
        Record::TimedTask {
            node,
            instance,
            thread,
            submit_ns,
            begin_ns,
            end_ns,
            event,
            device_status,
            device_start_ns,
            device_end_ns,
        } => {
            let mut f = node_thread_ns(tag::TIMED_TASK, node, instance, thread, submit_ns);
            f.delta(submit_ns, begin_ns);
            f.delta(begin_ns, end_ns);
            f.uint(event);
            f.byte(status_byte(device_status));
            f.delta(end_ns, device_start_ns);
            f.delta(device_start_ns, device_end_ns);
            f
        }
        Record::Signal {
            node,
            instance,
            event,
        } => {
            let mut f = Fixed::new(tag::SIGNAL);
            f.pair((node, instance));
            f.uint(event);
            f
        }
        Record::SpanBegin {
            kind,
            label,
            thread,
            ns,
        } => {
            let mut f = Fixed::new(tag::SPAN_BEGIN);
            f.byte(span_kind_byte(kind));
            f.uint(label.into());
            f.uint(thread.into());
            f.uint(ns);
            f
        }
        Record::SpanEnd { kind, thread, ns } => {
            let mut f = Fixed::new(tag::SPAN_END);
            f.byte(span_kind_byte(kind));
            f.uint(thread.into());
            f.uint(ns);
            f
        }
        Record::Tracing { on, ns } => {
            let mut f = Fixed::new(tag::TRACING);
            f.byte(on.into());
            f.uint(ns);
            f
        }
        Record::QueueCreated {
            queue_id,
            device,
            device_handle,
            ns,
        } => {
            let mut f = Fixed::new(tag::QUEUE_CREATED);
            f.uint(queue_id);
            f.uint(device.into());
            f.uint(device_handle);
            f.uint(ns);
            f
        }
        Record::DeviceDefined { device, parent } => {
            let mut f = Fixed::new(tag::DEVICE_DEFINED);
            f.uint(device);
            f.uint(parent);
            f
        }
        Record::QueueDestroyed { queue_id, ns } => {
            let mut f = Fixed::new(tag::QUEUE_DESTROYED);
            f.uint(queue_id);
            f.uint(ns);
            f
        }
        Record::Device(DeviceTimes {
            node,
            instance,
            status,
            start_ns,
            end_ns,
        }) => {
            let mut f = Fixed::new(tag::DEVICE);
            f.pair((node, instance));
            f.byte(status_byte(status));
            f.uint(start_ns);
            f.delta(start_ns, end_ns);
            f
        }
        Record::InstanceEdge(InstanceEdge {
            source,
            source_instance,
            target,
            target_instance,
            queue_order,
        }) => {
            let mut f = Fixed::new(tag::INSTANCE_EDGE);
            f.pair((source, source_instance));
            f.pair((target, target_instance));
            f.byte(queue_order.into());
            f
        }
        Record::InstanceQueue {
            node,
            instance,
            queue_id,
        } => {
            let mut f = Fixed::new(tag::INSTANCE_QUEUE);
            f.pair((node, instance));
            f.uint(queue_id);
            f
        }
        Record::GraphMember { graph, node } => {
            let mut f = Fixed::new(tag::GRAPH_MEMBER);
            f.uint(graph.into());
            f.uint(node.into());
            f
        }
        Record::GraphEdge {
            graph,
            source,
            target,
        } => {
            let mut f = Fixed::new(tag::GRAPH_EDGE);
            f.uint(graph.into());
            f.uint(source.into());
            f.uint(target.into());
            f
        }
        Record::GraphFinalized {
            graph,
            node,
            thread,
            begin_ns,
            end_ns,
        } => {
            let mut f = Fixed::new(tag::GRAPH_FINALIZED);
            f.uint(graph.into());
            f.uint(node.into());
            f.uint(thread.into());
            f.uint(begin_ns);
            f.delta(begin_ns, end_ns);
            f
        }
        Record::RegionBegin {
            thread,
            label,
            ns,
            id,
            shown,
        } => {
            let mut f = Fixed::new(tag::REGION_BEGIN);
            f.uint(thread.into());
            f.uint(label.into());
            f.uint(ns);
            f.uint(id);
            f.byte(shown.into());
            f
        }
        Record::RegionEnd { thread, ns, id } => {
            let mut f = Fixed::new(tag::REGION_END);
            f.uint(thread.into());
            f.uint(ns);
            f.uint(id);
            f
        }
    };
    out.extend_from_slice(f.bytes());
}

/// The tag, node, instance, thread and first timestamp the per-instance
/// records start with.
#[inline(always)]
pub(super) fn node_thread_ns(tag: u8, node: u32, instance: u64, thread: u32, ns: u64) -> Fixed {
    let mut f = Fixed::new(tag);
    f.pair((node, instance));
    f.uint(thread.into());
    f.uint(ns);
    f
}
