#!/usr/bin/env bash
# The collision benchmark: what coordination costs and saves when N agents
# edit one brain through a shared remote (examples/collisions.rs holds the
# harness and says what it models).
#
#   bench/collisions.sh           N = 2, 5, 10; figures, table and plot
#                                 (docs/collisions.png)
#   bench/collisions.sh --long    N = 2, 5, 10, 20
#   bench/collisions.sh --smoke   N = 2, 3, two short tasks each: checks
#                                 every strategy's invariants (every task
#                                 finished, 0 lost edits under claims)
#                                 without judging timings; no plot
#   bench/collisions.sh --hot     the hot-file workload, N = 2, 5, 10, 20:
#                                 every task holds one of the five
#                                 sections of one file for 1-3 s of work
#                                 (the agents' own work dominates); exits
#                                 1 unless section claims reach 2x file
#                                 claims' throughput at N = 10 with 0
#                                 conflicts; plot docs/collisions-hot.png
#   bench/collisions.sh --hot --smoke   N = 2, one task each
#
# Everything runs on this machine: a local bare repository is the remote.
# The plot needs matplotlib: installed from PyPI into a virtualenv under
# target/ when python3 has none. Exits 1 when an invariant fails.
set -euo pipefail

MODE=()
HOT=()
PLOT=1
for a in "$@"; do
    case "$a" in
    --smoke) MODE=(--smoke) PLOT= ;;
    --long) MODE=(--long) ;;
    --hot) HOT=(--hot) ;;
    -h | --help)
        sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/collisions.sh [--smoke | --long] [--hot]" >&2
        exit 2
        ;;
    esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="$TARGET/bench-collisions${HOT:+-hot}"
PNG="$ROOT/docs/collisions${HOT:+-hot}.png"
say() { printf 'collisions: %s\n' "$*" >&2; }

say "building the release binary and the harness"
(cd "$ROOT" && cargo build --release --quiet && cargo build --release --quiet --example collisions)
rm -rf "$OUT"
mkdir -p "$OUT"
say "$(nproc 2>/dev/null || echo '?') cores; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
"$TARGET/release/examples/collisions" "${MODE[@]}" "${HOT[@]}" --bsi "$TARGET/release/bsi" --out "$OUT"

if [[ -n $PLOT ]]; then
    PY=python3
    if ! python3 -c 'import matplotlib' 2>/dev/null; then
        VENV="$TARGET/bench-venv"
        [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
        "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null ||
            "$VENV/bin/pip" install --quiet matplotlib
        PY="$VENV/bin/python"
    fi
    "$PY" "$ROOT/bench/collisions_plot.py" "$OUT/collisions.csv" "$PNG"
    say "plot: ${PNG#"$ROOT"/}; table: $OUT/collisions.md"
fi
