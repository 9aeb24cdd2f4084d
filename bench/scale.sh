#!/usr/bin/env bash
# The scale benchmark: many writers claiming at the same instant — N sessions
# in one clone (they share the writer lock, and its holder publishes every
# waiting request with one push), N clones of one bare remote (they race one
# ref), N clones over a slow link (30 ms each way) and over a far one (250
# ms each way, where the link and not the machine's CPU is the bound: what
# the protocol alone costs); the cost of one open over the slow link
# against the hand-written fetch + commit + push; and the cost of a write in
# an old brain (100,000 history rows) against a young one (100 rows).
#
#   bench/scale.sh            full run: N = 5, 20, 64 in one clone and in as
#                             many clones, 8 and 20 over the slow link, 20
#                             over the far one
#   bench/scale.sh --smoke    N = 2, 8 in one clone and in clones, 8 over
#                             each link, a few timing runs; success is
#                             judged, timings are not
#
# Each burst reports its latencies from the instant all are let go to each
# writer's end (p50, p95), and how many writes each push carried. A full
# run lets each local burst go five times and sets the median of their p95
# against the median of one write alone timed after each of those bursts:
# the machine's speed wanders within a run, and one burst of 20 is one
# sample of its slowest writers. Over a link, each writer of a burst (and
# the write alone) goes through a port of its own, where the proxy counts
# its exchanges (connections: a fetch, a push) and the requests inside
# them — each a round trip over the link — and each writer's CPU (its own
# and its children's, from `times`) and the remote's (git daemon's
# children) are taken: a full run requires every writer of the 20 over the
# slow link within 4 exchanges and their p95 within 3× one write alone
# over the link. The links are a userspace proxy
# (examples/delay_proxy.rs) in front of `git daemon`, both on
# loopback inside a network namespace of the run's own (`unshare --net`) when
# the system allows it, else on the host's loopback. Nothing leaves the
# machine. Exits 1 when a target is missed (full run) or a claim is lost or
# refused (any run).
set -euo pipefail

MODE=full
INNER=
for a in "$@"; do
    case "$a" in
    --smoke) MODE=smoke ;;
    --in-namespace) INNER=1 ;;
    -h | --help)
        sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/scale.sh [--smoke]" >&2
        exit 2
        ;;
    esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'scale: %s\n' "$*" >&2; }
# The time in microseconds, from the shell's own clock (no process started).
now_us() { echo "${EPOCHREALTIME/[.,]/}"; }

if [[ -z $INNER ]]; then
    say "building the release binary and the delay proxy"
    (cd "$ROOT" && cargo build --release --quiet && cargo build --release --quiet --example delay_proxy)
    # A network namespace of our own: loopback only, nothing else reachable.
    if command -v unshare >/dev/null && unshare --net true 2>/dev/null; then
        exec unshare --net -- bash -c 'ip link set lo up 2>/dev/null || true; exec "$0" "$@" --in-namespace' "$0" "$@"
    fi
    say "no network namespace here: using the host's loopback"
fi

BSI="${CARGO_TARGET_DIR:-$ROOT/target}/release/bsi"
PROXY="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/delay_proxy"
if [[ $MODE == smoke ]]; then
    ONE_NS=(2 8) LOCAL_NS=(2 8) SLOW_NS=(8) FAR_NS=(8) RUNS=3 BURSTS=1
else
    ONE_NS=(5 20 64) LOCAL_NS=(5 20 64) SLOW_NS=(8 20) FAR_NS=(20) RUNS=15 BURSTS=5
fi
DELAY_MS=30
# The far link: one where the link, not the machine's CPU, is the bound — a
# round trip (500 ms) is many times the CPU of all the git processes of a
# burst at once — so what a burst costs there against one write alone over
# it is what the protocol alone costs.
FAR_MS=250

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsi-scale.XXXXXX")
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

# ---------------------------------------------------------------- fixtures

