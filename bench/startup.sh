#!/usr/bin/env bash
# The start-up of two bsi binaries, side by side: `bsi --version` and the
# edit hook (one Claude Code `Edit` event inside another session's section,
# refused), plus their sizes. For a change that adds code to the binary
# (a dependency, a command) and must not slow every other command down.
#
#   bench/startup.sh OLD_BSI NEW_BSI [RUNS [ROUNDS]]
#
# Installs hyperfine from the distribution's packages when it is missing.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
runs=${3:-100}
rounds=${4:-5}
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
cd "$dir"
git init -q -b main
git config user.name bench
git config user.email bench@example.com
mkdir -p projets
printf '# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n## Risks\n\nrisk text\n' > projets/plan.md
git add -A
git commit -q -m base
"$new" init >/dev/null
"$new" open 'projets/plan.md#Goals' --session sess-other --agent bob >/dev/null
cat > event.json <<EOF
{"session_id": "bench", "cwd": "$dir", "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "$dir/projets/plan.md", "old_string": "goal text", "new_string": "better goal text", "replace_all": false}}
EOF
# Both refuse the same edit, the same way.
"$old" hook edit --tool claude < event.json | grep -q '"deny"'
"$new" hook edit --tool claude < event.json | grep -q '"deny"'

# Rounds, each running both binaries one after the other: a burst of load
# falls on both. Each round gives medians; the rounds' median is printed.
for round in $(seq 1 "$rounds"); do
  hyperfine -N --warmup 10 --runs "$runs" --export-json "$dir/version-$round.json" \
    -n before "$old --version" -n after "$new --version" >/dev/null 2>&1
  hyperfine --warmup 10 --runs "$runs" --export-json "$dir/hook-$round.json" \
    -n before "$old hook edit --tool claude < event.json" \
    -n after "$new hook edit --tool claude < event.json" >/dev/null 2>&1
done
python3 - "$dir" "$rounds" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
for name, title in [("version", "bsi --version"), ("hook", "bsi hook edit --tool claude (one Edit event, refused)")]:
    med = {"before": [], "after": []}
    for r in range(1, rounds + 1):
        for res in json.load(open(f"{d}/{name}-{r}.json"))["results"]:
            med[res["command"]].append(res["median"] * 1000)
    b, a = statistics.median(med["before"]), statistics.median(med["after"])
    print(f"{title}: median of {rounds} rounds: before {b:.2f} ms, after {a:.2f} ms ({a / b:.2f}x); "
          f"round medians before {min(med['before']):.2f}-{max(med['before']):.2f}, after {min(med['after']):.2f}-{max(med['after']):.2f}")
PY
printf 'size: before %s bytes, after %s bytes\n' "$(stat -c %s "$old")" "$(stat -c %s "$new")"
