#!/usr/bin/python3
"""Plot of an `epsim plan --json`: throughput against memory for every layout.

    epsim plan ... --json > plan.json
    /usr/bin/python3 tools/plot_plan.py plan.json [--out DIR]

plan.{png,svg}  per platform, each layout the loader accepted at its memory per
                rank (x, GB) and its tokens/s per NPU (y): simulated layouts in
                colour (the best ringed and named), pruned ones greyed at the
                throughput their bound allows (an upper bound: global batch x
                sequence length / bound / NPUs), marked by why they were pruned
                (does not fit HBM, bound slower than the best step, beyond
                --max-candidates); the HBM capacity as a dashed line.
Layouts the loader refused have no memory or bound and are not drawn (the
JSON counts them). Needs Debian's python3-matplotlib; run with /usr/bin/python3.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot_output import save_figure  # noqa: E402

GREY = "#9e9e9e"
MARKERS = {"memory": "x", "bound": "v", "not_simulated": ".", "too_large": "s", "failed": "+"}
LABELS = {
    "memory": "pruned: does not fit HBM",
    "bound": "pruned: bound slower than the best step",
    "not_simulated": "not simulated (--max-candidates)",
    "too_large": "too large to simulate here",
    "failed": "failed to simulate",
}


def tokens_per_s_per_npu_at_bound(platform, candidate):
    tokens = platform["global_batch"] * platform["sequence_length"]
    return tokens / candidate["bound_s"] / platform["npus"] if candidate["bound_s"] > 0 else 0


def plot_platform(ax, p):
    drawn = [c for c in p["candidates"] if c["memory_bytes"] > 0]
    for status, marker in MARKERS.items():
        cs = [c for c in drawn if c["status"] == status]
        if cs:
            ax.scatter([c["memory_bytes"] / 1e9 for c in cs], [tokens_per_s_per_npu_at_bound(p, c) for c in cs],
                       marker=marker, color=GREY, s=14, alpha=0.6, label=f"{LABELS[status]} ({len(cs)})")
    sim = [c for c in drawn if c["status"] == "simulated"]
    if sim:
        ax.scatter([c["memory_bytes"] / 1e9 for c in sim], [c["step"]["tokens_per_s_per_npu"] for c in sim],
                   c=[c["step"]["mfu"] * 100 for c in sim], cmap="viridis", s=28, zorder=3,
                   label=f"simulated ({len(sim)}), colour: MFU %")
        best = sim[0]
        x, y = best["memory_bytes"] / 1e9, best["step"]["tokens_per_s_per_npu"]
        ax.scatter([x], [y], s=140, facecolors="none", edgecolors="red", zorder=4)
        ax.annotate(best["name"], (x, y), textcoords="offset points", xytext=(6, 6), fontsize=7, color="red")
    ax.axvline(p["hbm_bytes"] / 1e9, color="black", linestyle="--", linewidth=0.8, label="HBM per NPU")
    ax.set_xlabel("memory per rank (GB)")
    ax.set_ylabel("tokens/s per NPU")
    ax.set_title(f"{p['workload']} on {p['platform']} ({p['npus']} NPUs)", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", help="the output of epsim plan --json")
    parser.add_argument("--out", help="folder for plan.png and plan.svg (default: beside the JSON)")
    args = parser.parse_args()
    with open(args.plan, encoding="utf-8") as f:
        doc = json.load(f)
    platforms = doc["platforms"]
    fig, axes = plt.subplots(1, len(platforms), figsize=(6.5 * len(platforms), 4.8), squeeze=False)
    for ax, p in zip(axes[0], platforms):
        plot_platform(ax, p)
    fig.tight_layout()
    out = args.out or os.path.dirname(os.path.abspath(args.plan))
    os.makedirs(out, exist_ok=True)
    for ext in ("png", "svg"):
        path = os.path.join(out, f"plan.{ext}")
        save_figure(fig, path, dpi=130)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