# The origin brain: 64 directories, a registry with 100 history rows.
say "making fixtures in $WORK"
mkdir -p "$WORK/origin" "$WORK/srv"
(
    cd "$WORK/origin"
    git init -q
    for d in $(seq -w 0 63); do
        mkdir -p "d$d"
        printf '# D%s\n\n## Notes\n\ntext\n' "$d" >"d$d/notes.md"
    done
    git add -A
    git commit -q -m "fixture"
    "$BSI" init -q >/dev/null
    for i in $(seq -w 1 100); do
        "$BSI" open "d00/notes.md" --session "sess-old-$i" -q >/dev/null
        "$BSI" close "sess-old-$i" -q >/dev/null
    done
)
# Packed, as a brain that lives on a server is (a clone of a local path
# would otherwise copy the fixture's loose objects one by one).
git -C "$WORK/origin" gc -q
git clone -q --bare "$WORK/origin" "$WORK/srv/brain.git"
BASE=$(git -C "$WORK/srv/brain.git" rev-parse brain-index)

# git daemon on loopback, started as itself (not through `git`, which would
# wait for it): the CPU of the connections it served, which it reaps, is
# read from its own process. The slow link in front of it.
PORT=$((20000 + RANDOM % 20000))
SLOW=$((PORT + 1))
"$(git --exec-path)/git-daemon" --reuseaddr --export-all --enable=receive-pack --max-connections=256 --base-path="$WORK/srv" \
    --listen=127.0.0.1 --port="$PORT" "$WORK/srv" 2>"$WORK/daemon.log" &
PIDS+=($!)
"$PROXY" "127.0.0.1:$SLOW" "127.0.0.1:$PORT" "$DELAY_MS" 2>"$WORK/proxy.log" &
PIDS+=($!)
# The same link with a port of its own for each writer over it (WPORT + i
# for the clone slow-i), counting each connection's requests — each one
# round trip over the link — in $COUNTS when it ends: what each writer
# cost in round trips.
WPORT=$((SLOW + 1))
COUNTS="$WORK/link-requests"
: >"$COUNTS"
"$PROXY" "127.0.0.1:$WPORT-$((WPORT + 63))" "127.0.0.1:$PORT" "$DELAY_MS" "$COUNTS" 2>"$WORK/proxy-writers.log" &
PIDS+=($!)
# The far link, the same way: one port for its clones to be made through,
# and one per writer, counted.
FAR=$((WPORT + 64))
"$PROXY" "127.0.0.1:$FAR" "127.0.0.1:$PORT" "$FAR_MS" 2>"$WORK/proxy-far.log" &
PIDS+=($!)
FPORT=$((FAR + 1))
"$PROXY" "127.0.0.1:$FPORT-$((FPORT + 63))" "127.0.0.1:$PORT" "$FAR_MS" "$COUNTS" 2>"$WORK/proxy-far-writers.log" &
PIDS+=($!)
DAEMON=${PIDS[0]}
for _ in $(seq 1 100); do
    git ls-remote "git://127.0.0.1:$SLOW/brain.git" >/dev/null 2>&1 && break
    sleep 0.1
done
git ls-remote "git://127.0.0.1:$SLOW/brain.git" >/dev/null

# N clones of the remote at URL, named $2-0 … $2-(N-1), each where bsi
# has run once (as the clone of one write alone is when it is timed).
clones() {
    local url=$1 prefix=$2 n=$3 i made=
    for ((i = 0; i < n; i++)); do
        [[ -d "$WORK/$prefix-$i" ]] && continue
        git clone -q "$url" "$WORK/$prefix-$i"
        (cd "$WORK/$prefix-$i" && "$BSI" status >/dev/null)
        made=1
    done
    # What the clones wrote reaches the disk before anything is timed, so
    # the bursts do not share it with the writeback of the fixtures.
    [[ -z $made ]] || sync
}

# A clone's memory of the registry tips it saw, forgotten: put back to the
# base registry, the remote would else read as a registry moved back, whose
# dropped claims bsi keeps (a hand rollback never frees a claim).
FORGET_SEEN="git for-each-ref --format='delete %(refname)' refs/bsi/seen/ | git update-ref --stdin"

# Whether the clones named $1-… reach the remote over a link (the 30 ms
# one: slow; the far one: far), and the first of their counted ports.
linked() { [[ $1 == slow || $1 == far ]]; }
ports_of() { if [[ $1 == far ]]; then echo "$FPORT"; else echo "$WPORT"; fi; }

