//! Reading records back from the journal ([`JournalReader`]): the fixed
//! layouts and the general one (see the module doc of [`crate::journal`]).

use super::*;

/// Why a record could not be decoded from the bytes at hand.
pub(super) enum Fail {
    /// The bytes end inside the record.
    Short,
    /// Byte `at` (from the record's start) cannot be there.
    Invalid {
        /// Offset of the offending byte from the start of the record.
        at: usize,
        /// What is wrong with it.
        what: &'static str,
    },
}

/// A fixed layout's bytes, read in order ([`Hot`] backwards).
pub(super) struct Fields<const N: usize> {
    pub(super) a: [u8; N],
    /// Bytes read.
    pub(super) n: usize,
    /// Offset of `a[0]` in the decoder's slice.
    pub(super) at: usize,
}

impl<const N: usize> Fields<N> {
    #[inline(always)]
    pub(super) fn take<const W: usize>(&mut self) -> [u8; W] {
        let mut b = [0; W];
        b.copy_from_slice(&self.a[self.n..self.n + W]);
        self.n += W;
        b
    }

    #[inline(always)]
    pub(super) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    #[inline(always)]
    pub(super) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    /// A timestamp written as its `i32` difference from `from`.
    #[inline(always)]
    pub(super) fn delta(&mut self, from: u64) -> u64 {
        from.wrapping_add(i32::from_le_bytes(self.take()) as u64)
    }

    /// The next byte and its offset in the decoder's slice.
    #[inline(always)]
    pub(super) fn byte(&mut self) -> (usize, u8) {
        let at = self.at + self.n;
        let [b] = self.take();
        (at, b)
    }
}

/// Reads one record's fields from a slice.
pub(super) struct Decoder<'a> {
    pub(super) s: &'a [u8],
    pub(super) p: usize,
}

