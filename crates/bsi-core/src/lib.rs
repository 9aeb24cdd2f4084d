//! The core of bsi, the Brain Session Index: every rule, the registry, the
//! store, the write protocol and git, for the doors of the `bsi` crate (the
//! command line, git's hooks, the agent tools' hooks, MCP) to call in
//! process. It prints nothing and depends on no clap, rmcp, tokio or
//! terminal crate; [`api`] is what the doors ask.
//!
//! # The rooms, and what each may call
//!
//! Each room's last column is every other room of this crate its code
//! names: no more, no less (`tests/it/house.rs` reads the `crate::` paths
//! of each room's files and checks this table against them, as it checks
//! the doors' table in the `bsi` crate). Every room may name [`error`]'s
//! types; the column lists the rest.
//!
//! | room | holds | pure? | may call |
//! |---|---|---|---|
//! | [`values`] | session ids, agent names, TTLs as typed values | yes | [`ttl`] |
//! | [`scope`] | the spec's rules: scopes and their overlap | yes | — |
//! | [`ttl`] | expiry, times and durations | yes | — |
//! | [`conflict`] | grant or refuse | yes | [`registry`], [`scope`] |
//! | [`changes`] | which lines and sections a change touches | yes | [`markdown`] |
//! | [`api`] | what every door asks, in process: who acts ([`api::Actor`]), a typed request, the outcome of open (its wait included, stopped by [`api::Stop`]), close, renew, release, the watchdog, `commit` (a session's own lines) and the reads of `status`, `whoami` and the journal; the edit decision under a clone's settings and the claim on an edit's first write ([`api::edit`]); what a git move would take out of the work tree; what an agent's session is told when it starts and still holds when it stops ([`api::agent`]); the copy of each session's uncommitted work ([`api::keep`]) and `recover`; the facade of the IO rooms (`api::store`, `api::git`, …: all a door may name of them, listed in one file); prints nothing: what the IO has to say comes back in [`store::Notes`] | IO, through [`publish`] and [`store`] | [`audit`], [`claims`], [`config`], [`conflict`], [`drift`], [`git`], [`git_cli`], [`guard`], [`keep`], [`next`], [`page`], [`platform`], [`publish`], [`registry`], [`resolve`], [`scope`], [`session`], [`settings`], [`store`], [`trailer`], [`ttl`], [`values`], [`wait`], [`writes`] |
//! | [`claims`] | the plans of every write (open, close, renew, release, watchdog) and their [`claims::Plan`], the ownership rule, commit messages, and the [`claims::Snapshot`] a plan reads instead of the file system | yes | [`conflict`], [`guard`], [`markdown`], [`registry`], [`scope`], [`trailer`], [`ttl`], [`values`] |
//! | [`holdings`] | who held what, when: the grants and ends of the registry's history, each at the second of its commit, and who held a part at a second | yes | [`scope`] |
//! | [`keep`] | a session's uncommitted work kept in git objects: which copy of a file to keep, and what putting a copy back makes of the file (its own hunks, never over newer lines) | yes | [`changes`], [`guard`] |
//! | [`drift`] | a claimed part changed on the content branch by a commit whose session did not hold it then | yes | [`guard`], [`holdings`], [`registry`], [`scope`] |
//! | [`guard`] | findings (a change against the claims), what an agent's edit touches ([`guard::touch`]), [`guard::verdict`] (their words, and what each hook mode refuses) and [`guard::ways`] (the ways out of a refusal, by where each holder stands) for every door | yes | [`changes`], [`config`], [`markdown`], [`registry`], [`scope`], [`ttl`], [`words`] |
//! | [`registry`] | the registry's model, parse, render, row merge, archive | yes | [`scope`], [`ttl`] |
//! | [`markdown`] | the one pulldown-cmark parser: heading trees, tables | yes | [`scope`] |
//! | [`trailer`] | commit trailers | yes | — |
//! | [`session`] | new session ids | yes | — |
//! | [`store`] | the registry branch, its work-tree copy, the writer lock, the snapshot a plan gets (heading trees of every work tree's commit and the upstream); the write requests where writers meet, each filed, gathered or withdrawn by the write machine; what its IO has to say kept in [`store::Notes`] for the door, never printed | IO | [`claims`], [`git`], [`git_cli`], [`markdown`], [`platform`], [`registry`], [`resolve`], [`scope`], [`settings`], [`words`], [`writes`] |
//! | [`publish`] | the write protocol: lock, plan, commit, push, retry; also creating the registry branch (`init`, `migrate`) and a person's repair; where a write landed, typed for every door to say ([`publish::Landing`], the exit code it makes); prints only the trace `-v` asks for; each request it carries moved by the write machine ([`writes::Ledger`]) | IO | [`claims`], [`conflict`], [`git`], [`git_cli`], [`platform`], [`registry`], [`settings`], [`store`], [`writes`] |
//! | [`audit`] | a session's commits and work-tree changes against its claims; the drift of the claims, read from the content branch | IO | [`changes`], [`claims`], [`drift`], [`git`], [`guard`], [`holdings`], [`markdown`], [`registry`], [`resolve`], [`scope`], [`store`], [`trailer`], [`ttl`], [`words`] |
//! | [`settings`] | where each setting comes from | IO | [`config`], [`git`], [`git_cli`], [`ttl`], [`values`] |
//! | [`config`] | `.bsi.toml`, parsed | yes | [`registry`], [`ttl`], [`values`] |
//! | [`git`] | the only user of git2; a remote that is a repository on this disk read in process ([`git::local_remote`]) | IO | [`git_cli`] |
//! | [`git_cli`] | the only runner of the `git` command | IO | [`platform`] |
//! | [`resolve`] | scopes against the file system | IO | [`markdown`], [`scope`] |
//! | [`wait`] | watching for `--wait` | IO | [`git`], [`git_cli`], [`settings`], [`store`], [`ttl`] |
//! | [`platform`] | the process table (every system's), the host, proof a lock's holder is dead, what this process does when a signal interrupts it | IO | — |
//! | [`page`] | the live page of the brain as data: the tree of folders, files and sections with the claims on each, reserved sections, the queue, drift, the latest writes | yes | [`drift`], [`markdown`], [`registry`], [`scope`], [`trailer`], [`ttl`] |
//! | [`next`] | what to do next as data ([`next::NextStep`]): each step with its arguments and who may take it (this session, any session, a person), decided once for every door | yes | [`guard`], [`registry`], [`scope`], [`words`] |
//! | [`words`] | the one [`words::shell_word`]: every command bsi prints for someone to run writes its values with it | yes | [`registry`], [`scope`] |
//! | [`writes`] | a write's states and transitions (planned, filed, gathered, carried, posted, withdrawn, handed, landed, refused, given up) and what a waiter that leaves answers, for the writers of one clone, of one machine and of many; checked over every interleaving of three writers | yes | — |
//! | [`error`] | every error as a named kind (what happened, with its values) and its exit code; `-v` prints its causes; what to do next is the doors' | yes | [`config`], [`registry`], [`scope`], [`ttl`], [`values`] |
//!
//! The IO rooms ([`store`], [`publish`], [`git`], [`git_cli`],
//! [`settings`], [`audit`], [`wait`], [`resolve`], [`platform`]) are
//! private: the doors reach them only through [`api`], whose `reach.rs`
//! lists what a door may name of each, so the compiler keeps the boundary.
//! The pure rooms are the core's public vocabulary.
//!
//! A plan never does IO: what it needs is in its snapshot, so a retried plan
//! is cheap and decides the same. Nothing outside [`git`] names a git2
//! type; nothing outside [`git_cli`] spawns git. The rooms import each
//! other without a circle, and only [`words`] quotes shell words: that
//! test checks them all.

pub mod api;
mod audit;
pub mod changes;
pub mod claims;
pub mod config;
pub mod conflict;
pub mod drift;
pub mod error;
mod git;
mod git_cli;
pub mod guard;
pub mod holdings;
pub mod keep;
pub mod markdown;
pub mod next;
pub mod page;
mod platform;
mod publish;
pub mod registry;
mod resolve;
pub mod scope;
pub mod session;
mod settings;
mod store;
pub mod trailer;
pub mod ttl;
pub mod values;
mod wait;
pub mod words;
pub mod writes;

pub use error::{Error, Result, exit};
