//! Integration tests: the real `bsi` binary on real temporary git repositories.
//! One test binary, one module per area.

mod agent;
mod agent_cli;
mod agent_cli_cline;
mod agent_cli_copilot;
mod agent_cli_opencode;
mod agent_hook;
mod agent_shell;
mod agent_user;

mod archive;
mod bounds;
mod branch;
mod clones;
mod common;
mod config;
mod core;
mod demo;
mod disk_remote;
mod docs;
mod doors;
mod drift;
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
mod ownership;
mod queue;
mod queue_promises;
mod reliability;
mod remote;
mod replay;
mod root;
mod safe_writes;
mod shared_writes;
mod snapshots;
mod transcript;
mod truth;
mod ux;
mod views;
