//! What the core decided on an edit, in the tool's words: a refusal with
//! what is held and the next steps, a warning, the claim on the first
//! write the core makes (and the edit judged again by the core when it is
//! refused), and the message kept for a tool that tells its model only
//! after the edit.

use std::path::Path;

use super::super::Ctx;
use super::common::{HOOK_BOUND, map_of};
use super::shell::without_prefix;
use crate::agents::{self, Answer, Tool, Verdict};
use crate::output;
use bsi_core::api::publish::{self, Landed};
use bsi_core::api::settings::Settings;
use bsi_core::api::store::Brain;
use bsi_core::api::{self, open::OnWrite};
use bsi_core::claims::scopes_summary;
use bsi_core::error::Result;
use bsi_core::guard::Finding;
use bsi_core::guard::edit::{self, EditDecision, Rules, Target};
use bsi_core::guard::verdict::{self, Judged};
use bsi_core::registry::{Claim, Registry};
use bsi_core::scope::Scope;
use bsi_core::ttl;
use bsi_core::words::{command_line, open_command};

/// The edits of one work tree being judged, for the answer to what the
/// core decided.
pub(super) struct Judging<'c> {
    pub(super) ctx: &'c Ctx,
    pub(super) brain: &'c Brain,
    pub(super) settings: &'c Settings,
    pub(super) tool: Tool,
    pub(super) targets: &'c [Target],
    pub(super) rules: &'c Rules,
}

impl Judging<'_> {
    /// The answer to a decision that refuses no edit for other sessions'
    /// claims (that refusal names a session: [`Judging::refusal`]).
    pub(super) fn answer(
        &self,
        reg: &Registry,
        session: Option<&str>,
        d: EditDecision,
    ) -> Result<Answer> {
        let (brain, tool) = (self.brain, self.tool);
        let verdict = match d {
            EditDecision::Allow => {
                api::edit::keep(brain, reg, session, self.targets);
                Verdict::Allow
            }
            EditDecision::Deny { copy, .. } => Verdict::Deny {
                reason: format!(
                    "{}.\nNext: change claims with bsi commands (`bsi open`, `bsi close`), and see them with `bsi status`.",
                    verdict::copy_edited(copy.as_deref().unwrap_or_default(), &brain.branch, true)
                ),
            },
            EditDecision::Warn { copy, judged, .. } => {
                // What is inside other sessions' claims, once each.
                let copy = copy.map(|c| verdict::copy_edited(&c, &brain.branch, false));
                let lines: Vec<String> = copy.into_iter().chain(judged.lines).collect();
                let warning = without_prefix(&lines);
                if let Some(s) = session {
                    keep_for_after(brain, tool, s, &format!("bsi: {warning}"));
                }
                api::edit::keep(brain, reg, session, self.targets);
                Verdict::AllowWithWarning { warning }
            }
            // Only chosen for a known session.
            EditDecision::ClaimFirst { scopes, split, ttl } => match session {
                Some(s) => return self.claim(s, (scopes, split), ttl),
                None => Verdict::Allow,
            },
        };
        Ok(agents::answer(tool, &verdict))
    }

    /// The claim on the first write the core decided, made by the core,
    /// in the tool's words; when it is refused, the edit as the core judges
    /// it again on the registry the refusal saw.
    fn claim(
        &self,
        session: &str,
        (scopes, split): (Vec<Scope>, Option<Vec<Scope>>),
        ttl: chrono::Duration,
    ) -> Result<Answer> {
        let (ctx, brain, settings, tool) = (self.ctx, self.brain, self.settings, self.tool);
        // The tool's name, unless the user named an agent: what the agent's
        // own shell commands are recorded as.
        let mut as_tool = ctx.clone();
        as_tool.tool_agent = Some(tool.name().to_string());
        let agent = as_tool.agent(None, &settings.config)?;
        let note = format!("claimed on the first edit ({})", tool.title());
        let site = api::Site {
            brain,
            settings,
            cwd: &ctx.cwd,
            now: ctx.now,
            options: publish::Options {
                bound: Some(HOOK_BOUND),
                ..ctx.write_options(false)
            },
            random_seed: ctx.random_seed,
        };
        let actor = api::Actor {
            session: Some(session.to_string()),
            agent: agent.to_string(),
            agent_named: as_tool.agent_named(None, &settings.config),
            drawn: false,
        };
        let wanted = scopes.clone();
        let tries = (scopes, split);
        let verdict =
            match api::edit::claim_first(&site, &actor, tries, (ttl, &note), self.targets)? {
                Some(OnWrite::Opened {
                    new_claims,
                    held,
                    landing,
                }) => {
                    let message = opened(session, &new_claims, &held, &landing);
                    keep_for_after(brain, tool, session, &message);
                    Verdict::Claimed { message }
                }
                Some(OnWrite::Refused(reg)) => self.refused(&reg, session, &wanted),
                None => Verdict::Allow,
                Some(OnWrite::Busy { path }) => Verdict::Deny {
                    reason: locked(session, &wanted, &path),
                },
            };
        Ok(agents::answer(tool, &verdict))
    }

    /// The claim was refused: the edit as the core judged it again on the
    /// registry the refusal saw ([`edit::after_refused_claim`]).
    fn refused(&self, reg: &Registry, session: &str, wanted: &[Scope]) -> Verdict {
        match edit::after_refused_claim(reg, session, self.targets, self.rules) {
            EditDecision::Deny {
                findings,
                judged,
                claim,
                ..
            } => Verdict::Deny {
                reason: self.refusal(reg, session, (&judged, &findings), &claim),
            },
            EditDecision::Warn { judged, .. } => {
                api::edit::keep(self.brain, reg, Some(session), self.targets);
                Verdict::AllowWithWarning {
                    warning: without_prefix(&judged.lines),
                }
            }
            EditDecision::Allow | EditDecision::ClaimFirst { .. } => Verdict::AllowWithWarning {
                warning: format!(
                    "could not claim {} for {session}: other sessions hold parts of it (the edit itself is outside their claims)",
                    scopes_summary(wanted)
                ),
            },
        }
    }

    /// The refusal for the agent: what is held and by whom (the pre-commit
    /// hook's wording), how a shell command was read, the free
    /// alternatives, and the next step. `wanted`: scopes to claim for an
    /// edit outside the session's own (strict mode).
    pub(super) fn refusal(
        &self,
        reg: &Registry,
        session: &str,
        (judged, findings): (&Judged<'_>, &[Finding<'_>]),
        wanted: &[Scope],
    ) -> String {
        let mut text = judged.lines.join("\n");
        let mut said: Vec<&str> = Vec::new();
        for f in findings {
            let path = match f {
                Finding::Claimed { path, .. } | Finding::Outside { path, .. } => path,
                Finding::HeadingGone { .. } => continue,
            };
            let how = self.targets.iter().find(|t| &t.rel == path);
            let Some(how) = how.and_then(|t| t.shell.as_deref()) else {
                continue;
            };
            if !said.contains(&path.as_str()) {
                said.push(path);
                text.push_str(&read_as(how));
            }
        }
        let steps = api::edit::steps(self.brain, reg, session, findings, wanted, self.ctx.now);
        text.push_str(&format!("\nYour bsi session: {session}. Next, one of:"));
        for line in crate::steps::edit_lines(&steps, &["--session", session]) {
            text.push_str(&format!("\n- {line}"));
        }
        text.push_str("\n- or stop and tell the user who holds it.");
        text
    }
}

