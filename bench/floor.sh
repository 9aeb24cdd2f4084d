#!/usr/bin/env bash
# One write at its floor: one `bsi open` of a free folder, against the
# hand-written claim (append a row to a tracked table, `git add`,
# `git commit`) on a 1,000-file brain (git gc'd), median of 15 each,
# interleaved; and what the open asks of the system (strace -f -c, and
# the openat, getdents64 and newfstatat calls) on a 200-file brain.
#
#   bench/floor.sh                builds the release binary, measures it
#   bench/floor.sh --before REV   also builds REV (from `git archive`, in
#                                 the same target directory) and measures
#                                 both in the same run
#   bench/floor.sh --smoke        debug build, 3 runs, no target judged
#
# Prints the ratio and exits 1 when it is above 0.35. Installs strace when
# it is missing (the system counts are skipped when it cannot trace).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
RUNS=15
PROFILE=release
BEFORE=
while [[ $# -gt 0 ]]; do
    case "$1" in
    --smoke) RUNS=3 PROFILE=debug ;;
    --before)
        BEFORE=${2:?--before needs a revision}
        shift
        ;;
    -h | --help)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/floor.sh [--smoke] [--before REV]" >&2
        exit 2
        ;;
    esac
    shift
done
say() { printf 'floor: %s\n' "$*" >&2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
flag=()
[[ $PROFILE == release ]] && flag=(--release)

say "building the $PROFILE binary"
(cd "$ROOT" && cargo build "${flag[@]}" --quiet --bin bsi)
cp "$TARGET/$PROFILE/bsi" "$WORK/bsi-after"
BINS=(after)
if [[ -n $BEFORE ]]; then
    say "building $BEFORE"
    mkdir "$WORK/src-before"
    git -C "$ROOT" archive "$BEFORE" | tar -x -C "$WORK/src-before"
    (cd "$WORK/src-before" && CARGO_TARGET_DIR="$TARGET" cargo build "${flag[@]}" --quiet --bin bsi)
    cp "$TARGET/$PROFILE/bsi" "$WORK/bsi-before"
    # The tree's own binary stays the one cargo last built for it.
    (cd "$ROOT" && cargo build "${flag[@]}" --quiet --bin bsi)
    BINS=(before after)
fi

export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 BSI_AGENT=bench
unset BSI_SESSION BSI_REGISTRY BSI_REMOTE GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE BSI_NOW
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main
git config --global commit.gpgsign false

ROW='| sess-bench | d17/ | directory | bench | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 |'

# make_brain DIR DIRS FILES_PER_DIR [tracked]: markdown files committed on
# main; with `tracked`, a hand-kept claims table on main too, else an
# initialised bsi registry. Packed by `git gc`.
make_brain() {
    local dir=$1 dirs=$2 per=$3 layout=${4:-bsi}
    mkdir -p "$dir"
    (
        cd "$dir"
        git init -q
        awk -v dirs="$dirs" -v per="$per" 'BEGIN {
            for (d = 0; d < dirs; d++) {
                system(sprintf("mkdir -p d%02d", d))
                for (f = 0; f < per; f++) {
                    p = sprintf("d%02d/f%02d.md", d, f)
                    printf "# File %d.%d\n\n## Intro\n\nSome text.\n\n## Body\n\nMore text\nover lines.\n\n## Notes\n\nLast.\n", d, f > p
                    close(p)
                }
            }
        }'
        if [[ $layout == tracked ]]; then
            printf '# Claims\n\n| session | scope | kind | agent | since | until | note |\n|---|---|---|---|---|---|---|\n' >CLAIMS.md
        fi
        git add -A
        git commit -q -m "fixture: $((dirs * per)) files"
        if [[ $layout == bsi ]]; then
            "$BSI_INIT" init -q >/dev/null
        fi
        git gc -q
    )
}

