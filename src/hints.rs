//! What to do next about an error, as typed steps: each with what it is
//! for, the command that takes it as its words, and who may take it
//! ([`Who`]). Attached at the edge, where the door that reports the error
//! speaks; [`crate::steps`] says them in each medium's words (a `hint:`
//! line, the JSON document's `next`, MCP's calls). The core's errors say
//! what happened and carry their values; a step's command is written with
//! `shell_word` only when it is rendered. Pure.

use bsi_core::error::{Error, address_hint, nearest_heading, read_only, root_words};
use bsi_core::next::Who;
use bsi_core::scope::Scope;
use bsi_core::values::BadValue;
use bsi_core::words::{Here, command_line, shell_word};
use serde::Serialize;

/// What to do next about an error: its steps, in the order they are said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hint {
    /// The steps.
    pub steps: Vec<HintStep>,
}

/// One step of a [`Hint`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HintStep {
    /// Who may take it: a step that forces another session's claim, or
    /// acts for the brain's every clone, is [`Who::Person`]'s.
    pub who: Who,
    /// What it is for, in words. A step without a command says it all in
    /// words, with the commands it names written as examples
    /// (`bsi open SCOPE --session NEW-ID`) where their values are the user's.
    pub purpose: String,
    /// The command that takes it, as its words (argv); none for a step in
    /// words alone.
    pub command: Option<Vec<String>>,
}

impl HintStep {
    /// A step of the session answered, in words alone.
    fn say(purpose: impl Into<String>) -> HintStep {
        HintStep {
            who: Who::ThisSession,
            purpose: purpose.into(),
            command: None,
        }
    }

    /// A step of the session answered, taken by `argv`.
    fn run<I, S>(purpose: impl Into<String>, argv: I) -> HintStep
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        HintStep {
            who: Who::ThisSession,
            purpose: purpose.into(),
            command: Some(argv.into_iter().map(Into::into).collect()),
        }
    }

    /// The same step, for `who`.
    fn by(self, who: Who) -> HintStep {
        HintStep { who, ..self }
    }

    /// A step that only reads (`bsi status`): any session may take it.
    fn look<I, S>(purpose: impl Into<String>, argv: I) -> HintStep
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        HintStep::run(purpose, argv).by(Who::AnySession)
    }
}

impl Hint {
    /// A hint of these steps.
    fn of(steps: impl IntoIterator<Item = HintStep>) -> Hint {
        Hint {
            steps: steps.into_iter().collect(),
        }
    }

    /// A hint of one step in words alone.
    fn say(purpose: impl Into<String>) -> Hint {
        Hint::of([HintStep::say(purpose)])
    }
}

impl From<HintStep> for Hint {
    fn from(step: HintStep) -> Hint {
        Hint::of([step])
    }
}

/// What the user can do next about `e`: every error has its next step.
pub fn hint(e: &Error) -> Hint {
    hint_at(e, &Here::root())
}

/// `bsi open` of `scopes` as typed from `here`, then `more`.
fn open_argv<'a>(
    here: &Here,
    scopes: impl IntoIterator<Item = &'a Scope>,
    more: &[&str],
) -> Vec<String> {
    ["bsi".to_string(), "open".to_string()]
        .into_iter()
        .chain(scopes.into_iter().map(|s| here.scope(s)))
        .chain(more.iter().map(ToString::to_string))
        .collect()
}

/// A step of the session answered, in words alone.
fn say(purpose: impl Into<String>) -> HintStep {
    HintStep::say(purpose)
}

/// A step of the session answered, taken by `argv`.
fn run<S: Into<String>>(purpose: impl Into<String>, argv: impl IntoIterator<Item = S>) -> HintStep {
    HintStep::run(purpose, argv)
}

/// A step that only reads: any session's.
fn look<S: Into<String>>(
    purpose: impl Into<String>,
    argv: impl IntoIterator<Item = S>,
) -> HintStep {
    HintStep::look(purpose, argv)
}

