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
#
# Everything runs on this machine: a local bare repository is the remote.
# The plot needs matplotlib: installed from PyPI into a virtualenv under
# target/ when python3 has none. Exits 1 when an invariant fails.
set -euo pipefail

MODE=()
PLOT=1
for a in "$@"; do
    case "$a" in
    --smoke) MODE=(--smoke) PLOT= ;;
    --long) MODE=(--long) ;;
    -h | --help)
        sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/collisions.sh [--smoke | --long]" >&2
        exit 2
        ;;
    esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="$TARGET/bench-collisions"
say() { printf 'collisions: %s\n' "$*" >&2; }

say "building the release binary and the harness"
(cd "$ROOT" && cargo build --release --quiet && cargo build --release --quiet --example collisions)
rm -rf "$OUT"
mkdir -p "$OUT"
say "$(nproc 2>/dev/null || echo '?') cores; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
"$TARGET/release/examples/collisions" "${MODE[@]}" --bsi "$TARGET/release/bsi" --out "$OUT"

if [[ -n $PLOT ]]; then
    PY=python3
    if ! python3 -c 'import matplotlib' 2>/dev/null; then
        VENV="$TARGET/bench-venv"
        [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
        "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null ||
            "$VENV/bin/pip" install --quiet matplotlib
        PY="$VENV/bin/python"
    fi
    "$PY" "$ROOT/bench/collisions_plot.py" "$OUT/collisions.csv" "$ROOT/docs/collisions.png"
    say "plot: docs/collisions.png; table: $OUT/collisions.md"
fi