# The requests each of the writers 0…$1-1 made through its port of the
# link (the first port $2) since $COUNTS was emptied — each a round trip
# over the link: one line each, in order. With $3 = exchanges, the
# connections each made instead: a fetch, a push, a look at the remote's
# references, each one exchange of 2 or 3 round trips.
requests_per_writer() {
    local n=$1 first=$2 what=${3:-requests} i
    for ((i = 0; i < n; i++)); do
        awk -v p="$((first + i))" -v w="$what" '$1 == p { r += (w == "exchanges" ? 1 : $2) } END { print r + 0 }' "$COUNTS"
    done
}

# The CPU in ms the remote spent serving since git daemon started: what its
# children (each connection's upload-pack or receive-pack, and what they
# start) used, counted as the daemon reaps them.
remote_cpu_ms() {
    local stat
    stat=$(cat "/proc/$DAEMON/stat" 2>/dev/null) || {
        echo 0
        return
    }
    # The fields after the command's name: cutime and cstime are 14 and 15.
    echo "${stat##*) }" | awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($14 + $15) * 1000 / hz }'
}

# The CPU in ms of a writer and its children, from what `times` printed
# (its second line: the children's user and system time, as 0m0.012s).
cpu_ms() {
    awk 'NR == 2 {
        t = 0
        for (f = 1; f <= 2; f++) { split($f, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
        printf "%d\n", t * 1000 + 0.5
    }' "$1"
}

# Every clone and the remote back at the base registry.
reset_all() {
    local prefix=$1 n=$2 i
    git -C "$WORK/srv/brain.git" update-ref refs/heads/brain-index "$BASE"
    # No write request left posted by the last burst.
    git -C "$WORK/srv/brain.git" for-each-ref --format='delete %(refname)' refs/bsi/ |
        git -C "$WORK/srv/brain.git" update-ref --stdin
    for ((i = 0; i < n; i++)); do
        git -C "$WORK/$prefix-$i" update-ref refs/remotes/origin/brain-index "$BASE"
        git -C "$WORK/$prefix-$i" update-ref -d refs/heads/brain-index 2>/dev/null || true
        # The tips it saw forgotten too: else the base registry reads as a
        # registry moved back, whose dropped claims bsi keeps.
        git -C "$WORK/$prefix-$i" for-each-ref --format='delete %(refname)' refs/bsi/seen/ |
            git -C "$WORK/$prefix-$i" update-ref --stdin
    done
}

RESULTS="$WORK/results"
: >"$RESULTS"
FAILED=0
record() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"; }

# One write alone, locally: an open in the clone $WORK/one-0 of the local
# bare remote, everything reset first; its time in ms is added to
# $WORK/alone-ms. Timed between the bursts as well as after them, so the
# bursts' p95 is set against one write alone at the same moment of a machine
# whose speed wanders.
ALONE_MS="$WORK/alone-ms"
: >"$ALONE_MS"
time_alone() {
    local t0 t1
    (
        cd "$WORK/one-0" &&
            git -C "$WORK/srv/brain.git" update-ref refs/heads/brain-index "$BASE" &&
            git update-ref refs/remotes/origin/brain-index "$BASE" &&
            (git update-ref -d refs/heads/brain-index 2>/dev/null || true) &&
            eval "$FORGET_SEEN"
    ) >/dev/null 2>&1
    # What a burst left running (a push's detached maintenance) ends first.
    sleep 0.2
    t0=$(now_us)
    (cd "$WORK/one-0" && "$BSI" open d63/ --session sess-alone -q) >/dev/null 2>&1 || {
        echo "scale: one open alone failed in $WORK/one-0" >&2
        exit 1
    }
    t1=$(now_us)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 1000 }' | tee -a "$ALONE_MS" >>"${1:-/dev/null}"
}

