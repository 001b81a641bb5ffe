//! CSV fields written by hand, byte for byte as the csv crate writes them
//! with its defaults (`QuoteStyle::Necessary`, `,` delimiter, `\n`
//! terminator), for the files written row by row on the collector's
//! per-command or per-snapshot path (`kernels.csv`, `critical_path.csv`),
//! where the csv crate's per-field state machine cost more than the row.

/// Appends `field` as the csv crate writes it: quoted, with `"` doubled,
/// when it holds a `,`, `"`, `\r` or `\n`; as it is otherwise (an empty
/// field too: every row written this way has more than one field).
pub(crate) fn push_field(out: &mut Vec<u8>, field: &str) {
    let bytes = field.as_bytes();
    if !bytes
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        out.extend_from_slice(bytes);
        return;
    }
    out.push(b'"');
    for part in bytes.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Appends a number, or nothing for `None` (an empty field).
#[inline(always)]
pub(crate) fn push_number(out: &mut Vec<u8>, num: &mut itoa::Buffer, value: Option<u64>) {
    if let Some(v) = value {
        out.extend_from_slice(num.format(v).as_bytes());
    }
}
