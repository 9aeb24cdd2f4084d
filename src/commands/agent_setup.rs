//! `bsi agent install|uninstall TOOL`: bsi's hooks in an agent tool's
//! project settings.

use std::io::Write;
use std::path::Path;

use super::Ctx;
use crate::agents::Tool;
use crate::agents::install::{self, Installed, Uninstalled};
use crate::cli::AgentAction;
use crate::error::{Result, exit};
use crate::git::Git;

pub(crate) fn run(ctx: &Ctx, action: AgentAction) -> Result<u8> {
    let (install, tool) = match action {
        AgentAction::Install { tool } => (true, Tool::from(tool)),
        AgentAction::Uninstall { tool } => (false, Tool::from(tool)),
    };
    let git = Git::discover(&ctx.cwd)?;
    let root = git.workdir()?;
    let common = git.common_dir();
    let mut out = ctx.out();
    if install {
        let exe = std::env::current_exe().ok();
        let program = exe.as_deref().and_then(Path::to_str).unwrap_or("bsi");
        let (path, did) = install::install(tool, &root, &common, program)?;
        let file = rel(&root, &path);
        let events: Vec<&str> = install::entries(tool).iter().map(|e| e.0).collect();
        let what = match did {
            Installed::Created => format!("created {file} with bsi's hooks"),
            Installed::Merged => format!("added bsi's hooks to {file}"),
            Installed::Already => format!("bsi's hooks are already in {file}"),
        };
        writeln!(out, "{}: {what} ({}).", tool.title(), events.join(", "))
            .map_err(crate::Error::output)?;
        if tool == Tool::Codex && did != Installed::Already {
            writeln!(
                out,
                "Codex runs a new or changed hook only once you trust it: review them with /hooks in codex."
            ).map_err(crate::Error::output)?;
        }
        mcp_server(&mut out, tool, &root, true)?;
        writeln!(
            out,
            "Next: start a {} session in this brain; `{}` takes the hooks out.",
            tool.title(),
            crate::words::command_line(["bsi", "agent", "uninstall", tool.name()])
        )
        .map_err(crate::Error::output)?;
    } else {
        // First: the hooks' file of Gemini CLI holds the server too, and
        // gets its bytes back only once it holds what install wrote.
        mcp_server(&mut out, tool, &root, false)?;
        let (path, did) = install::uninstall(tool, &root, &common)?;
        let file = rel(&root, &path);
        let what = match did {
            Uninstalled::Restored => format!("{file} is back as it was before `bsi agent install`"),
            Uninstalled::Removed => format!("removed bsi's hooks from {file}, kept the rest"),
            Uninstalled::NotInstalled => format!("no bsi hooks in {file}; nothing changed"),
        };
        writeln!(out, "{}: {what}.", tool.title()).map_err(crate::Error::output)?;
    }
    Ok(exit::OK)
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Registers `bsi mcp` in the tool's MCP settings, or takes it out, and
/// says so.
fn mcp_server(out: &mut dyn Write, tool: Tool, root: &Path, install: bool) -> Result<()> {
    use crate::agents::mcp_config::{self, Registered};
    let said = if install {
        let (path, did) = mcp_config::install(tool, root)?;
        let file = rel(root, &path);
        match did {
            Registered::Added => format!("registered the MCP server `bsi mcp` in {file}"),
            Registered::Already => format!("the MCP server `bsi mcp` is already in {file}"),
            Registered::Foreign => format!(
                "{file} has another MCP server named bsi: left as it is, `bsi mcp` not registered"
            ),
        }
    } else {
        let (path, was) = mcp_config::uninstall(tool, root)?;
        let file = rel(root, &path);
        if was {
            format!("took the MCP server `bsi mcp` out of {file}")
        } else {
            format!("no `bsi mcp` server in {file}; nothing changed")
        }
    };
    writeln!(out, "{}: {said}.", tool.title()).map_err(crate::Error::output)
}