# N writers open distinct scopes at the same instant: each waits on a shared
# lock the script holds, then all are let go together. With SAME=1 they are N
# sessions of the one clone $prefix-0, else one in each of N clones. A local
# race is run $BURSTS times, each burst followed by one write alone
# (time_alone); one over the slow link once. Records the median of the
# bursts' p95 latencies in $WORK/p95-$prefix-$n (ms), and the median of the
# writes alone timed between them in $WORK/alone-$prefix-$n.
race() {
    local label=$1 url=$2 prefix=$3 n=$4 i b
    local same=${SAME:-}
    local bursts=$BURSTS
    linked "$prefix" && bursts=1
    if [[ -n $same ]]; then clones "$url" "$prefix" 1; else clones "$url" "$prefix" "$n"; fi
    # Over the link, each writer through a port of its own: its requests
    # are counted apart.
    local first
    first=$(ports_of "$prefix")
    if linked "$prefix"; then
        for ((i = 0; i < n; i++)); do
            git -C "$WORK/$prefix-$i" remote set-url origin "git://127.0.0.1:$((first + i))/brain.git"
        done
    fi
    say "$label: $n simultaneous opens, $bursts burst(s)"
    local p50s=() p95s=() pushes=() lost=0 busy=0 ok_all=1 walls=()
    local alone_here="$WORK/alone-times-$prefix-$n"
    : >"$alone_here"
    for ((b = 0; b < bursts; b++)); do
        if [[ -n $same ]]; then reset_all "$prefix" 1; else reset_all "$prefix" "$n"; fi
        local gate="$WORK/gate" out="$WORK/race-$prefix-$n"
        rm -rf "$out" "$gate" && mkdir -p "$out" && mkfifo "$gate"
        # The gate is a named pipe: each writer's shell waits in its open,
        # and all go at once when the script opens it for writing and
        # closes it. Nothing but bsi is started from the gate to each
        # writer's end (the clock is the shell's own), so the latencies are
        # bsi's.
        local pids=()
        for ((i = 0; i < n; i++)); do
            (
                if [[ -n $same ]]; then cd "$WORK/$prefix-0"; else cd "$WORK/$prefix-$i"; fi
                read -r _ <"$gate" || true
                set +e
                "$BSI" -v open "d$(printf %02d "$i")/" --session "sess-race-$i" >/dev/null 2>"$out/$i.err"
                echo $? >"$out/$i.rc"
                now_us >"$out/$i.end"
                # The CPU of the writer and every process it started
                # (user and system), after its end was taken.
                times >"$out/$i.cpu"
            ) &
            pids+=($!)
        done
        sleep 1
        : >"$COUNTS"
        local t0 t1 remote0
        remote0=$(remote_cpu_ms)
        t0=$(now_us)
        : >"$gate"
        for p in "${pids[@]}"; do wait "$p" || true; done
        t1=$(now_us)
        local ok=0 pushed=0
        for ((i = 0; i < n; i++)); do
            case $(cat "$out/$i.rc") in
            0) ok=$((ok + 1)) ;;
            8) busy=$((busy + 1)) ;;
            esac
            lost=$((lost + $(grep -c 'lost a race' "$out/$i.err" || true)))
            pushed=$((pushed + $(grep -c '^bsi: published ' "$out/$i.err" || true)))
        done
        # Round trips and CPU of each writer, over the link.
        if linked "$prefix"; then
            sleep 0.3
            local rts xs cpus
            rts=$(requests_per_writer "$n" "$first" | sort -n | tr '\n' ' ')
            xs=$(requests_per_writer "$n" "$first" exchanges | sort -n | tr '\n' ' ')
            cpus=$(for ((i = 0; i < n; i++)); do cpu_ms "$out/$i.cpu"; done | sort -n | tr '\n' ' ')
            echo "$rts" >"$WORK/rt-$prefix-$n"
            echo "$xs" >"$WORK/x-$prefix-$n"
            echo "$cpus" >"$WORK/cpu-$prefix-$n"
            echo $(($(remote_cpu_ms) - remote0)) >"$WORK/remote-cpu-$prefix-$n"
        fi
        local rows merges
        rows=$(git -C "$WORK/srv/brain.git" show brain-index:BRAIN-INDEX.md | grep -c '^| sess-race-' || true)
        merges=$(git -C "$WORK/srv/brain.git" rev-list --merges --count brain-index)
        local lat
        lat=$(for ((i = 0; i < n; i++)); do echo $((($(cat "$out/$i.end") - t0) / 1000)); done | sort -n |
            awk '{ v[NR] = $1 } END { p = int(NR * 0.95 + 0.999); if (p > NR) p = NR; printf "%d %d", v[int((NR + 1) / 2)], v[p] }')
        p50s+=("${lat% *}")
        p95s+=("${lat#* }")
        pushes+=("$pushed")
        walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')")
        if ((ok != n || rows != n || merges != 0)); then
            say "$label N=$n: $ok of $n landed, $rows rows, $merges merges"
            for ((i = 0; i < n; i++)); do
                [[ $(cat "$out/$i.rc") == 0 ]] || sed "s/^/  $i: /" "$out/$i.err" | tail -3 >&2
            done
            ok_all=0
            FAILED=1
        fi
        linked "$prefix" || time_alone "$alone_here"
    done
    median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    local p95 p50 range
    p95=$(median "${p95s[@]}")
    p50=$(median "${p50s[@]}")
    range=$(printf '%s\n' "${p95s[@]}" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d–%d", lo, hi }')
    echo "$p95" >"$WORK/p95-$prefix-$n"
    local alone_median=""
    if [[ -s $alone_here ]]; then
        alone_median=$(sort -n "$alone_here" | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }')
        echo "$alone_median" >"$WORK/alone-$prefix-$n"
        alone_median="; one write alone between the bursts $alone_median ms"
    fi
    local total_pushes=0 p
    for p in "${pushes[@]}"; do total_pushes=$((total_pushes + p)); done
    local per
    per=$(awk -v o="$((n * bursts))" -v p="$total_pushes" 'BEGIN { printf "%.1f", p ? o / p : 0 }')
    local landed="$n/$n in every burst"
    ((ok_all)) || landed="NOT ALL LANDED"
    local shape="p50 $p50 ms, p95 $p95 ms"
    ((bursts > 1)) && shape="median of $bursts bursts: p50 $p50 ms, p95 $p95 ms (p95 $range ms)"
    if [[ -s $WORK/rt-$prefix-$n ]]; then
        local rt x cpu sum
        read -ra rt <"$WORK/rt-$prefix-$n"
        read -ra x <"$WORK/x-$prefix-$n"
        read -ra cpu <"$WORK/cpu-$prefix-$n"
        sum=0
        for c in "${cpu[@]}"; do sum=$((sum + c)); done
        shape="$shape; exchanges per writer ${x[0]}–${x[${#x[@]}-1]} (all: ${x[*]}); round trips per writer ${rt[0]}–${rt[${#rt[@]}-1]} (all: ${rt[*]}); CPU per writer ${cpu[0]}–${cpu[${#cpu[@]}-1]} ms, the writers $sum ms and the remote $(cat "$WORK/remote-cpu-$prefix-$n") ms together, of the $(awk -v w="${walls[0]}" -v c="$(nproc)" 'BEGIN { printf "%d", w * c * 1000 }') ms the cores had in the burst"
    fi
    record "$label" "$n" "$landed ($busy busy), 0 merges" \
        "pushes per burst ${pushes[*]} ($lost lost races), $per writes per push; $shape; ${walls[*]} s$alone_median"
}

