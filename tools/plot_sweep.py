#!/usr/bin/python3
"""Plots of an epsim sweep, written as PNG and SVG next to the results.

    tools/plot_sweep.py RESULTS.jsonl [--x AXIS] [--out DIR] [--trace TRACE.json]

step_time.{png,svg}   simulated step time vs the axis, next to its lower bound
                      (markers say which bound binds: critical path or rank streams);
                      the y axis fits the data (a 9 % difference is visible)
ratio.{png,svg}       sim / bound vs the axis, each point labelled (x1.003)
phases.{png,svg}      where the step goes, per point: compute per phase, exposed
                      communication and idle time of the mean rank, stacked to the
                      simulated step time (marked), beside the step's lower bound
throughput.{png,svg}  tokens/s per NPU, MFU and the memory headroom per rank
                      (HBM capacity - peak) vs the axis
timeline.{png,svg}    (with --trace) Gantt chart of one run (plot_timeline.py)

Points that do not fit in HBM are never dropped: a point refused for it
(status failed, "does not fit") is an X at the foot of every plot along the
axis, one simulated anyway (memory.allow_oversubscribed) a red ring; both
have their legend entry.

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
from plot_output import save_figure  # noqa: E402

# Phases of the report that are collectives (reported as sums of spans, which
# overlap compute and each other); the others run on a rank's compute stream
# and are reported as the mean busy time per rank (sim/report/report.cpp).
COLLECTIVES = {"dispatch", "combine", "gradient sync"}
EXPOSED = "exposed communication"
IDLE = "idle (waiting on peers or dependencies)"


class PlotError(Exception):
    pass


def latest_ok_records(path):
    return [r for r in latest_records(path) if r.get("status") == "ok"]


def latest_records(path):
    """The latest record of every point, ok or failed, by point index."""
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
    return sorted(latest.values(), key=lambda r: r["point"])


def refused_for_memory(records):
    """Failed points whose error is the memory-fit refusal (they have no result)."""
    return [r for r in records if r.get("status") == "failed" and "does not fit" in r.get("error", "")]


def oversubscribed(r):
    """An ok point simulated although a rank does not fit in HBM."""
    return r.get("result", {}).get("memory", {}).get("fits") is False


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
        if self.log2(records):
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted({self.of(r) for r in records}))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.get_xaxis().set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel(f"{self.axis} (log2 scale)")

    def log2(self, records):
        """Powers of two (EP, node counts), two values or more: on a log2 axis."""
        xs = [self.of(r) for r in records]
        return (self.numeric and self.axis is not None and len(set(xs)) >= 2 and
                all(isinstance(x, int) and x > 0 and x & (x - 1) == 0 for x in xs))


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
        save_figure(fig, os.path.join(out_dir, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(os.path.join(out_dir, f"{name}.png"))


def fitted_ylim(ax, values, include=()):
    """y limits around `values` (and `include`), padded by 8 % of their range,
    never forced to 0, so that small differences stay visible."""
    vs = [v for v in list(values) + list(include) if v is not None]
    if not vs:
        return
    lo, hi = min(vs), max(vs)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    ax.set_ylim(lo - pad, hi + pad)


def mark_infeasible(ax, x, refused, at_y):
    """X at y = at_y for points refused for memory (their x), and a legend entry."""
    xs = [x.of(r) for r in refused if x.axis is None or r.get("coordinates", {}).get(x.axis) is not None]
    if xs:
        ax.plot(xs, [at_y] * len(xs), "X", color="crimson", markersize=9, linestyle="none", zorder=5,
                label="does not fit in HBM (refused)")


def mark_oversubscribed(ax, xs, ys, flags):
    pts = [(xv, yv) for xv, yv, f in zip(xs, ys, flags) if f]
    if pts:
        ax.plot(*zip(*pts), "o", markersize=12, markerfacecolor="none", markeredgecolor="crimson",
                markeredgewidth=1.5, linestyle="none", zorder=5,
                label="does not fit in HBM (simulated anyway)")


def plot_step_time(records, x, out_dir, refused=()):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    values = []
    for label, rs in series(records, x.axis):
        rs = x.sort(rs)
        xs = [x.of(r) for r in rs]
        steps = [step_of(r) for r in rs]
        suffix = f" ({label})" if label else ""
        line, = ax.plot(xs, [s["sim_s"] * 1e3 for s in steps], "o-", label=f"simulated{suffix}")
        ax.plot(xs, [s["bound_s"] * 1e3 for s in steps], "--", color=line.get_color(), alpha=0.7)
        values += [s["sim_s"] * 1e3 for s in steps] + [s["bound_s"] * 1e3 for s in steps]
        mark_oversubscribed(ax, xs, [s["sim_s"] * 1e3 for s in steps], [oversubscribed(r) for r in rs])
        for binds in BOUND_MARKERS:
            pts = [(xv, s["bound_s"] * 1e3) for xv, s in zip(xs, steps) if binding_bound(s) == binds]
            if pts:
                ax.plot(*zip(*pts), BOUND_MARKERS[binds], color=line.get_color(), linestyle="none",
                        label=bound_label(binds) + suffix)
    fitted_ylim(ax, values)
    mark_infeasible(ax, x, refused, ax.get_ylim()[0])
    x.style(ax, list(records) + list(refused))
    ax.set_ylabel("step time (ms)")
    ax.set_title("Training step: simulated vs analytic lower bound", fontsize=10)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    labels = ax.get_legend_handles_labels()[1]
    save(fig, out_dir, "step_time")
    return labels


def ratio_of(r):
    step = step_of(r)
    return step["sim_s"] / step["bound_s"]


def plot_ratio(records, x, out_dir, refused=()):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    labelled = False
    ratios = []
    for label, rs in series(records, x.axis):
        rs = x.sort(rs)
        xs, ys = [x.of(r) for r in rs], [ratio_of(r) for r in rs]
        ax.plot(xs, ys, "o-", label=label or None)
        for xv, yv in zip(xs, ys):  # the figure the report prints, at each point
            ax.annotate(f"x{yv:.3f}", (xv, yv), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
        mark_oversubscribed(ax, xs, ys, [oversubscribed(r) for r in rs])
        ratios += ys
        labelled |= bool(label)
    ax.axhline(1.0, color="grey", lw=0.8)
    # Around the ratios and 1 (on the bound), never from 0: x1.003 and x1.137 must look apart.
    fitted_ylim(ax, ratios, include=[1.0])
    mark_infeasible(ax, x, refused, ax.get_ylim()[0])
    labelled |= bool(refused) or any(oversubscribed(r) for r in records)
    x.style(ax, list(records) + list(refused))
    ax.set_ylabel("sim / bound (step time)")
    ax.set_title("How far the simulated step sits above its lower bound (1 = on the bound)", fontsize=10)
    ax.grid(True, alpha=0.3)
    if labelled:
        legend_outside(ax)
    limits = ax.get_ylim()
    save(fig, out_dir, "ratio")
    return limits


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
    colours = kind_colours(records[0]["result"].get("task_kinds", []))
    styles = {EXPOSED: dict(color="#3b3b6d", hatch="//", edgecolor="white", linewidth=0),
              IDLE: dict(color="#e0e0e0", edgecolor="#a0a0a0", linewidth=0.5)}
    varying = [k for k in axis_keys(records) if len(values_of(records, k)) > 1]
    labels = ["\n".join(str(r["coordinates"][k]) for k in varying) or str(r["point"]) for r in records]
    labels = [f"{label}\n(does not fit)" if oversubscribed(r) else label for label, r in zip(labels, records)]
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


def throughput_of(result):
    """(tokens/s per NPU, MFU in %, memory headroom per rank in GB: HBM
    capacity - peak, negative when a rank does not fit) of a report; None for
    what the report lacks (no batch, no memory check)."""
    t = result.get("throughput", {})
    m = result.get("memory", {})
    headroom = None
    if "capacity_bytes" in m and "peak_bytes_per_rank" in m and m["capacity_bytes"] > 0:
        headroom = (m["capacity_bytes"] - m["peak_bytes_per_rank"]) / 1e9
    mfu = t.get("mfu")
    return t.get("tokens_per_s_per_npu"), None if mfu is None else 100 * mfu, headroom


def plot_throughput(records, x, out_dir, refused=()):
    """Three panels along the axis: tokens/s per NPU, MFU, memory headroom."""
    panels = [("tokens/s per NPU", 0), ("MFU (%)", 1), ("HBM headroom per rank (GB)", 2)]
    fig, axes = plt.subplots(3, 1, figsize=(8, 8.4), sharex=True)
    for ax, (ylabel, i) in zip(axes, panels):
        values = []
        for label, rs in series(records, x.axis):
            rs = x.sort(rs)
            pts = [(x.of(r), throughput_of(r["result"])[i], oversubscribed(r)) for r in rs]
            pts = [p for p in pts if p[1] is not None]
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label or None)
            mark_oversubscribed(ax, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts])
            values += [p[1] for p in pts]
        if i == 2:
            ax.axhline(0.0, color="crimson", lw=0.8, ls=":")  # below: does not fit
            values.append(0.0)
        fitted_ylim(ax, values)
        mark_infeasible(ax, x, refused, ax.get_ylim()[0])
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            legend_outside(ax)
    x.style(axes[-1], list(records) + list(refused))
    axes[0].set_title("Throughput and memory headroom per point (headroom < 0: does not fit)", fontsize=10)
    labels = [ax.get_legend_handles_labels()[1] for ax in axes]
    save(fig, out_dir, "throughput")
    return labels


def main():
    parser = argparse.ArgumentParser(description="plots of an epsim sweep")
    parser.add_argument("results", help="the sweep's results file (JSON lines)")
    parser.add_argument("--x", help="axis key for the x axis (default: the first axis that varies)")
    parser.add_argument("--out", help="output directory (default: beside the results)")
    parser.add_argument("--trace", help="a Chrome trace from `epsim run --trace` for the timeline plot")
    args = parser.parse_args()
    if not os.path.exists(args.results):
        sys.exit(f"plot_sweep: error: {args.results}: no such file")
    everything = latest_records(args.results)
    records = [r for r in everything if r.get("status") == "ok"]
    refused = refused_for_memory(everything)
    if not records:
        sys.exit(f"plot_sweep: error: {args.results}: no finished point to plot")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(out_dir, exist_ok=True)
    try:
        x = XAxis(records + refused, pick_axis(records, args.x))
        plot_step_time(records, x, out_dir, refused)
        plot_ratio(records, x, out_dir, refused)
        plot_phases(records, x, out_dir)
        plot_throughput(records, x, out_dir, refused)
        if args.trace:
            plot_timeline(args.trace, out_dir)
    except (PlotError, ValueError) as e:
        sys.exit(f"plot_sweep: error: {args.results}: {e}")


if __name__ == "__main__":
    main()
