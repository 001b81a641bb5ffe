//! [`Chains`]: linked chains of steps (each step points to the one before
//! it, so chains share their older parts as a tree), kept in one `Vec`
//! instead of one allocation per step, for the critical path.
//!
//! A step that no chain reaches any more is found by marking from the
//! roots the owner names ([`Chains::collect`]) once the slots are used up,
//! and its slot is reused: the unmarked slots are taken lowest first, found
//! by a cursor going up the marks as steps are added (no list of free slots
//! is built). Adding a step is then a slot write plus, spread
//! over the steps, one mark and one sweep of a slot; an `Arc` per step cost
//! a `malloc`, a `free` and two atomic counts (about 1,000 instructions a
//! step, measured with `graph/examples/instance_cost`).

/// Where a link is in its [`Chains`].
pub type LinkId = u32;

/// What comes before a step: nothing, another link, or a cut: the newest
/// steps of another link's chain, then a base the owner keeps (the critical
/// path's folded totals).
#[derive(Clone, Debug)]
pub enum Parent<B> {
    /// The chain starts here.
    Start,
    /// The step before.
    Link(LinkId),
    /// The chain of the link goes on for `depth - 1` steps (of the link
    /// whose parent this is), then everything before is the base: a chain
    /// cut short without copying the steps it keeps.
    Cut(LinkId, B),
}

/// One step of a chain and what comes before it.
#[derive(Clone, Debug)]
pub struct Link<S, B> {
    /// The step.
    pub step: S,
    /// What comes before it.
    pub parent: Parent<B>,
    /// Links from here back to the base or start, this one included (at
    /// least 1: a walk goes this many steps).
    pub depth: u32,
}

/// Slots kept before the first collection.
const MIN_SLOTS: usize = 1024;

/// The links of many chains; see the module docs.
#[derive(Debug)]
pub struct Chains<S, B> {
    links: Vec<Link<S, B>>,
    /// Per slot the last collection saw, the most steps a root's walk went
    /// on from it (0: unreachable, to be reused).
    marked: Vec<u32>,
    /// The lowest slot that may be free: those below it are kept or reused.
    sweep: usize,
    /// Unreachable slots at or above `sweep`, not reused yet.
    free: usize,
    /// Slots to fill before the next collection is due.
    limit: usize,
}

impl<S, B> Default for Chains<S, B> {
    fn default() -> Self {
        Chains {
            links: Vec::new(),
            marked: Vec::new(),
            sweep: 0,
            free: 0,
            limit: MIN_SLOTS,
        }
    }
}

impl<S, B> Chains<S, B> {
    /// The link `id` (one [`Chains::add`] returned and the last
    /// [`Chains::collect`] kept).
    #[inline]
    pub fn get(&self, id: LinkId) -> &Link<S, B> {
        &self.links[id as usize]
    }

