//! Integration tests: the real `bsi` binary on real temporary git repositories.
//! One test binary, one module per area.

mod common;
mod core;
mod remote;