/// How a shell command or a tool's edit whose lines bsi cannot see was
/// read, and the way to a change bsi can judge by section.
fn read_as(how: &str) -> String {
    if how.starts_with("names ") {
        // A tool's edit told at file level (VS Code's `editFiles`, a
        // notebook cell).
        return format!(
            "\nThis edit {how}: bsi judges it at file level, so every section of the file counts as changed. To change only lines outside other sessions' claims, claim your section and use an edit tool that sends the text it replaces."
        );
    }
    let mut text = format!("\nbsi read your shell command as one that {how}");
    if how.starts_with("rewrites") {
        text.push_str(
            ": it cannot see which lines change, so every section of the file counts as changed. To change only lines outside other sessions' claims, use your edit tool rather than the shell: bsi judges its edits by section.",
        );
    } else {
        text.push_str(": the added lines belong to its last section.");
    }
    text
}

/// The message of a claim opened on the first write.
fn opened(
    session: &str,
    new_claims: &[Claim],
    held: &[(Claim, bool)],
    landing: &publish::Landing,
) -> String {
    let held_now: Vec<String> = new_claims
        .iter()
        .map(|c| format!("{} (until {})", c.scope, ttl::format_ts(c.expires)))
        .chain(
            held.iter()
                .map(|(c, _)| format!("{} (already yours)", c.scope)),
        )
        .collect();
    let mut message = format!(
        "bsi claimed {} for your session {session}: this edit was free and outside your claims.",
        held_now.join(", ")
    );
    // The landing in the words every door gives it (a claim held on
    // this machine only, earlier changes published with it, endings
    // superseded, collisions), then what an agent in a sandbox can do.
    let collided = !landing.collisions.is_empty();
    if collided {
        message
            .push_str("\nTell the user: two sessions hold overlapping claims until one gives way.");
    }
    for line in output::landing_lines(landing) {
        message.push('\n');
        message.push_str(&line);
    }
    if matches!(landing.landed, Landed::Pending(_)) {
        message.push_str(
            "\nIf your shell may not write the git directory (as in a sandbox), ask the user to run `bsi sync`; it says if another clone claimed the same meanwhile.",
        );
    }
    if collided {
        return message;
    }
    message.push_str(&format!(
        "\nNext: go on; when done, commit only your own lines with `{}` (add `-m MESSAGE` for a message of your own; other sessions' lines in the same files stay in the work tree) and run `{}`.",
        command_line(["bsi", "commit", "--session", session]),
        command_line(["bsi", "close", session])
    ));
    message
}

/// The refusal of an edit whose claim could not be recorded: another bsi
/// held the writer lock past the hook's wait.
fn locked(session: &str, scopes: &[Scope], path: &Path) -> String {
    format!(
        "bsi: refused for now: this edit lies outside your claims, so bsi claims {} for your session {session} first (`claim_on_write`), but another bsi has been writing the registry for more than {} s and the claim could not be recorded. Nothing was written; the file is unchanged.\nNext, one of:\n- try the edit again in a moment;\n- or claim it first: `{}` (it waits longer for the registry), then edit again;\n- if it stays locked, stop and tell the user: another process holds {}.",
        scopes_summary(scopes),
        HOOK_BOUND.lock_wait.as_secs(),
        open_command(scopes, &["--session", session]),
        path.display()
    )
}

/// Keeps a message for the model of a tool whose pre-edit answer reaches
/// only the person when it lets the edit through (Gemini CLI): its
/// `AfterTool` hook gives it to the model after the edit.
fn keep_for_after(brain: &Brain, tool: Tool, session: &str, message: &str) {
    if tool.tells_model_after_edit()
        && let Err(e) = map_of(brain).set_pending(tool, session, message)
    {
        brain.notes.push(format!("warning: {e}"));
    }
}