    /// Hands `visit` every step from `from` back to the start or the base,
    /// newest first, and returns the base (`None`: the chain starts). The
    /// first link's depth is how many steps there are; the base is the
    /// first cut's (the nearest cut ends the chain: the ones before it cut
    /// longer chains).
    pub fn walk<'a>(&'a self, from: &'a Parent<B>, visit: impl FnMut(&'a S)) -> Option<&'a B> {
        self.walk_after(from, 0, visit)
    }

    /// [`Chains::walk`], handing `visit` only the steps after the newest
    /// `skip` (the walk still goes through those, without a call for each:
    /// a fold keeps the newest steps and sums the older ones).
    pub fn walk_after<'a>(
        &'a self,
        from: &'a Parent<B>,
        mut skip: u32,
        mut visit: impl FnMut(&'a S),
    ) -> Option<&'a B> {
        let mut at = from;
        let mut left = None;
        let mut cut = None;
        loop {
            let id = match at {
                Parent::Start => return cut,
                Parent::Link(id) => *id,
                Parent::Cut(id, base) => {
                    cut = cut.or(Some(base));
                    *id
                }
            };
            if left == Some(0) {
                return cut;
            }
            let link = self.get(id);
            let n = left.unwrap_or(link.depth);
            if skip == 0 {
                visit(&link.step);
            } else {
                skip -= 1;
            }
            left = Some(n.saturating_sub(1));
            at = &link.parent;
        }
    }

    /// Whether a [`Chains::collect`] is due before the next
    /// [`Chains::add`]: no free slot is left and the slots have reached
    /// twice what the last collection kept.
    #[inline]
    pub fn collection_due(&self) -> bool {
        self.free == 0 && self.links.len() >= self.limit
    }

    /// Adds a link (in a free slot, else a new one) and returns its id.
    #[inline(always)]
    pub fn add(&mut self, link: Link<S, B>) -> LinkId {
        if self.free > 0 {
            // The lowest unreachable slot (there is one at `sweep` or above).
            while self.marked[self.sweep] != 0 {
                self.sweep += 1;
            }
            let at = self.sweep;
            self.sweep += 1;
            self.free -= 1;
            self.links[at] = link;
            return at as LinkId;
        }
        let id = LinkId::try_from(self.links.len()).expect("fewer than 2^32 live links");
        self.links.push(link);
        id
    }

    /// Keeps the links reachable from `roots` (each root and the steps of
    /// its chain, as [`Chains::walk`] goes) and frees every other slot for
    /// reuse. Every id the owner holds must be among the roots: the others
    /// are reused.
    pub fn collect(&mut self, roots: impl IntoIterator<Item = LinkId>) {
        self.marked.clear();
        self.marked.resize(self.links.len(), 0);
        for root in roots {
            let mut at = root as usize;
            let mut left = self.links[at].depth.max(1);
            // A walk that went as far from here already covers this one.
            while self.marked[at] < left {
                self.marked[at] = left;
                left -= 1;
                if left == 0 {
                    break;
                }
                match self.links[at].parent {
                    Parent::Link(before) | Parent::Cut(before, _) => at = before as usize,
                    Parent::Start => break,
                }
            }
        }
        // A freed link's base (a folded part) goes when its slot is reused.
        self.sweep = 0;
        self.free = self.marked.iter().filter(|&&kept| kept == 0).count();
        let live = self.links.len() - self.free;
        self.limit = (2 * live).max(MIN_SLOTS);
    }

    /// Slots in use or free (for tests of the bound).
    #[cfg(test)]
    pub fn slots(&self) -> usize {
        self.links.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(c: &mut Chains<u32, ()>, from: Parent<()>, steps: std::ops::Range<u32>) -> LinkId {
        let mut parent = from;
        let mut last = None;
        for s in steps {
            let depth = match &parent {
                Parent::Link(p) => c.get(*p).depth + 1,
                _ => 1,
            };
            let id = c.add(Link {
                step: s,
                parent,
                depth,
            });
            parent = Parent::Link(id);
            last = Some(id);
        }
        last.unwrap()
    }

    fn steps(c: &Chains<u32, ()>, at: LinkId) -> Vec<u32> {
        let mut out = Vec::new();
        assert!(c.walk(&Parent::Link(at), |&s| out.push(s)).is_none());
        out.reverse();
        out
    }

    #[test]
    fn collect_keeps_what_the_roots_reach_and_reuses_the_rest() {
        let mut c = Chains::default();
        let a = chain(&mut c, Parent::Start, 0..10);
        let b = chain(&mut c, Parent::Link(a), 10..15);
        let dead = chain(&mut c, Parent::Start, 100..110);
        assert_eq!(c.slots(), 25);
        c.collect([b]);
        assert_eq!(steps(&c, b), (0..15).collect::<Vec<_>>());
        // The ten unreachable slots are reused before any new one.
        let d = chain(&mut c, Parent::Link(b), 15..25);
        assert_eq!(c.slots(), 25);
        assert_eq!(steps(&c, d), (0..25).collect::<Vec<_>>());
        assert_ne!(steps(&c, dead), (100..110).collect::<Vec<_>>());
    }

    #[test]
    fn slots_stay_bounded_by_twice_the_live_links() {
        let mut c: Chains<u32, ()> = Chains::default();
        // One long-lived chain of 500 and, at every step, a short-lived
        // branch: a caller that collects when due never holds more than
        // twice the live links (or the minimum).
        let mut trunk = chain(&mut c, Parent::Start, 0..500);
        for s in 0..100_000 {
            if c.collection_due() {
                c.collect([trunk]);
            }
            let depth = c.get(trunk).depth + 1;
            let id = c.add(Link {
                step: s,
                parent: Parent::Link(trunk),
                depth,
            });
            if s % 200 == 0 {
                trunk = id; // the trunk grows now and then
            }
        }
        c.collect([trunk]);
        let live = 500 + 100_000 / 200;
        assert_eq!(steps(&c, trunk).len(), live);
        assert!(c.slots() <= (2 * live).max(MIN_SLOTS) + 1, "{}", c.slots());
    }
}
