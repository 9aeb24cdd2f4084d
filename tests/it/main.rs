//! Integration tests: the real `bsi` binary on real temporary git repositories.
//! One test binary, one module per area.

mod agent;
mod agent_cli;
mod agent_hook;
mod agent_shell;

mod archive;
mod branch;
mod clones;
mod common;
mod config;
mod core;
mod demo;
mod docs;
mod doors;
mod edit_decision;
mod exact;
mod help;
mod hints;
mod hooks;
mod house;
mod json;
mod layouts;
mod managers;
mod mcp;
mod queue;
mod reliability;
mod remote;
mod safe_writes;
mod snapshots;
mod transcript;
mod truth;
mod ux;
mod views;
