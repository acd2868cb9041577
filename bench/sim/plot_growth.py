#!/usr/bin/python3
"""How the replay's cost grows with NPUs, layers and micro-batches.

Usage: bench/sim/plot_growth.py OUT.png FILE
FILE holds the lines of `bench/sim/run.sh BUILD replay growth`
(ep=N layers=L micro_batches=M activities=A replay_cpu_s=S ...). Three
panels, CPU seconds of simulate() against: EP (61 layers, 2 micro-batches;
log-log, with a line of slope 2 for reference), layers at EP64 (2
micro-batches) and micro-batches at EP64 (61 layers); each point is
labelled with its SimGrid activities. As in docs/images/replay_growth.png.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if "replay_cpu_s" in fields:
                rows.append({k: float(v) for k, v in fields.items() if k != "load"})
    return rows


def panel(ax, points, xlabel, log=False):
    points = sorted({p[0]: p for p in reversed(points)}.values())  # one point per x: the first line's
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    ax.plot(xs, ys, "o-")
    for x, y, a in points:
        ax.annotate("%d" % a, (x, y), textcoords="offset points", xytext=(3, -10), fontsize=7)
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        # slope-2 reference through the largest point
        x1, y1 = xs[-1], ys[-1]
        ax.plot([xs[0], x1], [y1 * (xs[0] / x1) ** 2, y1], ":", color="grey", label="~ EP^2")
        ax.legend(fontsize=7)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    rows = read(argv[2])
    by_ep = [(r["ep"], r["replay_cpu_s"], r["activities"]) for r in rows if r["layers"] == 61 and r["micro_batches"] == 2]
    by_layers = [(r["layers"], r["replay_cpu_s"], r["activities"]) for r in rows if r["ep"] == 64 and r["micro_batches"] == 2]
    by_mb = [(r["micro_batches"], r["replay_cpu_s"], r["activities"]) for r in rows if r["ep"] == 64 and r["layers"] == 61]
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), dpi=100)
    panel(axes[0], by_ep, "EP (NPUs), 61 layers, 2 micro-batches", log=True)
    panel(axes[1], by_layers, "layers at EP64")
    panel(axes[2], by_mb, "micro-batches at EP64")
    axes[0].set_ylabel("replay CPU (s)")
    fig.suptitle("DeepSeek-V3 step on A2: replay CPU seconds (labels: SimGrid activities)", fontsize=9)
    fig.tight_layout()
    fig.savefig(argv[1])


if __name__ == "__main__":
    main(sys.argv)
