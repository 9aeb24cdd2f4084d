//! What to do next about an error, in words with the commands to run:
//! attached at the edge, where the door that reports the error speaks.
//! The core's errors say what happened and carry their values; every
//! command here writes them with [`shell_word`]. Pure.

use bsi_core::error::{Error, address_hint, nearest_heading, read_only, root_words};
use bsi_core::scope::Scope;
use bsi_core::values::BadValue;
use bsi_core::words::{Here, command_line, open_command_at, shell_word};

/// What the user can do next about `e`: every error has its next step, and
/// the commands in it write their values with [`shell_word`].
pub fn hint(e: &Error) -> String {
    hint_at(e, &Here::root())
}

/// [`hint`] printed at `here`: the scopes of its commands written as typed
/// from there ([`Here`]).
pub fn hint_at(e: &Error, here: &Here) -> String {
    let open = |scope: &Scope| command_line(["bsi", "open", &here.scope(scope)]);
    match e {
            Error::Usage(_) => "run `bsi help` for the commands and their flags".into(),
            Error::Value(bad) => value_hint(bad),
            Error::ThroughSymlink {
                target: Some(target),
                ..
            } => format!(
                "claim it by that name: `{}`",
                open(&scope_of(target))
            ),
            Error::ThroughSymlink { target: None, .. } => {
                "claim what the link leads to by its own name (`bsi status --tree` shows the brain's paths)".into()
            }
            Error::NotADirectory { file, .. } => format!(
                "claim it as a file: `{}`",
                open(&Scope::File(file.clone()))
            ),
            Error::NotMarkdown { scope, file } => format!(
                "claim the whole file with `{}`, or, if `#` is part of the name, write it `\\#`: `{}`",
                open(&Scope::File(file.clone())),
                command_line(["bsi", "open", &scope.replacen('#', "\\#", 1)])
            ),
            Error::NoSuchRemote { .. } => "`git remote -v` lists this clone's remotes: name one of them, or add it with `git remote add NAME URL`".into(),
            Error::RegistryElsewhere { holder, .. } => format!(
                "use the one registry: `{}`, then `bsi status`",
                command_line(["git", "config", "bsi.remote", holder])
            ),
            Error::WhichRemote {
                remotes, holding, ..
            } => {
                let pick = holding
                    .first()
                    .or_else(|| remotes.iter().find(|r| *r == "origin"))
                    .or(remotes.first())
                    .map_or("NAME", String::as_str);
                format!(
                    "choose it for this clone with `{}`, or for the brain with `remote = \"{pick}\"` in .bsi.toml; then run the same command again",
                    command_line(["git", "config", "bsi.remote", pick])
                )
            }
            Error::RegistryNotClaimable => "claim what you will edit (`bsi open notes/`); bsi changes the registry for you, and `bsi status` shows it".into(),
            Error::BadClock { .. } => "give a full time with its zone, like `export BSI_NOW=2026-03-14T09:30:00Z`, or `unset BSI_NOW` to use the clock".into(),
            Error::BadSeed { .. } => "give one, like `export BSI_RANDOM_SEED=1`, or `unset BSI_RANDOM_SEED` for random session ids".into(),
            Error::RegistryDirMissing { .. } => "create that directory, or `unset BSI_REGISTRY` to keep the registry's copy at the root of the work tree".into(),
            Error::RootContradicted { recorded, .. } => {
                let copy = if recorded.is_empty() {
                    bsi_core::registry::REGISTRY_FILE.to_string()
                } else {
                    format!("{recorded}/{}", bsi_core::registry::REGISTRY_FILE)
                };
                format!(
                    "leave it out (`{}`, and no --registry): bsi finds the recorded root by itself; or name that one: `export BSI_REGISTRY={}`",
                    command_line(["unset", "BSI_REGISTRY"]),
                    shell_word(&copy)
                )
            }
            Error::RootChanged { first, .. } => format!(
                "run `bsi repair`: it puts BRAIN-ROOT back to {} (save the registry unchanged to change nothing else); a brain keeps one root, so no file gets two names",
                root_words(first)
            ),
            Error::RepairNeedsSync { .. } => "run `bsi sync` first (it publishes the local changes merged with the remote's), then `bsi repair` again".into(),
            Error::NoSession => "name the session (`bsi status` lists them: `bsi close SESSION`), or `export BSI_SESSION=SESSION` for every later command".into(),
            Error::NoSuchCommand { parent, .. } => format!(
                "run `{}` for the list of its commands",
                command_line(parent.iter().map(String::as_str).chain(["--help"]))
            ),
            Error::SettingsUnusable { .. } => {
                "fix the file (or move it away), then run the command again; bsi left it as it is".into()
            }
            Error::SessionOfAnotherAgent { owner, .. } => format!(
                "open a session of your own (leave out --session and BSI_SESSION, or give a new id), or act as {owner} with `{}`",
                command_line(["--agent", owner])
            ),
            Error::StillActive { .. } => "ask the session to close, or wait for the watchdog to mark them stale and release one stale scope with --scope; a person's step, never an agent's (tell the user): add --force to free active claims as well".into(),
            Error::NotTheHolder { claim, verb, .. } => format!(
                "if you are its holder: `{}`; a person's step, never an agent's (tell the user): to {verb} another agent's claim anyway, add --force",
                command_line(["bsi", verb, &claim.session, "--agent", &claim.agent])
            ),
            Error::NoScope => format!(
                "for example `{}` (a folder), `{}` (a file) or `{}` (a section); `bsi status --tree` shows the brain's paths and what is claimed",
                command_line(["bsi", "open", "notes/"]),
                command_line(["bsi", "open", "notes/plan.md"]),
                command_line(["bsi", "open", "notes/plan.md#Goals"])
            ),
            Error::NotYourSession { claim, verb, .. } => format!(
                "leave it to its session, or ask its holder; a person's step, never an agent's (tell the user): to {verb} it anyway (recorded as forced by this session, and its holder is told), `{}`",
                command_line(["bsi", verb, &claim.session, "--force"])
            ),
            Error::StaleNotRenewable { session, scopes } => format!(
                "as their holder, close them and claim again: `{}`, then `{}`",
                command_line(["bsi", "close", session]),
                open_command_at(here, scopes, &["--session", session])
            ),
            Error::RenewOverdue { claim, overdue, .. } => format!(
                "close it and claim again: `{}`, then `{}`",
                command_line(["bsi", "close", &claim.session]),
                open_command_at(here, overdue, &[])
            ),
            Error::RenewAtCeiling {
                session, scopes, ..
            } => format!(
                "finish before then, or close and claim again: `{}`, then `{}`",
                command_line(["bsi", "close", session]),
                open_command_at(here, scopes, &[])
            ),
            Error::HookSlotsTaken { .. } => {
                "move one of them away (bsi never overwrites a hook), then retry".into()
            }
            Error::HookNotShell { name, .. } => format!(
                "call `bsi hook {name}` from it yourself, with the hook's arguments and its standard input; `bsi doctor` then finds it"
            ),
            Error::Unmergeable { .. } => "settle it by hand with `bsi repair` (it edits the registry this clone would publish, and publishes it only if nobody wrote meanwhile), then run `bsi sync`".into(),
            Error::NothingToMigrate { .. } => {
                "`bsi status` shows the registry; `bsi init` creates one for a brain that has none".into()
            }
            Error::RegistryEdited { file } => format!(
                "commit the change (`{}`) or undo it (`{}`), then run `bsi migrate` again",
                command_line(["git", "commit", file]),
                command_line(["git", "checkout", "--", file])
            ),
            Error::MigrateDetached => "switch to the branch that tracks it (`git switch main`, say), then run `bsi migrate` again; nothing was written".into(),
            Error::SessionIdsExhausted { .. } => {
                "name the session yourself: `bsi open SCOPE --session NEW-ID`".into()
            }
            Error::SessionIdTaken { .. } => {
                "name a new session: `bsi open SCOPE --session NEW-ID`".into()
            }
            Error::NoEditor => "set one (`export EDITOR=vi`), or write the new text to a file and run `bsi repair --from FILE`".into(),
            Error::EditorFailed { file, .. } => format!(
                "your text is in {}; run `{}` with the text you want",
                file.display(),
                command_line(["bsi", "repair", "--from", &file.to_string_lossy()])
            ),
            Error::RepairRaced { .. } => {
                "run `bsi repair` again: it starts from the registry as it is now".into()
            }
            Error::BranchCheckedOut { dir, .. } => format!(
                "take the work tree off the branch (`{}`, or `{}` when its work is done), then run the same command again; `bsi repair` edits the registry by hand without a checkout",
                command_line(["git", "-C", dir, "switch", "--detach"]),
                command_line(["git", "worktree", "remove", dir])
            ),
            Error::MigratedMeanwhile { .. } => {
                "another clone migrated at the same time: run `git pull`, then `bsi status`".into()
            }
            Error::MigrationUnmergeable { .. } => {
                "settle it by hand with `bsi repair`, then run `bsi migrate` again".into()
            }
            Error::RowsMissing { .. } => "run `git pull` first (the brain was migrated elsewhere); if rows are still missing, add them with `bsi repair`".into(),
            Error::NoRemote => "add one (`git remote add origin URL`), or name it with --remote, `git config bsi.remote NAME` or `remote` in .bsi.toml; then run `bsi sync`".into(),
            Error::NoCurrentSession => "start one with `eval \"$(bsi open SCOPE --shell)\"`, or `export BSI_SESSION=ID` to resume a session `bsi status` lists".into(),
            Error::Scope(_) => {
                "give `global`, a directory `dir/`, a file `dir/file.md` or a section `dir/file.md#Heading`, relative to the brain (`bsi status --tree` shows its paths)".into()
            }
            Error::Ttl(_) => "run the same command with a TTL from 1m to 8h, like `--ttl 4h` (short is 2h, deep 4h, long 8h)".into(),
            Error::NoSuchFile {
                heading,
                nearest: Some(near),
                ..
            } => format!(
                "did you mean {}? `{}`",
                here.path(near),
                open(&Scope::Section {
                    file: near.clone(),
                    heading: heading.clone()
                })
            ),
            Error::NoSuchFile { file, .. } => format!(
                "check the path (`bsi status --tree` shows the brain's files); a section is claimed in a file that exists: to create {file}, claim it whole first (`{}`)",
                open(&Scope::File(file.clone()))
            ),
            Error::UnquotedHeading { file, heading, .. } => format!(
                "quote the scope, so the shell keeps it one word: `{}`",
                open(&Scope::Section {
                    file: file.clone(),
                    heading: heading.clone()
                })
            ),
            Error::NoSuchSection { file, available, .. } if available.is_empty() => format!(
                "the file has no headings: claim the whole file instead (`{}`)",
                open(&Scope::File(file.clone()))
            ),
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
                format!(
                    "its headings are: {}; claim one with `{}`",
                    available.join(", "),
                    open(&first)
                )
            }
            Error::Registry { path, source } => {
                let fix = if source.line == 0 { "fix it" } else { "fix that line" };
                // `branch:file` for the registry branch; a path for a file.
                match path.to_str().and_then(|p| p.split_once(':')).filter(|_| !path.is_absolute()) {
                    Some(_) => format!(
                        "bsi never rewrites a registry it cannot read: {fix} with `bsi repair` (it opens the registry in your editor and publishes the fix only if nobody wrote meanwhile), then retry"
                    ),
                    None => format!(
                        "bsi never rewrites a registry it cannot read: {fix} in {}, then retry",
                        path.display()
                    ),
                }
            }
            Error::RemoteRegistry { remote, branch, source } => {
                let fix = if source.line == 0 { "fix it" } else { "fix that line" };
                format!(
                    "the broken copy is {remote}'s ({remote}/{branch}), not this clone's branch, and bsi never rewrites a registry it cannot read: {fix} with `bsi repair` (it opens that copy in your editor and publishes the fix only if nobody wrote meanwhile), then retry"
                )
            }
            Error::NoRegistry { remote: Some(_), .. } => {
                "if another clone made the registry before the remote was added, that clone must publish it: `bsi sync` there (its next bsi command does it too), then run this again; if no clone has one, run `bsi init` once for the brain".into()
            }
            Error::NoRegistry { remote: None, .. } => {
                "run `bsi init` once for the brain".into()
            }
            Error::NotMigrated { .. } => {
                "a person runs `bsi migrate` once for the brain: it moves every row to the registry branch and untracks the file in one commit".into()
            }
            Error::RegistryExists(_) => "use it as it is: `bsi status` shows what it holds (`bsi hook install` adds the commit guard to this clone)".into(),
            Error::Moved(_) => "run the same command again: bsi reads the registry afresh".into(),
            Error::Busy { .. } => {
                "retry the same command in a moment (exit 8 means nothing was written); a longer publish_timeout in .bsi.toml waits longer".into()
            }
            Error::RemoteRefused { .. } => {
                "the remote's own rules refuse pushes to the registry branch: ask whoever runs the remote to allow them, or set registry_branch in .bsi.toml to a branch it accepts".into()
            }
            Error::RemoteDenied { .. } => {
                "bsi's git never prompts: give it credentials it can use unasked (a credential helper for HTTPS, an SSH agent for a key with a passphrase) or get access to the registry branch from whoever runs the remote; `git fetch` by hand shows git's own words; then run the same command again".into()
            }
            Error::GitFailed { .. } => "run the same git command by hand to see the whole error".into(),
            Error::Config { .. } => {
                "fix .bsi.toml (docs/configuration.md lists every key and its values), then run `bsi status` to check it".into()
            }
            Error::TooManyClaims { .. } => {
                "close a claim you no longer need (`bsi close SESSION --scope SCOPE`), or raise max_active_per_agent in .bsi.toml".into()
            }
            Error::NotARepo(_) => "run bsi inside the brain's git repository (`git init` makes one)".into(),
            Error::RepoBusy(_) => "finish it or abort it with git (`git status` says how), then run the same command again".into(),
            Error::Locked { path, .. } => format!(
                "wait for the other process to finish, then run the same command again; if no bsi or git is running, `{}`",
                command_line(["rm", &path.to_string_lossy()])
            ),
            Error::NotFound(_) => "`bsi status` lists the sessions and their scopes".into(),
            Error::Unreachable { why, .. } if address_hint(why).is_some() => {
                "check the remote's address: `git remote -v` shows it, `git remote set-url` mends it; then run `bsi sync` again; local changes stay recorded".into()
            }
            Error::Unreachable { .. } => {
                "check the network and the remote's address (`git remote -v` shows it; `git fetch` shows git's own error), then run `bsi sync` again; local changes stay recorded".into()
            }
            Error::Git(_) => "run `git status` in the brain to see what git says, then retry".into(),
            Error::Io { source, .. } if read_only(source) => {
                "this process may not write there: running the same command again fails the same way. In an agent's sandbox (Codex's workspace-write or read-only), claim with bsi's MCP tool `claim` if it is offered to you (it runs outside the sandbox, as your session), or ask the user to start the agent again with the git directory writable (Codex: `--add-dir` followed by the path `git rev-parse --path-format=absolute --git-common-dir` prints); a person: check the file system is mounted writable".into()
            }
            Error::Io { .. } => "check the path and its permissions, then run the same command again".into(),
            Error::Output(_) => {
                "the output could not be written (a full disk?): free some room, or send the output elsewhere, then run the same command again".into()
            }
        }
}