for n in "${ONE_NS[@]}"; do SAME=1 race "sessions of one clone, local bare remote" "$WORK/srv/brain.git" one "$n"; done
for n in "${LOCAL_NS[@]}"; do race "clones, local bare remote" "$WORK/srv/brain.git" local "$n"; done
for n in "${SLOW_NS[@]}"; do race "clones, ${DELAY_MS} ms link" "git://127.0.0.1:$SLOW/brain.git" slow "$n"; done
# The far link's clones are made over the 30 ms one (faster), then reach
# the remote through the far link's ports.
for n in "${FAR_NS[@]}"; do race "clones, ${FAR_MS} ms link (the link the bound)" "git://127.0.0.1:$SLOW/brain.git" far "$n"; done

# The median wall time, in ms, of $RUNS runs of $2 in directory $1, each
# after the preparation $3; timed as a burst's writer is (the shell's clock,
# the command run from a subshell).
median_ms() {
    local dir=$1 cmd=$2 prep=$3 i t0 t1 all=()
    for ((i = 0; i < RUNS; i++)); do
        (cd "$dir" && bash -c "$prep") >/dev/null 2>&1
        t0=$(now_us)
        (cd "$dir" && eval "$cmd") >/dev/null 2>"$WORK/step.err" || {
            cat "$WORK/step.err" >&2
            echo "scale: this step failed in $dir: $cmd" >&2
            exit 1
        }
        t1=$(now_us)
        all+=("$((t1 - t0))")
    done
    printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'
}

