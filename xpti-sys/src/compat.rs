//! Which DPC++ runtimes the layouts of this crate are valid for, decided from
//! what the runtime reports to `xptiTraceInit(major, minor, version, stream)`.
//!
//! The shim's build-time `static_assert`s pin the layouts against the headers
//! syclgraph was *built* with; this module checks, at run time, the runtime
//! the application actually *loaded*, which may be another release.
//!
//! # What each release reports (observed, PyPI `intel-sycl-rt` wheels)
//!
//! Every stream announces its own version, in its own numbering:
//!
//! | release            | `xpti.framework` | `sycl` (libsycl ABI)                                         | `ur.call` | other streams                                   |
//! |--------------------|------------------|---------------------------------------------------------------|-----------|-------------------------------------------------|
//! | 2024.2.1           | not announced    | 7, 2, `"sycl __LIBSYCL_MAJOR_VERSION.__LIBSYCL_MINOR_VERSION"` | —         | `sycl.experimental.*` 0.1, `sycl.pi`, `sycl.pi.debug` 7.2 |
//! | 2025.0.0, 2025.0.5 | not announced    | 8, 0, same unexpanded string                                  | 0.10      | `sycl.experimental.*` 0.1                        |
//! | 2025.1.1           | 1, 0, `"1.0.0"`  | 8, 0, same unexpanded string                                  | 0.11      | `sycl.experimental.*` 0.1                        |
//! | 2025.2.2, 2025.3.3 | 1, 0, `"1.0.0"`  | 8, 0, same unexpanded string                                  | 0.12      | `sycl.experimental.*` 0.1                        |
//! | 2026.0.0 – 2026.2.0| 1, 0, `"1.0.0"`  | 9, 0, `"sycl 9.0"`                                            | 0.12      | `sycl.debug`, `sycl.experimental.*`, `ur.api` 9.0; `ur.call.debug` 0.12 |
//!
//! Streams come in that order (`xpti.framework` first when present, `sycl`
//! before `sycl.debug` and `ur.call.debug`), except that on 2025.x `ur.call`
//! and the `sycl.experimental.*` streams come *before* `sycl`.
//!
//! So the XPTI framework's own version (1.0.0 from 2025.1 to 2026.2, absent
//! on 2025.0) does not tell the releases apart, the UR and experimental
//! streams say nothing about XPTI, and the one report that identifies the
//! runtime is the `sycl` stream's: the libsycl ABI major (7 = 2024.x,
//! 8 = 2025.x, 9 = 2026.x). [`check_runtime`] judges that report;
//! [`check_stream`] judges any stream's and says when to wait for `sycl`.
//!
//! # Layouts (headers of 2025.0.0, 2025.0.5, 2025.1.1, 2025.2.2, 2025.3.3, 2026.0.0, 2026.1.2, 2026.2.0)
//!
//! Identical in all of them: `payload_t` (80 bytes, `line_no` at 24),
//! `uid_t`, `reserved_data_t` (payload pointer + 56-byte `metadata_t`),
//! `object_data_t` (24), `function_with_args_t` (40), the offsets of
//! `trace_event_data_t` up to `global_user_data` (112), the trace point and
//! metadata type values, and the signatures of every function syclgraph
//! looks up (all exported by each release's `libxptifw.so`). Differences:
//!
//! - `trace_event_data_t::flags` (offset 120) does not exist on 2025.0.x:
//!   the struct is 120 bytes there, 128 from 2025.1. It cannot be told from
//!   the `sycl` report (8.0 on all of 2025.x), so [`RuntimeFamily::trace_event_flags`]
//!   is false for the whole SYCL 8 family: never read `flags` there.
//! - `string_id_t` is `int32_t` up to 2025.2, `uint32_t` from 2025.3: same
//!   size, ids are small positive numbers; `metadata_t` is an
//!   `unordered_map<string_id_t, object_id_t>` with the same libstdc++ node
//!   layout either way (neither hash caches its code).
//!
//! Not layouts, but different too: a payload with no source location has a
//! null `source_file` and `line_no` = `u32::MAX` up to 2025.2,
//! `"<unknown-file>"` and `u32::MAX` on 2025.3, `"<unknown-file>"` and 0 from
//! 2026.0. `sycl.debug` and `ur.call.debug` exist from 2026.0 only; on 2025.x
//! `function_with_args_begin/end` come on `ur.call` (with
//! `UR_ENABLE_LAYERS=UR_LAYER_TRACING`; function ids 17, 32, 33, 41, 92 as in
//! UR 0.12). Up to 2026.1 libsycl links the wheel's `libur_loader.so.0`
//! dynamically (one UR instance); 2026.2 links its own statically.

