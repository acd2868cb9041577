#!/usr/bin/python3
"""Replay CPU seconds against EP from `bench/sim/run.sh BUILD replay` outputs.

Usage: bench/sim/plot_replay.py OUT.png LABEL=FILE [LABEL=FILE ...]
Each FILE holds run.sh lines (ep=N ... replay_cpu_s=S ...); one line per
label, log-log axes, as in docs/images/replay_scaling.png.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    points = []
    with open(path) as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if "ep" in fields and "replay_cpu_s" in fields:
                points.append((int(fields["ep"]), float(fields["replay_cpu_s"])))
    return sorted(points)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(4.8, 3.2), dpi=100)
    for spec in argv[2:]:
        label, path = spec.split("=", 1)
        points = read(path)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("EP (NPUs)")
    ax.set_ylabel("replay CPU per step (s)")
    ax.set_title("DeepSeek-V3 step on A2, 61 layers x 2 micro-batches", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[1])


if __name__ == "__main__":
    main(sys.argv)