/// [`hint`] printed at `here`: the scopes of its commands written as typed
/// from there ([`Here`]).
pub fn hint_at(e: &Error, here: &Here) -> Hint {
    let open = |scope: &Scope| open_argv(here, [scope], &[]);
    match e {
        Error::Usage(_) => look("see the commands and their flags", ["bsi", "help"]).into(),
        Error::Value(bad) => value_hint(bad),
        Error::ThroughSymlink {
            target: Some(target),
            ..
        } => run("claim it by that name", open(&scope_of(target))).into(),
        Error::ThroughSymlink { target: None, .. } => Hint::say(
            "claim what the link leads to by its own name (`bsi status --tree` shows the brain's paths)",
        ),
        Error::NotADirectory { file, .. } => {
            run("claim it as a file", open(&Scope::File(file.clone()))).into()
        }
        Error::NotMarkdown { scope, file } => Hint::of([
            run("claim the whole file", open(&Scope::File(file.clone()))),
            run(
                "or, if `#` is part of the name, write it `\\#`",
                ["bsi", "open", &scope.replacen('#', "\\#", 1)],
            ),
        ]),
        Error::NoSuchRemote { .. } => Hint::of([
            look("list this clone's remotes and name one of them", ["git", "remote", "-v"]),
            say("or add it with `git remote add NAME URL`"),
        ]),
        Error::RegistryElsewhere { holder, .. } => Hint::of([
            run("use the one registry", ["git", "config", "bsi.remote", holder]),
            look("then check it", ["bsi", "status"]),
        ]),
        Error::WhichRemote {
            remotes, holding, ..
        } => {
            let pick = holding
                .first()
                .or_else(|| remotes.iter().find(|r| *r == "origin"))
                .or(remotes.first())
                .map_or("NAME", String::as_str);
            Hint::of([
                run("choose it for this clone", ["git", "config", "bsi.remote", pick]),
                say(format!("or for the brain, with `remote = \"{pick}\"` in .bsi.toml")),
                say("then run the same command again"),
            ])
        }
        Error::RegistryNotClaimable => Hint::say(
            "claim what you will edit (`bsi open notes/`); bsi changes the registry for you, and `bsi status` shows it",
        ),
        Error::BadClock { .. } => Hint::say(
            "give a full time with its zone, like `export BSI_NOW=2026-03-14T09:30:00Z`, or `unset BSI_NOW` to use the clock",
        ),
        Error::BadSeed { .. } => Hint::say(
            "give one, like `export BSI_RANDOM_SEED=1`, or `unset BSI_RANDOM_SEED` for random session ids",
        ),
        Error::RegistryDirMissing { .. } => Hint::say(
            "create that directory, or `unset BSI_REGISTRY` to keep the registry's copy at the root of the work tree",
        ),
        Error::RootContradicted { recorded, .. } => {
            let copy = if recorded.is_empty() {
                bsi_core::registry::REGISTRY_FILE.to_string()
            } else {
                format!("{recorded}/{}", bsi_core::registry::REGISTRY_FILE)
            };
            Hint::of([
                run(
                    "leave it out (and no --registry): bsi finds the recorded root by itself",
                    ["unset", "BSI_REGISTRY"],
                ),
                // An assignment, said as the shell reads it.
                say(format!(
                    "or name that one: `export BSI_REGISTRY={}`",
                    shell_word(&copy)
                )),
            ])
        }
        Error::RootChanged { first, .. } => run(
            format!(
                "put BRAIN-ROOT back to {} (a brain keeps one root, so no file gets two names; save the registry unchanged to change nothing else)",
                root_words(first)
            ),
            ["bsi", "repair"],
        )
        .into(),
        Error::RepairNeedsSync { .. } => Hint::of([
            run(
                "first publish the local changes merged with the remote's",
                ["bsi", "sync"],
            ),
            run("then repair again", ["bsi", "repair"]),
        ]),
        Error::NoSession => Hint::say(
            "name the session (`bsi status` lists them: `bsi close SESSION`), or `export BSI_SESSION=SESSION` for every later command",
        ),
        Error::NoSuchCommand { parent, .. } => look(
            "see the list of its commands",
            parent.iter().map(String::as_str).chain(["--help"]),
        )
        .into(),
        Error::SettingsUnusable { .. } => Hint::say(
            "fix the file (or move it away), then run the command again; bsi left it as it is",
        ),
        Error::SessionOfAnotherAgent { owner, .. } => Hint::say(format!(
            "open a session of your own (leave out --session and BSI_SESSION, or give a new id), or act as {owner} with `{}`",
            command_line(["--agent", owner])
        )),
        Error::StillActive { session, .. } => Hint::of([
            say(
                "ask the session to close, or wait for the watchdog to mark them stale and release one stale scope with --scope",
            ),
            run(
                "to free active claims as well",
                ["bsi", "release", session, "--confirm", "--force"],
            )
            .by(Who::Person),
        ]),
        Error::NotTheHolder { claim, verb, .. } => Hint::of([
            run(
                "if you are its holder",
                ["bsi", verb, &claim.session, "--agent", &claim.agent],
            ),
            run(
                format!("to {verb} another agent's claim anyway"),
                ["bsi", verb, &claim.session, "--force"],
            )
            .by(Who::Person),
        ]),
        Error::NoScope => Hint::say(format!(
            "for example `{}` (a folder), `{}` (a file) or `{}` (a section); `bsi status --tree` shows the brain's paths and what is claimed",
            command_line(["bsi", "open", "notes/"]),
            command_line(["bsi", "open", "notes/plan.md"]),
            command_line(["bsi", "open", "notes/plan.md#Goals"])
        )),
        Error::NotYourSession { claim, verb, .. } => Hint::of([
            say("leave it to its session, or ask its holder"),
            run(
                format!(
                    "to {verb} it anyway (recorded as forced by this session, and its holder is told)"
                ),
                ["bsi", verb, &claim.session, "--force"],
            )
            .by(Who::Person),
        ]),
        Error::StaleNotRenewable { session, scopes } => Hint::of([
            run("as their holder, close them", ["bsi", "close", session]),
            run(
                "then claim them again",
                open_argv(here, scopes, &["--session", session]),
            ),
        ]),
        Error::RenewOverdue { claim, overdue, .. } => Hint::of([
            run("close it", ["bsi", "close", &claim.session]),
            run("then claim again", open_argv(here, overdue, &[])),
        ]),
        Error::RenewAtCeiling {
            session, scopes, ..
        } => Hint::of([
            run("finish before then, or close", ["bsi", "close", session]),
            run("then claim again", open_argv(here, scopes, &[])),
        ]),
        Error::HookSlotsTaken { .. } => {
            Hint::say("move one of them away (bsi never overwrites a hook), then retry")
        }
        Error::HookNotShell { name, .. } => Hint::say(format!(
            "call `bsi hook {name}` from it yourself, with the hook's arguments and its standard input; `bsi doctor` then finds it"
        )),
        Error::Unmergeable { .. } => Hint::of([
            run(
                "settle it by hand (it edits the registry this clone would publish, and publishes it only if nobody wrote meanwhile)",
                ["bsi", "repair"],
            ),
            run("then publish", ["bsi", "sync"]),
        ]),
        Error::NothingToMigrate { .. } => Hint::of([
            look("see the registry", ["bsi", "status"]),
            run("or, for a brain that has none, create one", ["bsi", "init"]),
        ]),
        Error::RegistryEdited { file } => Hint::of([
            run("commit the change", ["git", "commit", file]),
            run("or undo it", ["git", "checkout", "--", file]),
            run("then migrate again", ["bsi", "migrate"]),
        ]),
        Error::MigrateDetached => Hint::say(
            "switch to the branch that tracks it (`git switch main`, say), then run `bsi migrate` again; nothing was written",
        ),
        Error::SessionIdsExhausted { .. } => {
            Hint::say("name the session yourself: `bsi open SCOPE --session NEW-ID`")
        }
        Error::SessionIdTaken { .. } => {
            Hint::say("name a new session: `bsi open SCOPE --session NEW-ID`")
        }
        Error::NoEditor => Hint::say(
            "set one (`export EDITOR=vi`), or write the new text to a file and run `bsi repair --from FILE`",
        ),
        Error::EditorFailed { file, .. } => run(
            format!(
                "your text is in {}; repair with the text you want",
                file.display()
            ),
            [
                "bsi".to_string(),
                "repair".into(),
                "--from".into(),
                file.to_string_lossy().into_owned(),
            ],
        )
        .into(),
        Error::RepairRaced { .. } => run(
            "repair again, from the registry as it is now",
            ["bsi", "repair"],
        )
        .into(),
        Error::BranchCheckedOut { dir, .. } => Hint::of([
            run(
                "take the work tree off the branch",
                ["git", "-C", dir, "switch", "--detach"],
            ),
            run(
                "or, when its work is done, remove it",
                ["git", "worktree", "remove", dir],
            ),
            say(
                "then run the same command again; `bsi repair` edits the registry by hand without a checkout",
            ),
        ]),
        Error::MigratedMeanwhile { .. } => Hint::of([
            run(
                "another clone migrated at the same time: pull",
                ["git", "pull"],
            ),
            look("then check", ["bsi", "status"]),
        ]),
        Error::MigrationUnmergeable { .. } => Hint::of([
            run("settle it by hand", ["bsi", "repair"]),
            run("then migrate again", ["bsi", "migrate"]),
        ]),
        Error::RowsMissing { .. } => Hint::of([
            run("first pull (the brain was migrated elsewhere)", ["git", "pull"]),
            run("if rows are still missing, add them", ["bsi", "repair"]),
        ]),
        Error::NoRemote => Hint::say(
            "add one (`git remote add origin URL`), or name it with --remote, `git config bsi.remote NAME` or `remote` in .bsi.toml; then run `bsi sync`",
        ),
        Error::NoCurrentSession => Hint::say(
            "start one with `eval \"$(bsi open SCOPE --shell)\"`, or `export BSI_SESSION=ID` to resume a session `bsi status` lists",
        ),
        Error::Scope(_) => Hint::say(
            "give `global`, a directory `dir/`, a file `dir/file.md` or a section `dir/file.md#Heading`, relative to the brain (`bsi status --tree` shows its paths)",
        ),
        Error::Ttl(_) => Hint::say(
            "run the same command with a TTL from 1m to 8h, like `--ttl 4h` (short is 2h, deep 4h, long 8h)",
        ),
        Error::NoSuchFile {
            heading,
            nearest: Some(near),
            ..
        } => run(
            format!("did you mean {}? claim its section", here.path(near)),
            open(&Scope::Section {
                file: near.clone(),
                heading: heading.clone(),
            }),
        )
        .into(),
        Error::NoSuchFile { file, .. } => Hint::of([
            say(
                "check the path (`bsi status --tree` shows the brain's files); a section is claimed in a file that exists",
            ),
            run(
                format!("to create {file}, claim it whole first"),
                open(&Scope::File(file.clone())),
            ),
        ]),
        Error::UnquotedHeading { file, heading, .. } => run(
            "quote the scope, so the shell keeps it one word",
            open(&Scope::Section {
                file: file.clone(),
                heading: heading.clone(),
            }),
        )
        .into(),
        Error::NoSuchSection { file, available, .. } if available.is_empty() => run(
            "the file has no headings: claim the whole file instead",
            open(&Scope::File(file.clone())),
        )
        .into(),
        Error::NoSuchSection {
            file,
            heading,
            available,
        } => {
            // The heading nearest to what was typed (`Riskss` → `Risks`).
            let nearest = nearest_heading(available, heading).unwrap_or("Heading");
            let first = Scope::Section {
                file: file.clone(),
                heading: nearest.to_string(),
            };
            run(
                format!("its headings are: {}; claim one", available.join(", ")),
                open(&first),
            )
            .into()
        }
        Error::Registry { path, source } => {
            let fix = if source.line == 0 {
                "fix it"
            } else {
                "fix that line"
            };
            // `branch:file` for the registry branch; a path for a file.
            match path
                .to_str()
                .and_then(|p| p.split_once(':'))
                .filter(|_| !path.is_absolute())
            {
                Some(_) => Hint::of([
                    run(
                        format!(
                            "bsi never rewrites a registry it cannot read: open it in your editor and {fix} (the fix is published only if nobody wrote meanwhile)"
                        ),
                        ["bsi", "repair"],
                    ),
                    say("then retry"),
                ]),
                None => Hint::say(format!(
                    "bsi never rewrites a registry it cannot read: {fix} in {}, then retry",
                    path.display()
                )),
            }
        }
        Error::RemoteRegistry {
            remote,
            branch,
            source,
        } => {
            let fix = if source.line == 0 {
                "fix it"
            } else {
                "fix that line"
            };
            Hint::of([
                run(
                    format!(
                        "the broken copy is {remote}'s ({remote}/{branch}), not this clone's branch, and bsi never rewrites a registry it cannot read: open that copy in your editor and {fix} (the fix is published only if nobody wrote meanwhile)"
                    ),
                    ["bsi", "repair"],
                ),
                say("then retry"),
            ])
        }
        Error::NoRegistry {
            remote: Some(_), ..
        } => Hint::of([
            run(
                "if another clone made the registry before the remote was added, that clone must publish it, there (its next bsi command does it too)",
                ["bsi", "sync"],
            )
            .by(Who::AnySession),
            say("then run this again"),
            run(
                "if no clone has one, make it once for the brain",
                ["bsi", "init"],
            ),
        ]),
        Error::NoRegistry { remote: None, .. } => {
            run("make it once for the brain", ["bsi", "init"]).into()
        }
        Error::NotMigrated { .. } => run(
            "move every row to the registry branch and untrack the file in one commit, once for the brain",
            ["bsi", "migrate"],
        )
        .by(Who::Person)
        .into(),
        Error::RegistryExists(_) => Hint::of([
            look("see what it holds, and use it as it is", ["bsi", "status"]),
            run("add the commit guard to this clone", ["bsi", "hook", "install"]),
        ]),
        Error::Moved(_) => Hint::say("run the same command again: bsi reads the registry afresh"),
        Error::Busy { .. } => Hint::say(
            "retry the same command in a moment (exit 8 means nothing was written); a longer publish_timeout in .bsi.toml waits longer",
        ),
        Error::RemoteRefused { .. } => Hint::say(
            "the remote's own rules refuse pushes to the registry branch: ask whoever runs the remote to allow them, or set registry_branch in .bsi.toml to a branch it accepts",
        ),
        Error::RemoteDenied { .. } => Hint::say(
            "bsi's git never prompts: give it credentials it can use unasked (a credential helper for HTTPS, an SSH agent for a key with a passphrase) or get access to the registry branch from whoever runs the remote; `git fetch` by hand shows git's own words; then run the same command again",
        ),
        Error::GitFailed { .. } => {
            Hint::say("run the same git command by hand to see the whole error")
        }
        Error::Config { .. } => look(
            "fix .bsi.toml (docs/configuration.md lists every key and its values), then check it",
            ["bsi", "status"],
        )
        .into(),
        Error::TooManyClaims { .. } => Hint::say(
            "close a claim you no longer need (`bsi close SESSION --scope SCOPE`), or raise max_active_per_agent in .bsi.toml",
        ),
        Error::NotARepo(_) => Hint::say(
            "run bsi inside the brain's git repository (`git init` makes one)",
        ),
        Error::RepoBusy(_) => Hint::say(
            "finish it or abort it with git (`git status` says how), then run the same command again",
        ),
        Error::Locked { path, .. } => Hint::of([
            say("wait for the other process to finish, then run the same command again"),
            run(
                "if no bsi or git is running, remove the lock",
                ["rm".to_string(), path.to_string_lossy().into_owned()],
            ),
        ]),
        Error::NotFound(_) => look("list the sessions and their scopes", ["bsi", "status"]).into(),
        Error::Unreachable { why, .. } if address_hint(why).is_some() => Hint::say(
            "check the remote's address: `git remote -v` shows it, `git remote set-url` mends it; then run `bsi sync` again; local changes stay recorded",
        ),
        Error::Unreachable { .. } => Hint::say(
            "check the network and the remote's address (`git remote -v` shows it; `git fetch` shows git's own error), then run `bsi sync` again; local changes stay recorded",
        ),
        Error::Git(_) => look(
            "see what git says in the brain, then retry",
            ["git", "status"],
        )
        .into(),
        Error::Io { source, .. } if read_only(source) => Hint::say(
            "this process may not write there: running the same command again fails the same way. In an agent's sandbox (Codex's workspace-write or read-only), claim with bsi's MCP tool `claim` if it is offered to you (it runs outside the sandbox, as your session), or ask the user to start the agent again with the git directory writable (Codex: `--add-dir` followed by the path `git rev-parse --path-format=absolute --git-common-dir` prints); a person: check the file system is mounted writable",
        ),
        Error::Io { .. } => {
            Hint::say("check the path and its permissions, then run the same command again")
        }
        Error::Output(_) => Hint::say(
            "the output could not be written (a full disk?): free some room, or send the output elsewhere, then run the same command again",
        ),
    }
}

