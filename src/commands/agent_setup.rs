//! `bsi agent install|uninstall|doctor [TOOL]`: bsi's hooks in an agent
//! tool's project settings, and whether the tool will run them.

use std::path::Path;

use super::{Ctx, Lines};
use crate::agents::doctor::{self, Item};
use crate::agents::install::{self, Installed, PROGRAM, Uninstalled};
use crate::agents::mcp_config::McpSettings;
use crate::agents::{Places, Tool};
use crate::cli::AgentAction;
use bsi_core::api::git::Git;
use bsi_core::error::{Result, exit};

pub(crate) fn run(ctx: &Ctx, action: AgentAction) -> Result<u8> {
    match action {
        AgentAction::Install { tool, user: true } => return user_level(ctx, tool, true),
        AgentAction::Uninstall { tool, user: true } => return user_level(ctx, tool, false),
        _ => {}
    }
    let git = Git::discover(&ctx.cwd)?;
    let root = git.workdir()?;
    let common = git.common_dir();
    let mut out = ctx.out().sentences();
    match action {
        AgentAction::Install { tool, .. } => {
            let settings = root.join(tool.settings_file());
            let ours_before = std::fs::read_to_string(&settings)
                .map(|t| tool.our_commands(&t))
                .unwrap_or_default();
            // MCP settings bsi cannot edit stop the install before it
            // writes anything, not halfway.
            crate::agents::mcp_config::check(tool, &root)?;
            let (path, did) = tool.install(&root, &common, PROGRAM)?;
            let file = rel(&root, &path);
            let events: Vec<&str> = tool.entries().iter().map(|e| e.0).collect();
            let what = match did {
                Installed::Created => format!("created {file} with bsi's hooks"),
                Installed::Merged => format!("added bsi's hooks to {file}"),
                Installed::Already => format!("bsi's hooks are already in {file}"),
            };
            out.line(format!("{}: {what} ({}).", tool.title(), events.join(", ")))?;
            out.line("The hooks run `bsi` from the PATH the tool runs them with (the file is meant to be shared: no path of this machine is in it).",
            )?;
            if did == Installed::Merged && !ours_before.is_empty() {
                let after = std::fs::read_to_string(&settings)
                    .map(|t| tool.our_commands(&t))
                    .unwrap_or_default();
                let changed = ours_before.iter().filter(|c| !after.contains(c)).count();
                if changed > 0
                    && let Some(note) = tool.changed_hooks_note(changed, &file, &root)
                {
                    out.line(note)?;
                }
            }
            for line in tool.install_notes(&root, &common) {
                out.line(line)?;
            }
            mcp_server(&mut out, tool, &root, true)?;
            let (code, report) = doctor_report(tool, &root, &common, &ctx.places);
            out.line(report.trim_end())?;
            if let Some(note) = super::no_registry_note(ctx) {
                out.line(note)?;
                return Ok(exit::OK);
            }
            out.line(format!(
                "Next: {}; `{}` takes the hooks out.",
                if code == exit::OK {
                    format!("start a {} session in this brain", tool.title())
                } else {
                    "do the missing steps above".to_string()
                },
                bsi_core::words::command_line(["bsi", "agent", "uninstall", tool.name()])
            ))?;
            Ok(exit::OK)
        }
        AgentAction::Uninstall { tool, .. } => {
            // First: the hooks' file of Gemini CLI holds the server too, and
            // gets its bytes back only once it holds what install wrote.
            // MCP settings bsi cannot edit do not keep the hooks judging
            // edits: they go, then the error is said.
            let mcp = mcp_server(&mut out, tool, &root, false);
            let (path, did) = tool.uninstall(&root, &common)?;
            let file = rel(&root, &path);
            let what = match did {
                Uninstalled::Restored => {
                    format!("{file} is back as it was before `bsi agent install`")
                }
                Uninstalled::Removed => format!("removed bsi's hooks from {file}, kept the rest"),
                Uninstalled::NotInstalled => format!("no bsi hooks in {file}; nothing changed"),
            };
            out.line(format!("{}: {what}.", tool.title()))?;
            mcp?;
            Ok(exit::OK)
        }
        AgentAction::Doctor { tool } => {
            let tools: Vec<Tool> = match tool {
                Some(t) => vec![t],
                None => Tool::ALL
                    .into_iter()
                    .filter(|t| t.settings_path(&root).exists())
                    .collect(),
            };
            if tools.is_empty() {
                out.line(format!(
                        "No agent tool has bsi's hooks in this work tree.\nNext: `bsi agent install TOOL` ({}).",
                        tool_names()
                    ),
                )?;
                return Ok(exit::ERROR);
            }
            let mut code = exit::OK;
            for t in tools {
                let (c, report) = doctor_report(t, &root, &common, &ctx.places);
                if c != exit::OK {
                    code = c;
                }
                out.line(report.trim_end())?;
            }
            Ok(code)
        }
    }
}

