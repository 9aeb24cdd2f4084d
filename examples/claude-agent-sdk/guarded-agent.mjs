// A program on the Claude Agent SDK that bsi guards: every edit its agent
// makes inside another session's claim is refused before it lands, and the
// refusal reaches the agent's model.
//
//   npm install @anthropic-ai/claude-agent-sdk
//   bsi agent install claude            # bsi's hooks in .claude/settings.json
//   node guarded-agent.mjs "PROMPT"
//
// Run it in the work tree. The SDK runs the Claude Code it bundles, which
// runs the hooks of the settings it is told to load. Two ways, one each:
//
// - settings (the default here): `settingSources` names "project", so
//   Claude Code loads .claude/settings.json and bsi's hooks with it. A
//   program that passes `settingSources: []` (the SDK's isolation mode), or
//   a list without "project", runs no bsi hook.
// - callbacks (BSI_SDK_HOOKS=callbacks): no settings file is loaded; the
//   program gives the SDK hook callbacks that pipe each event to `bsi hook
//   edit|session-start|stop --tool claude` and hand its JSON answer back,
//   as Claude Code does with a command hook.
import { spawn } from "node:child_process";
import { query } from "@anthropic-ai/claude-agent-sdk";

const prompt = process.argv[2] ?? "Tidy the plan.";
const callbacks = process.env.BSI_SDK_HOOKS === "callbacks";

// bsi's answer to one hook event, as Claude Code's hook JSON. When bsi
// cannot run, the call goes through unchecked and the agent is told.
function bsiHook(kind) {
  return (input) =>
    new Promise((resolve) => {
      const unchecked = {
        systemMessage: `bsi could not run (is it on PATH?): this ${kind} goes through unchecked`,
      };
      let out = "";
      const child = spawn("bsi", ["hook", kind, "--tool", "claude"], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      child.on("error", () => resolve(unchecked));
      child.stdout.on("data", (d) => (out += d));
      child.on("close", (code) => {
        if (code !== 0) return resolve(unchecked);
        try {
          resolve(out.trim() ? JSON.parse(out) : {});
        } catch {
          resolve(unchecked);
        }
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(input));
    });
}

const options = callbacks
  ? {
      settingSources: [],
      hooks: {
        PreToolUse: [
          { matcher: "Edit|MultiEdit|Write|NotebookEdit|Bash", hooks: [bsiHook("edit")] },
        ],
        SessionStart: [{ hooks: [bsiHook("session-start")] }],
        Stop: [{ hooks: [bsiHook("stop")] }],
      },
    }
  : { settingSources: ["project"] };

for await (const message of query({
  prompt,
  options: { ...options, cwd: process.cwd(), permissionMode: "acceptEdits" },
})) {
  if (message.type === "result") {
    console.log(message.subtype === "success" ? message.result : message.subtype);
  }
}
