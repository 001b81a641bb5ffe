//! Devices told apart by identity, not by name: the runtime's device handle
//! (the `sycl_device` of queue and node metadata, a `ur_device_handle_t`),
//! its name, its parent device when it is a sub-device (a GPU's tile), and
//! a label that stays the same for the run.
//!
//! Labels: root devices are numbered `0`, `1`, ... in the order the run
//! first named them; the sub-devices of device `P` are `P.0`, `P.1`, ... in
//! the order they were first named (a sub-device of a sub-device is
//! `P.k.j`). A device's label is fixed when it is first named, so its
//! parent must be known by then ([`Record::DeviceDefined`] comes before the
//! first queue on it); a device named before its parent was known stays a
//! root.
//!
//! [`Record::DeviceDefined`]: crate::record::Record::DeviceDefined

use rustc_hash::FxHashMap;

use crate::last_hit::LastHit;
use crate::record::StrId;

/// One device as the outputs show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Dense index, in the order devices were first named (0, 1, ...).
    pub index: usize,
    /// The runtime's device handle (`sycl_device`; 0 when unknown).
    pub handle: u64,
    /// The label that tells it apart: `0`, `1`, `0.1`, ...
    pub label: String,
    /// The device's name (may be shared by several devices).
    pub name: String,
    /// The parent device's index, for a sub-device.
    pub parent: Option<usize>,
}

impl Device {
    /// The label and the name, as the outputs write a device: `0.1 AMD EPYC`.
    pub fn display(&self) -> String {
        display(&self.label, &self.name)
    }
}

/// `label name`, or the label alone when the name is unknown.
fn display(label: &str, name: &str) -> String {
    if name.is_empty() {
        label.to_string()
    } else {
        format!("{label} {name}")
    }
}

/// What the records said about one device.
#[derive(Debug)]
struct Entry {
    device: Device,
    /// Its name while the string is not known yet.
    name_id: Option<StrId>,
    /// Sub-devices named so far.
    children: usize,
    /// `label name`, made once.
    display: String,
}

/// The devices of a run, by handle.
#[derive(Debug, Default)]
pub struct DeviceTable {
    by_handle: FxHashMap<u64, usize>,
    /// The handle [`index`](DeviceTable::index) found last: an instance's
    /// device is mostly its predecessor's (a handle, once named, keeps
    /// its index).
    last: LastHit,
    entries: Vec<Entry>,
    roots: usize,
}

impl DeviceTable {
    /// The device `handle`, a sub-device of `parent` (0: a root device or
    /// not known). Defines the parent too when it is new. A device already
    /// named keeps its parent and label. Returns its index.
    pub fn defined(&mut self, handle: u64, parent: u64) -> usize {
        if let Some(&at) = self.by_handle.get(&handle) {
            return at;
        }
        let parent = (parent != 0 && parent != handle).then(|| self.defined(parent, 0));
        let label = match parent {
            Some(p) => {
                let e = &mut self.entries[p];
                e.children += 1;
                format!("{}.{}", e.device.label, e.children - 1)
            }
            None => {
                self.roots += 1;
                (self.roots - 1).to_string()
            }
        };
        let index = self.entries.len();
        let name = String::new();
        self.entries.push(Entry {
            display: display(&label, &name),
            device: Device {
                index,
                handle,
                label,
                name,
                parent,
            },
            name_id: None,
            children: 0,
        });
        self.by_handle.insert(handle, index);
        index
    }

    /// The device `handle` was named with the name `name` (interned;
    /// `resolve` gives the text when it is known): defined as a root when
    /// new. Returns its index.
    pub fn named(
        &mut self,
        handle: u64,
        name: Option<StrId>,
        resolve: impl Fn(StrId) -> Option<String>,
    ) -> usize {
        let at = self.defined(handle, 0);
        let e = &mut self.entries[at];
        if let Some(id) = name {
            if e.name_id.is_none() {
                e.name_id = Some(id);
                if let Some(text) = resolve(id).filter(|t| !t.is_empty()) {
                    self.set_name(at, text);
                }
            }
        }
        at
    }