/// What syclgraph knows about the runtimes of one libsycl ABI major.
#[derive(Debug, PartialEq, Eq)]
pub struct RuntimeFamily {
    /// The libsycl ABI major the `sycl` stream reports (`libsycl.so.N`).
    pub sycl_major: u32,
    /// The DPC++ releases it covers, for messages.
    pub releases: &'static str,
    /// The releases whose headers and behaviour were checked.
    pub verified: &'static [&'static str],
    /// Whether `trace_event_data_t::flags` exists in every release of the family.
    pub trace_event_flags: bool,
    /// Whether the runtime announces `sycl.debug`.
    pub sycl_debug_stream: bool,
    /// Whether UR function calls with arguments come on `ur.call.debug`
    /// (otherwise on `ur.call`, when the tracing layer is on).
    pub ur_call_debug_stream: bool,
}

/// The runtimes whose XPTI layouts match this crate's declarations, oldest first.
pub const SUPPORTED: &[RuntimeFamily] = &[
    RuntimeFamily {
        sycl_major: 8,
        releases: "DPC++ 2025.x",
        verified: &["2025.0.0", "2025.0.5", "2025.1.1", "2025.2.2", "2025.3.3"],
        trace_event_flags: false,
        sycl_debug_stream: false,
        ur_call_debug_stream: false,
    },
    RuntimeFamily {
        sycl_major: 9,
        releases: "DPC++ 2026.x",
        verified: &["2026.0.0", "2026.1.2", "2026.2.0"],
        trace_event_flags: true,
        sycl_debug_stream: true,
        ur_call_debug_stream: true,
    },
];

/// The supported range, for messages.
pub const SUPPORTED_RANGE: &str =
    "the DPC++ runtimes 2025.0 to 2026.2 (libsycl ABI 8.x and 9.x, XPTI framework 1.x)";

/// The stream whose version identifies the runtime.
pub const RUNTIME_STREAM: &str = "sycl";

/// The XPTI framework's own stream (announced from DPC++ 2025.1 on).
pub const FRAMEWORK_STREAM: &str = "xpti.framework";

/// The XPTI framework major syclgraph knows.
pub const FRAMEWORK_MAJOR: u32 = 1;

/// The family of runtimes with libsycl ABI major `sycl_major`, if supported.
pub fn family(sycl_major: u32) -> Option<&'static RuntimeFamily> {
    SUPPORTED.iter().find(|f| f.sycl_major == sycl_major)
}

/// Judges what the `sycl` stream reported to `xptiTraceInit`: `Ok` when the
/// XPTI layouts this crate declares are valid for that runtime, else the
/// reason (one line, without the `syclgraph: ` prefix, naming syclgraph,
/// the version found and the supported range).
///
/// Known majors (8, 9) are accepted whatever the minor: the layouts did not
/// change within a major in any release seen. An unknown major, older or
/// newer, is refused: its layouts were never checked.
pub fn check_runtime(major: u32, minor: u32, version: &str) -> Result<(), String> {
    match family(major) {
        Some(_) => Ok(()),
        None => Err(format!(
            "this DPC++ runtime reports SYCL runtime version {}; syclgraph supports {SUPPORTED_RANGE}",
            describe(major, minor, version, "sycl ")
        )),
    }
}

