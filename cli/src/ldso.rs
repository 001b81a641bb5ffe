//! Which shared libraries a program will load, found the way the dynamic
//! loader (`ld.so`) finds them, without running it: the ELF's `DT_NEEDED`
//! names, searched in its `DT_RPATH` (when it has no `DT_RUNPATH`), then
//! `LD_LIBRARY_PATH`, then its `DT_RUNPATH`, then the loader cache
//! (`ldconfig -p`), then the default directories, and so on breadth-first
//! through the libraries found.
//!
//! Simplifications, all on the safe side for finding `libsycl.so`: `$ORIGIN`
//! is expanded, other `$` tokens (`$LIB`, `$PLATFORM`) make an entry be
//! skipped; the `DT_RPATH` of the objects that loaded an object is taken to
//! be the program's only; hardware-capability subdirectories are not
//! searched.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use object::elf;
use object::read::elf::{ElfFile64, FileHeader};
use object::read::ReadCache;
use object::Endianness;

/// Objects read at most while following a program's libraries.
const MAX_OBJECTS: usize = 256;

/// Directories the loader searches last (Debian's multiarch ones included).
const DEFAULT_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// What an ELF object's dynamic section says about loading it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// `DT_NEEDED` names, in order.
    pub needed: Vec<String>,
    /// `DT_RPATH` entries.
    pub rpath: Vec<String>,
    /// `DT_RUNPATH` entries.
    pub runpath: Vec<String>,
    /// `e_machine`: a library for another machine is skipped, as the loader does.
    pub machine: u16,
}

/// Reads the dynamic section of a 64-bit ELF file; `None` when `path` is not
/// one (a script, a 32-bit program, unreadable). Reads only the headers and
/// the dynamic section, not the whole file.
pub fn read_dynamic(path: &Path) -> Option<Dynamic> {
    let file = File::open(path).ok()?;
    let cache = ReadCache::new(file);
    let elf = ElfFile64::<Endianness, _>::parse(&cache).ok()?;
    let endian = elf.endian();
    let table = elf.elf_section_table().dynamic_table(endian, &cache).ok()?;
    let mut out = Dynamic {
        machine: elf.elf_header().e_machine(endian),
        ..Dynamic::default()
    };
    for entry in &table {
        let tag = entry.tag;
        if !matches!(tag, elf::DT_NEEDED | elf::DT_RPATH | elf::DT_RUNPATH) {
            continue;
        }
        let Ok(bytes) = table.string(entry) else {
            continue;
        };
        let text = String::from_utf8_lossy(bytes).into_owned();
        match tag {
            elf::DT_NEEDED => out.needed.push(text),
            elf::DT_RPATH => out.rpath.extend(split_path_list(&text)),
            _ => out.runpath.extend(split_path_list(&text)),
        }
    }
    Some(out)
}

fn split_path_list(list: &str) -> Vec<String> {
    list.split(':')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The loader's search, for one environment.
pub struct Loader {
    /// `LD_LIBRARY_PATH`, split.
    library_path: Vec<PathBuf>,
    /// Name → path from `ldconfig -p`, read on first use.
    cache: Option<HashMap<String, PathBuf>>,
}

/// Where a program's libraries were looked for, and what came of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closure {
    /// The first library (in loading order) whose name `wanted` accepted.
    pub found: Option<PathBuf>,
    /// Needed libraries found nowhere (the program would not start).
    pub missing: Vec<String>,
}

