#!/usr/bin/env bash
# The handoff against the same run without it: the hot-file workload of
# bench/collisions.sh (every task holds one of five sections of one file
# for 1-3 s of work), the queue strategy (`open --wait`, a place in the
# queue), N = 10, the same seed and the same release binary, run with the
# handoff and with `--no-handoff` (no close can prove a waiter alive, so
# each waiter takes its grant itself), one after the other, RUNS times.
#
#   bench/handoff.sh              three pairs of runs, N = 10
#   bench/handoff.sh --runs K     K pairs
#   bench/handoff.sh --n N        another N
#
# Prints throughput, the p50 / p95 wait and the grants closes handed over
# of every run, and the p50 / p95 of every wait of a side's runs together;
# exits 1 unless the handoff cuts that p95 wait, or when a run loses an
# edit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
N=10
RUNS=3
while [[ $# -gt 0 ]]; do
    case "$1" in
    --runs)
        RUNS=${2:?--runs needs a number}
        shift
        ;;
    --n)
        N=${2:?--n needs a number}
        shift
        ;;
    -h | --help)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/handoff.sh [--runs K] [--n N]" >&2
        exit 2
        ;;
    esac
    shift
done
say() { printf 'handoff: %s\n' "$*" >&2; }
WORK="$TARGET/bench-handoff"
rm -rf "$WORK"
mkdir -p "$WORK"
(cd "$ROOT" && cargo build --release --quiet --bin bsi && cargo build --release --quiet --example collisions)
say "$(nproc 2>/dev/null || echo '?') cores; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
# strategy,n,tasks,finished,wall_s,per_min,conflicts,lost,wait_p50_ms,wait_p95_ms,
# wait_max_ms,overtaken_max,pushes_per_task,registry_commits_per_task,bsi_share,
# bsi_ms_per_task,handed
row() { awk -F, -v n="$N" '$1 == "queue" && $2 == n' "$WORK/$1/collisions.csv"; }
for ((i = 1; i <= RUNS; i++)); do
    for side in without with; do
        flag=()
        [[ $side == without ]] && flag=(--no-handoff)
        "$TARGET/release/examples/collisions" --hot --strategy queue --n "$N" "${flag[@]}" \
            --bsi "$TARGET/release/bsi" --out "$WORK/$side-$i" >/dev/null
    done
done
printf '| queue strategy, hot file, N = %s | run | tasks/min | wait p50 (ms) | wait p95 (ms) | edits lost | grants handed over |\n|---|---:|---:|---:|---:|---:|---:|\n' "$N"
lost_any=0
for side in without with; do
    : >"$WORK/$side.waits"
    for ((i = 1; i <= RUNS; i++)); do
        IFS=, read -r _ _ tasks _ _ per_min _ lost p50 p95 _ _ _ _ _ _ handed <<<"$(row "$side-$i")"
        printf '| %s the handoff | %s | %s | %s | %s | %s | %s of %s |\n' "$side" "$i" "$per_min" "$p50" "$p95" "$lost" "$handed" "$tasks"
        awk -F, -v n="$N" '$1 == "queue" && $2 == n { print $3 }' "$WORK/$side-$i/waits.csv" >>"$WORK/$side.waits"
        [[ $lost == 0 ]] || lost_any=1
    done
done
# The waits of every run of a side together: one p95 over RUNS times as
# many tasks, steadier than any one run's.
# (The nearest rank, as examples/collisions.rs takes it.)
pct() { sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END { print v[int((NR - 1) * p + 0.5) + 1] }'; }
for side in without with; do
    printf '| %s the handoff | all %s | | %s | %s | | |\n' "$side" "$RUNS" "$(pct "$WORK/$side.waits" 0.5)" "$(pct "$WORK/$side.waits" 0.95)"
done
without=$(pct "$WORK/without.waits" 0.95)
with=$(pct "$WORK/with.waits" 0.95)
say "p95 wait over every run: $without ms without the handoff, $with ms with it"
if [[ $lost_any != 0 ]]; then
    say "an edit was lost"
    exit 1
fi
if awk -v a="$with" -v b="$without" 'BEGIN { exit !(a < b) }'; then
    say "the handoff cuts the p95 wait"
else
    say "the handoff does not cut the p95 wait"
    exit 1
fi
