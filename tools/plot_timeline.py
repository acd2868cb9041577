#!/usr/bin/python3
"""Gantt chart of one epsim run from its Chrome trace (`epsim run --trace`).

    tools/plot_timeline.py TRACE.json [--out DIR] [--max-rows N]

One row per NPU stream (compute, EP communication, DP communication),
bars coloured by task kind; writes timeline.png and timeline.svg.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KINDS = ["attention", "gate", "dense FFN", "shared expert", "expert GEMM", "dispatch", "combine",
         "gradient sync", "optimizer", "wait"]


def kind_of(event):
    name = event.get("name", "")
    if event.get("cat") == "wait" or name.startswith("wait"):
        return "wait"
    for kind in KINDS:
        if kind in name:
            return kind
    return event.get("cat", "other")


def plot_timeline(trace_path, out_dir, max_rows=32):
    with open(trace_path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    rows, names = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "X":
            rows.setdefault((e["pid"], e["tid"]), []).append(e)
    keys = sorted(rows)[:max_rows]
    colours = {k: plt.get_cmap("tab10")(i % 10) for i, k in enumerate(KINDS)}
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(keys) + 1.6))
    used = set()
    for y, key in enumerate(keys):
        for e in rows[key]:
            kind = kind_of(e)
            used.add(kind)
            ax.broken_barh([(e["ts"] / 1e3, max(e["dur"], 1e-3) / 1e3)], (y - 0.4, 0.8),
                           color=colours.get(kind, "grey"), alpha=0.45 if kind == "wait" else 0.95)
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([f"node{key[0] - 1} {names.get(key, key[1])}" for key in keys], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (ms)")
    ax.set_title(f"Timeline of one step ({len(keys)} of {len(rows)} streams)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in KINDS if k in used]
    ax.legend(handles, [k for k in KINDS if k in used], fontsize=7, ncol=5, loc="upper center",
              bbox_to_anchor=(0.5, -0.6 / (0.32 * len(keys) + 1.6)))
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"timeline.{ext}"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(os.path.join(out_dir, "timeline.png"))


def main():
    parser = argparse.ArgumentParser(description="Gantt chart of one epsim run")
    parser.add_argument("trace")
    parser.add_argument("--out", help="output directory (default: beside the trace)")
    parser.add_argument("--max-rows", type=int, default=32, help="at most this many streams")
    args = parser.parse_args()
    if not os.path.exists(args.trace):
        sys.exit(f"plot_timeline: error: {args.trace}: no such file")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.trace))
    plot_timeline(args.trace, out_dir, args.max_rows)


if __name__ == "__main__":
    main()