/// A path the core names (`2026/03 notes/`, `a.md`) as a scope.
fn scope_of(path: &str) -> Scope {
    match path.strip_suffix('/') {
        Some(_) => Scope::Dir(path.to_string()),
        None => Scope::File(path.to_string()),
    }
}

/// What to do about a value refused by its type.
fn value_hint(bad: &BadValue) -> String {
    match bad {
            BadValue::SessionId { .. } => "run `bsi status` for the sessions' ids, or leave the id out of `bsi open` to get a new one".into(),
            BadValue::AgentSeparator { .. } => {
                "run the same command with a name without `|`, like `--agent claude`".into()
            }
            BadValue::NotOneLine { field } => format!(
                "run the same command with a one-line {} (join the lines with `; `)",
                field.flag()
            ),
            BadValue::TooLong { field, .. } => {
                format!("run the same command with a shorter {}", field.flag())
            }
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

    #[test]
    fn a_refused_owner_is_shown_its_own_way_and_the_forced_one() {
        let e = Error::NotTheHolder {
            claim: Box::new(claim("s1", "claude")),
            caller: "codex".into(),
            verb: "close",
        };
        assert_eq!(
            hint(&e),
            "if you are its holder: `bsi close s1 --agent claude`; a person's step, never an agent's (tell the user): to close another agent's claim anyway, add --force"
        );
        let e = Error::WhichRemote {
            remotes: vec!["backup".into(), "origin".into()],
            holding: Vec::new(),
            branch: "brain-index".into(),
        };
        assert!(
            hint(&e).contains("git config bsi.remote origin"),
            "{}",
            hint(&e)
        );
    }

    #[test]
    fn a_value_refused_by_its_type_names_the_way_to_a_good_one() {
        let e = BadValue::SessionId {
            given: "a|b".into(),
        };
        assert!(value_hint(&e).contains("bsi status"), "{}", value_hint(&e));
        let bar = BadValue::AgentSeparator { name: "a|b".into() };
        assert!(value_hint(&bar).contains("--agent claude"));
        let two = BadValue::NotOneLine {
            field: Field::Agent,
        };
        assert!(value_hint(&two).contains("a one-line --agent"));
    }

    #[test]
    fn a_section_typo_is_offered_the_nearest_heading_not_the_first() {
        let e = Error::NoSuchSection {
            file: "projets/plan.md".into(),
            heading: "Riskss".into(),
            available: vec!["Plan".into(), "Goals".into(), "Q1".into(), "Risks".into()],
        };
        assert!(
            hint(&e).ends_with("claim one with `bsi open 'projets/plan.md#Risks'`"),
            "{}",
            hint(&e)
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
                "its headings are: Open questions, Risks $(touch X); claim one with `bsi open 'notes/plan.md#Open questions'`",
            ),
            (
                Error::NoSuchSection {
                    file: "my notes.md".into(),
                    heading: "Goal".into(),
                    available: Vec::new(),
                },
                "the file has no headings: claim the whole file instead (`bsi open 'my notes.md'`)",
            ),
            (
                Error::NotTheHolder {
                    claim: Box::new(claim("s1", "Claude Code")),
                    caller: "codex".into(),
                    verb: "renew",
                },
                "if you are its holder: `bsi renew s1 --agent 'Claude Code'`; a person's step, never an agent's (tell the user): to renew another agent's claim anyway, add --force",
            ),
            (
                Error::StaleNotRenewable {
                    session: "s1".into(),
                    scopes: vec![Scope::File("a.md".into())],
                },
                "as their holder, close them and claim again: `bsi close s1`, then `bsi open a.md --session s1`",
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
                "close it and claim again: `bsi close s1`, then `bsi open a.md 'p.md#Open questions'`",
            ),
            (
                Error::NotMarkdown {
                    scope: "a.txt#Intro".into(),
                    file: "a.txt".into(),
                },
                "claim the whole file with `bsi open a.txt`, or, if `#` is part of the name, write it `\\#`: `bsi open 'a.txt\\#Intro'`",
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
                "choose it for this clone with `git config bsi.remote origin`, or for the brain with `remote = \"origin\"` in .bsi.toml; then run the same command again",
            ),
            (
                Error::Unmergeable {
                    branch: "brain-index".into(),
                    source: MergeConflict("the columns differ".into()),
                },
                "settle it by hand with `bsi repair` (it edits the registry this clone would publish, and publishes it only if nobody wrote meanwhile), then run `bsi sync`",
            ),
            (
                Error::Locked {
                    what: "the registry",
                    path: PathBuf::from("/tmp/my brain/.git/bsi.lock"),
                },
                "wait for the other process to finish, then run the same command again; if no bsi or git is running, `rm '/tmp/my brain/.git/bsi.lock'`",
            ),
            (
                Error::NoSuchCommand {
                    name: "nope".into(),
                    parent: vec!["bsi".into(), "hook".into()],
                },
                "run `bsi hook --help` for the list of its commands",
            ),
            (
                Error::Value(BadValue::NotOneLine { field: Field::Note }),
                "run the same command with a one-line --note (join the lines with `; `)",
            ),
        ];
        for (e, said) in cases {
            assert_eq!(hint(&e), said, "{e:?}");
        }
    }
}
