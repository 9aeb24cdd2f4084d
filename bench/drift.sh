#!/bin/sh
# What reading the claims' drift costs `bsi status`: a brain of 1,000
# commits made by others after a section claim was opened (each read:
# half inside the claim, half beside it), against the same brain whose
# claim was opened after them (the walk stops at the first commit).
# Usage: bench/drift.sh [BSI_BINARY]
set -eu
BSI=$(realpath "${1:-target/debug/bsi}")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
cd "$D"
git init -q -b main
git config user.name bench
git config user.email bench@example.com
printf '# Plan\n\n## Goals\n\ngoal 0\n\n## Risks\n\nrisk 0\n' > plan.md
git add plan.md
git commit -q -m base
"$BSI" init > /dev/null
start=$(date +%s)
NOW=$(date -u -d "@$start" +%Y-%m-%dT%H:%M:%SZ)
BSI_NOW=$NOW "$BSI" open 'plan.md#Goals' --session s1 > /dev/null
# 1,000 commits dated after the claim, by fast-import.
python3 - "$start" <<'PY' | git fast-import --quiet
import sys
start = int(sys.argv[1])
out = []
for i in range(1, 1001):
    goals = i if i % 2 else i - 1
    risks = i - 1 if i % 2 else i
    text = f"# Plan\n\n## Goals\n\ngoal {goals}\n\n## Risks\n\nrisk {risks}\n".encode()
    t = start + 60 + i // 20
    msg = f"other {i}\n".encode()
    out.append(b"commit refs/heads/main\n")
    out.append(f"committer Other <o@example.com> {t} +0000\n".encode())
    out.append(b"data %d\n" % len(msg) + msg)
    if i == 1:
        out.append(b"from refs/heads/main^0\n")
    out.append(b"M 100644 inline plan.md\n")
    out.append(b"data %d\n" % len(text) + text + b"\n")
sys.stdout.buffer.write(b"".join(out))
PY
git reset -q --hard main
AFTER=$(date -u -d "@$((start + 300))" +%Y-%m-%dT%H:%M:%SZ)
runs() {
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f %e env BSI_NOW="$AFTER" "$BSI" status --offline > /dev/null 2>> times
  done
  sort -n times | sed -n 1p; sort -n times | sed -n 5p; rm -f times
}
echo "claim opened before 1,000 commits (each walked, 500 in the claim: drift):"
BSI_NOW="$AFTER" "$BSI" status --offline | grep -c '^drift:' || true
runs
BSI_NOW="$AFTER" "$BSI" close s1 > /dev/null
BSI_NOW="$AFTER" "$BSI" open 'plan.md#Goals' --session s2 > /dev/null
echo "claim opened after them (nothing walked):"
runs
