//! What a node is: the [`NodeKind`] vocabulary and [`classify`], the one place
//! that maps the runtime's strings (node_create user_data, payload name,
//! `kernel_name` metadata) onto a kind and an operation name.
//!
//! All the strings the runtime is known to send are in the tables at the top of
//! this file ([`HINTS`], [`OPERATIONS`], [`WORDS`]); when a real runtime shows a
//! new one, add a row there and a case to the tests below.
//!
//! Where the strings come from (intel/llvm `sycl/source/detail/scheduler/commands.cpp`
//! and `queue_impl.cpp`):
//! - node_create user_data: `command_group_node`, `memory_transfer_node`,
//!   `memory_allocation_node`, `sub_buffer_creation_node`,
//!   `memory_deallocation_node`, `host_acc_create_buffer_lock_node`,
//!   `host_acc_destroy_buffer_release_node`, `kernel_fusion_placeholder_node`,
//!   `unknown_node`; the USM fast paths send `memory_transfer_node::memcpy` and
//!   `memory_transfer_node::memset` (their payload name is the *caller's*
//!   function name).
//! - Command groups carry `kernel_name` metadata: the demangled kernel name for
//!   kernels, the command-group type string otherwise (`copy usm`, `fill`,
//!   `host task`, `barrier`, `update_host`, `copy acc to ptr`, ...).
//! - Scheduler memory commands are named `Memory Allocation[0x…]`,
//!   `Memory Transfer (Copy)[0x…]`, `Memory Deallocation[0x…]`, ...
//! - `virtual_node[0x…]` stands for an event whose command the scheduler does
//!   not know; it also carries `kernel_name` = its own name.

use crate::names::{kernel_display_name, looks_like_kernel_symbol, strip_address_suffix};

/// What kind of command a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A device kernel.
    Kernel,
    /// A USM copy (`q.memcpy`, `copy usm`).
    Memcpy,
    /// A USM memset.
    Memset,
    /// A fill (buffer or USM).
    Fill,
    /// A host task.
    HostTask,
    /// A memory allocation (buffer alloca, sub-buffer creation).
    Alloc,
    /// A memory release.
    Dealloc,
    /// A scheduler or accessor copy (buffer transfers, map/unmap, update_host).
    Copy,
    /// A barrier.
    Barrier,
    /// A stand-in for an event whose command the runtime does not know.
    Virtual,
    /// Anything else (host accessor locks, prefetch, advise, unknown nodes).
    Other,
    /// One replay of a SYCL graph (`queue::ext_oneapi_graph`): the whole
    /// executable graph run as one device command.
    Graph,
    /// A native command (`ext_codeplay_enqueue_native_command`): work the
    /// program enqueued itself through the backend's own API (a cuBLAS
    /// call, a kernel built with nvcc), timed from its SYCL event.
    Native,
}

impl NodeKind {
    /// Every kind, in declaration order.
    pub const ALL: [NodeKind; 13] = [
        NodeKind::Kernel,
        NodeKind::Memcpy,
        NodeKind::Memset,
        NodeKind::Fill,
        NodeKind::HostTask,
        NodeKind::Alloc,
        NodeKind::Dealloc,
        NodeKind::Copy,
        NodeKind::Barrier,
        NodeKind::Virtual,
        NodeKind::Other,
        NodeKind::Graph,
        NodeKind::Native,
    ];

    /// The lowercase word used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Kernel => "kernel",
            NodeKind::Memcpy => "memcpy",
            NodeKind::Memset => "memset",
            NodeKind::Fill => "fill",
            NodeKind::HostTask => "host_task",
            NodeKind::Alloc => "alloc",
            NodeKind::Dealloc => "dealloc",
            NodeKind::Copy => "copy",
            NodeKind::Barrier => "barrier",
            NodeKind::Virtual => "virtual",
            NodeKind::Other => "other",
            NodeKind::Graph => "graph",
            NodeKind::Native => "native",
        }
    }

    /// Commands that run on the device and can be timed there: the kinds that
    /// get a row in `kernels.csv` and a line in the summary.
    pub fn is_device_command(self) -> bool {
        matches!(
            self,
            NodeKind::Kernel
                | NodeKind::Memcpy
                | NodeKind::Memset
                | NodeKind::Fill
                | NodeKind::Copy
                | NodeKind::Graph
                | NodeKind::Native
        )
    }

    /// Whether instances of this kind are enqueued (get task_begin/task_end).
    /// Virtual nodes are only created, never run.
    pub fn expects_task(self) -> bool {
        self != NodeKind::Virtual
    }
}

