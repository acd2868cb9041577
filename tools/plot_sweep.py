#!/usr/bin/python3
"""Plots of an epsim sweep, written as PNG and SVG next to the results.

    tools/plot_sweep.py RESULTS.jsonl [--x AXIS] [--out DIR] [--trace TRACE.json]

step_time.{png,svg}   simulated step time vs the axis, next to its lower bound
ratio.{png,svg}       sim / bound vs the axis
phases.{png,svg}      stacked bars: simulated time per phase at each point
timeline.{png,svg}    (with --trace) Gantt chart of one run, one row per NPU stream

Uses the latest record of each point (the results file is append-only).
Needs Debian's python3-matplotlib; run with /usr/bin/python3.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_timeline import plot_timeline  # noqa: E402


def latest_ok_records(path):
    latest = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # torn by a kill mid-write
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            latest[record.get("key")] = record
    ok = [r for r in latest.values() if r.get("status") == "ok"]
    return sorted(ok, key=lambda r: r["point"])


def pick_axis(records, wanted):
    keys = []
    for r in records:
        for k in r.get("axes", list(r.get("coordinates", {}))):
            if k not in keys:
                keys.append(k)
    if wanted:
        if wanted not in keys:
            sys.exit(f"plot_sweep: error: --x {wanted}: not an axis of this sweep (axes: {', '.join(keys)})")
        return wanted
    numeric = [k for k in keys if all(isinstance(r["coordinates"].get(k), (int, float)) for r in records)]
    return (numeric or keys or [None])[0]


def zipped_with(records, axis):
    """Coordinates that vary one-to-one with `axis` (zipped axes): not series of their own."""
    zipped = set()
    keys = {k for r in records for k in r.get("coordinates", {})} - {axis}
    for k in keys:
        pairs = {(json.dumps(r["coordinates"].get(axis)), json.dumps(r["coordinates"].get(k))) for r in records}
        xs = {x for x, _ in pairs}
        ks = {v for _, v in pairs}
        if len(pairs) == len(xs) == len(ks) and len(xs) > 1:
            zipped.add(k)
    return zipped


def series(records, axis):
    """Groups points by the other coordinates, so each line varies only `axis`."""
    skip = zipped_with(records, axis) | {axis}
    groups = {}
    for r in records:
        others = tuple((k, v) for k, v in r.get("coordinates", {}).items() if k not in skip)
        groups.setdefault(others, []).append(r)
    for others, rs in groups.items():
        label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in others)
        yield label, sorted(rs, key=lambda r: r["coordinates"].get(axis, r["point"]))


def x_of(r, axis):
    return r["coordinates"].get(axis, r["point"]) if axis else r["point"]


def save(fig, out_dir, name):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"{name}.{ext}"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(os.path.join(out_dir, f"{name}.png"))


def log2_if_powers(ax, records, axis):
    xs = [x_of(r, axis) for r in records]
    if all(isinstance(x, int) and x > 0 and x & (x - 1) == 0 for x in xs) and len(set(xs)) > 2:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(set(xs)))
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())


def plot_step_time(records, axis, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, rs in series(records, axis):
        xs = [x_of(r, axis) for r in rs]
        sim = [r["result"]["step"]["sim_s"] * 1e3 for r in rs]
        bound = [r["result"]["step"]["bound_s"] * 1e3 for r in rs]
        line, = ax.plot(xs, sim, "o-", label=f"simulated {label}".strip())
        ax.plot(xs, bound, "s--", color=line.get_color(), alpha=0.7,
                label=f"lower bound (ledgers, critical path) {label}".strip())
    log2_if_powers(ax, records, axis)
    ax.set_xlabel(axis or "point")
    ax.set_ylabel("step time (ms)")
    ax.set_title("Training step: simulated vs analytic lower bound")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, "step_time")


def plot_ratio(records, axis, out_dir):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, rs in series(records, axis):
        ax.plot([x_of(r, axis) for r in rs], [r["result"]["step"]["ratio"] for r in rs], "o-", label=label or None)
    log2_if_powers(ax, records, axis)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel(axis or "point")
    ax.set_ylabel("sim / bound (step time)")
    ax.set_title("How far the simulated step sits from the ledger's bound")
    ax.grid(True, alpha=0.3)
    if any(label for label, _ in series(records, axis)):
        ax.legend(fontsize=8)
    save(fig, out_dir, "ratio")


def plot_phases(records, axis, out_dir):
    names = []
    for r in records:
        for p in r["result"].get("phases", []):
            if p["name"] not in names:
                names.append(p["name"])
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(records) + 3), 4.5))
    labels = [", ".join(f"{k.split('.')[-1]}={v}" for k, v in r.get("coordinates", {}).items()) or str(r["point"])
              for r in records]
    bottom = [0.0] * len(records)
    for name in names:
        values = []
        for r in records:
            by_name = {p["name"]: p["sim_s"] for p in r["result"].get("phases", [])}
            values.append(by_name.get(name, 0.0) * 1e3)
        ax.bar(range(len(records)), values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(range(len(records)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("simulated time per phase (ms)")
    ax.set_title("Where the step goes (compute: mean busy time per rank; collectives: sum of spans)", fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    save(fig, out_dir, "phases")


def main():
    parser = argparse.ArgumentParser(description="plots of an epsim sweep")
    parser.add_argument("results", help="the sweep's results file (JSON lines)")
    parser.add_argument("--x", help="axis key for the x axis (default: the first numeric axis)")
    parser.add_argument("--out", help="output directory (default: beside the results)")
    parser.add_argument("--trace", help="a Chrome trace from `epsim run --trace` for the timeline plot")
    args = parser.parse_args()
    if not os.path.exists(args.results):
        sys.exit(f"plot_sweep: error: {args.results}: no such file")
    records = latest_ok_records(args.results)
    if not records:
        sys.exit(f"plot_sweep: error: {args.results}: no finished point to plot")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(out_dir, exist_ok=True)
    axis = pick_axis(records, args.x)
    plot_step_time(records, axis, out_dir)
    plot_ratio(records, axis, out_dir)
    plot_phases(records, axis, out_dir)
    if args.trace:
        plot_timeline(args.trace, out_dir)


if __name__ == "__main__":
    main()
