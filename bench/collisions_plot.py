"""The plot of bench/collisions.sh: tasks per minute and p95 wait against
the number of agents N, one line per strategy."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
labels = {
    "none": "(a) git alone",
    "file": "(b) file claims",
    "section": "(c) section claims, --wait",
    "queue": "(d) section claims, fair queue",
}
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
for key, label in labels.items():
    pts = sorted((int(r["n"]), r) for r in rows if r["strategy"] == key)
    if not pts:
        continue
    ns = [n for n, _ in pts]
    left.plot(ns, [float(r["per_min"]) for _, r in pts], marker="o", label=label)
    right.plot(ns, [float(r["wait_p95_ms"]) / 1000 for _, r in pts], marker="o", label=label)
left.set_title("Throughput (tasks finished per minute)")
left.set_xlabel("agents N")
left.set_ylabel("tasks / min")
right.set_title("Wait before a task may start, p95")
right.set_xlabel("agents N")
right.set_ylabel("seconds")
for ax in (left, right):
    ax.grid(alpha=0.3)
    ax.set_xticks(sorted({int(r["n"]) for r in rows}))
left.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2])
