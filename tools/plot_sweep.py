#!/usr/bin/python3
"""Plots of an epsim sweep, written as PNG and SVG next to the results.

    tools/plot_sweep.py RESULTS.jsonl [--x AXIS] [--out DIR] [--trace TRACE.json]

step_time.{png,svg}   simulated step time vs the axis, next to its lower bound
                      (markers say which bound binds: critical path or rank streams)
ratio.{png,svg}       sim / bound vs the axis
phases.{png,svg}      where the step goes, per point: compute per phase, exposed
                      communication and idle time of the mean rank, stacked to the
                      simulated step time (marked), beside the step's lower bound
timeline.{png,svg}    (with --trace) Gantt chart of one run (plot_timeline.py)

The x axis is --x, else the first axis of the spec whose value varies (an
axis zipped with an earlier one is not a choice of its own); numbers are
placed by value, strings and booleans as categories in spec order.
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
import matplotlib.lines  # noqa: E402
import matplotlib.ticker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_timeline import kind_colours, plot_timeline  # noqa: E402

# Phases of the report that are collectives (reported as sums of spans, which
# overlap compute and each other); the others run on a rank's compute stream
# and are reported as the mean busy time per rank (sim/report/report.cpp).
COLLECTIVES = {"dispatch", "combine", "gradient sync"}
EXPOSED = "exposed communication"
IDLE = "idle (waiting on peers or dependencies)"


class PlotError(Exception):
    pass


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


def axis_keys(records):
    keys = []
    for r in records:
        for k in r.get("axes", list(r.get("coordinates", {}))):
            if k not in keys:
                keys.append(k)
    return keys


def values_of(records, axis):
    """Distinct values of `axis`, in the order the points meet them (spec order)."""
    seen = []
    for r in records:
        v = r.get("coordinates", {}).get(axis)
        if v not in seen:
            seen.append(v)
    return seen


def is_numeric(records, axis):
    return all(isinstance(r.get("coordinates", {}).get(axis), (int, float)) and
               not isinstance(r["coordinates"][axis], bool) for r in records)


def zipped_with(records, axis):
    """Coordinates that vary one-to-one with `axis` (zipped axes): not series of their own."""
    zipped = set()
    for k in set(axis_keys(records)) - {axis}:
        pairs = {(json.dumps(r["coordinates"].get(axis)), json.dumps(r["coordinates"].get(k))) for r in records}
        xs = {x for x, _ in pairs}
        ks = {v for _, v in pairs}
        if len(pairs) == len(xs) == len(ks) and len(xs) > 1:
            zipped.add(k)
    return zipped


def pick_axis(records, wanted=None):
    """The x axis: `wanted` if given, else the first axis (spec order) whose
    value varies and that is not zipped with an earlier one; None without one."""
    keys = axis_keys(records)
    if wanted:
        if wanted not in keys:
            raise PlotError(f"--x {wanted}: not an axis of this sweep (axes: {', '.join(keys) or 'none'})")
        return wanted
    taken = set()
    for k in keys:
        if len(values_of(records, k)) > 1 and k not in taken:
            return k
        taken |= zipped_with(records, k)
    return None


def short(key):
    """An axis key without its section: workload.parallel.ep -> ep, platform.node.count -> node.count."""
    for prefix in ("workload.parallel.", "workload.", "platform."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def series(records, axis):
    """Groups points by the other coordinates that vary, so each line varies only `axis`."""
    skip = zipped_with(records, axis) | {axis}
    varying = [k for k in axis_keys(records) if k not in skip and len(values_of(records, k)) > 1]
    groups = {}
    for r in records:
        others = tuple((k, json.dumps(r["coordinates"].get(k))) for k in varying)
        groups.setdefault(others, []).append(r)
    for others, rs in groups.items():
        label = ", ".join(f"{short(k)}={json.loads(v)}" for k, v in others)
        yield label, rs


class XAxis:
    """Where each point sits on x: its value for a numeric axis, its category's
    index otherwise (categories in spec order); the point index without an axis."""

    def __init__(self, records, axis):
        self.axis = axis
        self.numeric = axis is None or is_numeric(records, axis)
        self.categories = [] if self.numeric else values_of(records, axis)

    def of(self, r):
        if self.axis is None:
            return r["point"]
        v = r["coordinates"].get(self.axis)
        return v if self.numeric else self.categories.index(v)

    def sort(self, rs):
        return sorted(rs, key=self.of)

    def style(self, ax, records):
        ax.set_xlabel(self.axis or "point")
        if not self.numeric:
            ax.set_xticks(range(len(self.categories)))
            ax.set_xticklabels([str(c) for c in self.categories])
            ax.set_xlim(-0.5, len(self.categories) - 0.5)
            return
        xs = [self.of(r) for r in records]
        if all(isinstance(x, int) and x > 0 and x & (x - 1) == 0 for x in xs) and len(set(xs)) > 2:
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(set(xs)))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.get_xaxis().set_minor_locator(matplotlib.ticker.NullLocator())


def step_of(r):
    step = r.get("result", {}).get("step")
    if not step or "sim_s" not in step or "bound_s" not in step:
        raise PlotError(f"point {r.get('point')}: result has no step.sim_s / step.bound_s (not an `epsim run --json` report)")
    return step


def binding_bound(step):
    """Which part of the step bound binds: "critical path", "rank streams" or
    "both" (equal), from step.critical_path_bound_s and step.rank_streams_bound_s;
    None when the report lacks them."""
    cp, rs = step.get("critical_path_bound_s"), step.get("rank_streams_bound_s")
    if cp is None or rs is None:
        return None
    if abs(cp - rs) <= 1e-9 * max(cp, rs):
        return "both"
    return "critical path" if cp > rs else "rank streams"


BOUND_MARKERS = {"critical path": "s", "rank streams": "^", "both": "D", None: "x"}


def bound_label(binds):
    """Legend text of the lower bound where `binds` (binding_bound) binds."""
    return "lower bound, " + {"both": "critical path = rank streams",
                              None: "which part binds not reported"}.get(binds, f"{binds} binds")


def stacked_parts(result):
    """Where the mean rank's step goes, as (label, seconds) parts that sum to
    step.sim_s: each compute phase (mean busy time per rank), communication
    not hidden behind compute (communication.exposed_mean_s), and the rest,
    when a rank neither computes nor communicates (waiting on dependencies).
    Every rank's step spans [0, step.sim_s], its compute stream runs one task
    at a time and exposed communication excludes time under compute, so the
    three are disjoint. Raises PlotError when a field is missing."""
    step_s = result.get("step", {}).get("sim_s")
    exposed = result.get("communication", {}).get("exposed_mean_s")
    if step_s is None or exposed is None or "phases" not in result:
        raise PlotError("report lacks step.sim_s, communication.exposed_mean_s or phases")
    # A compute row's sim_s is the mean over the ranks that run it (one
    # pipeline stage for the dense FFN): weighted to the mean over all ranks.
    ranks = result.get("ranks", 0)
    parts = [(p["name"], p["sim_s"] * p.get("ranks_running", ranks) / ranks if ranks else p["sim_s"])
             for p in result["phases"] if not p.get("collective", p["name"] in COLLECTIVES)]
    parts.append((EXPOSED, exposed))
    idle = step_s - sum(s for _, s in parts)
    if idle < -1e-9 * step_s:
        raise PlotError(f"compute + exposed communication ({step_s - idle:.9f} s) exceed the step ({step_s:.9f} s)")
    parts.append((IDLE, max(idle, 0.0)))
    return parts


def legend_outside(ax):
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def save(fig, out_dir, name):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(os.path.join(out_dir, f"{name}.png"))


def plot_step_time(records, x, out_dir):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for label, rs in series(records, x.axis):
        rs = x.sort(rs)
        xs = [x.of(r) for r in rs]
        steps = [step_of(r) for r in rs]
        suffix = f" ({label})" if label else ""
        line, = ax.plot(xs, [s["sim_s"] * 1e3 for s in steps], "o-", label=f"simulated{suffix}")
        ax.plot(xs, [s["bound_s"] * 1e3 for s in steps], "--", color=line.get_color(), alpha=0.7)
        for binds in BOUND_MARKERS:
            pts = [(xv, s["bound_s"] * 1e3) for xv, s in zip(xs, steps) if binding_bound(s) == binds]
            if pts:
                ax.plot(*zip(*pts), BOUND_MARKERS[binds], color=line.get_color(), linestyle="none",
                        label=bound_label(binds) + suffix)
    x.style(ax, records)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("step time (ms)")
    ax.set_title("Training step: simulated vs analytic lower bound", fontsize=10)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    save(fig, out_dir, "step_time")


def plot_ratio(records, x, out_dir):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    labelled = False
    for label, rs in series(records, x.axis):
        rs = x.sort(rs)
        ax.plot([x.of(r) for r in rs], [step_of(r)["sim_s"] / step_of(r)["bound_s"] for r in rs], "o-",
                label=label or None)
        labelled |= bool(label)
    x.style(ax, records)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("sim / bound (step time)")
    ax.set_title("How far the simulated step sits above its lower bound (1 = on the bound)", fontsize=10)
    ax.grid(True, alpha=0.3)
    if labelled:
        legend_outside(ax)
    save(fig, out_dir, "ratio")


def plot_phases(records, x, out_dir):
    stacks = []
    for r in records:
        try:
            stacks.append(stacked_parts(r["result"]))
        except PlotError as e:
            raise PlotError(f"point {r['point']}: {e}")
    names = []
    for parts in stacks:
        for name, _ in parts:
            if name not in names:
                names.append(name)
    colours = kind_colours()
    styles = {EXPOSED: dict(color="#3b3b6d", hatch="//", edgecolor="white", linewidth=0),
              IDLE: dict(color="#e0e0e0", edgecolor="#a0a0a0", linewidth=0.5)}
    varying = [k for k in axis_keys(records) if len(values_of(records, k)) > 1]
    labels = ["\n".join(str(r["coordinates"][k]) for k in varying) or str(r["point"]) for r in records]
    fig, ax = plt.subplots(figsize=(max(7.5, 0.8 * len(records) + 4), 4.6))
    bottom = [0.0] * len(records)
    handles = []
    for name in names:
        values = [dict(parts).get(name, 0.0) * 1e3 for parts in stacks]
        style = styles.get(name, dict(color=colours.get(name, "grey"), linewidth=0))
        handles.append(ax.bar(range(len(records)), values, bottom=bottom, width=0.7, label=name, **style))
        bottom = [b + v for b, v in zip(bottom, values)]
    handles.reverse()  # the legend reads top-down, as the stack
    steps = [step_of(r) for r in records]
    for i, s in enumerate(steps):
        ax.plot([i - 0.42, i + 0.42], [s["sim_s"] * 1e3] * 2, color="black", lw=2, zorder=3)
    handles.append(matplotlib.lines.Line2D([], [], color="black", lw=2, label="simulated step"))
    for binds in BOUND_MARKERS:
        idx = [i for i, s in enumerate(steps) if binding_bound(s) == binds]
        if idx:
            handles.append(ax.scatter(idx, [steps[i]["bound_s"] * 1e3 for i in idx], marker=BOUND_MARKERS[binds],
                                      s=30, color="white", edgecolors="black", zorder=4, label=bound_label(binds)))
    ax.set_xticks(range(len(records)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.6, len(records) - 0.4)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(" / ".join(short(k) for k in varying) if varying else "point")
    ax.set_ylabel("time per rank (ms)")
    ax.set_title("Where the step goes (mean rank): compute per phase, exposed communication, idle", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    save(fig, out_dir, "phases")


def main():
    parser = argparse.ArgumentParser(description="plots of an epsim sweep")
    parser.add_argument("results", help="the sweep's results file (JSON lines)")
    parser.add_argument("--x", help="axis key for the x axis (default: the first axis that varies)")
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
    try:
        x = XAxis(records, pick_axis(records, args.x))
        plot_step_time(records, x, out_dir)
        plot_ratio(records, x, out_dir)
        plot_phases(records, x, out_dir)
        if args.trace:
            plot_timeline(args.trace, out_dir)
    except (PlotError, ValueError) as e:
        sys.exit(f"plot_sweep: error: {args.results}: {e}")


if __name__ == "__main__":
    main()
