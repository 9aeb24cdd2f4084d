#!/usr/bin/env bash
# What bsi's git hooks cost on what runs on every reference update: a
# `git fetch` of 1,000 refs, a `git reset`, a commit, a cherry-pick, a
# `git pull --rebase` of 20 commits — each with bsi's hooks installed
# against the same command without hooks (`git -c core.hooksPath=/dev/null`),
# in the same repository; what the fresh view (the registry branch fetched
# before a commit is judged) adds to a commit, on a remote on this machine
# and over a link of 30 ms each way (examples/delay_proxy.rs in front of
# `git daemon`); and the pre-commit hook against `git diff --cached
# --name-only`. Each figure is a ratio of medians, repeated in rounds; the
# table gives the median of the rounds, their min–max, and both medians of
# the last round in ms. The floor of any hook is measured too: the same
# commands with hooks that are only `exit 0`, which git starts as often as
# bsi's. With strace installed, a second table counts what each command
# starts: hook scripts and bsi. Exits 1 when a median misses its target
# (not in --smoke mode).
#
#   bench/doors.sh            full run (several minutes on 2 cores)
#   bench/doors.sh --smoke    a few runs of each figure; checks every step
#   BSI=path/to/bsi bench/doors.sh   measures that binary (no release build)
#   PROXY=path/to/delay_proxy        that proxy (else built)
#   BENCH_ONLY=pre-commit bench/doors.sh   only the figures naming it
#   BENCH_KEEP=1 bench/doors.sh            keeps the fixture (its path is said)
#
# See docs/performance.md for the figures.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
bench_mode 25 "$@"

if [[ $MODE == smoke ]]; then
    ROUNDS=1 RUNS=3 WARMUP=1 FETCH_RUNS=2
else
    ROUNDS=${BENCH_ROUNDS:-5} RUNS=${BENCH_RUNS:-20} WARMUP=3
    # A fetch of 1,000 refs takes seconds: fewer runs of it.
    FETCH_RUNS=${BENCH_FETCH_RUNS:-5}
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# hyperfine from the distribution's packages.
command -v hyperfine >/dev/null || bench_install hyperfine

if [[ -z ${BSI:-} ]]; then
    echo "bench: building the release binary" >&2
    (cd "$ROOT" && cargo build --release --quiet)
    BSI="${CARGO_TARGET_DIR:-$ROOT/target}/release/bsi"
fi
BSI=$(cd "$(dirname "$BSI")" && pwd)/$(basename "$BSI")
if [[ -z ${PROXY:-} ]]; then
    echo "bench: building the delay proxy" >&2
    (cd "$ROOT" && cargo build --release --quiet --example delay_proxy)
    PROXY="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/delay_proxy"
