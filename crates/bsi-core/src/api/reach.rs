//! What a door may name of the core's IO rooms: the handles it opens once
//! ([`store::Brain`], [`settings::Settings`], [`git::Git`]), the values
//! their answers carry, and the few IO entry points a door serves itself
//! (a merge driver's file merge, a hook's read of a remote on this disk).
//!
//! The IO rooms themselves ([`crate::store`], [`crate::publish`],
//! [`crate::git`], [`crate::git_cli`], [`crate::settings`],
//! [`crate::audit`], [`crate::wait`], [`crate::resolve`],
//! [`crate::platform`]) are private to this crate: a door that wants
//! more than this list has to ask for it here, where it is read, so the
//! compiler keeps the boundary. The pure rooms (scopes, the registry's
//! model, claims' plans, the guard's rules, next steps, words…) are the
//! core's vocabulary and public as they are.

/// The registry branch and its copies ([`crate::store`]).
pub mod store {
    pub use crate::store::{
        BRANCH_FILE, Brain, FAULT_POINTS, FirstFetch, Notes, ROOT_FILE, Site, View, parse_root,
    };

    /// The records that keep a waiter's place alive, as `bsi doctor` lists them.
    pub mod alive {
        pub use crate::store::alive::Record;
    }
}

/// The write protocol's answers ([`crate::publish`]), and the writes a
/// door starts itself: creating the registry branch (`init`, `migrate`),
/// a person's repair, a plan published as it is (`sync`), and a fresh
/// read of the published registry.
pub mod publish {
    pub use crate::publish::{
        Applied, Bound, Created, Freshness, Landed, Landing, Options, Plan, apply, create, raw,
        read, replace,
    };
}

/// git through libgit2 ([`crate::git`]).
pub mod git {
    pub use crate::git::{ChangesOf, CommitInfo, Git, MergeOf, Oid};

    /// A remote that is a repository on this disk, read in process.
    pub mod local_remote {
        pub use crate::git::local_remote::{branch_tip, fetch, meeting_dir, within};
    }
}

/// The `git` command's answers ([`crate::git_cli`]), and the file merge a
/// merge driver runs.
pub mod git_cli {
    pub use crate::git_cli::{FetchError, Remote, merge_file};
}

/// Where each setting comes from ([`crate::settings`]).
pub mod settings {
    pub use crate::settings::{
        Given, Settings, agent_name, default_agent, load_config, load_config_for_hook,
    };
}

/// A session's commits and changes against its claims ([`crate::audit`]).
pub mod audit {
    pub use crate::audit::{
        Report, Unwritten, VerifyOutcome, check_changes, check_commit, check_merge, closed_claims,
        describe, drift_line, drift_of, drift_summary, made_by_holder, missing_line, missing_lines,
        read_changes, replays_within, reserved_line, short, verify, verify_against,
    };
}

/// What `--wait` watches ([`crate::wait`]).
pub mod wait {
    pub use crate::wait::describe;
}

/// Scopes against the file system ([`crate::resolve`]).
pub mod resolve {
    pub use crate::resolve::{
        Absent, NewHeading, WALK_LIMIT, absent, new_heading, resolve_scope, sections, walk,
    };
}

/// The process table ([`crate::platform`]).
pub mod platform {
    pub use crate::platform::ancestors;
}
