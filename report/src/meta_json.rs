//! A reader for `meta.json`: one flat JSON object whose values are
//! strings, numbers, booleans, null or arrays of strings (what the
//! subscriber writes). No nesting beyond that is needed, so no JSON crate.

/// One value of `meta.json`.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// Another number.
    Real(f64),
    /// A string.
    Text(String),
    /// An array (of strings in `args`), kept as its JSON text.
    Array(String),
}

/// Parses a flat JSON object into its (key, value) pairs, in file order.
pub fn parse_object(text: &str) -> Result<Vec<(String, MetaValue)>, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    p.expect(b'{')?;
    let mut fields = Vec::new();
    p.ws();
    if p.peek() == Some(b'}') {
        return Ok(fields);
    }
    loop {
        p.ws();
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let value = p.value()?;
        fields.push((key, value));
        p.ws();
        match p.next() {
            Some(b',') => continue,
            Some(b'}') => return Ok(fields),
            _ => return Err(format!("at byte {}: expected , or }}", p.i)),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        self.i += 1;
        c
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.next() == Some(c) {
            Ok(())
        } else {
            Err(format!("at byte {}: expected {:?}", self.i - 1, c as char))
        }
    }
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next() {
                None => return Err("unterminated string".into()),
                Some(b'"') => break,
                Some(b'\\') => match self.next() {
                    Some(b'n') => out.push(b'\n'),
                    Some(b't') => out.push(b'\t'),
                    Some(b'r') => out.push(b'\r'),
                    Some(b'b') => out.push(8),
                    Some(b'f') => out.push(12),
                    Some(b'u') => {
                        let hex = self
                            .s
                            .get(self.i..self.i + 4)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .ok_or("bad \\u escape")?;
                        self.i += 4;
                        let c = char::from_u32(hex).unwrap_or('\u{fffd}');
                        out.extend_from_slice(c.to_string().as_bytes());
                    }
                    Some(c) => out.push(c),
                    None => return Err("unterminated string".into()),
                },
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| "a string is not UTF-8".into())
    }
    fn value(&mut self) -> Result<MetaValue, String> {
        match self.peek() {
            Some(b'"') => Ok(MetaValue::Text(self.string()?)),
            Some(b'[') => {
                let start = self.i;
                let mut depth = 0;
                loop {
                    match self.peek() {
                        None => return Err("unterminated array".into()),
                        Some(b'"') => {
                            self.string()?;
                            continue;
                        }
                        Some(b'[') => depth += 1,
                        Some(b']') => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("[]");
                Ok(MetaValue::Array(text.to_string()))
            }
            _ => {
                let start = self.i;
                while matches!(self.peek(), Some(c) if !matches!(c, b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t'))
                {
                    self.i += 1;
                }
                let word = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                match word {
                    "null" => Ok(MetaValue::Null),
                    "true" => Ok(MetaValue::Bool(true)),
                    "false" => Ok(MetaValue::Bool(false)),
                    _ => {
                        if let Ok(n) = word.parse::<i64>() {
                            Ok(MetaValue::Int(n))
                        } else if let Ok(x) = word.parse::<f64>() {
                            Ok(MetaValue::Real(x))
                        } else {
                            Err(format!("at byte {start}: {word:?} is not a JSON value"))
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_subscriber_writes() {
        let text = "{\n  \"rank\": 2,\n  \"size\": null,\n  \"host\": \"vm \\\"a\\\"\",\n  \"args\": [\"-n\", \"a]b\"],\n  \"sampled\": true\n}\n";
        let fields = parse_object(text).unwrap();
        assert_eq!(
            fields,
            [
                ("rank".to_string(), MetaValue::Int(2)),
                ("size".to_string(), MetaValue::Null),
                ("host".to_string(), MetaValue::Text("vm \"a\"".into())),
                (
                    "args".to_string(),
                    MetaValue::Array("[\"-n\", \"a]b\"]".into())
                ),
                ("sampled".to_string(), MetaValue::Bool(true)),
            ]
        );
        assert!(parse_object("{\"rank\": 2").is_err());
        assert!(parse_object("{\"rank\": x}").is_err());
    }
}