impl Decoder<'_> {
    pub(super) fn invalid<T>(&self, at: usize, what: &'static str) -> Result<T, Fail> {
        Err(Fail::Invalid { at, what })
    }

    #[inline(always)]
    pub(super) fn byte(&mut self) -> Result<u8, Fail> {
        let b = *self.s.get(self.p).ok_or(Fail::Short)?;
        self.p += 1;
        Ok(b)
    }

    #[inline(always)]
    pub(super) fn uint(&mut self) -> Result<u64, Fail> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let at = self.p;
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return self.invalid(at, "a varint longer than 64 bits");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    #[inline(always)]
    pub(super) fn u32(&mut self) -> Result<u32, Fail> {
        let at = self.p;
        let v = self.uint()?;
        u32::try_from(v).or_else(|_| self.invalid(at, "a 32-bit number above 2^32"))
    }

    /// A timestamp written as the difference from `from`.
    #[inline(always)]
    pub(super) fn delta(&mut self, from: u64) -> Result<u64, Fail> {
        Ok(from.wrapping_add(unzigzag(self.uint()?) as u64))
    }

    /// A `0`/`1` flag (a `bool` or an `Option`'s presence).
    #[inline(always)]
    pub(super) fn flag(&mut self) -> Result<bool, Fail> {
        let at = self.p;
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => self.invalid(at, "a flag byte other than 0 or 1"),
        }
    }

    #[inline(always)]
    pub(super) fn pair(&mut self) -> Result<(u32, u64), Fail> {
        Ok((self.u32()?, self.uint()?))
    }

    #[inline(always)]
    pub(super) fn opt_pair(&mut self) -> Result<Option<(u32, u64)>, Fail> {
        Ok(if self.flag()? {
            Some(self.pair()?)
        } else {
            None
        })
    }

    pub(super) fn opt_u32(&mut self) -> Result<Option<u32>, Fail> {
        Ok(if self.flag()? {
            Some(self.u32()?)
        } else {
            None
        })
    }

    pub(super) fn status(&mut self) -> Result<TimingStatus, Fail> {
        let at = self.p;
        let b = self.byte()?;
        self.status_at(at, b)
    }

    /// The timing status byte `b`, read at `at`.
    #[inline(always)]
    pub(super) fn status_at(&self, at: usize, b: u8) -> Result<TimingStatus, Fail> {
        match TimingStatus::ALL.get(usize::from(b)) {
            Some(&s) if status_byte(s) == b => Ok(s),
            _ => self.invalid(at, "an unknown timing status"),
        }
    }

    /// The next `N` bytes: a fixed layout's fields after its tag.
    #[inline(always)]
    pub(super) fn fixed<const N: usize>(&mut self) -> Result<Fields<N>, Fail> {
        let at = self.p;
        let a = self
            .s
            .get(at..)
            .and_then(|rest| rest.first_chunk::<N>())
            .ok_or(Fail::Short)?;
        self.p += N;
        Ok(Fields { a: *a, n: 0, at })
    }

    pub(super) fn span_kind(&mut self) -> Result<SpanKind, Fail> {
        let at = self.p;
        match self.byte()? {
            0 => Ok(SpanKind::Wait),
            1 => Ok(SpanKind::Barrier),
            2 => Ok(SpanKind::Task),
            _ => self.invalid(at, "an unknown span kind"),
        }
    }

    pub(super) fn string(&mut self) -> Result<String, Fail> {
        let at = self.p;
        let len = self.uint()?;
        if len > MAX_STRING_LEN {
            return self.invalid(at, "a string length above 1 GiB");
        }
        let start = self.p;
        let end = start + len as usize;
        let bytes = self.s.get(start..end).ok_or(Fail::Short)?;
        let text = std::str::from_utf8(bytes)
            .or_else(|_| self.invalid(start, "a string that is not UTF-8"))?;
        self.p = end;
        Ok(text.to_owned())
    }

    pub(super) fn opt_string(&mut self) -> Result<Option<String>, Fail> {
        Ok(if self.flag()? {
            Some(self.string()?)
        } else {
            None
        })
    }

    pub(super) fn metadata(&mut self) -> Result<Metadata, Fail> {
        let len = self.uint()?;
        // Every pair takes at least two bytes: a longer count is cut short.
        if len > (self.s.len() - self.p) as u64 / 2 {
            return Err(Fail::Short);
        }
        let mut metadata = Vec::with_capacity(len as usize);
        for _ in 0..len {
            metadata.push((self.string()?, self.string()?));
        }
        Ok(metadata)
    }

    /// The next record (its tag at the current position).
    pub(super) fn record(&mut self) -> Result<Record, Fail> {
        let at = self.p;
        let record = match self.byte()? {
            tag::STRING => Record::String {
                id: self.u32()?,
                text: self.string()?.into_boxed_str(),
            },
            tag::NODE_DEFINED => Record::NodeDefined(Box::new(NodeInfo {
                id: self.u32()?,
                uid: self.uint()?,
                kind_hint: self.string()?,
                name: self.string()?,
                source_file: self.opt_string()?,
                source_line: self.opt_u32()?,
                source_column: self.opt_u32()?,
                metadata: self.metadata()?,
            })),
            tag::NODE_METADATA => Record::NodeMetadata {
                node: self.u32()?,
                metadata: Box::new(self.metadata()?),
            },
            tag::EDGE_DEFINED => Record::EdgeDefined(Box::new(EdgeInfo {
                id: self.u32()?,
                uid: self.uint()?,
                source: self.u32()?,
                target: self.u32()?,
                metadata: self.metadata()?,
            })),
            tag::EDGE_INSTANCE => {
                let (edge, instance) = self.pair()?;
                Record::EdgeInstance { edge, instance }
            }
            tag::SUBMITTED => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK_BEGIN => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::TaskBegin {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK_END => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::TaskEnd {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK => {
                let (node, instance, thread, begin_ns) = self.node_thread_ns()?;
                Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                }
            }
            tag::SIGNALLED_TASK => {
                let (node, instance, thread, begin_ns) = self.node_thread_ns()?;
                Record::SignalledTask {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                    event: self.uint()?,
                }
            }
            tag::SUBMITTED_AFTER => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::SubmittedAfter {
                    node,
                    instance,
                    thread,
                    ns,
                    after: self.pair()?,
                }
            }
            tag::SUBMITTED_TASK => {
                let (node, instance, thread, submit_ns) = self.node_thread_ns()?;
                let after = self.opt_pair()?;
                let begin_ns = self.delta(submit_ns)?;
                let end_ns = self.delta(begin_ns)?;
                let event = if self.flag()? {
                    Some(self.uint()?)
                } else {
                    None
                };
                Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    after,
                    begin_ns,
                    end_ns,
                    event,
                }
            }
            tag::SUBMISSION_ANNOUNCED => {
                let (node, instance) = self.pair()?;
                Record::SubmissionAnnounced {
                    node,
                    instance,
                    after: self.opt_pair()?,
                }
            }
            tag::TIMED_TASK => {
                let (node, instance, thread, submit_ns) = self.node_thread_ns()?;
                let begin_ns = self.delta(submit_ns)?;
                let end_ns = self.delta(begin_ns)?;
                let event = self.uint()?;
                let device_status = self.status()?;
                let device_start_ns = self.delta(end_ns)?;
                let device_end_ns = self.delta(device_start_ns)?;
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
                }
            }
            tag::SIGNAL => {
                let (node, instance) = self.pair()?;
                Record::Signal {
                    node,
                    instance,
                    event: self.uint()?,
                }
            }
            tag::SPAN_BEGIN => Record::SpanBegin {
                kind: self.span_kind()?,
                label: self.u32()?,
                thread: self.u32()?,
                ns: self.uint()?,
            },
            tag::SPAN_END => Record::SpanEnd {
                kind: self.span_kind()?,
                thread: self.u32()?,
                ns: self.uint()?,
            },
            tag::TRACING => Record::Tracing {
                on: self.flag()?,
                ns: self.uint()?,
            },
            tag::QUEUE_CREATED => Record::QueueCreated {
                queue_id: self.uint()?,
                device: self.u32()?,
                device_handle: self.uint()?,
                ns: self.uint()?,
            },
            tag::DEVICE_DEFINED => Record::DeviceDefined {
                device: self.uint()?,
                parent: self.uint()?,
            },
            tag::QUEUE_DESTROYED => Record::QueueDestroyed {
                queue_id: self.uint()?,
                ns: self.uint()?,
            },
            tag::DEVICE => {
                let (node, instance) = self.pair()?;
                let status = self.status()?;
                let start_ns = self.uint()?;
                Record::Device(DeviceTimes {
                    node,
                    instance,
                    status,
                    start_ns,
                    end_ns: self.delta(start_ns)?,
                })
            }
            tag::INSTANCE_EDGE => {
                let (source, source_instance) = self.pair()?;
                let (target, target_instance) = self.pair()?;
                Record::InstanceEdge(InstanceEdge {
                    source,
                    source_instance,
                    target,
                    target_instance,
                    queue_order: self.flag()?,
                })
            }
            tag::INSTANCE_QUEUE => {
                let (node, instance) = self.pair()?;
                Record::InstanceQueue {
                    node,
                    instance,
                    queue_id: self.uint()?,
                }
            }
            tag::GRAPH_MEMBER => Record::GraphMember {
                graph: self.u32()?,
                node: self.u32()?,
            },
            tag::GRAPH_EDGE => Record::GraphEdge {
                graph: self.u32()?,
                source: self.u32()?,
                target: self.u32()?,
            },
            tag::GRAPH_FINALIZED => {
                let graph = self.u32()?;
                let node = self.u32()?;
                let thread = self.u32()?;
                let begin_ns = self.uint()?;
                Record::GraphFinalized {
                    graph,
                    node,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                }
            }
            tag::ANNOUNCED_FIXED => {
                let mut f = self.fixed::<8>()?;
                Record::SubmissionAnnounced {
                    node: f.u32(),
                    instance: f.u32().into(),
                    after: None,
                }
            }
            tag::ANNOUNCED_AFTER_FIXED => {
                let mut f = self.fixed::<16>()?;
                Record::SubmissionAnnounced {
                    node: f.u32(),
                    instance: f.u32().into(),
                    after: Some((f.u32(), f.u32().into())),
                }
            }
            tag::TIMED_TASK_FIXED => {
                let mut f = self.fixed::<45>()?;
                let (node, instance, thread) = (f.u32(), f.u32().into(), f.u32());
                let submit_ns = f.u64();
                let begin_ns = f.delta(submit_ns);
                let end_ns = f.delta(begin_ns);
                let event = f.u64();
                let (status_at, status) = f.byte();
                let device_status = self.status_at(status_at, status)?;
                let device_start_ns = f.delta(end_ns);
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
                    device_end_ns: f.delta(device_start_ns),
                }
            }
            t @ tag::SUBMITTED_TASK_FIXED..=tag::SUBMITTED_TASK_FIXED_LAST => {
                let mut f = self.fixed::<28>()?;
                let (node, instance, thread) = (f.u32(), f.u32().into(), f.u32());
                let submit_ns = f.u64();
                let begin_ns = f.delta(submit_ns);
                let end_ns = f.delta(begin_ns);
                let parts = t - tag::SUBMITTED_TASK_FIXED;
                let after = if parts & 1 != 0 {
                    let mut f = self.fixed::<8>()?;
                    Some((f.u32(), f.u32().into()))
                } else {
                    None
                };
                let event = if parts & 2 != 0 {
                    Some(self.fixed::<8>()?.u64())
                } else {
                    None
                };
                Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    after,
                    begin_ns,
                    end_ns,
                    event,
                }
            }
            tag::REGION_BEGIN => Record::RegionBegin {
                thread: self.u32()?,
                label: self.u32()?,
                ns: self.uint()?,
                id: self.uint()?,
                shown: self.flag()?,
            },
            tag::REGION_END => Record::RegionEnd {
                thread: self.u32()?,
                ns: self.uint()?,
                id: self.uint()?,
            },
            _ => return self.invalid(at, "an unknown record tag"),
        };
        Ok(record)
    }

    /// What [`node_thread_ns`] wrote.
    #[inline(always)]
    pub(super) fn node_thread_ns(&mut self) -> Result<(u32, u64, u32, u64), Fail> {
        let (node, instance) = self.pair()?;
        Ok((node, instance, self.u32()?, self.uint()?))
    }
}