impl std::fmt::Display for NodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// node_create user_data strings that settle the kind by themselves, with the
/// operation name to show (`None`: the payload name without its address).
pub const HINTS: &[(&str, NodeKind, Option<&str>)] = &[
    (
        "memory_transfer_node::memcpy",
        NodeKind::Memcpy,
        Some("memcpy"),
    ),
    (
        "memory_transfer_node::memset",
        NodeKind::Memset,
        Some("memset"),
    ),
    ("memory_transfer_node::fill", NodeKind::Fill, Some("fill")),
    (SYCL_GRAPH_HINT, NodeKind::Graph, None),
    ("memory_allocation_node", NodeKind::Alloc, None),
    ("sub_buffer_creation_node", NodeKind::Alloc, None),
    ("memory_deallocation_node", NodeKind::Dealloc, None),
    ("host_task", NodeKind::HostTask, Some("host task")),
    ("host_task_node", NodeKind::HostTask, Some("host task")),
    ("host_acc_create_buffer_lock_node", NodeKind::Other, None),
    (
        "host_acc_destroy_buffer_release_node",
        NodeKind::Other,
        None,
    ),
    ("kernel_fusion_placeholder_node", NodeKind::Other, None),
];

/// Operation strings matched whole (case-insensitive, trimmed) against the
/// `kernel_name` metadata and then the payload name: the runtime's
/// command-group type strings (`cgTypeToString`) and plain operation words.
pub const OPERATIONS: &[(&str, NodeKind)] = &[
    ("copy usm", NodeKind::Memcpy),
    ("copy 2d usm", NodeKind::Memcpy),
    ("memcpy", NodeKind::Memcpy),
    ("fill usm", NodeKind::Fill),
    ("fill 2d usm", NodeKind::Fill),
    ("fill", NodeKind::Fill),
    ("memset", NodeKind::Memset),
    ("memset usm", NodeKind::Memset),
    ("memset 2d usm", NodeKind::Memset),
    ("update_host", NodeKind::Copy),
    ("copy acc to acc", NodeKind::Copy),
    ("copy acc to ptr", NodeKind::Copy),
    ("copy ptr to acc", NodeKind::Copy),
    ("copy to device_global", NodeKind::Copy),
    ("copy from device_global", NodeKind::Copy),
    ("copy image", NodeKind::Copy),
    ("read_write host pipe", NodeKind::Copy),
    ("barrier", NodeKind::Barrier),
    ("barrier waitlist", NodeKind::Barrier),
    ("host task", NodeKind::HostTask),
    ("host_task", NodeKind::HostTask),
    ("run on host", NodeKind::HostTask),
    ("prefetch usm", NodeKind::Other),
    ("advise usm", NodeKind::Other),
    ("exec command buffer", NodeKind::Other),
    ("semaphore wait", NodeKind::Other),
    ("semaphore signal", NodeKind::Other),
    ("profiling tag", NodeKind::Other),
    ("enqueue native command", NodeKind::Native),
    ("native command", NodeKind::Native),
    ("unknown", NodeKind::Other),
];

