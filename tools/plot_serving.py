#!/usr/bin/python3
"""Plot of one or more `epsim serve --json` curves: throughput against latency.

    epsim serve ... --json > h800.json
    epsim serve ... --json > cloudmatrix384.json
    /usr/bin/python3 tools/plot_serving.py h800.json cloudmatrix384.json --out serving.png

A file from `epsim serve --ep-list` holds a curve per layout: each is
plotted, labelled by its EP size, the best layout's line drawn thicker.
Each curve: one point per replayed batch, tokens/s per NPU (y) against its
TPOT (decode) or TTFT (prefill) in ms (x), labelled by sequences per rank;
the batch chosen within the limit ringed and the limit dashed. Writes the
PNG and an SVG beside it. Needs Debian's python3-matplotlib; run with
/usr/bin/python3.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot_output import save_figure  # noqa: E402


def label_of(doc):
    sets = [o for o in doc["overrides"] if not o.startswith("serving.batch")]
    return f"{doc['workload']} on {doc['platform']}" + (f" ({', '.join(sets)})" if sets else "")


def curves_of(doc):
    """(label, curve, is the best layout) per curve: one for a plain serve, one per layout for --ep-list."""
    if "layouts" not in doc:
        return [(label_of(doc), doc, False)]
    return [(f"{label_of(doc)}, EP{lay['ep']} ({lay['nodes']} nodes)", lay, lay["ep"] == doc.get("best_ep"))
            for lay in doc["layouts"] if lay["points"]]


def plot_curve(ax, label, curve, thick):
    pts = curve["points"]
    xs = [p["latency_s"] * 1e3 for p in pts]
    ys = [p["tokens_per_s_per_npu"] for p in pts]
    line, = ax.plot(xs, ys, marker="o", markersize=4, label=label, linewidth=2.5 if thick else 1.5)
    for p, x, y in zip(pts, xs, ys):
        ax.annotate(str(p["batch"]), (x, y), textcoords="offset points", xytext=(3, -10), fontsize=6,
                    color=line.get_color())
    best = [p for p in pts if p["batch"] == curve.get("best_batch")]
    if best:
        b = best[0]
        ax.scatter([b["latency_s"] * 1e3], [b["tokens_per_s_per_npu"]], s=140, facecolors="none",
                   edgecolors=line.get_color(), zorder=4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("curves", nargs="+", help="outputs of epsim serve --json")
    parser.add_argument("--out", required=True, help="the PNG to write (an SVG is written beside it)")
    args = parser.parse_args()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    latency = None
    for path in args.curves:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        latency = doc["latency"]
        for label, curve, thick in curves_of(doc):
            plot_curve(ax, label, curve, thick)
        if "limit_s" in doc:
            ax.axvline(doc["limit_s"] * 1e3, color="black", linestyle="--", linewidth=0.8)
    ax.set_xlabel(f"{latency} (ms)")
    ax.set_ylabel("tokens/s per NPU")
    ax.set_title(f"throughput against {latency}, labelled by sequences per rank", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    save_figure(fig, args.out, dpi=120)
    save_figure(fig, os.path.splitext(args.out)[0] + ".svg")


if __name__ == "__main__":
    main()