impl Loader {
    /// A loader that sees `ld_library_path` (the program's `LD_LIBRARY_PATH`).
    pub fn new(ld_library_path: Option<&OsString>) -> Loader {
        let library_path = ld_library_path
            .map(|v| {
                std::env::split_paths(v)
                    // An empty entry means the working directory to ld.so.
                    .map(|p| {
                        if p.as_os_str().is_empty() {
                            ".".into()
                        } else {
                            p
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Loader {
            library_path,
            cache: None,
        }
    }

    /// Follows all of `program`'s needed libraries breadth-first, as the
    /// loader would load them, and keeps the first one whose file name
    /// `wanted` accepts. Libraries that are needed but found nowhere are
    /// listed in `missing`; the search goes on past them.
    pub fn closure(&mut self, program: &Path, wanted: impl Fn(&str) -> bool) -> Closure {
        let mut out = Closure::default();
        let Some(main) = read_dynamic(program) else {
            return out;
        };
        // $ORIGIN of the program is the directory of its real path.
        let main_origin = program
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| program.parent().unwrap_or(Path::new(".")).to_path_buf());
        let main_rpath: Vec<PathBuf> = if main.runpath.is_empty() {
            expand(&main.rpath, &main_origin)
        } else {
            Vec::new()
        };
        let machine = main.machine;
        let mut loaded: HashSet<String> = HashSet::new();
        let mut queue: VecDeque<(Dynamic, PathBuf)> = VecDeque::new();
        queue.push_back((main, main_origin));
        let mut objects = 0;
        while let Some((object, origin)) = queue.pop_front() {
            objects += 1;
            if objects > MAX_OBJECTS {
                break;
            }
            // DT_RPATH counts only for an object without DT_RUNPATH: its
            // own, then the program's (the loader's chain, shortened).
            let rpath: Vec<PathBuf> = if object.runpath.is_empty() {
                let mut own = expand(&object.rpath, &origin);
                own.extend(main_rpath.iter().cloned());
                own
            } else {
                Vec::new()
            };
            let runpath = expand(&object.runpath, &origin);
            for name in &object.needed {
                if !loaded.insert(name.clone()) {
                    continue;
                }
                let Some((path, dynamic)) = self.search(name, &rpath, &runpath, machine) else {
                    out.missing.push(name.clone());
                    continue;
                };
                if out.found.is_none() && wanted(file_name(&path)) {
                    out.found = Some(path.clone());
                }
                let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
                queue.push_back((dynamic, dir));
            }
        }
        out
    }

    /// Finds one needed library: its path and dynamic section.
    fn search(
        &mut self,
        name: &str,
        rpath: &[PathBuf],
        runpath: &[PathBuf],
        machine: u16,
    ) -> Option<(PathBuf, Dynamic)> {
        let usable = |path: PathBuf| -> Option<(PathBuf, Dynamic)> {
            let dynamic = read_dynamic(&path)?;
            (dynamic.machine == machine).then_some((path, dynamic))
        };
        if name.contains('/') {
            return usable(PathBuf::from(name));
        }
        let dirs = rpath.iter().chain(&self.library_path).chain(runpath);
        for dir in dirs {
            if let Some(found) = usable(dir.join(name)) {
                return Some(found);
            }
        }
        if let Some(path) = self.cached(name) {
            if let Some(found) = usable(path) {
                return Some(found);
            }
        }
        DEFAULT_DIRS
            .iter()
            .find_map(|dir| usable(Path::new(dir).join(name)))
    }

    /// The loader cache's entry for `name`.
    fn cached(&mut self, name: &str) -> Option<PathBuf> {
        self.cache
            .get_or_insert_with(read_loader_cache)
            .get(name)
            .cloned()
    }
}

/// The loader cache as `ldconfig -p` prints it: `\tname (flags) => path`.
/// Empty when `ldconfig` cannot be run.
fn read_loader_cache() -> HashMap<String, PathBuf> {
    let output = ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|cmd| Command::new(cmd).arg("-p").output().ok())
        .filter(|o| o.status.success());
    let Some(output) = output else {
        return HashMap::new();
    };
    parse_loader_cache(&String::from_utf8_lossy(&output.stdout))
}

/// Parses `ldconfig -p` output (first entry of a name wins, as in the cache).
pub fn parse_loader_cache(text: &str) -> HashMap<String, PathBuf> {
    let mut map = HashMap::new();
    for line in text.lines() {
        let Some((left, path)) = line.split_once(" => ") else {
            continue;
        };
        let Some(name) = left.split_whitespace().next() else {
            continue;
        };
        map.entry(name.to_string())
            .or_insert_with(|| PathBuf::from(path.trim()));
    }
    map
}

/// Expands `$ORIGIN` / `${ORIGIN}`; entries with other `$` tokens are dropped.
fn expand(entries: &[String], origin: &Path) -> Vec<PathBuf> {
    let origin = origin.as_os_str().as_bytes();
    entries
        .iter()
        .filter_map(|e| {
            let e = e
                .replace("${ORIGIN}", "$ORIGIN")
                .replace("$ORIGIN", &String::from_utf8_lossy(origin));
            (!e.contains('$')).then(|| PathBuf::from(e))
        })
        .collect()
}

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_cache_lines() {
        let text = "3 libs found in cache `/etc/ld.so.cache'\n\
            \tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n\
            \tlibz.so.1 (libc6) => /lib/i386-linux-gnu/libz.so.1\n\
            \tlibm.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libm.so.6\n";
        let map = parse_loader_cache(text);
        assert_eq!(map.len(), 2);
        assert_eq!(
            map["libz.so.1"],
            Path::new("/lib/x86_64-linux-gnu/libz.so.1")
        );
        assert_eq!(
            map["libm.so.6"],
            Path::new("/lib/x86_64-linux-gnu/libm.so.6")
        );
    }

    #[test]
    fn origin_is_expanded_and_other_tokens_dropped() {
        let got = expand(
            &[
                "$ORIGIN/../lib".into(),
                "${ORIGIN}".into(),
                "/opt/$LIB".into(),
                "/usr/lib".into(),
            ],
            Path::new("/a/bin"),
        );
        assert_eq!(
            got,
            [
                PathBuf::from("/a/bin/../lib"),
                PathBuf::from("/a/bin"),
                PathBuf::from("/usr/lib")
            ]
        );
    }

    #[test]
    fn this_test_binary_needs_libc() {
        // Any Rust test binary on Linux is a dynamic ELF that needs libc.
        let exe = std::env::current_exe().unwrap();
        let dynamic = read_dynamic(&exe).expect("an ELF file");
        assert!(dynamic.needed.iter().any(|n| n.starts_with("libc.so")));
        let found = Loader::new(None).closure(&exe, |name| name.starts_with("libc.so"));
        assert!(found.missing.is_empty(), "{found:?}");
        let libc = found.found.expect("libc found");
        assert!(libc.is_file(), "{}", libc.display());
    }

    #[test]
    fn not_an_elf() {
        let dir = std::env::temp_dir().join(format!("syclgraph-ldso-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("script.sh");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(read_dynamic(&script), None);
        assert_eq!(
            Loader::new(None).closure(&script, |_| true),
            Closure::default()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