/// Word rules for names that are neither a kernel nor a known operation string
/// (e.g. `Memory Transfer (Copy)[0x…]`): every listed word must appear as a
/// whole word (split on anything but letters, digits and `_`; lowercase).
/// First match wins, so more specific rows come first.
pub const WORDS: &[(&[&str], NodeKind)] = &[
    (&["deallocation"], NodeKind::Dealloc),
    (&["dealloc"], NodeKind::Dealloc),
    (&["allocation"], NodeKind::Alloc),
    (&["alloc"], NodeKind::Alloc),
    (&["memcpy"], NodeKind::Memcpy),
    (&["memset"], NodeKind::Memset),
    (&["fill"], NodeKind::Fill),
    (&["host", "task"], NodeKind::HostTask),
    (&["host_task"], NodeKind::HostTask),
    (&["barrier"], NodeKind::Barrier),
    (&["copy"], NodeKind::Copy),
    (&["update_host"], NodeKind::Copy),
    (&["map"], NodeKind::Copy),
    (&["unmap"], NodeKind::Copy),
];

/// node_create user_data strings that only suggest a kind when nothing more
/// specific matched.
pub const HINT_FALLBACKS: &[(&str, NodeKind)] = &[
    ("command_group_node", NodeKind::Kernel),
    ("memory_transfer_node", NodeKind::Copy),
];

/// The kind hint syclgraph gives the node of a SYCL graph's replays (the
/// runtime sends no node_create for them).
pub const SYCL_GRAPH_HINT: &str = "sycl_graph";

/// The prefix of the runtime's virtual node names.
pub const VIRTUAL_PREFIX: &str = "virtual_node[";

/// The metadata key holding the kernel name (or command-group type).
pub const KERNEL_NAME_KEY: &str = "kernel_name";

/// The metadata key syclgraph adds to a node whose command the runtime
/// enqueued through a UR function that tells what it is, whatever the
/// runtime's own strings say (2026.2 names a native command `unknown`).
pub const UR_FUNCTION_KEY: &str = "ur_function";

/// [`UR_FUNCTION_KEY`]'s value for a native command.
pub const NATIVE_COMMAND: &str = "urEnqueueNativeCommandExp";

/// The operation name of a native command.
pub const NATIVE_OPERATION: &str = "native command";

/// What [`classify`] found out about a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classification {
    /// The kind.
    pub kind: NodeKind,
    /// The operation to show: demangled kernel name, operation string, or the
    /// command name without its address.
    pub operation: String,
    /// The submitting function, when the payload name is a function name
    /// rather than the operation (kernels and USM fast paths submitted from
    /// below the SYCL layer).
    pub function: Option<String>,
}

