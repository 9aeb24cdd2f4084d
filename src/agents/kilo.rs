//! Kilo Code's CLI (`kilo`, npm `@kilocode/cli`): built on OpenCode, it
//! loads OpenCode's plugins, with OpenCode's plugin API, from the project's
//! `.kilo/plugins/` (and `.kilocode/plugins/`). `bsi agent install kilo`
//! writes bsi's OpenCode plugin there ([`super::opencode::plugin_as`]),
//! naming `--tool kilo` and setting `BSI_KILO_SESSION` in the session's
//! shell commands; its events and answers are OpenCode's, read by
//! [`super::opencode`]. Kilo reads its MCP servers from `kilo.json`'s `mcp`
//! (the shape of `opencode.json`'s).
//!
//! Kilo's code also looks for a project's `.opencode/` folder, to tell the
//! person it found one; whether it loads an OpenCode plugin from there was
//! not tried.

use std::path::Path;

use serde_json::{Value, json};

use super::doctor::Item;
use super::install::{HookEntry, HookLayout};
use super::mcp_config::McpSettings;
use super::opencode;
use super::{
    AgentTool, Answer, Briefing, EventError, HookKind, Places, PreEdit, SessionStart, Stop, Tool,
    Verdict,
};
use bsi_core::error::SettingsError;

/// The plugin's file, relative to the work tree root: Kilo loads every
/// `.js` and `.ts` file of `.kilo/plugins/` at startup.
pub const SETTINGS: &str = ".kilo/plugins/bsi.js";

/// The variable the plugin sets, in every shell command of a Kilo session,
/// to that session's id: bsi finds the session by it.
pub const SESSION_VAR: &str = "BSI_KILO_SESSION";

/// Kilo Code's CLI, through bsi's OpenCode plugin.
pub struct Kilo;

impl AgentTool for Kilo {
    fn name(&self) -> &'static str {
        "kilo"
    }

    fn title(&self) -> &'static str {
        "Kilo Code"
    }

    /// One process runs many sessions: the plugin sets the session's id in
    /// each of its shell commands.
    fn shell_session_var(&self) -> Option<&'static str> {
        Some(SESSION_VAR)
    }

    fn parse_edit(&self, input: &str, cwd: &Path) -> Result<PreEdit, EventError> {
        opencode::parse_edit_as(Tool::KILO, input, cwd)
    }

    fn answer(&self, verdict: &Verdict) -> Answer {
        opencode::answer(verdict)
    }

    fn parse_session_start(&self, input: &str, cwd: &Path) -> Result<SessionStart, EventError> {
        opencode::parse_session_start_as(Tool::KILO, input, cwd)
    }

    fn answer_session_start(&self, briefing: &Briefing) -> Answer {
        opencode::answer_session_start(briefing)
    }

    fn parse_stop(&self, input: &str, cwd: &Path) -> Result<Stop, EventError> {
        opencode::parse_stop_as(Tool::KILO, input, cwd)
    }

    fn answer_stop(&self, reason: Option<&str>) -> Answer {
        opencode::answer_stop(reason)
    }

    /// The plugin's own protocol; the plugin carries these words.
    fn missing_answer(&self, _: HookKind, text: &str) -> Value {
        json!({ "context": text })
    }

    fn session_note(&self, _: &str, _: bool, _: Option<&Path>) -> String {
        opencode::session_note(Tool::KILO)
    }

    fn settings_file(&self) -> &'static str {
        SETTINGS
    }

    fn entries(&self) -> &'static [HookEntry] {
        opencode::ENTRIES
    }

    fn hook_layout(&self) -> HookLayout {
        HookLayout::Own
    }

    fn our_commands(&self, text: &str) -> Vec<String> {
        opencode::plugin_commands(Tool::KILO, text)
    }

    fn merge(
        &self,
        existing: Option<&str>,
        program: &str,
    ) -> Result<Option<String>, SettingsError> {
        opencode::merge_plugin_as(Tool::KILO, existing, program)
    }

    /// Nothing is left of bsi's plugin.
    fn unmerge(&self, existing: &str) -> Result<Option<String>, SettingsError> {
        Ok(opencode::is_ours_as(Tool::KILO, existing).then(String::new))
    }

    fn install_notes(&self, _: &Path, _: &Path) -> Vec<String> {
        vec![
            "Kilo loads project plugins, bsi's with them, without a trust step; KILO_DISABLE_PROJECT_CONFIG=1 (or `--pure`) loads none, and then no edit is checked.".into(),
        ]
    }

    /// `mcp.bsi` of `kilo.json`, a `local` server whose `command` is one
    /// list.
    fn mcp_settings(&self) -> McpSettings {
        McpSettings::JsonLocal {
            file: "kilo.json",
            key: "mcp",
        }
    }

    fn trust(&self, _: &Path, _: &Path, _: &Places) -> Item {
        Item {
            what: "trust",
            ok: None,
            detail: "Kilo loads the project's plugins without a trust step; KILO_DISABLE_PROJECT_CONFIG (or `--pure`) loads none, bsi's with them".into(),
            next: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::fixture;
    use super::super::{EditOp, parse_edit as parse, parse_stop};
    use super::*;

    #[test]
    fn kilo_s_events_are_opencode_s_read_as_kilo() {
        let Ok(PreEdit::Edit(r)) = parse(
            Tool::KILO,
            &fixture("kilo-tool-execute-before-edit.json"),
            Path::new("/"),
        ) else {
            panic!("edit");
        };
        assert_eq!(r.tool, Tool::KILO);
        assert!(matches!(r.edits[0].op, EditOp::Replace(_)), "{r:?}");
        let stop =
            parse_stop(Tool::KILO, &fixture("kilo-stop.json"), Path::new("/")).expect("stop");
        assert_eq!(stop.session_id, r.session_id);
    }

    #[test]
    fn the_plugin_names_kilo_and_is_not_opencode_s() {
        let text = opencode::plugin_as(Tool::KILO, "bsi", &|_| "no bsi".into());
        assert!(
            text.contains(r#"["hook", kind, "--tool", "kilo"]"#),
            "{text}"
        );
        assert!(text.contains("output.env.BSI_KILO_SESSION = input.sessionID"));
        assert!(opencode::is_ours_as(Tool::KILO, &text));
        assert!(!opencode::is_ours(&text));
        assert_eq!(
            Kilo.merge(Some(&opencode::plugin_for("bsi")), "bsi"),
            Err(SettingsError::NotOurs)
        );
        assert_eq!(Kilo.our_commands(&text).len(), 3);
    }
}