judge() {
    local name=$1 a=$2 b=$3 target=$4 ratio result
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    if [[ $MODE == smoke ]]; then
        result="not judged (smoke)"
    elif awk -v r="$ratio" -v t="$target" 'BEGIN { exit !(r <= t) }'; then
        result=pass
    else
        result=FAIL
        FAILED=1
    fi
    record "$name" "-" "${a} ms / ${b} ms = ${ratio}× (target ≤ ${target})" "$result"
}

# One write alone, locally, RUNS more times after the bursts; the bursts'
# p95 against the median of every time taken.
say "one open alone, local bare remote"
for ((i = 0; i < RUNS; i++)); do time_alone; done
alone=$(sort -n "$ALONE_MS" | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }')
record "one open alone, local bare remote" 1 "$(wc -l <"$ALONE_MS") runs, between the bursts and after them" "median $alone ms"
p95_of() { cat "$WORK/p95-$1-$2" 2>/dev/null || echo 0; }
# A burst against the writes alone timed between its own bursts: the same
# moments of the machine.
alone_of() { cat "$WORK/alone-$1-$2" 2>/dev/null || echo "$alone"; }
if [[ $MODE == full ]]; then
    judge "20 sessions of one clone at once, p95 / one open alone" "$(p95_of one 20)" "$(alone_of one 20)" 4
    judge "20 clones at once, p95 / one open alone" "$(p95_of local 20)" "$(alone_of local 20)" 15
else
    judge "8 sessions of one clone at once, p95 / one open alone" "$(p95_of one 8)" "$(alone_of one 8)" 4
    judge "8 clones at once, p95 / one open alone" "$(p95_of local 8)" "$(alone_of local 8)" 15
fi

# One uncontended open over the slow link, against what people write by hand.
say "one open over the ${DELAY_MS} ms link"
clones "git://127.0.0.1:$SLOW/brain.git" slow 1
ONE="$WORK/slow-0"
# The registry put back to where it started, on the remote and in the
# clone, and the clone's memory of the tips it saw forgotten with it
# (FORGET_SEEN).
RESET_ONE="git -C $WORK/srv/brain.git update-ref refs/heads/brain-index $BASE && git update-ref refs/remotes/origin/brain-index $BASE && git update-ref refs/heads/brain-index $BASE && $FORGET_SEEN && git -C $WORK/srv/brain.git update-ref refs/heads/main $(git -C "$ONE" rev-parse HEAD) && git reset -q --hard origin/main"
OPEN_ONE="$BSI open d63/ --session sess-one -q"
BYHAND="git fetch -q origin && git commit --allow-empty -q -m claim && git push -q origin HEAD:main"
a=$(median_ms "$ONE" "$OPEN_ONE" "$RESET_ONE")
b=$(median_ms "$ONE" "$BYHAND" "$RESET_ONE")
judge "bsi open over the link / fetch + commit + push by hand" "$a" "$b" 0.6