/// Classify a node from its node_create user_data (`kind_hint`), payload name
/// and metadata. Never fails; unknown strings give [`NodeKind::Other`] with the
/// name as operation.
///
/// Order: `virtual_node[` names → a node enqueued by
/// `urEnqueueNativeCommandExp` ([`NATIVE_COMMAND`]) → [`HINTS`] → `kernel_name` (a known
/// [`OPERATIONS`] string, otherwise a kernel) → payload name as an operation
/// string → a mangled name means a kernel → [`WORDS`] → [`HINT_FALLBACKS`] →
/// other.
pub fn classify(kind_hint: &str, name: &str, metadata: &[(String, String)]) -> Classification {
    let hint = kind_hint.trim();
    let name = name.trim();
    let kernel_name = metadata
        .iter()
        .find(|(k, _)| k == KERNEL_NAME_KEY)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty());
    let payload_as_function = |operation: &str| -> Option<String> {
        let plain = strip_address_suffix(name);
        (!plain.is_empty() && plain != operation && Some(name) != kernel_name)
            .then(|| plain.to_string())
    };

    if name.starts_with(VIRTUAL_PREFIX)
        || kernel_name.is_some_and(|k| k.starts_with(VIRTUAL_PREFIX))
    {
        let operation = if name.starts_with(VIRTUAL_PREFIX) {
            name
        } else {
            kernel_name.unwrap_or(name)
        };
        return Classification {
            kind: NodeKind::Virtual,
            operation: operation.to_string(),
            function: None,
        };
    }

    if metadata
        .iter()
        .any(|(k, v)| k == UR_FUNCTION_KEY && v == NATIVE_COMMAND)
    {
        return Classification {
            kind: NodeKind::Native,
            operation: NATIVE_OPERATION.to_string(),
            function: payload_as_function(NATIVE_OPERATION)
                .filter(|f| !f.eq_ignore_ascii_case("unknown")),
        };
    }

    if let Some(&(_, kind, op)) = HINTS.iter().find(|(h, _, _)| *h == hint) {
        return match op {
            Some(op) => Classification {
                kind,
                operation: op.to_string(),
                function: payload_as_function(op),
            },
            None => Classification {
                kind,
                operation: fallback_operation(name, kind),
                function: None,
            },
        };
    }

    if let Some(kernel_name) = kernel_name {
        if let Some(kind) = operation_kind(kernel_name) {
            return Classification {
                kind,
                operation: kernel_name.to_string(),
                function: payload_as_function(kernel_name),
            };
        }
        if let Some(kind) = operation_kind(name) {
            return Classification {
                kind,
                operation: name.to_string(),
                function: None,
            };
        }
        let operation = kernel_display_name(kernel_name);
        let function =
            (!name.is_empty() && name != kernel_name && kernel_display_name(name) != operation)
                .then(|| name.to_string());
        return Classification {
            kind: NodeKind::Kernel,
            operation,
            function,
        };
    }

    if let Some(kind) = operation_kind(name) {
        return Classification {
            kind,
            operation: name.to_string(),
            function: None,
        };
    }
    if looks_like_kernel_symbol(name) {
        return Classification {
            kind: NodeKind::Kernel,
            operation: kernel_display_name(name),
            function: None,
        };
    }
    let plain = strip_address_suffix(name);
    if let Some(kind) = word_kind(plain) {
        return Classification {
            kind,
            operation: fallback_operation(name, kind),
            function: None,
        };
    }
    let kind = HINT_FALLBACKS
        .iter()
        .find(|(h, _)| *h == hint)
        .map_or(NodeKind::Other, |&(_, kind)| kind);
    let operation = if kind == NodeKind::Kernel {
        kernel_display_name(name)
    } else {
        fallback_operation(name, kind)
    };
    let operation = if operation.is_empty() {
        kind.as_str().to_string()
    } else {
        operation
    };
    Classification {
        kind,
        operation,
        function: None,
    }
}

/// The kind of a whole-string operation name from [`OPERATIONS`].
fn operation_kind(text: &str) -> Option<NodeKind> {
    let text = text.trim();
    OPERATIONS
        .iter()
        .find(|(op, _)| op.eq_ignore_ascii_case(text))
        .map(|&(_, kind)| kind)
}

/// The kind [`WORDS`] gives a name, if any.
fn word_kind(text: &str) -> Option<NodeKind> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    WORDS
        .iter()
        .find(|(needed, _)| needed.iter().all(|n| words.contains(n)))
        .map(|&(_, kind)| kind)
}

