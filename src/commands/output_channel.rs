//! The output channel of the command line: the one way a command's words
//! leave the process. A command says what it has to say once — the JSON
//! document, the view it was asked for, the sentences for people, the lines
//! an `eval` needs, a refusal, a note — and the channel alone knows the
//! form of the run (people's, `--json`, `--shell`, `--quiet`), the width
//! its sentences are wrapped to, and which stream each part goes to. Every write
//! that fails is [`Error::Output`]; a reader that closed the pipe
//! (`bsi log | head`) ends the run quietly with success
//! ([`closed_pipe_ends_quietly`]).

use std::fmt::Display;
use std::io::{self, Write};

use serde::Serialize;

use super::{Form, Screen, Verbosity};
use crate::output;
use bsi_core::error::{Error, Result, exit};

/// Where what a command says goes, chosen once from the run ([`super::Ctx::out`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Out {
    form: Form,
    verbosity: Verbosity,
    screen: Screen,
}

impl Out {
    /// The channel of a run of this form, verbosity and screen.
    pub fn new(form: Form, verbosity: Verbosity, screen: Screen) -> Out {
        Out {
            form,
            verbosity,
            screen,
        }
    }

    /// `--json`: the document `doc` builds, on stdout. In every other form
    /// nothing (and `doc` is not built).
    pub fn json<T: Serialize>(&self, doc: impl FnOnce() -> T) -> Result<()> {
        if self.form != Form::Json {
            return Ok(());
        }
        output::write_json(&mut io::stdout().lock(), &doc()).map_err(Error::output)
    }

    /// `--shell`: the lines an `eval` runs, on stdout. In every other form
    /// nothing.
    pub fn shell<L: Display>(&self, lines: impl IntoIterator<Item = L>) -> Result<()> {
        if self.form != Form::Shell {
            return Ok(());
        }
        let mut out = io::stdout().lock();
        for line in lines {
            writeln!(out, "{line}").map_err(Error::output)?;
        }
        Ok(())
    }

    /// What the command was asked for, in people's form (a table, a log, a
    /// report): what `f` writes goes to stdout, `-q` or not — `-q` means
    /// "only what was asked for" in every command. Under `--json` the
    /// document says it instead: `f` is not run.
    pub fn show(&self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        if self.form == Form::Json {
            return Ok(());
        }
        written(&mut self.view(), f)
    }

    /// Sentences for people (what happened, what to do next): what `f`
    /// writes goes to stdout; to stderr under `--shell` (stdout is the
    /// `eval`'s); nowhere with `--quiet`. Under `--json` the document says
    /// it instead: `f` is not run.
    pub fn say(&self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        if self.form == Form::Json {
            return Ok(());
        }
        written(&mut self.sentences(), f)
    }

    /// A refusal for people: what `f` writes goes to stderr, `-q` or not.
    /// Under `--json` the document says it instead: `f` is not run. Stderr
    /// that cannot be written to leaves nothing to tell it on: let go.
    pub fn refusal(&self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.form == Form::Json {
            return;
        }
        let _ = written(&mut self.err(), f);
    }

    /// A line on stderr, in every form: a note, a warning. Never fails.
    pub fn err_line(&self, line: impl Display) {
        self.err_lines([line]);
    }

    /// Lines on stderr, in every form, as one text (a `Next:` line and the
    /// lines that continue it are wrapped together): notes, warnings,
    /// where a write landed. Never fails.
    pub fn err_lines<L: Display>(&self, lines: impl IntoIterator<Item = L>) {
        let mut err = self.err();
        for line in lines {
            let _ = writeln!(err, "{line}");
        }
    }

