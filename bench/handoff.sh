#!/usr/bin/env bash
# The handoff against the same run without it: the hot-file workload of
# bench/collisions.sh (every task holds one of five sections of one file
# for 1-3 s of work), the queue strategy (`open --wait`, a place in the
# queue), N = 10, the same seed, run with the release binary of this tree
# and with the one of the commit before the handoff (or REV).
#
#   bench/handoff.sh              the commit before the handoff, then this
#   bench/handoff.sh --before REV another baseline
#   bench/handoff.sh --n N        another N (default 10)
#
# Prints throughput and the p50 / p95 wait of both, and exits 1 unless the
# handoff cuts the p95 wait, or when a run loses an edit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BEFORE=
N=10
while [[ $# -gt 0 ]]; do
    case "$1" in
    --before)
        BEFORE=${2:?--before needs a revision}
        shift
        ;;
    --n)
        N=${2:?--n needs a number}
        shift
        ;;
    -h | --help)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/handoff.sh [--before REV] [--n N]" >&2
        exit 2
        ;;
    esac
    shift
done
say() { printf 'handoff: %s\n' "$*" >&2; }
if [[ -z $BEFORE ]]; then
    # The commit that brought the handoff in, found by its function.
    added=$(git -C "$ROOT" log --format=%H -S 'pub fn handoff(' -- src/claims/close.rs | tail -1)
    [[ -n $added ]] || { say "no commit adds the handoff"; exit 2; }
    BEFORE="$added^"
fi
WORK="$TARGET/bench-handoff"
rm -rf "$WORK"
mkdir -p "$WORK/src-before"
say "building $(git -C "$ROOT" rev-parse --short "$BEFORE") (before) and this tree (after)"
git -C "$ROOT" archive "$BEFORE" | tar -x -C "$WORK/src-before"
(cd "$WORK/src-before" && CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --bin bsi)
cp "$TARGET/release/bsi" "$WORK/bsi-before"
(cd "$ROOT" && cargo build --release --quiet --bin bsi && cargo build --release --quiet --example collisions)
cp "$TARGET/release/bsi" "$WORK/bsi-after"
say "$(nproc 2>/dev/null || echo '?') cores; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
for side in before after; do
    "$TARGET/release/examples/collisions" --hot --strategy queue --n "$N" \
        --bsi "$WORK/bsi-$side" --out "$WORK/$side" >/dev/null
done
# strategy,n,tasks,finished,wall_s,per_min,conflicts,lost,wait_p50_ms,wait_p95_ms,...
row() { awk -F, -v n="$N" '$1 == "queue" && $2 == n' "$WORK/$1/collisions.csv"; }
b=$(row before)
a=$(row after)
printf '| queue strategy, hot file, N = %s | tasks/min | wait p50 (ms) | wait p95 (ms) | edits lost |\n|---|---:|---:|---:|---:|\n' "$N"
for side in before after; do
    r=$([[ $side == before ]] && echo "$b" || echo "$a")
    IFS=, read -r _ _ _ _ _ per_min _ lost p50 p95 _ <<<"$r"
    printf '| %s | %s | %s | %s | %s |\n' "$side" "$per_min" "$p50" "$p95" "$lost"
done
IFS=, read -r _ _ _ _ _ _ _ lost_b _ p95_b _ <<<"$b"
IFS=, read -r _ _ _ _ _ _ _ lost_a _ p95_a _ <<<"$a"
if [[ $lost_a != 0 || $lost_b != 0 ]]; then
    say "an edit was lost"
    exit 1
fi
if awk -v a="$p95_a" -v b="$p95_b" 'BEGIN { exit !(a < b) }'; then
    say "the handoff cuts the p95 wait: $p95_b ms -> $p95_a ms"
else
    say "the handoff does not cut the p95 wait: $p95_b ms -> $p95_a ms"
    exit 1
fi