BSI_INIT="$WORK/bsi-after"
say "making fixtures in $WORK"
make_brain "$WORK/b200" 20 10
make_brain "$WORK/b1000" 20 50
make_brain "$WORK/s1000" 20 50 tracked
REG=$(git -C "$WORK/b1000" rev-parse brain-index)
BASE=$(git -C "$WORK/s1000" rev-parse HEAD)

# ---------------------------------------------------------------- syscalls

if ! command -v strace >/dev/null; then
    sudo=
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq >/dev/null 2>&1 && $sudo apt-get install -y -qq strace >/dev/null 2>&1 || true
fi
REG200=$(git -C "$WORK/b200" rev-parse brain-index)
for b in "${BINS[@]}"; do
    if ! strace -f -o /dev/null true 2>/dev/null; then
        say "strace cannot trace here: system counts skipped"
        break
    fi
    (
        cd "$WORK/b200"
        git update-ref refs/heads/brain-index "$REG200"
        strace -f -qq -e trace=openat,getdents64,newfstatat,statx,execve -o "$WORK/trace-$b" \
            "$WORK/bsi-$b" open d05/ --session sess-bench-free -q >/dev/null
    )
    t="$WORK/trace-$b"
    printf 'syscalls, %s: bsi open d05/ (free folder, 200 files): openat %d, getdents64 %d, newfstatat %d, statx %d, git processes %d; .git/config opened %d times, HEAD %d\n' \
        "$b" "$(grep -c ' openat(' "$t")" "$(grep -c ' getdents64(' "$t")" "$(grep -c ' newfstatat(' "$t")" \
        "$(grep -c ' statx(' "$t")" "$(grep -c ' execve(' "$t" | awk '{ print $1 - 1 }')" \
        "$(grep -c 'openat(.*/\.git/config"' "$t")" "$(grep -c 'openat(.*/\.git/HEAD"' "$t")"
done

# ---------------------------------------------------------------- timings

# ms COMMAND...: the wall time of one run, in milliseconds.
ms() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$@" >/dev/null
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}
hand() {
    printf '%s n%s |\n' "$ROW" "$EPOCHREALTIME" >>CLAIMS.md && git add CLAIMS.md && git commit -q -m 'claim d17/'
}
declare -A times
for b in "${BINS[@]}"; do times[$b]=; done
times[hand]=
# Warm the caches once, then interleave: a burst of load falls on every side.
(cd "$WORK/b1000" && "$WORK/bsi-after" open d17/ --session sess-bench -q >/dev/null && git update-ref refs/heads/brain-index "$REG")
for _ in $(seq 1 "$RUNS"); do
    for b in "${BINS[@]}"; do
        cd "$WORK/b1000"
        git update-ref refs/heads/brain-index "$REG"
        times[$b]+="$(ms "$WORK/bsi-$b" open d17/ --session sess-bench -q --note "n$EPOCHREALTIME") "
    done
    cd "$WORK/s1000"
    git reset -q --hard "$BASE"
    times[hand]+="$(ms hand) "
done
cd "$WORK"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
h=$(median <<<"${times[hand]}")
printf 'hand-written claim (append a row, git add, git commit), 1,000 files: median of %d %.1f ms\n' "$RUNS" "$h"
status=0
for b in "${BINS[@]}"; do
    m=$(median <<<"${times[$b]}")
    r=$(awk -v a="$m" -v b="$h" 'BEGIN { printf "%.2f", a / b }')
    verdict=pass
    awk -v r="$r" 'BEGIN { exit !(r > 0.35) }' && verdict=miss
    [[ $PROFILE == debug ]] && verdict="not judged (debug build)"
    printf 'bsi open d17/, %s: median of %d %.1f ms, %sx the hand-written claim (target <= 0.35x): %s\n' \
        "$b" "$RUNS" "$m" "$r" "$verdict"
    [[ $b == after && $verdict == miss ]] && status=1
done
exit $status