    /// Bytes on stdout as they are, flushed: what is generated whole
    /// (completions, the man page, help) and the frames of a live view.
    pub fn raw(&self, bytes: &[u8]) -> Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(Error::output)
    }

    /// Where the sentences for a person go, for a command that says them
    /// as it goes ([`Out::say`]'s stream): stdout; stderr under `--shell`;
    /// nowhere with `--quiet` or `--json`.
    pub fn sentences(&self) -> Lines {
        Lines(match (self.form, self.verbosity) {
            (_, Verbosity::Quiet) | (Form::Json, _) => Box::new(io::sink()),
            (Form::Shell, _) => self.fitted_prose(io::stderr().lock()),
            (Form::Human, _) => self.fitted_prose(io::stdout().lock()),
        })
    }

    /// Where what the command was asked for goes, for a command that
    /// writes it as it goes ([`Out::show`]'s stream): stdout, `--quiet` or
    /// not.
    pub fn view(&self) -> Lines {
        Lines(self.fitted(io::stdout().lock()))
    }

    /// Where a command that waits says what it waits for, as it goes:
    /// stdout for people, so that those lines stay before the answer that
    /// ends the wait (a tool that reads stdout and stderr apart shows them
    /// in order); stderr under `--shell`, `--json` or `--quiet`, whose
    /// stdout is the `eval`'s, the document's or what was asked for.
    pub fn progress(&self) -> Box<dyn Write> {
        match (self.form, self.verbosity) {
            (Form::Human, Verbosity::Normal | Verbosity::Verbose) => {
                self.fitted(io::stdout().lock())
            }
            _ => Box::new(io::stderr().lock()),
        }
    }

    /// Where a refusal, a note or a warning is said: stderr, its `Next:`
    /// lines wrapped to the screen as the sentences' are.
    pub fn err(&self) -> Box<dyn Write> {
        self.fitted_prose(io::stderr().lock())
    }

    /// Stderr with every line as written: what git's hooks and merge driver
    /// say (git shows it as it comes), and the warnings said beside a view.
    pub fn plain_err(&self) -> Box<dyn Write> {
        Box::new(io::stderr().lock())
    }

    /// `out`, every line of prose wrapped to the screen (a pipe: as
    /// written): sentences, refusals, notes, warnings.
    fn fitted_prose(&self, out: impl Write + 'static) -> Box<dyn Write> {
        if output::is_bounded(self.screen.width) {
            Box::new(output::Fitted::prose(out, self.screen.width))
        } else {
            Box::new(out)
        }
    }

    /// `out`, its `Next:` lines wrapped to the screen (a pipe: as written).
    fn fitted(&self, out: impl Write + 'static) -> Box<dyn Write> {
        if output::is_bounded(self.screen.width) {
            Box::new(output::Fitted::new(out, self.screen.width))
        } else {
            Box::new(out)
        }
    }
}

/// A stream of people's lines ([`Out::sentences`], [`Out::view`]): a
/// writer, and lines written with the error of every write to the screen
/// ([`Error::Output`]).
pub struct Lines(Box<dyn Write>);

impl Lines {
    /// Writes `text` and a newline.
    pub fn line(&mut self, text: impl Display) -> Result<()> {
        writeln!(self.0, "{text}").map_err(Error::output)
    }
}

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// What `f` writes to `out`, flushed; a failed write is [`Error::Output`].
fn written(out: &mut dyn Write, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    f(out).and_then(|()| out.flush()).map_err(Error::output)
}

/// The end of a run's command: a reader that closed the pipe
/// (`bsi log | head`) wanted no more — a quiet end with success, as for any
/// well-behaved filter; every other result as it is.
pub(super) fn closed_pipe_ends_quietly(result: Result<u8>) -> Result<u8> {
    match result {
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(exit::OK),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(form: Form, verbosity: Verbosity) -> Out {
        Out::new(
            form,
            verbosity,
            Screen {
                colour: false,
                width: usize::MAX,
            },
        )
    }

    #[test]
    fn each_part_is_said_only_in_its_form() {
        let people = out(Form::Human, Verbosity::Quiet);
        people
            .json(|| -> u8 { panic!("no document for people") })
            .expect("nothing written");
        people
            .shell(std::iter::from_fn(|| -> Option<&str> {
                panic!("no eval lines for people")
            }))
            .expect("nothing written");
    }

    #[test]
    fn a_json_run_says_nothing_for_people() {
        let json = out(Form::Json, Verbosity::Normal);
        json.say(|_| panic!("no sentences under --json"))
            .expect("nothing written");
        json.show(|_| panic!("no view under --json"))
            .expect("nothing written");
        json.refusal(|_| panic!("no refusal in words under --json"));
    }

    #[test]
    fn quiet_sentences_are_written_nowhere() {
        let mut ran = false;
        out(Form::Human, Verbosity::Quiet)
            .say(|w| {
                ran = true;
                writeln!(w, "Claim opened")
            })
            .expect("a sink takes every line");
        assert!(ran, "the sentences are made, as their side notes are said");
    }

    #[test]
    fn only_a_closed_pipe_ends_quietly() {
        let closed = Err(Error::output(io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(matches!(closed_pipe_ends_quietly(closed), Ok(exit::OK)));
        let full = Err(Error::output(io::Error::from(io::ErrorKind::StorageFull)));
        assert!(matches!(
            closed_pipe_ends_quietly(full),
            Err(Error::Output(_))
        ));
        assert!(matches!(closed_pipe_ends_quietly(Ok(3)), Ok(3)));
    }
}
