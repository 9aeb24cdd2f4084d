#!/usr/bin/env bash
# A day in a small brain: with the installed bsi, makes a temporary git repository with a
# few folders and a file with nested sections, and walks through the main job:
# claims opened, an overlap refused with free alternatives, two sessions
# sharing one file by sections, the watchdog with a later clock, a person
# releasing a stale claim, and the journal.
#
# Each command is printed with everything it says, stdout and stderr
# together and in order, so `examples/demo.sh > day.txt` keeps the
# explanations next to the exit codes.
#
# Usage: examples/demo.sh            (keeps nothing: the brain is deleted at the end)
#        KEEP=1 examples/demo.sh     (prints where the brain is and keeps it)
#        BSI=target/debug/bsi examples/demo.sh   (a bsi other than the PATH's)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
# The bsi on the PATH (`cargo install --locked --path .`), or the one BSI
# names (BSI=target/debug/bsi examples/demo.sh).
if [ -z "${BSI:-}" ]; then
  BSI=$(command -v bsi) || {
    echo "examples/demo.sh: no bsi on the PATH: install it (cargo install --locked --path .) or name one, BSI=path/to/bsi $0" >&2
    exit 1
  }
fi
[ -x "$BSI" ] || { echo "examples/demo.sh: $BSI is not an executable bsi" >&2; exit 1; }

brain=$(mktemp -d "${TMPDIR:-/tmp}/bsi-demo.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$brain"' EXIT; fi
# The example brain of the README: agents/, notes/, projets/plan.md.
"$here/examples/example-brain.sh" "$brain/brain" > /dev/null
cd "$brain/brain"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }
# Runs one command with its stderr on stdout, so both stay in order.
run() { local shown="$*"; step "${shown//"$BSI"/bsi}"; set +e; "$@" 2>&1; local rc=$?; set -e; [ $rc -eq 0 ] || echo "(exit $rc)"; }

# Morning, 09:30: every command below sees this clock.
export BSI_NOW=2026-03-14T09:30:00Z TZ=UTC

run "$BSI" init
run "$BSI" open agents/ --session sess-20260314-0930-ag01 --agent claude --note "tidy the agents"
# The second agent keeps its session in the shell: `--shell` prints the
# export line, and every later command (and commit) of this shell uses it.
step 'eval "$(bsi open projets/plan.md#Goals --session sess-20260314-0930-pl02 --agent codex --shell)"'
{ eval "$("$BSI" open projets/plan.md#Goals --session sess-20260314-0930-pl02 --agent codex --shell)"; } 2>&1
run "$BSI" whoami
# Another agent wants the whole plan: refused, with what is free instead.
run "$BSI" open projets/plan.md --session sess-20260314-0931-rk03 --agent gemini
# It takes the free section: two sessions now share one file.
run "$BSI" open "projets/plan.md#Risks" --session sess-20260314-0931-rk03 --agent gemini
run "$BSI" status
run "$BSI" status --tree
# Gemini names its own session in every command, as the agents' block says.
run "$BSI" close --session sess-20260314-0931-rk03 --agent gemini
unset BSI_SESSION BSI_AGENT

# Afternoon, 12:00: the first two sessions never closed.
export BSI_NOW=2026-03-14T12:00:00Z
run "$BSI" watchdog
run "$BSI" status
# A person checks that the agents session is gone, then frees its claim.
run "$BSI" release sess-20260314-0930-ag01
run "$BSI" release sess-20260314-0930-ag01 --confirm
run "$BSI" log
step "git log --oneline brain-index"
git log --oneline brain-index
step "cat BRAIN-INDEX.md"
cat BRAIN-INDEX.md
if [ -n "${KEEP:-}" ]; then echo; echo "The brain is kept in $brain"; fi
