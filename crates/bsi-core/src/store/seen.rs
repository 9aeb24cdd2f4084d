//! A registry never moves back silently.
//!
//! Each clone remembers the remote's registry tip it last read, in a
//! reference of its own repository, `refs/bsi/seen/REMOTE/BRANCH` (never
//! pushed: no refspec names it). A fetched tip that descends from it is
//! the registry moving on, and becomes the one seen. A tip that does not
//! descend from it was put back (a forced push from an old clone, a
//! backup restored): a rollback. Then the merge by rows of both histories
//! ([`crate::registry::merge::merge3`], on their merge base) decides what
//! the registry is — a claim the new tip lacks and the seen one holds,
//! added since their merge base, is kept; a claim ended on either side is
//! ended —, the local registry branch takes what was seen (so every read
//! is the union, and `bsi sync` publishes it back as any pending change),
//! and every door says so, with the step that publishes it. Once the
//! remote's tip holds every claim the merge of both gives (after that
//! publish, or a write of another clone that did it), that tip is the one
//! seen, and nothing more is said.

use std::collections::BTreeSet;

use super::{BRANCH_FILE, Brain};
use crate::git::Oid;
use crate::git_cli::Remote;
use crate::registry::{self, Registry};
use crate::scope::Scope;

/// A rollback found: the tip this clone had seen, and the claims (session,
/// scope) the remote's tip dropped of it.
struct Rollback {
    seen: Oid,
    dropped: Vec<(String, Scope)>,
}

/// The claims of a registry, active and stale.
fn claims_of(reg: &Registry) -> BTreeSet<(String, Scope)> {
    reg.all_claims()
        .map(|(c, _)| (c.session.clone(), c.scope.clone()))
        .collect()
}

impl Brain {
    /// The reference holding the tip of `remote`'s registry this clone last
    /// read.
    pub fn seen_ref(&self, remote: &Remote) -> String {
        format!("refs/bsi/seen/{}/{}", remote.name, self.branch)
    }

    /// The local registry branch as the registry's reads must take it, now
    /// that `remote`'s tip as last fetched is `tracking`: `local`, or —
    /// when that tip moved back from the one seen and drops claims the
    /// merge of both keeps — a branch that holds them again (moved forward
    /// to the tip seen, or given a commit of the merge of both on top),
    /// with a warning for the door. Best effort: a reference that cannot be
    /// written is left; the warning is said still.
    pub(super) fn hold_seen(
        &self,
        remote: &Remote,
        local: Option<Oid>,
        tracking: Option<Oid>,
    ) -> Option<Oid> {
        let Some(t) = tracking else {
            return local;
        };
        let name = self.seen_ref(remote);
        let seen = self.git.ref_target(&name);
        let record = |to: Oid| {
            let _ = self
                .git
                .move_ref(&name, to, seen, "bsi: the registry tip read");
        };
        let Some(s) = seen else {
            record(t);
            return local;
        };
        if s == t {
            return local;
        }
        if self.git.is_ancestor(s, t).unwrap_or(false) {
            record(t);
            return local;
        }
        let Some(rollback) = self.rollback(remote, s, t) else {
            // The merge of both keeps nothing the remote's tip lacks.
            record(t);
            return local;
        };
        let local = self.take_seen(remote, local, rollback.seen).or(local);
        let dropped: Vec<String> = rollback
            .dropped
            .iter()
            .map(|(session, scope)| format!("{scope} of {session}"))
            .collect();
        let line = format!(
            "warning: {label} moved back: its tip {t8} is not a descendant of {s8}, the registry this clone read before, and drops {n} claim(s) still held there ({list}); bsi keeps them until a merge of both says otherwise: publish them again with `bsi sync`",
            label = remote.label(),
            t8 = &t.to_string()[..7],
            s8 = &s.to_string()[..7],
            n = dropped.len(),
            list = dropped.join(", "),
        );
        self.notes.push_once(line);
        local
    }

    /// The rollback from `seen` to `tip`: `None` when the merge by rows of
    /// both (on their merge base) holds no claim `tip` lacks, or when a
    /// registry cannot be read (then nothing is taken for dropped).
    fn rollback(&self, remote: &Remote, seen: Oid, tip: Oid) -> Option<Rollback> {
        let read = |id: Oid| self.text_at(id).ok().and_then(|t| registry::parse(t).ok());
        let ours = read(seen)?;
        let theirs = read(tip)?;
        let base = self.git.merge_base(seen, tip).ok().flatten().and_then(read);
        let merged = self
            .merge_published(base.as_ref(), &ours, theirs.clone(), Some(remote))
            .ok()?;
        let merged = registry::parse(merged.text).ok()?;
        let now = claims_of(&theirs);
        let dropped: Vec<(String, Scope)> = claims_of(&merged)
            .into_iter()
            .filter(|c| !now.contains(c))
            .collect();
        (!dropped.is_empty()).then_some(Rollback { seen, dropped })
    }

    /// Makes the local registry branch hold the tip `seen`: moved to it
    /// when it is behind it (or absent), given a commit of the merge of
    /// both on top when they parted; left when it holds it already or is
    /// checked out in a work tree. Returns where it is, when it moved.
    fn take_seen(&self, remote: &Remote, local: Option<Oid>, seen: Oid) -> Option<Oid> {
        if self.ensure_branch_free().is_err() {
            return None;
        }
        let to = match local {
            Some(l) if self.git.is_ancestor(seen, l).ok()? => return None,
            Some(l) if !self.git.is_ancestor(l, seen).ok()? => {
                let read = |id: Oid| self.text_at(id).ok().and_then(|t| registry::parse(t).ok());
                let base = self.git.merge_base(l, seen).ok().flatten().and_then(read);
                let merged = self
                    .merge_published(base.as_ref(), &read(l)?, read(seen)?, Some(remote))
                    .ok()?;
                let message = crate::claims::commit_message(
                    "keep",
                    &[],
                    "the claims a registry moved back dropped",
                );
                self.git
                    .commit_files(
                        Some(l),
                        &[(BRANCH_FILE, Some(merged.text.as_bytes()))],
                        &message,
                    )
                    .ok()?
            }
            _ => seen,
        };
        self.git
            .move_ref(
                &self.local_ref(),
                to,
                local,
                "bsi: keep the claims a registry moved back dropped",
            )
            .ok()?;
        Some(to)
    }
}