/// The names of every tool, for a sentence: `claude, codex, … or opencode`.
fn tool_names() -> String {
    let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// The doctor's report for one tool, and its exit code.
fn doctor_report(tool: Tool, root: &Path, common: &Path, places: &Places) -> (u8, String) {
    let items = doctor::check(tool, root, common, places);
    let mut text = format!("{} (`bsi agent doctor {}`):\n", tool.title(), tool.name());
    let mut code = exit::OK;
    for Item {
        what,
        ok,
        detail,
        next,
    } in &items
    {
        let mark = match ok {
            Some(true) => "ok     ",
            Some(false) => {
                code = exit::ERROR;
                "MISSING"
            }
            None if *what == "bypass" => "note   ",
            None => "unknown",
        };
        text.push_str(&format!("  {mark} {what:<8} {detail}\n"));
        if let Some(n) = next
            && *ok != Some(true)
        {
            text.push_str(&format!("          next: {n}\n"));
        }
    }
    (code, text)
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Registers `bsi mcp` in the tool's MCP settings, or takes it out, and
/// says so.
fn mcp_server(out: &mut Lines, tool: Tool, root: &Path, install: bool) -> Result<()> {
    use crate::agents::mcp_config::{self, Registered, Unregistered};
    if let McpSettings::UserOnly { add, .. } = tool.mcp_settings() {
        if install {
            out.line(format_args!(
                "{}: reads MCP servers from the user's settings only, not the work tree's: bsi registered none. Next, to give the agent bsi's MCP tools: `{add}`.",
                tool.title(),
            ))?;
        }
        return Ok(());
    }
    let said = if install {
        let (path, did) = mcp_config::install(tool, root)?;
        let file = rel(root, &path);
        match did {
            Registered::Added => format!("registered the MCP server `bsi mcp` in {file}"),
            Registered::Already => format!("the MCP server `bsi mcp` is already in {file}"),
            Registered::Foreign => format!(
                "{file} has another MCP server named bsi: left as it is, `bsi mcp` not registered. Next: rename or remove that server in {file}, then `bsi agent install {}` again",
                tool.name()
            ),
        }
    } else {
        let (path, did) = mcp_config::uninstall(tool, root)?;
        let file = rel(root, &path);
        match did {
            Unregistered::Removed => format!("took the MCP server `bsi mcp` out of {file}"),
            Unregistered::Absent => format!("no `bsi mcp` server in {file}; nothing changed"),
            Unregistered::KeptFor(other) => format!(
                "kept the MCP server `bsi mcp` in {file}: {} reads it too and still has bsi's hooks here (`bsi agent uninstall {}` takes it out)",
                other.title(),
                other.name()
            ),
        }
    };
    out.line(format_args!("{}: {said}.", tool.title()))
}

/// `bsi agent install|uninstall --user TOOL`: bsi's hooks in the user's
/// settings of the tool, the same entries as the project's (the tools run
/// an entry found in both once), outside any repository.
fn user_level(ctx: &Ctx, tool: Tool, install: bool) -> Result<u8> {
    let places = &ctx.places;
    let (Some(path), Some(records)) = (
        tool.user_settings_file(places),
        install::user_records(places),
    ) else {
        return Err(crate::Error::Usage(match tool.user_settings_file(places) {
            None if places.home.is_some() => format!(
                "{} has no user-level install: its project hooks have no trust step to skip; `bsi agent install {}` installs them",
                tool.title(),
                tool.name()
            ),
            _ => "HOME is not set: bsi cannot find the user's settings".to_string(),
        }));
    };
    let shown = path.display().to_string();
    let line = if install {
        let did = install::install_file(&*tool, &path, &records, PROGRAM)?;
        let events: Vec<&str> = tool.entries().iter().map(|e| e.0).collect();
        let what = match did {
            Installed::Created => format!("created {shown} with bsi's hooks"),
            Installed::Merged => format!("added bsi's hooks to {shown}"),
            Installed::Already => format!("bsi's hooks are already in {shown}"),
        };
        let uninstall =
            bsi_core::words::command_line(["bsi", "agent", "uninstall", "--user", tool.name()]);
        let undo = match did {
            Installed::Created => format!("`{uninstall}` removes the file again"),
            Installed::Merged => format!(
                "the bytes {shown} had are kept in {}: `{uninstall}` puts them back",
                records.display()
            ),
            Installed::Already => format!("`{uninstall}` takes them out"),
        };
        let mut text = format!(
            "{}: {what} ({}).\nThey run in every session of {} on this machine: in a brain with a registry they guard its edits as the project's hooks do, whatever the project's trust; elsewhere they answer nothing. Where the project's hooks run too, an event is judged once.\nTo undo: {undo}.",
            tool.title(),
            events.join(", "),
            tool.title(),
        );
        if let Some(note) = tool.user_install_note(&shown) {
            text.push_str(&note);
        }
        text
    } else {
        let what = match install::uninstall_file(&*tool, &path, &records)? {
            Uninstalled::Restored => {
                format!("{shown} is back as it was before `bsi agent install --user`")
            }
            Uninstalled::Removed => format!("removed bsi's hooks from {shown}, kept the rest"),
            Uninstalled::NotInstalled => format!("no bsi hooks in {shown}; nothing changed"),
        };
        format!("{}: {what}.", tool.title())
    };
    ctx.out().say(|w| writeln!(w, "{line}"))?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tools_are_named_in_a_sentence() {
        assert_eq!(
            super::tool_names(),
            "claude, codex, gemini, cursor, copilot, cline, opencode, vscode, qwen, kilo or auggie"
        );
    }
}
