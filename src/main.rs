//! The `bsi` binary: all the work is in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(bsi::run(std::env::args_os()))
}
