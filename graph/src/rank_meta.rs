//! `meta.json`: who wrote a rank directory of an MPI job (rank, size, host,
//! pid, program, versions, the variable that gave the rank), whether the
//! rank was traced at all (`sampled`) and whether its files are finished
//! (`complete`). Written as one flat JSON object, one field per line, and
//! read back by the `syclgraph` command.

use std::io::{self, Write};
use std::path::Path;

use crate::output::write_atomically;

/// The file name in a rank directory.
pub const META_JSON: &str = "meta.json";

/// The fields of `meta.json` (see docs/guide/mpi.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankMeta {
    /// The rank in the job.
    pub rank: u32,
    /// The world size, when known.
    pub size: Option<u32>,
    /// The rank among the job's processes on this host, when known.
    pub local_rank: Option<u32>,
    /// The host name.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// `argv[0]` of the process.
    pub program: String,
    /// The process's other arguments.
    pub args: Vec<String>,
    /// When tracing started, in nanoseconds since the Unix epoch.
    pub start_time_ns: u64,
    /// The version of `libsyclgraph.so`.
    pub syclgraph_version: String,
    /// The SYCL runtime's version as it reports it to XPTI (`sycl 9.0`).
    pub runtime_version: String,
    /// The variable that gave the rank (`PMI_RANK`, ...).
    pub rank_from: String,
    /// False when the rank was outside the sampled set and recorded nothing.
    pub sampled: bool,
    /// True once the rank's files are finished.
    pub complete: bool,
}

impl RankMeta {
    /// The JSON text, one field per line.
    pub fn to_json(&self) -> String {
        let number = |n: Option<u32>| n.map_or_else(|| "null".to_string(), |n| n.to_string());
        let args: Vec<String> = self.args.iter().map(|a| json_string(a)).collect();
        format!(
            "{{\n  \"rank\": {},\n  \"size\": {},\n  \"local_rank\": {},\n  \"host\": {},\n  \"pid\": {},\n  \"program\": {},\n  \"args\": [{}],\n  \"start_time_ns\": {},\n  \"syclgraph_version\": {},\n  \"runtime_version\": {},\n  \"rank_from\": {},\n  \"sampled\": {},\n  \"complete\": {}\n}}\n",
            self.rank,
            number(self.size),
            number(self.local_rank),
            json_string(&self.host),
            self.pid,
            json_string(&self.program),
            args.join(", "),
            self.start_time_ns,
            json_string(&self.syclgraph_version),
            json_string(&self.runtime_version),
            json_string(&self.rank_from),
            self.sampled,
            self.complete,
        )
    }