/// What [`check_stream`] concluded from one `xptiTraceInit`.
#[derive(Debug, PartialEq, Eq)]
pub enum StreamCheck {
    /// The runtime is one syclgraph supports: tracing may start.
    Supported(&'static RuntimeFamily),
    /// The runtime is not supported: the reason, one line, as for [`check_runtime`].
    Refused(String),
    /// This stream's version says nothing about the XPTI layouts (UR and
    /// experimental streams, or a framework version we know): wait for
    /// the `sycl` stream, which every release announces before the streams
    /// syclgraph registers callbacks on.
    Undecided,
}

/// Judges any stream's `xptiTraceInit` report: `sycl` (and `sycl.debug`,
/// which reports the same) decide through [`check_runtime`]; an
/// `xpti.framework` with a major other than 1 is refused at once; anything
/// else is [`StreamCheck::Undecided`].
pub fn check_stream(stream: &str, major: u32, minor: u32, version: &str) -> StreamCheck {
    match stream {
        RUNTIME_STREAM | "sycl.debug" => match check_runtime(major, minor, version) {
            Ok(()) => family(major).map_or(StreamCheck::Undecided, StreamCheck::Supported),
            Err(why) => StreamCheck::Refused(why),
        },
        FRAMEWORK_STREAM if major != FRAMEWORK_MAJOR => StreamCheck::Refused(format!(
            "this XPTI framework reports version {}; syclgraph supports {SUPPORTED_RANGE}",
            describe(major, minor, version, "")
        )),
        _ => StreamCheck::Undecided,
    }
}

/// `major.minor`, plus the version string when it adds something readable
/// (DPC++ 2024.x and 2025.x send an unexpanded macro name there).
fn describe(major: u32, minor: u32, version: &str, prefix: &str) -> String {
    let numbers = format!("{major}.{minor}");
    let version = version.trim();
    let plain = version.strip_prefix(prefix).unwrap_or(version);
    let readable = !version.is_empty()
        && !version.contains("__")
        && version.len() <= 64
        && version.chars().all(|c| c.is_ascii_graphic() || c == ' ');
    if readable && plain != numbers && !plain.starts_with(&format!("{numbers}.")) {
        format!("{numbers} (\"{version}\")")
    } else {
        numbers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNEXPANDED: &str = "sycl __LIBSYCL_MAJOR_VERSION.__LIBSYCL_MINOR_VERSION";

    /// Every (stream, major, minor, version) seen on the PyPI runtimes, in
    /// the order they came, and which release sent it.
    const OBSERVED: &[(&str, &str, u32, u32, &str)] = &[
        ("2024.2.1", "sycl.experimental.buffer", 0, 1, "0.1"),
        ("2024.2.1", "sycl", 7, 2, UNEXPANDED),
        ("2024.2.1", "sycl.pi", 7, 2, UNEXPANDED),
        ("2025.0.0", "ur.call", 0, 10, "0.10"),
        ("2025.0.0", "sycl.experimental.buffer", 0, 1, "0.1"),
        ("2025.0.0", "sycl.experimental.image", 0, 1, "0.1"),
        ("2025.0.0", "sycl.experimental.mem_alloc", 0, 1, "0.1"),
        ("2025.0.0", "sycl", 8, 0, UNEXPANDED),
        ("2025.1.1", "xpti.framework", 1, 0, "1.0.0"),
        ("2025.1.1", "ur.call", 0, 11, "0.11"),
        ("2025.1.1", "sycl", 8, 0, UNEXPANDED),
        ("2025.3.3", "xpti.framework", 1, 0, "1.0.0"),
        ("2025.3.3", "ur.call", 0, 12, "0.12"),
        ("2025.3.3", "sycl", 8, 0, UNEXPANDED),
        ("2026.2.0", "xpti.framework", 1, 0, "1.0.0"),
        ("2026.2.0", "sycl", 9, 0, "sycl 9.0"),
        ("2026.2.0", "sycl.debug", 9, 0, "sycl 9.0"),
        ("2026.2.0", "sycl.experimental.buffer", 9, 0, "sycl 9.0"),
        ("2026.2.0", "ur.api", 9, 0, "sycl 9.0"),
        ("2026.2.0", "ur.call", 0, 12, "0.12"),
        ("2026.2.0", "ur.call.debug", 0, 12, "0.12"),
    ];

    /// The first decisive verdict for each release, streams taken in order.
    fn first_verdict(release: &str) -> (usize, StreamCheck) {
        OBSERVED
            .iter()
            .filter(|o| o.0 == release)
            .enumerate()
            .map(|(i, &(_, s, ma, mi, v))| (i, check_stream(s, ma, mi, v)))
            .find(|(_, c)| *c != StreamCheck::Undecided)
            .expect("every release announces sycl")
    }

    #[test]
    fn every_supported_release_is_accepted_at_its_sycl_stream() {
        for (release, position, major) in [
            ("2025.0.0", 4, 8),
            ("2025.1.1", 2, 8),
            ("2025.3.3", 2, 8),
            ("2026.2.0", 1, 9),
        ] {
            let (at, verdict) = first_verdict(release);
            assert_eq!(at, position, "{release}");
            match verdict {
                StreamCheck::Supported(f) => assert_eq!(f.sycl_major, major, "{release}"),
                other => panic!("{release}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_2024_runtime_is_refused_before_any_stream_we_use() {
        let (at, verdict) = first_verdict("2024.2.1");
        assert_eq!(at, 1);
        let StreamCheck::Refused(why) = verdict else {
            panic!("{verdict:?}")
        };
        assert!(why.contains("syclgraph"), "{why}");
        assert!(why.contains("7.2"), "{why}");
        assert!(why.contains("2025.0 to 2026.2"), "{why}");
        assert!(!why.contains("__LIBSYCL"), "no macro noise: {why}");
        assert!(!why.contains('\n'));
    }

    #[test]
    fn check_runtime_accepts_known_majors_whatever_the_minor() {
        assert_eq!(check_runtime(8, 0, UNEXPANDED), Ok(()));
        assert_eq!(check_runtime(9, 0, "sycl 9.0"), Ok(()));
        assert_eq!(check_runtime(9, 3, "sycl 9.3"), Ok(()));
        assert_eq!(check_runtime(8, 7, ""), Ok(()));
    }

    #[test]
    fn check_runtime_refuses_unknown_majors_naming_what_it_found() {
        for (major, minor, version, shown) in [
            (7, 2, UNEXPANDED, "7.2"),
            (10, 0, "sycl 10.0", "10.0"),
            (0, 0, "", "0.0"),
            (10, 1, "sycl 10.1-rc2", "10.1 (\"sycl 10.1-rc2\")"),
        ] {
            let why = check_runtime(major, minor, version).unwrap_err();
            assert!(
                why.contains(&format!("version {shown};")),
                "{major}.{minor}: {why}"
            );
            assert!(why.contains("syclgraph supports"), "{why}");
            assert!(why.contains("2025.0 to 2026.2"), "{why}");
            assert!(!why.starts_with("syclgraph:"), "warn() adds the prefix");
            assert!(!why.contains('\n'));
        }
    }

    #[test]
    fn the_framework_stream_refuses_only_another_major() {
        assert_eq!(
            check_stream("xpti.framework", 1, 0, "1.0.0"),
            StreamCheck::Undecided
        );
        assert_eq!(
            check_stream("xpti.framework", 1, 4, "1.4.0"),
            StreamCheck::Undecided
        );
        let StreamCheck::Refused(why) = check_stream("xpti.framework", 2, 0, "2.0.0") else {
            panic!()
        };
        assert!(why.contains("XPTI framework reports version 2.0"), "{why}");
        assert!(why.contains("syclgraph"));
    }

    #[test]
    fn other_streams_never_decide() {
        for (stream, major, minor, version) in [
            ("ur.call", 0, 10, "0.10"),
            ("ur.call.debug", 0, 12, "0.12"),
            ("ur.api", 9, 0, "sycl 9.0"),
            ("sycl.experimental.buffer", 0, 1, "0.1"),
            ("sycl.pi", 7, 2, UNEXPANDED),
            ("some.future.stream", 42, 0, "?"),
            ("", 0, 0, ""),
        ] {
            assert_eq!(
                check_stream(stream, major, minor, version),
                StreamCheck::Undecided,
                "{stream}"
            );
        }
    }

    #[test]
    fn sycl_debug_decides_like_sycl() {
        assert!(matches!(
            check_stream("sycl.debug", 9, 0, "sycl 9.0"),
            StreamCheck::Supported(f) if f.sycl_major == 9
        ));
        assert!(matches!(
            check_stream("sycl.debug", 11, 0, "sycl 11.0"),
            StreamCheck::Refused(_)
        ));
    }

    #[test]
    fn families_describe_what_differs() {
        let f8 = family(8).unwrap();
        assert!(!f8.trace_event_flags && !f8.sycl_debug_stream && !f8.ur_call_debug_stream);
        assert!(f8.verified.contains(&"2025.0.0"));
        let f9 = family(9).unwrap();
        assert!(f9.trace_event_flags && f9.sycl_debug_stream && f9.ur_call_debug_stream);
        assert!(f9.verified.contains(&"2026.2.0"));
        assert!(family(7).is_none() && family(10).is_none());
        let majors: Vec<u32> = SUPPORTED.iter().map(|f| f.sycl_major).collect();
        assert!(majors.windows(2).all(|w| w[0] < w[1]), "oldest first");
    }

    #[test]
    fn garbage_version_strings_are_not_echoed() {
        let long = "x".repeat(500);
        for version in [long.as_str(), "a\nb", "\u{1b}[31mred"] {
            let why = check_runtime(12, 0, version).unwrap_err();
            assert!(why.contains("version 12.0;"), "{why}");
            assert!(!why.contains('\n') && !why.contains('\u{1b}') && why.len() < 200);
        }
    }
}
