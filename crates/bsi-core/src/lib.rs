//! The core of bsi, the Brain Session Index: every rule, the registry, the
//! store, the write protocol and git, for the doors of the `bsi` crate (the
//! command line, git's hooks, the agent tools' hooks, MCP) to call in
//! process. It prints nothing and depends on no clap, rmcp, tokio or
//! terminal crate.

pub mod api;
pub mod audit;
pub mod changes;
pub mod claims;
pub mod config;
pub mod conflict;
pub mod drift;
pub mod error;
pub mod git;
pub mod git_cli;
pub mod guard;
pub mod markdown;
pub mod platform;
pub mod publish;
pub mod registry;
pub mod resolve;
pub mod scope;
pub mod session;
pub mod settings;
pub mod store;
pub mod trailer;
pub mod ttl;
pub mod values;
pub mod wait;
pub mod words;

pub use error::{Error, Result, exit};