    /// Writes `dir/meta.json` atomically (a reader never sees half of it).
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        write_atomically(&dir.join(META_JSON), |w| {
            w.write_all(self.to_json().as_bytes())
        })
    }

    /// Reads the text [`RankMeta::to_json`] writes (any flat JSON object
    /// with these fields, in any order); the error names what is missing.
    pub fn parse(text: &str) -> Result<RankMeta, String> {
        let fields = flat_object(text)?;
        let get = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("no {name:?} field"))
        };
        let uint = |name: &str| -> Result<Option<u64>, String> {
            match get(name)? {
                Value::Null => Ok(None),
                Value::Number(n) => Ok(Some(*n)),
                _ => Err(format!("{name:?} is not a whole number")),
            }
        };
        let small = |name: &str| -> Result<Option<u32>, String> {
            uint(name)?
                .map(|n| u32::try_from(n).map_err(|_| format!("{name:?} is too large")))
                .transpose()
        };
        let text = |name: &str| match get(name)? {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(format!("{name:?} is not a string")),
        };
        let flag = |name: &str| match get(name)? {
            Value::Bool(b) => Ok(*b),
            _ => Err(format!("{name:?} is not true or false")),
        };
        Ok(RankMeta {
            rank: small("rank")?.ok_or("\"rank\" is null")?,
            size: small("size")?,
            local_rank: small("local_rank")?,
            host: text("host")?,
            pid: small("pid")?.ok_or("\"pid\" is null")?,
            program: text("program")?,
            args: match get("args")? {
                Value::List(items) => items.clone(),
                _ => return Err("\"args\" is not a list of strings".into()),
            },
            start_time_ns: uint("start_time_ns")?.ok_or("\"start_time_ns\" is null")?,
            syclgraph_version: text("syclgraph_version")?,
            runtime_version: text("runtime_version")?,
            rank_from: text("rank_from")?,
            sampled: flag("sampled")?,
            complete: flag("complete")?,
        })
    }

    /// Reads `dir/meta.json`.
    pub fn read(dir: &Path) -> Result<RankMeta, String> {
        let path = dir.join(META_JSON);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        RankMeta::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value of a flat `meta.json` object.
#[derive(Debug)]
enum Value {
    Null,
    Bool(bool),
    Number(u64),
    Text(String),
    List(Vec<String>),
}

/// The fields of a flat JSON object whose values are null, booleans,
/// whole numbers, strings or lists of strings.
fn flat_object(text: &str) -> Result<Vec<(String, Value)>, String> {
    let mut s = Scanner {
        chars: text.chars().peekable(),
    };
    s.expect('{')?;
    let mut fields = Vec::new();
    if s.peek() == Some('}') {
        return Ok(fields);
    }
    loop {
        let key = s.string()?;
        s.expect(':')?;
        let value = match s.peek() {
            Some('"') => Value::Text(s.string()?),
            Some('[') => {
                s.expect('[')?;
                let mut items = Vec::new();
                if s.peek() == Some(']') {
                    s.expect(']')?;
                } else {
                    loop {
                        items.push(s.string()?);
                        match s.next() {
                            Some(',') => continue,
                            Some(']') => break,
                            _ => return Err("a list is not closed".into()),
                        }
                    }
                }
                Value::List(items)
            }
            _ => {
                let word = s.word();
                match word.as_str() {
                    "null" => Value::Null,
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    w => Value::Number(
                        w.parse()
                            .map_err(|_| format!("{key:?} has an unreadable value {w:?}"))?,
                    ),
                }
            }
        };
        fields.push((key, value));
        match s.next() {
            Some(',') => continue,
            Some('}') => return Ok(fields),
            _ => return Err("the object is not closed".into()),
        }
    }
}

/// Reads JSON tokens, skipping white space.
struct Scanner<'t> {
    chars: std::iter::Peekable<std::str::Chars<'t>>,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while self.chars.peek().is_some_and(|c| c.is_whitespace()) {
            self.chars.next();
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.peek().copied()
    }

    fn next(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.next()
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(got) if got == c => Ok(()),
            got => Err(format!("expected {c:?}, found {got:?}")),
        }
    }

    fn word(&mut self) -> String {
        self.skip_space();
        let mut word = String::new();
        while let Some(&c) = self.chars.peek() {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                word.push(c);
                self.chars.next();
            } else {
                break;
            }
        }
        word
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            match self.chars.next().ok_or("a string is not closed")? {
                '"' => return Ok(out),
                '\\' => match self.chars.next().ok_or("a string is not closed")? {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| self.chars.next()).collect();
                        let code = u32::from_str_radix(&hex, 16)
                            .map_err(|_| format!("bad escape \\u{hex}"))?;
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                    c => out.push(c),
                },
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RankMeta {
        RankMeta {
            rank: 3,
            size: Some(4),
            local_rank: None,
            host: "node-7".into(),
            pid: 4242,
            program: "python".into(),
            args: vec!["job.py".into(), "--name=\"a\\b\"\n\u{1}".into()],
            start_time_ns: 1_790_000_000_123_456_789,
            syclgraph_version: "0.1.0".into(),
            runtime_version: "sycl 9.0".into(),
            rank_from: "PMI_RANK".into(),
            sampled: true,
            complete: false,
        }
    }

    #[test]
    fn written_text_reads_back_the_same() {
        let meta = sample();
        let text = meta.to_json();
        assert!(text.contains("\"local_rank\": null,\n"), "{text}");
        assert!(text.contains("\"complete\": false\n}"), "{text}");
        assert_eq!(RankMeta::parse(&text).unwrap(), meta);
        let empty = RankMeta {
            args: Vec::new(),
            ..sample()
        };
        assert_eq!(RankMeta::parse(&empty.to_json()).unwrap(), empty);
    }

    #[test]
    fn fields_in_another_order_and_spacing_are_read() {
        let text = r#"{"complete":true,"sampled":false,"rank_from":"SLURM_PROCID",
            "runtime_version":"sycl 8.0","syclgraph_version":"0.1.0","start_time_ns":5,
            "args":[],"program":"/bin/app","pid":9,"host":"h","local_rank":1,"size":null,"rank":0}"#;
        let meta = RankMeta::parse(text).unwrap();
        assert_eq!((meta.rank, meta.size, meta.local_rank), (0, None, Some(1)));
        assert!(meta.complete && !meta.sampled);
    }

    #[test]
    fn broken_files_say_what_is_wrong() {
        let text = sample().to_json();
        let cut = &text[..text.len() / 2];
        assert!(RankMeta::parse(cut).is_err());
        let without = text.replace("\"pid\": 4242,\n", "");
        assert!(RankMeta::parse(&without).unwrap_err().contains("pid"));
        let wrong = text.replace("\"sampled\": true", "\"sampled\": 1");
        assert!(RankMeta::parse(&wrong).unwrap_err().contains("sampled"));
    }
}
