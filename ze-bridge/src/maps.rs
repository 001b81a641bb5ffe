//! The process's memory mappings (`/proc/self/maps`), read to check an
//! address before syclgraph reads or writes the runtime's memory there.
//!
//! Each function takes the file's text (read once by the caller) and parses
//! it line by line with [`Mapping::parse`].

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

/// True when `[start, end)` lies in one writable private mapping.
pub(crate) fn writable_private(maps: &str, start: usize, end: usize) -> bool {
    mappings(maps).any(|m| m.writable_private() && m.start <= start && end <= m.end)
}

/// True when `[start, end)` lies in one readable mapping.
pub(crate) fn readable(maps: &str, start: usize, end: usize) -> bool {
    mappings(maps).any(|m| m.perms.starts_with('r') && m.start <= start && end <= m.end)
}

/// True when `address` lies in an executable mapping of a file.
pub(crate) fn executable_file(maps: &str, address: usize) -> bool {
    mappings(maps).any(|m| {
        m.perms.as_bytes().get(2) == Some(&b'x')
            && m.path.starts_with('/')
            && (m.start..m.end).contains(&address)
    })
}

/// The end of the writable private mapping holding `address`, when it is a
/// non-null, 8-byte-aligned address in one.
pub(crate) fn writable_private_end(maps: &str, address: usize) -> Option<usize> {
    if address == 0 || !address.is_multiple_of(8) {
        return None;
    }
    mappings(maps)
        .find(|m| m.writable_private() && m.start <= address && address < m.end)
        .map(|m| m.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writable_private_ranges_qualify() {
        let maps = "7f00-7f10 r--p 0 0 0 lib\n7f10-7f20 rw-p 0 0 0 lib\n7f20-7f30 rw-s 0 0 0 shm\n";
        assert!(writable_private(maps, 0x7f10, 0x7f20));
        assert!(!writable_private(maps, 0x7f08, 0x7f18));
        assert!(!writable_private(maps, 0x7f18, 0x7f28));
        assert!(!writable_private(maps, 0x7f00, 0x7f08));
        assert!(!writable_private(maps, 0x7f20, 0x7f28));
    }

    #[test]
    fn mappings_bound_the_scan() {
        let maps = "1000-2000 rw-p 0 0 0 \n2000-3000 r-xp 0 0 0 /lib\n";
        assert_eq!(writable_private_end(maps, 0x1008), Some(0x2000));
        assert_eq!(writable_private_end(maps, 0x1001), None);
        assert_eq!(writable_private_end(maps, 0x2008), None);
        assert!(readable(maps, 0x2000, 0x2020));
        assert!(!readable(maps, 0x1ff0, 0x2010));
    }

    #[test]
    fn code_must_be_an_executable_file_mapping() {
        let maps = "1000-2000 r-xp 0 0 0 /lib/a.so\n2000-3000 rwxp 0 0 0 \ngarbage\n";
        assert!(executable_file(maps, 0x1800));
        assert!(!executable_file(maps, 0x2800), "anonymous");
        assert!(!executable_file(maps, 0x3000));
        assert_eq!(mappings(maps).count(), 2);
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