/// The name without its address, or the kind's word when there is no name.
fn fallback_operation(name: &str, kind: NodeKind) -> String {
    let plain = strip_address_suffix(name);
    if plain.is_empty() {
        kind.as_str().to_string()
    } else {
        plain.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn kind(hint: &str, name: &str, pairs: &[(&str, &str)]) -> NodeKind {
        classify(hint, name, &md(pairs)).kind
    }

    #[test]
    fn kind_words_are_the_documented_ones() {
        let words: Vec<&str> = NodeKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            words,
            [
                "kernel",
                "memcpy",
                "memset",
                "fill",
                "host_task",
                "alloc",
                "dealloc",
                "copy",
                "barrier",
                "virtual",
                "other",
                "graph",
                "native"
            ]
        );
    }

    #[test]
    fn device_commands_are_the_csv_kinds() {
        let device: Vec<&str> = NodeKind::ALL
            .iter()
            .filter(|k| k.is_device_command())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            device,
            ["kernel", "memcpy", "memset", "fill", "copy", "graph", "native"]
        );
    }

    #[test]
    fn kernels_from_command_groups() {
        let c = classify(
            "command_group_node",
            "_ZTSZ4mainE6Square",
            &md(&[
                ("kernel_name", "_ZTSZ4mainE6Square"),
                ("sycl_device_name", "cpu"),
            ]),
        );
        assert_eq!(c.kind, NodeKind::Kernel);
        assert_eq!(c.operation, "main::Square");
        assert_eq!(c.function, None);
    }

    #[test]
    fn kernel_submitted_from_a_function_keeps_the_function() {
        let c = classify(
            "command_group_node",
            "run(sycl::queue&)",
            &md(&[("kernel_name", "typeinfo name for Add")]),
        );
        assert_eq!(c.kind, NodeKind::Kernel);
        assert_eq!(c.operation, "Add");
        assert_eq!(c.function.as_deref(), Some("run(sycl::queue&)"));
    }

    #[test]
    fn interop_kernels_report_the_enclosing_function() {
        let c = classify(
            "command_group_node",
            "main",
            &md(&[("kernel_name", "main")]),
        );
        assert_eq!(c.kind, NodeKind::Kernel);
        assert_eq!(c.operation, "main");
        assert_eq!(c.function, None);
    }

    #[test]
    fn kernels_named_like_operations_stay_kernels() {
        // A user kernel called fill_buffer or MemcpyKernel is still a kernel.
        assert_eq!(
            kind(
                "command_group_node",
                "fill_buffer",
                &[("kernel_name", "fill_buffer")]
            ),
            NodeKind::Kernel
        );
        assert_eq!(
            kind(
                "command_group_node",
                "x",
                &[("kernel_name", "_ZTS12MemcpyKernel")]
            ),
            NodeKind::Kernel
        );
    }

    #[test]
    fn command_group_operations_from_kernel_name() {
        let cases = [
            ("copy usm", NodeKind::Memcpy),
            ("copy 2d usm", NodeKind::Memcpy),
            ("fill", NodeKind::Fill),
            ("fill usm", NodeKind::Fill),
            ("memset 2d usm", NodeKind::Memset),
            ("host task", NodeKind::HostTask),
            ("barrier", NodeKind::Barrier),
            ("barrier waitlist", NodeKind::Barrier),
            ("update_host", NodeKind::Copy),
            ("copy acc to ptr", NodeKind::Copy),
            ("copy ptr to acc", NodeKind::Copy),
            ("prefetch usm", NodeKind::Other),
        ];
        for (op, want) in cases {
            let c = classify("command_group_node", op, &md(&[("kernel_name", op)]));
            assert_eq!(c.kind, want, "{op}");
            assert_eq!(c.operation, op, "{op}");
        }
    }

    #[test]
    fn operation_in_kernel_name_with_function_payload() {
        let c = classify(
            "command_group_node",
            "main",
            &md(&[("kernel_name", "host task")]),
        );
        assert_eq!(c.kind, NodeKind::HostTask);
        assert_eq!(c.operation, "host task");
        assert_eq!(c.function.as_deref(), Some("main"));
    }

    #[test]
    fn usm_fast_paths_name_the_operation_not_the_caller() {
        let c = classify(
            "memory_transfer_node::memcpy",
            "main",
            &md(&[("memory_size", "64")]),
        );
        assert_eq!(c.kind, NodeKind::Memcpy);
        assert_eq!(c.operation, "memcpy");
        assert_eq!(c.function.as_deref(), Some("main"));
        let c = classify("memory_transfer_node::memset", "", &[]);
        assert_eq!(c.kind, NodeKind::Memset);
        assert_eq!(c.operation, "memset");
        assert_eq!(c.function, None);
    }

    #[test]
    fn scheduler_memory_commands() {
        let c = classify("memory_allocation_node", "Memory Allocation[0x55d0]", &[]);
        assert_eq!(
            (c.kind, c.operation.as_str()),
            (NodeKind::Alloc, "Memory Allocation")
        );
        let c = classify(
            "memory_deallocation_node",
            "Memory Deallocation[0x55d0]",
            &[],
        );
        assert_eq!(
            (c.kind, c.operation.as_str()),
            (NodeKind::Dealloc, "Memory Deallocation")
        );
        let c = classify(
            "memory_transfer_node",
            "Memory Transfer (Copy)[0x55d0]",
            &[],
        );
        assert_eq!(
            (c.kind, c.operation.as_str()),
            (NodeKind::Copy, "Memory Transfer (Copy)")
        );
        assert_eq!(
            kind("memory_transfer_node", "Memory Transfer (Unmap)[0x1]", &[]),
            NodeKind::Copy
        );
        assert_eq!(
            kind("sub_buffer_creation_node", "Sub Buffer Creation[0x1]", &[]),
            NodeKind::Alloc
        );
        assert_eq!(
            kind(
                "host_acc_create_buffer_lock_node",
                "Host Accessor Creation/Buffer Lock[0x1]",
                &[]
            ),
            NodeKind::Other
        );
    }

    #[test]
    fn virtual_nodes_win_over_kernel_name() {
        let name = "virtual_node[0x7f00beef]";
        let c = classify("command_group_node", name, &md(&[("kernel_name", name)]));
        assert_eq!(c.kind, NodeKind::Virtual);
        assert_eq!(c.operation, name);
        assert_eq!(kind("", name, &[]), NodeKind::Virtual);
    }

    #[test]
    fn names_without_hints_use_words() {
        assert_eq!(kind("", "copy usm", &[]), NodeKind::Memcpy);
        assert_eq!(kind("", "my memcpy thing", &[]), NodeKind::Memcpy);
        assert_eq!(kind("", "Fill", &[]), NodeKind::Fill);
        assert_eq!(kind("", "memset", &[]), NodeKind::Memset);
        assert_eq!(kind("", "copy", &[]), NodeKind::Copy);
        assert_eq!(kind("", "update_host", &[]), NodeKind::Copy);
        assert_eq!(kind("", "Barrier", &[]), NodeKind::Barrier);
        assert_eq!(kind("", "Host Task", &[]), NodeKind::HostTask);
        assert_eq!(kind("", "task on the host", &[]), NodeKind::HostTask);
        assert_eq!(kind("", "_ZTS3Foo", &[]), NodeKind::Kernel);
        assert_eq!(kind("", "something", &[]), NodeKind::Other);
        assert_eq!(kind("", "", &[]), NodeKind::Other);
    }

    #[test]
    fn hint_fallbacks() {
        assert_eq!(kind("command_group_node", "mystery", &[]), NodeKind::Kernel);
        assert_eq!(kind("memory_transfer_node", "mystery", &[]), NodeKind::Copy);
        assert_eq!(kind("unknown_node", "mystery", &[]), NodeKind::Other);
        let c = classify("unknown_node", "", &[]);
        assert_eq!(c.operation, "other");
    }

    #[test]
    fn native_commands_by_their_ur_function_or_their_name() {
        // 2026.2 on CUDA: the command group's type string is `unknown`.
        let c = classify(
            "command_group_node",
            "unknown",
            &md(&[
                ("kernel_name", "unknown"),
                (UR_FUNCTION_KEY, NATIVE_COMMAND),
            ]),
        );
        assert_eq!(c.kind, NodeKind::Native);
        assert_eq!(c.operation, "native command");
        assert_eq!(c.function, None);
        assert_eq!(
            kind(
                "command_group_node",
                "unknown",
                &[("kernel_name", "unknown")]
            ),
            NodeKind::Other
        );
        assert_eq!(
            kind(
                "command_group_node",
                "main",
                &[("kernel_name", "enqueue native command")]
            ),
            NodeKind::Native
        );
        assert!(NodeKind::Native.is_device_command());
    }

    #[test]
    fn host_task_hints() {
        let c = classify("host_task", "main", &[]);
        assert_eq!(c.kind, NodeKind::HostTask);
        assert_eq!(c.operation, "host task");
    }
}
