//! Turning the runtime's raw names into readable ones: kernel names are
//! demangled (with `cpp_demangle`), addresses are stripped from command names,
//! and numbers the runtime sends for enums or pointers are made readable.

use cpp_demangle::Symbol;

/// What `__cxa_demangle` (and so the runtime, and `cpp_demangle`) puts before
/// the type of a `_ZTS` typeinfo-name symbol.
const TYPEINFO_PREFIX: &str = "typeinfo name for ";

/// The readable name of a kernel from its raw `kernel_name` (or payload name).
///
/// `_ZTS…` symbols demangle to `typeinfo name for X`, of which `X` is kept;
/// names the runtime already demangled (`typeinfo name for X`) keep `X`; other
/// mangled symbols (`_Z…`) are demangled whole; anything else (the OpenCL
/// interop case, where the runtime reports a function name such as `main`) is
/// returned trimmed. Never fails: a symbol that does not demangle stays as is.
pub fn kernel_display_name(raw: &str) -> String {
    let raw = raw.trim();
    if let Some(rest) = raw.strip_prefix(TYPEINFO_PREFIX) {
        return rest.trim().to_string();
    }
    if raw.starts_with("_Z") {
        if let Some(text) = Symbol::new(raw).ok().and_then(|s| s.demangle().ok()) {
            return match text.strip_prefix(TYPEINFO_PREFIX) {
                Some(rest) => rest.trim().to_string(),
                None => text,
            };
        }
    }
    raw.to_string()
}

/// Whether a name is a mangled C++ symbol or the runtime's demangled
/// typeinfo name: the marks of a SYCL kernel name.
pub fn looks_like_kernel_symbol(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with("_Z") || raw.starts_with(TYPEINFO_PREFIX)
}

/// `Memory Allocation[0x5581c0]` → `Memory Allocation`: the runtime appends
/// the address of the memory object or event to many command names; the
/// address is kept in the metadata, the name without it groups alike commands.
/// Only a trailing `[...]` whose content is a (hex) number is removed.
pub fn strip_address_suffix(name: &str) -> &str {
    let trimmed = name.trim_end();
    if let Some(body) = trimmed.strip_suffix(']') {
        if let Some(open) = body.rfind('[') {
            let inside = &body[open + 1..];
            let digits = inside
                .strip_prefix("0x")
                .or_else(|| inside.strip_prefix("0X"))
                .unwrap_or(inside);
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit()) {
                return body[..open].trim_end();
            }
        }
    }
    trimmed
}

/// The access mode an edge's `access_mode` metadata names.
///
/// The runtime sends `static_cast<int>(sycl::access::mode)`: read = 1024,
/// write, read_write, discard_write, discard_read_write, atomic. Names are
/// passed through; an unknown number stays as it is.
pub fn access_mode_name(raw: &str) -> String {
    let raw = raw.trim();
    let name = match raw {
        "1024" => "read",
        "1025" => "write",
        "1026" => "read_write",
        "1027" => "discard_write",
        "1028" => "discard_read_write",
        "1029" => "atomic",
        other => return other.to_string(),
    };
    name.to_string()
}

/// An address sent as a decimal number (`size_t` metadata) is shown in hex,
/// like the runtime's own `virtual_node[0x…]` names; other text is kept.
pub fn address_text(raw: &str) -> String {
    let raw = raw.trim();
    match raw.parse::<u64>() {
        Ok(value) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{value:#x}")
        }
        _ => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typeinfo_symbols_demangle_to_the_type() {
        assert_eq!(
            kernel_display_name("_ZTSZ4mainE8MyKernel"),
            "main::MyKernel"
        );
        assert_eq!(kernel_display_name("_ZTS6Square"), "Square");
    }

    #[test]
    fn lambda_kernel_names_demangle() {
        let raw = "_ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_4itemILi1ELb1EEEE_";
        let shown = kernel_display_name(raw);
        assert!(
            shown.starts_with("main::{lambda(sycl::_V1::handler&)#1}"),
            "{shown}"
        );
        assert!(!shown.starts_with("typeinfo"), "{shown}");
    }

    #[test]
    fn already_demangled_typeinfo_keeps_the_type() {
        assert_eq!(
            kernel_display_name("typeinfo name for ns::Add<float>"),
            "ns::Add<float>"
        );
    }

    #[test]
    fn plain_and_broken_names_stay() {
        assert_eq!(kernel_display_name("main"), "main");
        assert_eq!(kernel_display_name(" vadd "), "vadd");
        assert_eq!(kernel_display_name("_Znot a symbol"), "_Znot a symbol");
        assert_eq!(kernel_display_name(""), "");
    }

    #[test]
    fn address_suffixes_are_stripped_only_when_numeric() {
        assert_eq!(
            strip_address_suffix("Memory Allocation[0x5581c0]"),
            "Memory Allocation"
        );
        assert_eq!(
            strip_address_suffix("Memory Transfer (Copy)[0xABC]"),
            "Memory Transfer (Copy)"
        );
        assert_eq!(strip_address_suffix("a[i]"), "a[i]");
        assert_eq!(strip_address_suffix("x[]"), "x[]");
        assert_eq!(strip_address_suffix("plain"), "plain");
    }

    #[test]
    fn access_modes_from_numbers_and_names() {
        assert_eq!(access_mode_name("1024"), "read");
        assert_eq!(access_mode_name("1026"), "read_write");
        assert_eq!(access_mode_name("1028"), "discard_read_write");
        assert_eq!(access_mode_name("write"), "write");
        assert_eq!(access_mode_name("7"), "7");
    }

    #[test]
    fn decimal_addresses_become_hex() {
        assert_eq!(address_text("255"), "0xff");
        assert_eq!(address_text("0x10"), "0x10");
        assert_eq!(address_text("-3"), "-3");
        assert_eq!(address_text(""), "");
    }
}