# The exchanges, round trips and CPU of one write alone over a link (the
# clone $1-0 goes through the first of that link's counted ports).
alone_counted() {
    local prefix=$1 ms=$2 first
    first=$(ports_of "$prefix")
    (cd "$WORK/$prefix-0" && bash -c "$RESET_ONE") >/dev/null 2>&1
    : >"$COUNTS"
    (cd "$WORK/$prefix-0" && eval "$OPEN_ONE" && times >"$WORK/one.cpu") >/dev/null 2>&1
    sleep 0.3
    record "one open alone over the ${ms} ms link: exchanges, round trips, CPU" "-" \
        "$(requests_per_writer 1 "$first" exchanges) exchanges, $(requests_per_writer 1 "$first") round trips, $(cpu_ms "$WORK/one.cpu") ms of CPU" "reported"
}
alone_counted slow "$DELAY_MS"
n_slow=${SLOW_NS[${#SLOW_NS[@]}-1]}
judge "$n_slow clones at once over the ${DELAY_MS} ms link, p95 / one open alone over it" "$(p95_of slow "$n_slow")" "$a" 3
# Every writer of the burst within 4 exchanges of its start (a write alone
# makes 1 or 2: a push, and a fetch first when the clone is behind). The
# round trips inside them are reported with them.
read -ra xs <"$WORK/x-slow-$n_slow"
read -ra rts <"$WORK/rt-slow-$n_slow"
x_max=${xs[${#xs[@]}-1]}
verdict="not judged (smoke)"
if [[ $MODE == full ]]; then
    verdict=pass
    ((x_max <= 4)) || verdict=FAIL
    [[ $verdict == pass ]] || FAILED=1
fi
record "$n_slow clones at once over the link: exchanges of the writer that made most" "4" "$x_max (all: ${xs[*]}; round trips inside them: ${rts[*]})" "$verdict"

# The same over the far link, where the round trips and not the CPU are
# the bound: what the protocol alone costs, reported.
say "one open over the ${FAR_MS} ms link"
a_far=$(median_ms "$WORK/far-0" "$OPEN_ONE" "$RESET_ONE")
alone_counted far "$FAR_MS"
n_far=${FAR_NS[${#FAR_NS[@]}-1]}
p95_far=$(p95_of far "$n_far")
record "$n_far clones at once over the ${FAR_MS} ms link (the protocol alone), p95 / one open alone over it" "-" \
    "${p95_far} ms / ${a_far} ms = $(awk -v a="$p95_far" -v b="$a_far" 'BEGIN { printf "%.2f", a / b }')×; exchanges per writer $(cat "$WORK/x-far-$n_far")" "reported"

# A write in an old brain against one in a young brain, locally.
say "open at 100,000 history rows against 100"
mkdir -p "$WORK/young" "$WORK/old"
for b in young old; do
    git -C "$WORK/origin" bundle create -q "$WORK/$b.bundle" --all 2>/dev/null
    git clone -q "$WORK/$b.bundle" "$WORK/$b-brain" 2>/dev/null
    git -C "$WORK/$b-brain" update-ref refs/heads/brain-index "$(git -C "$WORK/origin" rev-parse brain-index)"
    git -C "$WORK/$b-brain" remote remove origin
done
(
    cd "$WORK/old-brain"
    text=$(git show brain-index:BRAIN-INDEX.md)
    rows=$(awk 'BEGIN {
        for (i = 0; i < 100000; i++)
            printf "| sess-2025%04d-0900-h%03d | d%02d/notes.md | file | agent-%d | 2025-%02d-01 09:00 +00:00 | 2025-%02d-01 10:%02d +00:00 | completed | done %d |\n", i % 10000, i % 1000, i % 64, i % 7, i % 12 + 1, i % 12 + 1, i % 60, i
    }')
    blob=$( { printf '%s\n' "$text"; printf '%s\n' "$rows"; } | git hash-object -w --stdin)
    tree=$(printf '100644 blob %s\tBRAIN-INDEX.md\n' "$blob" | git mktree)
    git update-ref refs/heads/brain-index "$(git commit-tree "$tree" -p brain-index -m 'fixture: 100,000 history rows')"
    # The first write archives the old rows; the brain is old from then on.
    "$BSI" open d62/ --session sess-archive -q >/dev/null
    "$BSI" close sess-archive -q >/dev/null
)
OLD=$(git -C "$WORK/old-brain" rev-parse brain-index)
YOUNG=$(git -C "$WORK/young-brain" rev-parse brain-index)
archived=$(git -C "$WORK/old-brain" ls-tree --name-only brain-index archive/ | wc -l)
a=$(median_ms "$WORK/old-brain" "$BSI open d61/ --session sess-t -q --note n\$EPOCHREALTIME" "git update-ref refs/heads/brain-index $OLD")
b=$(median_ms "$WORK/young-brain" "$BSI open d61/ --session sess-t -q --note n\$EPOCHREALTIME" "git update-ref refs/heads/brain-index $YOUNG")
judge "bsi open at 100,000 history rows ($archived archive files) / at 100 rows" "$a" "$b" 1.2

# ---------------------------------------------------------------- report

echo
echo "bsi $("$BSI" --version | awk '{ print $2 }') — scale, $MODE run, $(nproc) cores, link delay ${DELAY_MS} ms each way"
echo
printf '| %s | %s | %s | %s |\n' scenario N result cost
printf '|---|---|---|---|\n'
while IFS=$'\t' read -r a b c d; do
    printf '| %s | %s | %s | %s |\n' "$a" "$b" "$c" "$d"
done <"$RESULTS"
exit "$FAILED"