/// Reads records back in order from a reader positioned at the header.
///
/// Buffers on its own: give it the file, not a `BufReader`.
pub struct JournalReader<R: Read> {
    pub(super) inner: R,
    /// Bytes read and not yet decoded are `buf[start..end]`.
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Offset in the journal of `buf[0]`.
    pub(super) offset: u64,
    /// `inner` gave its last byte.
    pub(super) eof: bool,
    /// An error or the end was reported: nothing more comes.
    pub(super) done: bool,
}

impl<R: Read> JournalReader<R> {
    /// Reads and checks the header: `InvalidData` if `r` does not start with
    /// [`JOURNAL_HEADER`], `UnexpectedEof` if it ends before the header does.
    pub fn new(r: R) -> io::Result<JournalReader<R>> {
        let mut reader = JournalReader {
            inner: r,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            done: false,
        };
        while reader.end < JOURNAL_HEADER.len() && !reader.eof {
            reader.fill()?;
        }
        let have = reader.end.min(JOURNAL_HEADER.len());
        if reader.buf[..have] != JOURNAL_HEADER[..have] {
            let magic = JOURNAL_MAGIC.len();
            let what = if have > magic && reader.buf[..magic] == *JOURNAL_MAGIC {
                // Another format version: its records would be misread.
                let line = &reader.buf[magic..have];
                let version = line.split(|&b| b == b'\n').next().unwrap_or(line);
                format!(
                    "syclgraph journal: written by another syclgraph (format {}; this one reads format {})",
                    String::from_utf8_lossy(version),
                    JOURNAL_VERSION
                )
            } else {
                "syclgraph journal: not a journal of this syclgraph (header differs)".to_owned()
            };
            return Err(io::Error::new(io::ErrorKind::InvalidData, what));
        }
        if have < JOURNAL_HEADER.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("syclgraph journal: cut short inside its header ({have} bytes)"),
            ));
        }
        reader.start = have;
        Ok(reader)
    }

    /// Moves the undecoded bytes to the front, grows the buffer if a record
    /// fills it, and reads once more.
    pub(super) fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.offset += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The journal's offset of `buf[i]`.
    pub(super) fn offset_of(&self, i: usize) -> u64 {
        self.offset + i as u64
    }
}

impl<R: Read> Iterator for JournalReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        if self.done {
            return None;
        }
        loop {
            let mut decoder = Decoder {
                s: &self.buf[self.start..self.end],
                p: 0,
            };
            match decoder.record() {
                Ok(record) => {
                    self.start += decoder.p;
                    return Some(Ok(record));
                }
                Err(Fail::Invalid { at, what }) => {
                    self.done = true;
                    let offset = self.offset_of(self.start + at);
                    let record_offset = self.offset_of(self.start);
                    return Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "syclgraph journal: invalid data at byte offset {offset}: {what} \
                             (in the record from byte offset {record_offset})"
                        ),
                    )));
                }
                Err(Fail::Short) if self.eof => {
                    self.done = true;
                    if self.start == self.end {
                        return None;
                    }
                    let record_offset = self.offset_of(self.start);
                    let left = self.end - self.start;
                    return Some(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "syclgraph journal: the last record, from byte offset \
                             {record_offset}, was cut short after {left} bytes"
                        ),
                    )));
                }
                Err(Fail::Short) => {
                    if let Err(e) = self.fill() {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
        }
    }
}
