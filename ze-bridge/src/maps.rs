//! The process's memory mappings (`/proc/self/maps`), read to check an
//! address before syclgraph reads or writes the runtime's memory there.
//!
//! [`Maps`] parses the file once (with [`Mapping::parse`], line by line)
//! and answers each check by a binary search: the hook installation asks a
//! few hundred of them, and parsing the file's thousands of lines for each
//! (as each check once did) took several milliseconds at every start.

/// One line of `/proc/self/maps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mapping<'a> {
    /// First address.
    pub start: usize,
    /// One past the last address.
    pub end: usize,
    /// Permissions, e.g. `rw-p`, `r-xp`.
    pub perms: &'a str,
    /// The mapped file, empty for anonymous memory.
    pub path: &'a str,
}

impl<'a> Mapping<'a> {
    /// Parses `start-end perms offset dev inode [path]` (the path is the
    /// rest of the line: it may hold spaces).
    pub fn parse(line: &'a str) -> Option<Mapping<'a>> {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next()?, fields.next()?);
        let mut rest = line.trim_start();
        for _ in 0..5 {
            rest = match rest.find(char::is_whitespace) {
                Some(end) => rest[end..].trim_start(),
                None => "",
            };
        }
        let path = rest;
        let (start, end) = range.split_once('-')?;
        Some(Mapping {
            start: usize::from_str_radix(start, 16).ok()?,
            end: usize::from_str_radix(end, 16).ok()?,
            perms,
            path,
        })
    }

    /// Writable and private (`rw-p`).
    fn writable_private(&self) -> bool {
        self.perms.starts_with("rw") && self.perms.ends_with('p')
    }
}

/// Every mapping in `maps`, in order (unparsable lines left out).
pub(crate) fn mappings(maps: &str) -> impl Iterator<Item = Mapping<'_>> {
    maps.lines().filter_map(Mapping::parse)
}

/// The mappings of one reading of `/proc/self/maps`, sorted by address,
/// with what the checks ask of each.
#[derive(Clone, Debug, Default)]
pub(crate) struct Maps {
    regions: Vec<Region>,
}

/// One mapping, as the checks see it.
#[derive(Clone, Copy, Debug)]
struct Region {
    start: usize,
    end: usize,
    readable: bool,
    /// `rw-p`.
    writable_private: bool,
    /// Executable and backed by a file (its path starts with `/`).
    executable_file: bool,
}

impl Maps {
    /// Reads and parses this process's `/proc/self/maps`.
    pub fn read() -> Result<Maps, String> {
        let text = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
        Ok(Maps::parse(&text))
    }

    /// Parses the text of a `maps` file (unparsable lines left out).
    pub fn parse(text: &str) -> Maps {
        let mut regions: Vec<Region> = mappings(text)
            .map(|m| Region {
                start: m.start,
                end: m.end,
                readable: m.perms.starts_with('r'),
                writable_private: m.writable_private(),
                executable_file: m.perms.as_bytes().get(2) == Some(&b'x')
                    && m.path.starts_with('/'),
            })
            .collect();
        regions.sort_by_key(|r| r.start);
        Maps { regions }
    }

    /// The mapping holding `address` (mappings do not overlap).
    fn holding(&self, address: usize) -> Option<&Region> {
        let after = self.regions.partition_point(|r| r.start <= address);
        let region = self.regions.get(after.checked_sub(1)?)?;
        (address < region.end).then_some(region)
    }

    /// True when `[start, end)` lies in one writable private mapping.
    pub fn writable_private(&self, start: usize, end: usize) -> bool {
        self.holding(start)
            .is_some_and(|r| r.writable_private && end <= r.end)
    }

    /// True when `[start, end)` lies in one readable mapping.
    pub fn readable(&self, start: usize, end: usize) -> bool {
        self.holding(start)
            .is_some_and(|r| r.readable && end <= r.end)
    }

    /// True when `address` lies in an executable mapping of a file.
    pub fn executable_file(&self, address: usize) -> bool {
        self.holding(address).is_some_and(|r| r.executable_file)
    }

    /// The end of the writable private mapping holding `address`, when it
    /// is a non-null, 8-byte-aligned address in one.
    pub fn writable_private_end(&self, address: usize) -> Option<usize> {
        if address == 0 || !address.is_multiple_of(8) {
            return None;
        }
        self.holding(address)
            .filter(|r| r.writable_private)
            .map(|r| r.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writable_private_ranges_qualify() {
        let maps = Maps::parse(
            "7f00-7f10 r--p 0 0 0 lib\n7f10-7f20 rw-p 0 0 0 lib\n7f20-7f30 rw-s 0 0 0 shm\n",
        );
        assert!(maps.writable_private(0x7f10, 0x7f20));
        assert!(!maps.writable_private(0x7f08, 0x7f18));
        assert!(!maps.writable_private(0x7f18, 0x7f28));
        assert!(!maps.writable_private(0x7f00, 0x7f08));
        assert!(!maps.writable_private(0x7f20, 0x7f28));
    }

    #[test]
    fn mappings_bound_the_scan() {
        let maps = Maps::parse("1000-2000 rw-p 0 0 0 \n2000-3000 r-xp 0 0 0 /lib\n");
        assert_eq!(maps.writable_private_end(0x1008), Some(0x2000));
        assert_eq!(maps.writable_private_end(0x1001), None);
        assert_eq!(maps.writable_private_end(0x2008), None);
        assert_eq!(
            maps.writable_private_end(0x3008),
            None,
            "past every mapping"
        );
        assert_eq!(
            maps.writable_private_end(0x0ff8),
            None,
            "before every mapping"
        );
        assert!(maps.readable(0x2000, 0x2020));
        assert!(!maps.readable(0x1ff0, 0x2010));
    }

    #[test]
    fn code_must_be_an_executable_file_mapping() {
        let text = "1000-2000 r-xp 0 0 0 /lib/a.so\n2000-3000 rwxp 0 0 0 \ngarbage\n";
        let maps = Maps::parse(text);
        assert!(maps.executable_file(0x1800));
        assert!(!maps.executable_file(0x2800), "anonymous");
        assert!(!maps.executable_file(0x3000));
        assert_eq!(mappings(text).count(), 2);
    }

    #[test]
    fn a_path_may_hold_spaces() {
        let line = "7f00-7f10 r--p 00000000 00:2a 456 /opt/my venv/lib/libsycl.so.9";
        let m = Mapping::parse(line).unwrap();
        assert_eq!((m.start, m.end, m.perms), (0x7f00, 0x7f10, "r--p"));
        assert_eq!(m.path, "/opt/my venv/lib/libsycl.so.9");
        assert_eq!(Mapping::parse("7f00-7f10 rw-p 0 00:00 0").unwrap().path, "");
    }
}