fi
PROXY=$(cd "$(dirname "$PROXY")" && pwd)/$(basename "$PROXY")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsi-bench-doors.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [[ -n ${BENCH_KEEP:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT

export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 BSI_AGENT=bench
export BSI_NOW=2026-03-14T09:30:00+00:00
unset BSI_SESSION BSI_REGISTRY BSI_REMOTE GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main
git config --global commit.gpgsign false
git config --global gc.auto 0

say() { printf 'bench: %s\n' "$*" >&2; }

# ---------------------------------------------------------------- fixture

# The brain of bench/run.sh: 1,000 markdown files in 20 directories, and
# 50 claims — file, section and directory claims of other sessions, and
# three of the committer sess-bench-me (d15/, d16/, d05/f00.md#Body).
say "making the fixture in $WORK"
B=$WORK/brain
mkdir -p "$B"
cd "$B"
git init -q
awk 'BEGIN {
    for (d = 0; d < 20; d++) {
        system(sprintf("mkdir -p d%02d", d))
        for (f = 0; f < 50; f++) {
            p = sprintf("d%02d/f%02d.md", d, f)
            printf "# File %d.%d\n\n## Intro\n\nSome text.\n\n## Body\n\nMore text\nover lines.\n\n## Notes\n\nLast.\n", d, f > p
            close(p)
        }
    }
}'
git add -A
git commit -q -m "fixture: 1,000 files"
"$BSI" init -q >/dev/null
claims=()
for i in $(seq 0 29); do claims+=("d0$((i / 10))/f0$((i % 10)).md"); done
for i in $(seq 0 11); do claims+=("d05/f$(printf %02d "$i").md#Intro"); done
for d in 10 11 12 13 14; do claims+=("d$d/"); done
n=0
for c in "${claims[@]}"; do
    "$BSI" open "$c" --session "sess-bench-$(printf %04d $n)" -q >/dev/null
    n=$((n + 1))
done
"$BSI" open d15/ d16/ 'd05/f00.md#Body' --session sess-bench-me -q >/dev/null
"$BSI" hook install >/dev/null
[[ -x .git/hooks/reference-transaction ]]
echo "# Brain" >README.md
git add README.md
git commit -q -m "a second commit, for the reset"
BASE=$(git rev-parse HEAD)
# A commit of the committer's own on a side branch, for the cherry-pick.
git checkout -q -b side
echo "side" >>d15/f01.md
BSI_SESSION=sess-bench-me git commit -q -a -m side
PICK=$(git rev-parse HEAD)
git checkout -q main
git branch -q -D side
# A remote with 1,000 branches (all at one commit: the fetch moves refs,
# not objects).
git clone -q --bare "$B" "$WORK/remote.git"
for i in $(seq -w 0 999); do echo "create refs/heads/b$i $BASE"; done |
    git -C "$WORK/remote.git" update-ref --stdin
git remote add origin "$WORK/remote.git"
LOCAL_URL="$WORK/remote.git"
# The registry branch as fetched, and one commit older: a view the remote
# has moved past since.
REG=$(git rev-parse brain-index)
REG_OLD=$(git rev-parse brain-index~1)
TRACKING=refs/remotes/origin/brain-index

# 20 commits of the committer's own inside its claim (d15/) on a branch of
# their own, and one commit of another on the remote's main: what
# `git pull --rebase` replays.
git checkout -q -b twenty "$BASE"
for i in $(seq -w 1 20); do
    echo "own line $i" >>"d15/f$i.md"
    git -c core.hooksPath=/dev/null commit -q -a -m "own $i" --trailer "BSI-Session: sess-bench-me"
done
TWENTY=$(git rev-parse HEAD)
git checkout -q -b theirs "$BASE"
echo "their line" >>d17/f00.md
git -c core.hooksPath=/dev/null commit -q -a -m "theirs"
git -c core.hooksPath=/dev/null push -q origin theirs:main
git checkout -q main
git branch -q -D twenty theirs

# git daemon on loopback, and the slow link (30 ms each way) in front of it.
PORT=$((20000 + RANDOM % 20000))
SLOW=$((PORT + 1))
git daemon --reuseaddr --export-all --base-path="$WORK" --listen=127.0.0.1 --port="$PORT" \
    "$WORK" 2>"$WORK/daemon.log" &
PIDS+=($!)
"$PROXY" "127.0.0.1:$SLOW" "127.0.0.1:$PORT" 30 2>"$WORK/proxy.log" &
PIDS+=($!)
SLOW_URL="git://127.0.0.1:$SLOW/remote.git"
for _ in $(seq 1 100); do
    git ls-remote "$SLOW_URL" >/dev/null 2>&1 && break
    sleep 0.1
done
git ls-remote "$SLOW_URL" >/dev/null

NOHOOKS="git -c core.hooksPath=/dev/null"
# The two hooks bsi installed before the doors (pre-commit and
# prepare-commit-msg), for what the new ones add to a commit.
mkdir -p "$WORK/two-hooks"
cp .git/hooks/pre-commit .git/hooks/prepare-commit-msg "$WORK/two-hooks/"
TWOHOOKS="git -c core.hooksPath=$WORK/two-hooks"
# Hooks that are only `exit 0`, where bsi's are: the floor of any hook,
# git's start of a process for each.
mkdir -p "$WORK/exit-0"
for h in pre-commit prepare-commit-msg pre-merge-commit reference-transaction; do
    printf '#!/bin/sh\nexit 0\n' >"$WORK/exit-0/$h"
    chmod +x "$WORK/exit-0/$h"
done
FLOOR="git -c core.hooksPath=$WORK/exit-0"
# Every remote-tracking branch but the registry's, which the fresh view
# reads.
# origin/HEAD stays: a newer git (2.55) refuses a transaction that deletes a
# symbolic reference and its target both.
DROP_REFS="git for-each-ref --format='delete %(refname)' refs/remotes/origin/ | grep -v -e ' $TRACKING\$' -e ' refs/remotes/origin/HEAD\$' | $NOHOOKS update-ref --stdin"
RESET_BASE="$NOHOOKS reset -q --hard $BASE"
STAGE_ONE="$RESET_BASE && echo \"line \$EPOCHREALTIME\" >>d15/f00.md && git add d15/f00.md"
STAGE_100="$RESET_BASE && for f in d15/f{01..49}.md d16/f{00..49}.md; do echo changed >>\$f; done && sed -i 's/^More text\$/More text, edited/' d05/f00.md && git add -A"
# The fresh view: the registry branch as the remote has it (nothing to
# bring), one commit behind it (a fetch brings it), or never fetched (no
# fetch at all: what a commit cost before).
VIEW_FRESH="$NOHOOKS update-ref $TRACKING $REG"
VIEW_BEHIND="$NOHOOKS update-ref $TRACKING $REG_OLD"
VIEW_NONE="$NOHOOKS update-ref -d $TRACKING"
RESET_TWENTY="$NOHOOKS reset -q --hard $TWENTY"
export BSI_SESSION=sess-bench-me

# Each command is checked once before it is timed.
check() {
    local prepare=$1 cmd=$2
    (bash -c "$prepare" && bash -c "$cmd" >/dev/null) || {
        echo "bench: this step failed: $cmd" >&2
        exit 1
    }
}
check "$DROP_REFS" "git fetch -q origin"
[[ $(git for-each-ref refs/remotes/origin/ | wc -l) -ge 1000 ]]
check "$RESET_BASE" "git reset -q --soft HEAD~1"
check "$STAGE_ONE" "git commit -q -m x"
check "$RESET_BASE" "git cherry-pick $PICK"
check "$STAGE_100" "$BSI hook pre-commit"
[[ $(git diff --cached --name-only | wc -l) -eq 100 ]]
check "$RESET_TWENTY" "git pull -q --rebase origin main"
[[ $(git rev-list --count "$BASE..HEAD") -eq 21 ]]
# Whether this bsi fetches the registry branch before a commit (one built
# before the fresh view does not: its figures below measure nothing but
# noise).
fetches() {
    check "$STAGE_ONE && $VIEW_BEHIND" "git commit -q -m x"
    if [[ $(git rev-parse $TRACKING) == "$REG" ]]; then
        say "a commit fetched the registry branch from $1"
    else
        say "this bsi does not fetch the registry branch before a commit ($1)"
    fi
}
fetches "a local remote"
git remote set-url origin "$SLOW_URL"
fetches "over the slow link"
git remote set-url origin "$LOCAL_URL"

# ---------------------------------------------------------------- measuring

RESULTS="$WORK/results"
: >"$RESULTS"

# hyperfine over the commands after the prepare $1; prints the median of
# each command in seconds, one a line.
medians() {
    local prepare=$1 prepare_b=$2
    shift 2
    local csv="$WORK/round.csv" args=()
    # Every measured command is a plain argument list: run without a shell
    # (-N), so no shell start is subtracted from a few milliseconds; the
    # prepare step is a script of its own for bash (one per command when
    # the second command has its own).
    if [[ -n $prepare ]]; then
        printf '%s\n' "$prepare" >"$WORK/prepare.sh"
        args+=(--prepare "bash $WORK/prepare.sh")
    fi
    if [[ -n $prepare_b ]]; then
        printf '%s\n' "$prepare_b" >"$WORK/prepare_b.sh"
        args+=(--prepare "bash $WORK/prepare_b.sh")
    fi
    hyperfine -N --style none --warmup "${FIG_WARMUP:-$WARMUP}" --runs "${FIG_RUNS:-$RUNS}" \
        "${args[@]}" --export-csv "$csv" "$@" >/dev/null 2>"$WORK/hyperfine.log" || {
        cat "$WORK/hyperfine.log" >&2
        return 1
    }
    awk -F, 'NR > 1 { print $4 }' "$csv"
}

# A figure: $1 name, $2 target (- for none), $3 prepare, $4 the command
# measured, $5 the command it is compared with, $6 the prepare of $5 when
# it has one of its own.
figure() {
    local name=$1 target=$2 prepare=$3 a=$4 b=$5 prepare_b=${6:-} ratios=() r m
    [[ -n ${BENCH_ONLY:-} && $name != *"$BENCH_ONLY"* ]] && return 0
    say "$name"
    for ((r = 0; r < ROUNDS; r++)); do
        mapfile -t m < <(medians "$prepare" "$prepare_b" "$a" "$b")
        ((${#m[@]} == 2)) || exit 1
        ratios+=("$(awk -v a="${m[0]}" -v b="${m[1]}" 'BEGIN { printf "%.3f", a / b }')")
    done
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$target" \
        "$(awk -v a="${m[0]}" 'BEGIN { printf "%.1f", a * 1000 }')" \
        "$(awk -v b="${m[1]}" 'BEGIN { printf "%.1f", b * 1000 }')" "${ratios[*]}" >>"$RESULTS"
}

FIG_RUNS=$FETCH_RUNS FIG_WARMUP=1 figure "git fetch of 1,000 new refs, with / without bsi's hooks" - \
    "$DROP_REFS" "git fetch -q origin" "$NOHOOKS fetch -q origin"
figure "git reset --soft HEAD~1, with / without" - \
    "$RESET_BASE" "git reset -q --soft HEAD~1" "$NOHOOKS reset -q --soft HEAD~1"
figure "git commit of one staged file, with / without" 1.5 \
    "$STAGE_ONE" "git commit -q -m x" "$NOHOOKS commit -q -m x"
figure "git commit of one staged file, hooks that are only exit 0 / without" - \
    "$STAGE_ONE" "$FLOOR commit -q -m x" "$NOHOOKS commit -q -m x"
figure "git commit of one staged file, bsi's four hooks / its two hooks of before" - \
    "$STAGE_ONE" "git commit -q -m x" "$TWOHOOKS commit -q -m x"
figure "git cherry-pick of one commit, with / without" - \
    "$RESET_BASE" "git cherry-pick $PICK" "$NOHOOKS cherry-pick $PICK"
figure "git pull --rebase of 20 own commits, with / without" 2 \
    "$RESET_TWENTY" "git pull -q --rebase origin main" "$NOHOOKS pull -q --rebase origin main"
figure "git pull --rebase of 20 own commits, hooks that are only exit 0 / without" - \
    "$RESET_TWENTY" "$FLOOR pull -q --rebase origin main" "$NOHOOKS pull -q --rebase origin main"
figure "git commit, fresh view on a local remote: nothing new / no remote registry branch" - \
    "$STAGE_ONE && $VIEW_FRESH" "git commit -q -m x" "git commit -q -m x" "$STAGE_ONE && $VIEW_NONE"
figure "git commit, fresh view on a local remote: a claim to fetch / no remote registry branch" - \
    "$STAGE_ONE && $VIEW_BEHIND" "git commit -q -m x" "git commit -q -m x" "$STAGE_ONE && $VIEW_NONE"
git remote set-url origin "$SLOW_URL"
figure "git commit, fresh view over 30 ms each way: nothing new / no remote registry branch" - \
    "$STAGE_ONE && $VIEW_FRESH" "git commit -q -m x" "git commit -q -m x" "$STAGE_ONE && $VIEW_NONE"
figure "git commit, fresh view over 30 ms each way: a claim to fetch / no remote registry branch" - \
    "$STAGE_ONE && $VIEW_BEHIND" "git commit -q -m x" "git commit -q -m x" "$STAGE_ONE && $VIEW_NONE"
git remote set-url origin "$LOCAL_URL"
$NOHOOKS update-ref $TRACKING "$REG"
figure "bsi hook pre-commit, 100 staged files / git diff --cached --name-only" 2.5 \
    "$STAGE_100" "$BSI hook pre-commit" "git diff --cached --name-only"

# ---------------------------------------------------------------- report

FAILED=0
echo
echo "bsi $("$BSI" --version | awk '{ print $2 }'), git $(git --version | awk '{ print $3 }') — $MODE run, $ROUNDS round(s) of $RUNS runs, $(nproc) cores"
printf '| %s | %s | %s | %s | %s | %s |\n' figure "median ratio" min–max "last round (ms)" target result
printf '|---|---|---|---|---|---|\n'
while IFS=$'\t' read -r name target ma mb ratios; do
    read -r med lo hi < <(tr ' ' '\n' <<<"$ratios" | sort -g | awk '
        { v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }')
    if [[ $target == - ]]; then
        result=info
    elif awk -v m="$med" -v t="$target" 'BEGIN { exit !(m <= t) }'; then
        result=pass
    else
        result=FAIL
        FAILED=1
    fi
    printf '| %s | %.2f× | %.2f–%.2f | %s / %s | %s | %s |\n' "$name" "$med" "$lo" "$hi" "$ma" "$mb" "${target/#-/—}" "$result"
done <"$RESULTS"
# What each command starts, counted once (strace -f, every execve): the
# hook scripts git runs, and bsi.
if command -v strace >/dev/null && [[ -z ${BENCH_ONLY:-} ]]; then
    echo
    printf '| %s | %s | %s |\n' command "hook scripts started" "bsi started"
    printf '|---|---|---|\n'
    starts() {
        bash -c "$2"
        strace -f -qq -e trace=execve -o "$WORK/execve.log" bash -c "$3" >/dev/null 2>&1 || true
        printf '| %s | %s | %s |\n' "$1" \
            "$(grep -c 'execve("[^"]*/hooks/' "$WORK/execve.log" || true)" \
            "$(grep -c "execve(\"$BSI\"" "$WORK/execve.log" || true)"
    }
    starts "git fetch of 1,000 new refs" "$DROP_REFS" "git fetch -q origin"
    starts "git reset --soft HEAD~1" "$RESET_BASE" "git reset -q --soft HEAD~1"
    starts "git commit of one staged file" "$STAGE_ONE" "git commit -q -m x"
    starts "git cherry-pick of one commit" "$RESET_BASE" "git cherry-pick $PICK"
    starts "git pull --rebase of 20 own commits" "$RESET_TWENTY" "git pull -q --rebase origin main"
fi
if [[ $MODE == smoke ]]; then
    echo
    echo "smoke run: every step worked; timings are not judged"
    exit 0
fi
exit "$FAILED"
