#!/usr/bin/env bash
# The benchmark suite: bsi against what people do by hand, side by side in one
# run. Every figure is a ratio of medians measured in the same run (absolute
# times on a shared machine are noise), repeated in several rounds; the table
# shows the median of the rounds and their min–max. Exits 1 when a target is
# missed (not in --smoke mode, which only checks that every step works).
#
#   bench/run.sh            full run (a few minutes on 2 cores)
#   bench/run.sh --smoke    a few runs of each figure; timings are not judged
#   BENCH_KEEP=1 bench/run.sh   keeps the fixture repositories, for profiling
#
# See docs/performance.md for the figures and the cost model.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
bench_mode 12 "$@"

if [[ $MODE == smoke ]]; then
    ROUNDS=1 RUNS=3 WARMUP=1 MEM_RUNS=1
else
    ROUNDS=${BENCH_ROUNDS:-5} RUNS=${BENCH_RUNS:-20} WARMUP=3 MEM_RUNS=5
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Tools: hyperfine and GNU time from the distribution's packages.
missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
[[ -x /usr/bin/time ]] || missing+=(time)
command -v git >/dev/null || missing+=(git)
if ((${#missing[@]})); then
    bench_install "${missing[@]}"
fi

echo "bench: building the release binary" >&2
(cd "$ROOT" && cargo build --release --quiet)
BSI="${CARGO_TARGET_DIR:-$ROOT/target}/release/bsi"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsi-bench.XXXXXX")
if [[ -n ${BENCH_KEEP:-} ]]; then
    echo "bench: keeping the fixtures in $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi

# A world of our own: no user or system git configuration, a fixed clock
# (the fixture's claims never expire during the run), a fixed agent.
USER_HOME=$HOME # the toolchain lives there; bench/scale.sh builds with it
export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 BSI_AGENT=bench
export BSI_NOW=2026-03-14T09:30:00+00:00
unset BSI_SESSION BSI_REGISTRY BSI_REMOTE GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main
git config --global commit.gpgsign false
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid

# ---------------------------------------------------------------- fixtures

ROW_OPEN='| sess-bench-open | d17/f00.md | file | bench | 2026-03-14 09:30 +00:00 | 2026-03-14 11:30 +00:00 |  |'

# The registry: 50 active claims (file, section and directory claims of
# other sessions, and three of the committer `sess-bench-me`), an empty
# stale table and $1 history rows.
registry() {
    local hist=$1
    cat <<'EOF'
# BRAIN-INDEX

Registry of the sessions working in this brain, kept by `bsi`.
Do not edit by hand: use `bsi open`, `bsi close`, `bsi watchdog`, `bsi release`.

## Claims actifs

| Session | Scope | Niveau | Agent | Ouvert le | Expire le | Note |
|---------|-------|--------|-------|-----------|-----------|------|
EOF
    awk 'BEGIN {
        t = "| bench | 2026-03-14 09:00 +00:00 | 2026-03-14 17:00 +00:00 |"
        n = 0
        for (i = 0; i < 30; i++)
            printf "| sess-bench-%04d | d%02d/f%02d.md | file %s note %d |\n", n++, int(i / 10), i % 10, t, i
        for (i = 0; i < 12; i++)
            printf "| sess-bench-%04d | d05/f%02d.md#Intro | section %s |\n", n++, i, t
        for (i = 10; i < 15; i++)
            printf "| sess-bench-%04d | d%02d/ | dir %s |\n", n++, i, t
        printf "| sess-bench-me | d15/ | dir %s |\n", t
        printf "| sess-bench-me | d16/ | dir %s |\n", t
        printf "| sess-bench-me | d05/f00.md#Body | section %s |\n", t
    }'
    cat <<'EOF'

## Claims stale — contrôle requis

| Session | Scope | Niveau | Agent | Ouvert le | Expire le | Raison probable | Note |
|---------|-------|--------|-------|-----------|-----------|-----------------|------|

## Historique

| Session | Scope | Niveau | Agent | Ouvert | Fermé | Statut | Note |
|---------|-------|--------|-------|--------|-------|--------|------|
EOF
    awk -v n="$hist" 'BEGIN {
        for (i = 0; i < n; i++)
            printf "| sess-2025%04d-0900-h%03d | d%02d/f%02d.md | file | agent-%d | 2025-06-01 09:00 +00:00 | 2025-06-01 10:%02d +00:00 | completed | done %d |\n", i % 10000, i % 1000, (i / 50) % 20, i % 50, i % 7, i % 60, i
    }'
}

# A brain: 1,000 tracked markdown files in 20 directories, committed on
# main, and the registry with $2 history rows on its branch brain-index. With
# $3 = tracked, the registry is a tracked file of main instead: the layout
# the hand-written claim works on.
make_brain() {
    local dir=$1 hist=$2 layout=${3:-branch}
    mkdir -p "$dir"
    (
        cd "$dir"
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
        if [[ $layout == tracked ]]; then
            registry "$hist" >BRAIN-INDEX.md
        fi
        git add -A
        git commit -q -m "fixture: 1,000 files"
        if [[ $layout == branch ]]; then
            blob=$(registry "$hist" | git hash-object -w --stdin)
            tree=$(printf '100644 blob %s\tBRAIN-INDEX.md\n' "$blob" | git mktree)
            git update-ref refs/heads/brain-index "$(git commit-tree "$tree" -m "fixture: $hist history rows")"
        fi
    )
}

say() { printf 'bench: %s\n' "$*" >&2; }

say "making fixtures in $WORK"
make_brain "$WORK/b100" 100
make_brain "$WORK/b10k" 10000
make_brain "$WORK/b100k" 100000
# bsi's old brains are measured as they live: the first write has moved
# their old history rows to the archive files (the hand-written table has
# no archive, and keeps growing).
for b in b10k b100k; do
    (cd "$WORK/$b" && "$BSI" open d18/ --session sess-archive -q && "$BSI" close sess-archive -q) >/dev/null
done
make_brain "$WORK/s100" 100 tracked
make_brain "$WORK/s10k" 10000 tracked
make_brain "$WORK/s100k" 100000 tracked
cp -a "$WORK/b100" "$WORK/hook"
cp -a "$WORK/b100" "$WORK/conc"
git clone -q --bare "$WORK/b100" "$WORK/remote.git"
git clone -q "$WORK/remote.git" "$WORK/rclone"
git -C "$WORK/rclone" config receive.denyCurrentBranch ignore

# The hook fixture: 100 staged files (49 in d15/, 50 in d16/, all claimed by
# the committer, and one file whose other section is claimed by others).
(
    cd "$WORK/hook"
    for f in d15/f{01..49}.md d16/f{00..49}.md; do echo "changed" >>"$f"; done
    sed -i 's/^More text$/More text, edited/' d05/f00.md
    git add -A
    [[ $(git diff --cached --name-only | wc -l) -eq 100 ]]
)

# ---------------------------------------------------------------- measuring

RESULTS="$WORK/results"
: >"$RESULTS"
FAILED=0

# hyperfine in directory $1 over the commands after `--`; prints the median
# of each command, in seconds, one a line.
medians() {
    local dir=$1 prepare=$2
    shift 2
    local csv="$WORK/round.csv" args=()
    [[ -n $prepare ]] && args+=(--prepare "$prepare")
    (cd "$dir" && hyperfine --shell bash --style none --warmup "$WARMUP" --runs "$RUNS" \
        "${args[@]}" --export-csv "$csv" "$@" >/dev/null 2>"$WORK/hyperfine.log") || {
        cat "$WORK/hyperfine.log" >&2
        return 1
    }
    awk -F, 'NR > 1 { print $4 }' "$csv"
}

# Records one figure: name, target, and one ratio per round.
record() {
    local name=$1 target=$2
    shift 2
    printf '%s\t%s\t%s\n' "$name" "$target" "$*" >>"$RESULTS"
}

# A figure: $1 name, $2 target, $3 directory, $4 prepare, $5 bsi command,
# $6 the command it is compared with. The ratio is median($5) / median($6).
figure() {
    local name=$1 target=$2 dir=$3 prepare=$4 a=$5 b=$6 ratios=() r m
    say "$name"
    for ((r = 0; r < ROUNDS; r++)); do
        mapfile -t m < <(medians "$dir" "$prepare" "$a" "$b")
        ((${#m[@]} == 2)) || exit 1
        ratios+=("$(awk -v a="${m[0]}" -v b="${m[1]}" 'BEGIN { printf "%.3f", a / b }')")
    done
    record "$name" "$target" "${ratios[@]}"
}

# Like figure, but each side in its own directory with its own prepare:
# $3/$4 directory and prepare of the bsi side, $5/$6 of the other, $7 and
# $8 the commands. hyperfine times one side, then the other, in each round.
figure2() {
    local name=$1 target=$2 da=$3 pa=$4 db=$5 pb=$6 a=$7 b=$8 ratios=() r ma mb
    say "$name"
    for ((r = 0; r < ROUNDS; r++)); do
        ma=$(medians "$da" "$pa" "$a")
        mb=$(medians "$db" "$pb" "$b")
        ratios+=("$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", a / b }')")
    done
    record "$name" "$target" "${ratios[@]}"
}

REG100=$(git -C "$WORK/b100" rev-parse brain-index)
REG10K=$(git -C "$WORK/b10k" rev-parse brain-index)
REG100K=$(git -C "$WORK/b100k" rev-parse brain-index)
SBASE100=$(git -C "$WORK/s100" rev-parse HEAD)
SBASE10K=$(git -C "$WORK/s10k" rev-parse HEAD)
SBASE100K=$(git -C "$WORK/s100k" rev-parse HEAD)
RBASE=$(git -C "$WORK/rclone" rev-parse HEAD)
RREG=$(git -C "$WORK/rclone" rev-parse origin/brain-index)

# Each run writes a registry never seen before (a note with bash's clock, no
# extra process), as a real open does: otherwise the blob of the previous run
# is already in the object database, and neither side compresses anything.
OPEN="$BSI open d17/f00.md --session sess-bench-open -q --note n\$EPOCHREALTIME"
SHELL_OPEN="printf '%s\n' \"${ROW_OPEN% |  |} | n\$EPOCHREALTIME |\" >>BRAIN-INDEX.md && git add BRAIN-INDEX.md && git commit -q -m 'open d17/f00.md'"
# bsi's side starts each run from the fixture's registry branch; the shell's
# from the fixture's commit of the tracked registry.
RESET100="git update-ref refs/heads/brain-index $REG100"
RESET10K="git update-ref refs/heads/brain-index $REG10K"
RESET100K="git update-ref refs/heads/brain-index $REG100K"
SRESET100="git reset -q --hard $SBASE100"
SRESET10K="git reset -q --hard $SBASE10K"
SRESET100K="git reset -q --hard $SBASE100K"

# Each command is checked once before it is timed.
check() {
    local dir=$1 prepare=$2 cmd=$3
    (cd "$dir" && bash -c "$prepare" && bash -c "$cmd" >/dev/null) || {
        echo "bench: this step failed in $dir: $cmd" >&2
        exit 1
    }
}
check "$WORK/b100" "$RESET100" "$OPEN"
check "$WORK/s100" "$SRESET100" "$SHELL_OPEN"
[[ -z $(git -C "$WORK/b100" status --porcelain) ]] || {
    echo "bench: bsi open changed the work tree" >&2
    exit 1
}
(cd "$WORK/b100" && $RESET100)

figure2 "bsi open + commit, 100 history rows, 1,000 files / shell append+add+commit" 0.35 \
    "$WORK/b100" "$RESET100" "$WORK/s100" "$SRESET100" "$OPEN" "$SHELL_OPEN"
figure2 "bsi open + commit, 100 history rows / git commit --allow-empty" 1.0 \
    "$WORK/b100" "$RESET100" "$WORK/s100" "$SRESET100" "$OPEN" "git commit --allow-empty -q -m x"
figure2 "bsi open, 10,000 history rows / shell append+add+commit" - \
    "$WORK/b10k" "$RESET10K" "$WORK/s10k" "$SRESET10K" "$OPEN" "$SHELL_OPEN"
figure2 "bsi open, 100,000 history rows / shell append+add+commit" 1.0 \
    "$WORK/b100k" "$RESET100K" "$WORK/s100k" "$SRESET100K" "$OPEN" "$SHELL_OPEN"
(cd "$WORK/b100k" && $RESET100K)

HOOK="BSI_SESSION=sess-bench-me $BSI hook pre-commit"
check "$WORK/hook" "" "$HOOK"
figure "bsi hook pre-commit, 100 staged files, 50 claims / git diff --cached --name-only" 2.5 \
    "$WORK/hook" "" "$HOOK" "git diff --cached --name-only"

# One pre-edit event of Claude Code (an Edit inside the session's own
# section of a file whose other section others hold) against 50 claims and
# 10,000 history rows: the edit hook reads the registry, never writes.
(cd "$WORK/b10k" && $RESET10K)
printf '{"session_id":"bench","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/d05/f00.md","old_string":"More text\\n","new_string":"More text, edited\\n"}}\n' \
    "$WORK/b10k" "$WORK/b10k" >"$WORK/edit.json"
EDIT="BSI_SESSION=sess-bench-me $BSI hook edit --tool claude <$WORK/edit.json"
[[ -z $(cd "$WORK/b10k" && bash -c "$EDIT" 2>&1) && $(git -C "$WORK/b10k" rev-parse brain-index) == "$REG10K" ]] || {
    echo "bench: the edit hook did not let the edit through untouched" >&2
    exit 1
}
figure "bsi hook edit (a Claude Edit event), 50 claims, 10,000 history rows / git rev-parse HEAD" 1.5 \
    "$WORK/b10k" "" "$EDIT" "git rev-parse HEAD"

STATUS="$BSI status --json"
check "$WORK/b100k" "" "$STATUS"
figure2 "bsi status --json, 100,000 history rows / cat piped to wc -l" 3.0 \
    "$WORK/b100k" "" "$WORK/s100k" "" "$STATUS >/dev/null" "cat BRAIN-INDEX.md | wc -l"

# Sixteen sessions opening distinct scopes at once, against sixteen times one
# open run alone: the lock serialises them, nothing should pile up beyond that.
CONC='pids=(); for i in $(seq -w 0 15); do '"$BSI"' open d17/f$i.md --session sess-bench-c$i -q & pids+=($!); done; for p in "${pids[@]}"; do wait $p || exit 1; done'
RESETC="git -C $WORK/conc update-ref refs/heads/brain-index $REG100"
check "$WORK/conc" "$RESETC" "$CONC"
[[ $(git -C "$WORK/conc" show brain-index:BRAIN-INDEX.md | grep -c '^| sess-bench-c') -eq 16 ]] || {
    echo "bench: the concurrent opens did not all land" >&2
    exit 1
}
say "16 concurrent bsi open"
ratios=()
for ((r = 0; r < ROUNDS; r++)); do
    mapfile -t m < <(medians "$WORK/conc" "$RESETC" "$CONC" "$OPEN")
    ((${#m[@]} == 2)) || exit 1
    ratios+=("$(awk -v a="${m[0]}" -v b="${m[1]}" 'BEGIN { printf "%.3f", a / (16 * b) }')")
done
record "16 concurrent bsi open, wall / 16 x one bsi open" 1.2 "${ratios[@]}"

# Through a remote: a local bare repository, the clone's branch tracking it.
RRESET="git -C $WORK/remote.git update-ref refs/heads/brain-index $RREG && git -C $WORK/remote.git update-ref refs/heads/main $RBASE && git reset -q --hard $RBASE && git update-ref refs/remotes/origin/main $RBASE && git update-ref refs/remotes/origin/brain-index $RREG && git update-ref refs/heads/brain-index $RREG && git for-each-ref --format='delete %(refname)' refs/bsi/seen/ | git update-ref --stdin"
ROPEN="$BSI open d17/f00.md --session sess-bench-remote -q"
BYHAND="git fetch -q origin && git commit --allow-empty -q -m x && git push -q origin HEAD:main"
check "$WORK/rclone" "$RRESET" "$ROPEN"
[[ $(git -C "$WORK/remote.git" show brain-index:BRAIN-INDEX.md | grep -c sess-bench-remote) -eq 1 ]] || {
    echo "bench: bsi open did not publish to the remote" >&2
    exit 1
}
check "$WORK/rclone" "$RRESET" "$BYHAND"
figure "bsi open through a remote / git fetch + commit + git push" 1.3 \
    "$WORK/rclone" "$RRESET" "$ROPEN" "$BYHAND"

# Peak memory of one open at 100,000 rows, against 3 x the file + 10 MiB.
say "peak memory"
size=$(git -C "$WORK/b100k" cat-file -s brain-index:BRAIN-INDEX.md)
ratios=()
for ((r = 0; r < MEM_RUNS; r++)); do
    (cd "$WORK/b100k" && $RESET100K)
    kib=$(cd "$WORK/b100k" && /usr/bin/time -f %M $OPEN 2>&1 >/dev/null | tail -1)
    ratios+=("$(awk -v k="$kib" -v s="$size" 'BEGIN { printf "%.3f", k * 1024 / (3 * s + 10 * 1048576) }')")
    PEAK_KIB=$kib
done
record "peak memory, bsi open at 100,000 rows / (3 x file + 10 MiB)" 1.0 "${ratios[@]}"

# ---------------------------------------------------------------- report

echo
echo "bsi $("$BSI" --version | awk '{ print $2 }') — $MODE run, $ROUNDS round(s) of $RUNS runs, $(nproc) cores"
printf 'brain with 100,000 history rows: BRAIN-INDEX.md is %.2f MiB (the rest is archived); last peak RSS of bsi open there: %.1f MiB\n\n' \
    "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" "$(awk -v k="$PEAK_KIB" 'BEGIN { print k / 1024 }')"
printf '| %s | %s | %s | %s | %s |\n' figure median min–max target result
printf '|---|---|---|---|---|\n'
while IFS=$'\t' read -r name target ratios; do
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
    printf '| %s | %.2f× | %.2f–%.2f | ≤ %s | %s |\n' "$name" "$med" "$lo" "$hi" "$target" "$result"
done <"$RESULTS"

# Many machines at once, a slow link, an old brain: see bench/scale.sh.
echo
if [[ $MODE == smoke ]]; then
    HOME=$USER_HOME "$ROOT/bench/scale.sh" --smoke || FAILED=1
    echo
    echo "smoke run: every step worked; timings are not judged"
    exit "$FAILED"
fi
HOME=$USER_HOME "$ROOT/bench/scale.sh" || FAILED=1
exit "$FAILED"