/// What a call of bsi's MCP tools that acts for a session is told when the
/// server knows none (a client that starts a server for each call): the
/// tools name a session by their own argument, not a shell's.
pub fn no_session_call() -> Hint {
    Hint::of([
        HintStep::say("give the call the session to act for as `session`: the id `claim` returned"),
        HintStep::look("list every session's id", ["bsi", "status"]),
    ])
}

/// A path the core names (`2026/03 notes/`, `a.md`) as a scope.
fn scope_of(path: &str) -> Scope {
    match path.strip_suffix('/') {
        Some(_) => Scope::Dir(path.to_string()),
        None => Scope::File(path.to_string()),
    }
}

/// What to do about a value refused by its type.
fn value_hint(bad: &BadValue) -> Hint {
    match bad {
        BadValue::SessionId { .. } => Hint::of([
            HintStep::look("see the sessions' ids", ["bsi", "status"]),
            HintStep::say("or leave the id out of `bsi open` to get a new one"),
        ]),
        BadValue::AgentSeparator { .. } => {
            Hint::say("run the same command with a name without `|`, like `--agent claude`")
        }
        BadValue::NotOneLine { field } => Hint::say(format!(
            "run the same command with a one-line {} (join the lines with `; `)",
            field.flag()
        )),
        BadValue::TooLong { field, .. } => Hint::say(format!(
            "run the same command with a shorter {}",
            field.flag()
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use bsi_core::registry::Claim;
    use bsi_core::registry::merge::MergeConflict;
    use bsi_core::values::Field;
    use chrono::DateTime;

    use super::*;

    /// The hint of `e` as the command line says it.
    fn text(e: &Error) -> String {
        crate::steps::hint_line(&hint(e))
    }

    /// The hint of a refused value as the command line says it.
    fn value_text(bad: &BadValue) -> String {
        crate::steps::hint_line(&value_hint(bad))
    }

    fn section(file: &str, heading: &str) -> Scope {
        Scope::Section {
            file: file.into(),
            heading: heading.into(),
        }
    }

    fn claim(session: &str, agent: &str) -> Claim {
        let t = chrono::DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time");
        Claim {
            session: session.into(),
            scope: Scope::File("a.md".into()),
            agent: agent.into(),
            opened: t,
            expires: t + chrono::Duration::hours(2),
            note: String::new(),
            reason: None,
            extra: Vec::new(),
        }
    }

    fn argv(words: &[&str]) -> Option<Vec<String>> {
        Some(words.iter().map(ToString::to_string).collect())
    }

    /// A step that forces another's claim is a person's, with its command
    /// as words; the way of the session answered stays its own.
    #[test]
    fn a_forced_step_is_a_persons_and_carries_its_argv() {
        let e = Error::NotYourSession {
            claim: Box::new(claim("s1", "claude")),
            acting: "s2".into(),
            verb: "renew",
        };
        let h = hint(&e);
        assert_eq!(h.steps.len(), 2, "{h:?}");
        assert_eq!(
            (h.steps[0].who, &h.steps[0].command),
            (Who::ThisSession, &None)
        );
        assert_eq!(h.steps[1].who, Who::Person);
        assert_eq!(h.steps[1].command, argv(&["bsi", "renew", "s1", "--force"]));
        let e = Error::StillActive {
            session: "gone".into(),
            scopes: vec![Scope::File("a.md".into())],
        };
        let last = hint(&e).steps.pop().expect("a step");
        assert_eq!(last.who, Who::Person);
        assert_eq!(
            last.command,
            argv(&["bsi", "release", "gone", "--confirm", "--force"])
        );
        let e = Error::NotMigrated {
            path: PathBuf::from("BRAIN-INDEX.md"),
            branch: "brain-index".into(),
        };
        assert_eq!(hint(&e).steps[0].who, Who::Person);
        assert_eq!(hint(&e).steps[0].command, argv(&["bsi", "migrate"]));
    }

    /// Every step whose command forces, releases or migrates is a person's,
    /// over the errors of the text tests below and the refusals of a close.
    #[test]
    fn no_agent_is_handed_a_forced_step() {
        let errors = [
            Error::NotTheHolder {
                claim: Box::new(claim("s1", "claude")),
                caller: "codex".into(),
                verb: "close",
            },
            Error::NotYourSession {
                claim: Box::new(claim("s1", "claude")),
                acting: "s2".into(),
                verb: "close",
            },
            Error::StillActive {
                session: "s1".into(),
                scopes: Vec::new(),
            },
        ];
        for e in &errors {
            for step in hint(e).steps {
                let words = step.command.clone().unwrap_or_default();
                if words.iter().any(|w| w == "--force" || w == "release") {
                    assert_eq!(step.who, Who::Person, "{e:?}: {step:?}");
                }
            }
        }
    }

    /// A command is kept as its words, unquoted: a heading with a space is
    /// one word, written with quotes only when the step is said.
    #[test]
    fn a_command_is_its_words_written_only_when_said() {
        let e = Error::NoSuchSection {
            file: "notes/plan.md".into(),
            heading: "Goal".into(),
            available: vec!["Open questions".into()],
        };
        let h = hint(&e);
        assert_eq!(h.steps.len(), 1);
        assert_eq!(h.steps[0].who, Who::ThisSession);
        assert_eq!(
            h.steps[0].command,
            argv(&["bsi", "open", "notes/plan.md#Open questions"])
        );
        assert_eq!(
            h.steps[0].purpose,
            "its headings are: Open questions; claim one"
        );
        // From `notes/`, the scope is typed from there.
        let here = Here::of(std::path::Path::new("/b"), std::path::Path::new("/b/notes"));
        let h = hint_at(&e, &here);
        assert_eq!(
            h.steps[0].command,
            argv(&["bsi", "open", "plan.md#Open questions"])
        );
        // A hint of words alone has no command, and reads are anyone's.
        assert_eq!(hint(&Error::NoScope).steps[0].command, None);
        let found = hint(&Error::NotFound("s9".into()));
        assert_eq!(found.steps[0].who, Who::AnySession);
        assert_eq!(found.steps[0].command, argv(&["bsi", "status"]));
    }

    #[test]
    fn a_refused_owner_is_shown_its_own_way_and_the_forced_one() {
        let e = Error::NotTheHolder {
            claim: Box::new(claim("s1", "claude")),
            caller: "codex".into(),
            verb: "close",
        };
        assert_eq!(
            text(&e),
            "if you are its holder: `bsi close s1 --agent claude`; a person's step (tell the user): to close another agent's claim anyway: `bsi close s1 --force`"
        );
        let e = Error::WhichRemote {
            remotes: vec!["backup".into(), "origin".into()],
            holding: Vec::new(),
            branch: "brain-index".into(),
        };
        assert!(
            text(&e).contains("git config bsi.remote origin"),
            "{}",
            text(&e)
        );
    }

    #[test]
    fn a_value_refused_by_its_type_names_the_way_to_a_good_one() {
        let e = BadValue::SessionId {
            given: "a|b".into(),
        };
        assert!(value_text(&e).contains("bsi status"), "{}", value_text(&e));
        let bar = BadValue::AgentSeparator { name: "a|b".into() };
        assert!(value_text(&bar).contains("--agent claude"));
        let two = BadValue::NotOneLine {
            field: Field::Agent,
        };
        assert!(value_text(&two).contains("a one-line --agent"));
    }

    #[test]
    fn a_section_typo_is_offered_the_nearest_heading_not_the_first() {
        let e = Error::NoSuchSection {
            file: "projets/plan.md".into(),
            heading: "Riskss".into(),
            available: vec!["Plan".into(), "Goals".into(), "Q1".into(), "Risks".into()],
        };
        assert!(
            text(&e).ends_with("claim one: `bsi open 'projets/plan.md#Risks'`"),
            "{}",
            text(&e)
        );
    }

    /// A hint names the next command, its values written as shell words:
    /// a heading with spaces or `$(…)`, an agent with a space, a path.
    #[test]
    fn hints_name_the_next_command_with_its_values_quoted() {
        let cases = [
            (
                Error::NoSuchSection {
                    file: "notes/plan.md".into(),
                    heading: "Goal".into(),
                    available: vec!["Open questions".into(), "Risks $(touch X)".into()],
                },
                "its headings are: Open questions, Risks $(touch X); claim one: `bsi open 'notes/plan.md#Open questions'`",
            ),
            (
                Error::NoSuchSection {
                    file: "my notes.md".into(),
                    heading: "Goal".into(),
                    available: Vec::new(),
                },
                "the file has no headings: claim the whole file instead: `bsi open 'my notes.md'`",
            ),
            (
                Error::NotTheHolder {
                    claim: Box::new(claim("s1", "Claude Code")),
                    caller: "codex".into(),
                    verb: "renew",
                },
                "if you are its holder: `bsi renew s1 --agent 'Claude Code'`; a person's step (tell the user): to renew another agent's claim anyway: `bsi renew s1 --force`",
            ),
            (
                Error::StaleNotRenewable {
                    session: "s1".into(),
                    scopes: vec![Scope::File("a.md".into())],
                },
                "as their holder, close them: `bsi close s1`; then claim them again: `bsi open a.md --session s1`",
            ),
            (
                Error::RenewOverdue {
                    claim: Box::new(claim("s1", "claude")),
                    now: DateTime::parse_from_rfc3339("2026-03-14T12:00:00Z").expect("t"),
                    overdue: vec![
                        Scope::File("a.md".into()),
                        section("p.md", "Open questions"),
                    ],
                },
                "close it: `bsi close s1`; then claim again: `bsi open a.md 'p.md#Open questions'`",
            ),
            (
                Error::NotMarkdown {
                    scope: "a.txt#Intro".into(),
                    file: "a.txt".into(),
                },
                "claim the whole file: `bsi open a.txt`; or, if `#` is part of the name, write it `\\#`: `bsi open 'a.txt\\#Intro'`",
            ),
            (
                Error::ThroughSymlink {
                    scope: "latest/".into(),
                    link: "latest".into(),
                    target: Some("2026/03 notes/".into()),
                },
                "claim it by that name: `bsi open '2026/03 notes/'`",
            ),
            (
                Error::WhichRemote {
                    branch: "brain-index".into(),
                    remotes: vec!["backup".into(), "origin".into()],
                    holding: Vec::new(),
                },
                "choose it for this clone: `git config bsi.remote origin`; or for the brain, with `remote = \"origin\"` in .bsi.toml; then run the same command again",
            ),
            (
                Error::Unmergeable {
                    branch: "brain-index".into(),
                    source: MergeConflict("the columns differ".into()),
                },
                "settle it by hand (it edits the registry this clone would publish, and publishes it only if nobody wrote meanwhile): `bsi repair`; then publish: `bsi sync`",
            ),
            (
                Error::Locked {
                    what: "the registry",
                    path: PathBuf::from("/tmp/my brain/.git/bsi.lock"),
                },
                "wait for the other process to finish, then run the same command again; if no bsi or git is running, remove the lock: `rm '/tmp/my brain/.git/bsi.lock'`",
            ),
            (
                Error::NoSuchCommand {
                    name: "nope".into(),
                    parent: vec!["bsi".into(), "hook".into()],
                },
                "see the list of its commands: `bsi hook --help`",
            ),
            (
                Error::Value(BadValue::NotOneLine { field: Field::Note }),
                "run the same command with a one-line --note (join the lines with `; `)",
            ),
        ];
        for (e, said) in cases {
            assert_eq!(text(&e), said, "{e:?}");
        }
    }
}
