//! The protobuf wire format, read and written field by field without a
//! schema: what `report/`'s merged timeline needs to change a few ids in a
//! Perfetto trace and pass every other byte through as it was, and the one
//! reader the tests decode traces with (with the field numbers of
//! [`super::fields`]).

use std::fmt;

/// `VARINT`.
pub const VARINT: u8 = 0;
/// `I64` (fixed64, sfixed64, double).
pub const FIXED64: u8 = 1;
/// `LEN` (bytes, strings, messages, packed repeated fields).
pub const LEN: u8 = 2;
/// `I32` (fixed32, sfixed32, float).
pub const FIXED32: u8 = 5;

/// Bytes that are not a protobuf message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// One field's value as the wire has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// A varint (every integer type but the fixed ones, bools, enums).
    Varint(u64),
    /// Eight little-endian bytes.
    Fixed64(u64),
    /// Length-delimited bytes.
    Len(&'a [u8]),
    /// Four little-endian bytes.
    Fixed32(u32),
}

/// One field of a message: its number, its value, and its bytes as they
/// were (key included), to copy unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field number.
    pub number: u32,
    /// The value.
    pub value: Value<'a>,
    /// The key and value bytes.
    pub raw: &'a [u8],
}

/// Reads a varint at `*pos` of `buf`, moving `*pos` past it.
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, WireError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos).ok_or(WireError("a varint is cut"))?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError("a varint is longer than 10 bytes"))
}

/// The fields of a message, in the order they are written.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Iterates over the fields of the message `buf`.
pub fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf, pos: 0 }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<Field<'a>, WireError> {
        let start = self.pos;
        let key = read_varint(self.buf, &mut self.pos)?;
        let number = u32::try_from(key >> 3).map_err(|_| WireError("a field number is too big"))?;
        if number == 0 {
            return Err(WireError("field number 0"));
        }
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(read_varint(self.buf, &mut self.pos)?),
            FIXED64 => Value::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().unwrap())),
            LEN => {
                let len = read_varint(self.buf, &mut self.pos)?;
                let len = usize::try_from(len).map_err(|_| WireError("a length is too big"))?;
                Value::Len(self.take(len)?)
            }
            FIXED32 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().unwrap())),
            _ => return Err(WireError("a group or an unknown wire type")),
        };
        Ok(Field {
            number,
            value,
            raw: &self.buf[start..self.pos],
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|end| *end <= self.buf.len())
            .ok_or(WireError("a field is cut"))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            // Nothing after a broken field can be framed.
            self.pos = self.buf.len();
        }
        Some(field)
    }
}

/// Appends `value` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a field's key.
pub fn put_key(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire_type));
}

/// Appends a varint field.
pub fn put_varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    put_key(out, number, VARINT);
    put_varint(out, value);
}

/// Appends a fixed64 field.
pub fn put_fixed64_field(out: &mut Vec<u8>, number: u32, value: u64) {
    put_key(out, number, FIXED64);
    out.extend_from_slice(&value.to_le_bytes());
}

/// Appends a length-delimited field holding `bytes`.
pub fn put_len_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_key(out, number, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A field's value as the wire has it: `value`'s key and bytes, for a
/// field rewritten with its own wire type.
pub fn put_value(out: &mut Vec<u8>, number: u32, value: Value<'_>) {
    match value {
        Value::Varint(v) => put_varint_field(out, number, v),
        Value::Fixed64(v) => put_fixed64_field(out, number, v),
        Value::Len(b) => put_len_field(out, number, b),
        Value::Fixed32(v) => {
            put_key(out, number, FIXED32);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_as_written() {
        let mut msg = Vec::new();
        put_varint_field(&mut msg, 1, 300);
        put_fixed64_field(&mut msg, 47, u64::MAX - 1);
        put_len_field(&mut msg, 2, b"name");
        put_value(&mut msg, 3, Value::Fixed32(7));
        put_varint_field(&mut msg, 100_000, 0);
        let got: Vec<Field> = fields(&msg).map(Result::unwrap).collect();
        let values: Vec<(u32, Value)> = got.iter().map(|f| (f.number, f.value)).collect();
        assert_eq!(
            values,
            [
                (1, Value::Varint(300)),
                (47, Value::Fixed64(u64::MAX - 1)),
                (2, Value::Len(b"name")),
                (3, Value::Fixed32(7)),
                (100_000, Value::Varint(0)),
            ]
        );
        let raw: Vec<u8> = got.iter().flat_map(|f| f.raw.iter().copied()).collect();
        assert_eq!(raw, msg, "the raw bytes are the message, in order");
    }

    #[test]
    fn broken_messages_are_errors_not_panics() {
        for bad in [
            &[0x08][..],         // varint cut
            &[0x12, 0x05, b'a'], // length past the end
            &[0x0b],             // a group
            &[0x00, 0x01],       // field 0
            &[0x09, 1, 2, 3],    // fixed64 cut
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
        ] {
            let got: Vec<_> = fields(bad).collect();
            assert_eq!(got.len(), 1, "{bad:?}");
            assert!(got[0].is_err(), "{bad:?}");
        }
    }
}