    /// The device `handle` was named `text` (node metadata): kept when no
    /// name is known yet. Returns its index.
    pub fn named_text(&mut self, handle: u64, text: &str) -> usize {
        let at = self.defined(handle, 0);
        let e = &self.entries[at];
        if e.name_id.is_none() && e.device.name.is_empty() && !text.is_empty() {
            self.set_name(at, text.to_string());
        }
        at
    }

    /// An interned string arrived: the devices that wait for it take it.
    pub fn string(&mut self, id: StrId, text: &str) {
        for at in 0..self.entries.len() {
            let e = &self.entries[at];
            if e.name_id == Some(id) && !text.is_empty() && e.device.name != text {
                self.set_name(at, text.to_string());
            }
        }
    }

    /// The index of the device `handle`, when it was named.
    #[inline]
    pub fn index(&self, handle: u64) -> Option<usize> {
        self.last
            .get(handle, || self.by_handle.get(&handle).copied())
    }

    /// The device at `index`.
    pub fn get(&self, index: usize) -> Option<&Device> {
        self.entries.get(index).map(|e| &e.device)
    }

    /// `label name` of the device at `index` (`""` when there is none).
    pub fn display(&self, index: usize) -> &str {
        self.entries.get(index).map_or("", |e| e.display.as_str())
    }

    /// Every device, by index (a parent before its sub-devices).
    pub fn devices(&self) -> impl Iterator<Item = &Device> {
        self.entries.iter().map(|e| &e.device)
    }

    /// How many devices were named.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no device was named.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl DeviceTable {
    /// Names the device at `at`, and its parents that have no name of
    /// their own yet (a GPU without a queue of its own: its tiles' name).
    fn set_name(&mut self, at: usize, name: String) {
        let mut next = Some(at);
        while let Some(i) = next {
            let e = &mut self.entries[i];
            if i != at && (e.name_id.is_some() || !e.device.name.is_empty()) {
                break;
            }
            e.display = display(&e.device.label, &name);
            e.device.name = name.clone();
            next = e.device.parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_two_identities() {
        let mut t = DeviceTable::default();
        let names = |id: StrId| (id == 7).then(|| "GPU".to_string());
        let a = t.named(0xa0, Some(7), names);
        let b = t.named(0xb0, Some(7), names);
        assert_ne!(a, b);
        assert_eq!(t.display(a), "0 GPU");
        assert_eq!(t.display(b), "1 GPU");
        assert_eq!(t.named(0xa0, Some(7), names), a);
    }

    #[test]
    fn sub_devices_under_their_parent() {
        let mut t = DeviceTable::default();
        let other = t.defined(0x10, 0);
        let tile1 = t.defined(0x21, 0x20);
        let tile0 = t.defined(0x22, 0x20);
        let root = t.index(0x20).unwrap();
        assert_eq!(t.get(other).unwrap().label, "0");
        assert_eq!(t.get(root).unwrap().label, "1");
        assert_eq!(t.get(tile1).unwrap().label, "1.0");
        assert_eq!(t.get(tile0).unwrap().label, "1.1");
        assert_eq!(t.get(tile0).unwrap().parent, Some(root));
        let deeper = t.defined(0x30, 0x22);
        assert_eq!(t.get(deeper).unwrap().label, "1.1.0");
        // Named later: the label stays; the name comes with its string.
        assert_eq!(t.named(0x22, Some(3), |_| None), tile0);
        t.string(3, "AMD EPYC");
        assert_eq!(t.display(tile0), "1.1 AMD EPYC");
        assert_eq!(t.named_text(0x22, "other"), tile0);
        assert_eq!(t.get(tile0).unwrap().name, "AMD EPYC");
    }
}
