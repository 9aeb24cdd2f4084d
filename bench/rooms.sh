#!/usr/bin/env bash
# The rooms a request crosses: every function of bsi that runs while one
# request is answered, recorded by valgrind's callgrind (the process
# itself, not the git it starts), then named by the room it is in — the
# core's (`bsi_core::store::…` is `store`) and the doors' (`bsi::commands::…`
# is `commands`). Two requests, as an agent makes them in a brain where
# another session holds `projets/plan.md#Goals`:
#
#   - Claude Code's edit hook, for an `Edit` of the free section `Risks`
#     by a session that holds nothing (it claims on the write,
#     `claim_on_write = true`), then for an edit of `Goals` (refused);
#   - MCP's `claim` of that same section, in a `bsi mcp` server that was
#     initialised first: the rooms beneath the claim tool's handler, by
#     the call graph callgrind records, and those of the whole run.
#
#   bench/rooms.sh           the rooms of each, with the count
#
# Needs valgrind, and a bsi built with its symbols (the debug build, so
# that inlining hides no room).
set -euo pipefail

command -v valgrind >/dev/null || {
    echo "bench: valgrind is missing (apt-get install valgrind)" >&2
    exit 1
}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The function answering MCP's `claim` (a regular expression).
MCP_CLAIM=${MCP_CLAIM:-'bsi::commands::mcp::(.*::)?claim(_now|_waiting|_answer|_request)?\b'}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
bench_home "$ROOT/target/debug/bsi"

B=$WORK/brain
mkdir -p "$B/projets"
cd "$B"
git init -q -b main
git config user.name Bench
git config user.email bench@example.com
printf '# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n## Risks\n\nrisk text\n' >projets/plan.md
printf 'claim_on_write = true\n' >.bsi.toml
git add -A
git commit -qm base
bsi init -q
bsi open 'projets/plan.md#Goals' --session sess-bench-other --agent bob -q
bsi agent install claude >/dev/null
# The session-start hook maps Claude's session to a bsi session first.
printf '{"session_id":"c1","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}\n' "$B" |
    bsi hook session-start --tool claude >/dev/null

# The rooms of the functions a callgrind profile saw run.
# The rooms of the functions a callgrind profile saw run beneath the
# functions whose names match $2 (all of them when $2 is empty), by the
# call graph it recorded. A function of the doors' crate root (`bsi::run`,
# `bsi::main`) is in the room `run`, as the doors' room table has it.
MODS=$(sed -n 's/^pub mod \([a-z_]*\);$/\1/p' "$ROOT/src/lib.rs" | tr '\n' ' ')
rooms_of() {
    python3 - "$1" "${2:-}" "$MODS" <<'PY'
import re, sys
path, root, mods = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
names, calls, cur, seen = {}, {}, None, set()
def fn(ref):
    m = re.match(r"\((\d+)\)(?: (.*))?", ref)
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return m.group(1)
for line in open(path):
    if line.startswith("fn="):
        cur = fn(line[3:].strip())
        seen.add(cur)
    elif line.startswith("cfn="):
        calls.setdefault(cur, set()).add(fn(line[4:].strip()))
todo = [f for f in seen if not root or re.search(root, names.get(f, ""))]
reach = set(todo)
while todo:
    for g in calls.get(todo.pop(), ()):
        # The async runtime and the MCP library run every task: the call
        # graph goes through them to the whole server, not this request.
        if re.match(r"<?(tokio|rmcp|futures_\w+)::", names.get(g, "")):
            continue
        if g not in reach:
            reach.add(g)
            todo.append(g)
def room(f):
    for crate, r in re.findall(r"^<?(bsi_core|bsi)::([a-z_]+)", names.get(f, ""))[:1]:
        return ("core " + r) if crate == "bsi_core" else ("doors " + (r if r in mods else "run"))
rooms = {room(f) for f in reach} - {None}
# The core's rooms a door's function calls itself: where the doors cross
# into the core.
direct = {
    "direct " + room(g)[5:]
    for f in reach if (room(f) or "").startswith("doors")
    for g in calls.get(f, ()) if (room(g) or "").startswith("core")
}
print("\n".join(sorted(rooms | direct)))
PY
}
profile() {
    local out=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>/dev/null
}

printf '{"session_id":"c1","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/projets/plan.md","old_string":"risk text","new_string":"new risk","replace_all":false}}\n' \
    "$B" "$B" >"$WORK/edit.json"
profile "$WORK/edit.cg" bsi hook edit --tool claude <"$WORK/edit.json" >"$WORK/edit.out"
grep -q 'projets/plan.md#Risks' "$WORK/edit.out" || {
    echo "bench: the edit hook did not claim on the write: $(cat "$WORK/edit.out")" >&2
    exit 1
}
# An edit inside the other session's claim, refused.
sed 's/risk text/goal text/; s/new risk/new goal/' "$WORK/edit.json" >"$WORK/refused.json"
profile "$WORK/refused.cg" bsi hook edit --tool claude <"$WORK/refused.json" >"$WORK/refused.out"
grep -q '"deny"' "$WORK/refused.out" || {
    echo "bench: the edit hook did not refuse the edit: $(cat "$WORK/refused.out")" >&2
    exit 1
}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}'
claim='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim","arguments":{"scopes":["projets/plan.md#Risks"]}}}'
mcp() {
    # The server answers each line; the input stays open until the last
    # answer is read, then closes (the server ends with it).
    local n=$1
    shift
    { printf '%s\n' "$@"; sleep 20; } | profile "$WORK/mcp$n.cg" bsi mcp --session sess-bench-mcp$n |
        head -n "$n" >"$WORK/mcp$n.out" || true
}
mcp 2 "$init" "$claim"
grep -q 'sess-bench-mcp2' "$WORK/mcp2.out" || {
    echo "bench: MCP's claim did not answer: $(cat "$WORK/mcp2.out")" >&2
    exit 1
}

report() {
    local name=$1 rooms=$2
    printf '%s: %s core rooms, %s door rooms\n' "$name" \
        "$(grep -c '^core' <<<"$rooms" || true)" "$(grep -c '^doors' <<<"$rooms" || true)"
    printf '  core: %s\n' "$(sed -n 's/^core //p' <<<"$rooms" | tr '\n' ' ')"
    printf '  doors: %s\n' "$(sed -n 's/^doors //p' <<<"$rooms" | tr '\n' ' ')"
    printf '  the core rooms the doors call themselves (%s): %s\n' "$(grep -c '^direct' <<<"$rooms" || true)" \
        "$(sed -n 's/^direct //p' <<<"$rooms" | tr '\n' ' ')"
}
report "the edit hook (Claude Code, claim on write)" "$(rooms_of "$WORK/edit.cg")"
report "the edit hook (Claude Code, refused)" "$(rooms_of "$WORK/refused.cg")"
report "MCP claim (beneath its tool's handler)" "$(rooms_of "$WORK/mcp2.cg" "$MCP_CLAIM")"
report "MCP claim (the whole run, the server's start included)" "$(rooms_of "$WORK/mcp2.cg")"
