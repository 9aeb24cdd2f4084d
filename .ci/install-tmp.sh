#!/usr/bin/env bash
# CI: the README's test command, plus formatting and lints.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { apt-get update -qq && apt-get install -y -qq git; }
# zsh and bash, for the test that pastes bsi's commands into each shell.
command -v zsh >/dev/null || { apt-get update -qq && apt-get install -y -qq zsh; }
command -v bash >/dev/null || { apt-get update -qq && apt-get install -y -qq bash; }
# A pseudo-terminal for the width tests (`script`, from bsdutils) and a real
# terminal for the live view of `bsi status --watch` (tmux).
command -v script >/dev/null || { apt-get update -qq && apt-get install -y -qq bsdutils; }
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux; }
# A French locale, for the test of a translated git (Debian's git ships its
# translations); localedef comes with the locales package.
if ! locale -a 2>/dev/null | grep -qi '^fr_FR\.utf-\?8$'; then
  command -v localedef >/dev/null || { apt-get update -qq && apt-get install -y -qq locales; }
  localedef -i fr_FR -f UTF-8 fr_FR.UTF-8 || echo "warning: no fr_FR.UTF-8 locale; the translated-git test will skip"
fi
# The hook managers the guard joins, from their registries, for the tests of
# tests/it/managers.rs (they find them on PATH): husky 9 from npm, lefthook
# and the pre-commit framework from PyPI.
command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq npm; }
command -v husky >/dev/null || npm install -g husky@9
command -v pip3 >/dev/null || command -v pip >/dev/null || { apt-get update -qq && apt-get install -y -qq python3-pip; }
pip=$(command -v pip3 || command -v pip)
export PATH="$HOME/.local/bin:$PATH"
for tool in lefthook pre-commit; do
  command -v "$tool" >/dev/null || "$pip" install -q "$tool" || "$pip" install -q --break-system-packages "$tool"
done
# The released agent CLIs at pinned versions, for tests/it/agent_cli.rs,
# agent_cli_copilot.rs, agent_cli_cline.rs and agent_cli_opencode.rs
# (docs/agent-tools.md says how to move them forward). Claude Code 2.1.197
# is the last release that runs on Node 20; Gemini CLI needs Node >= 20.
# GitHub Copilot CLI is a native binary npm takes from its platform package
# (an optional dependency, no install script); its first run unpacks it
# into the tests' cache, target/copilot-cache. Cline's binary comes in an
# optional dependency for the platform too (its postinstall only links it
# to bin/.cline; the launcher finds it without). OpenCode's package puts its
# binary in place from its platform package in a postinstall script, which
# npm runs.
clis=target/agent-clis
pins="@anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0 @github/copilot@1.0.102 cline@3.0.65 opencode-ai@1.18.33"
if [ "$(cat "$clis/pins" 2>/dev/null)" != "$pins" ]; then
  command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
  # shellcheck disable=SC2086
  npm install -g --prefix "$clis" --no-fund --no-audit $pins
  echo "$pins" > "$clis/pins"
fi
