#!/usr/bin/python3
"""Gantt chart of one epsim run from its Chrome trace (`epsim run --trace`).

    tools/plot_timeline.py TRACE.json [--out DIR] [--ranks 0,17,42]

Rows are the streams (compute, EP communication, DP communication) of a few
ranks chosen to differ: by default the ranks with the largest, the median
and the smallest compute busy time; --ranks names them instead. Bars are
coloured by task kind (every kind the trace lists in its otherData.task_kinds,
pipeline p2p and TP all-reduce included); waits for peers are a thin grey
strip under their row, so they never hide the transfers; a line marks the end
of the step. Writes timeline.png and timeline.svg.

Fast on large traces: the trace is read once, only the chosen rows are
drawn, and each (row, kind) is one matplotlib collection, not one per event.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot_output import save_figure  # noqa: E402

WAIT = "wait (for peers)"
STREAMS = 3  # tracks per NPU in the trace: tid = local NPU x STREAMS + stream + 1 (sim/report/trace.cpp)


def kind_colours(kinds):
    """One colour per task kind label, by its place in `kinds` (the task kinds
    as epsim lists them in a trace's otherData or a report's task_kinds), so
    that the timeline and the sweep's phase bars agree."""
    cmap = plt.get_cmap("tab20")
    return {k: cmap(i % 20) for i, k in enumerate(kinds)}


def kind_of(event, kinds):
    """The task kind label of a slice, from its name ("L3 dispatch fwd mb1");
    the longest label that matches wins ("TP all-reduce" over "all-reduce")."""
    if event.get("cat") == "wait":
        return WAIT
    name = event.get("name", "")
    matches = [k for k in kinds if k in name]
    return max(matches, key=len) if matches else event.get("cat", "other")


class Trace:
    """The stream events of one trace, grouped by track and by rank.

    kinds:   the task kind labels, from the trace's otherData.task_kinds
    rows:    (pid, tid) -> list of "X" events on that track
    names:   (pid, tid) -> track name ("npu3 compute")
    rank_of: (pid, tid) -> the rank whose stream it is (the track's metadata)
    compute_busy_s: rank -> sum of its compute events' durations (s)
    step_s:  end of the last event (s)
    """

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
        if not isinstance(trace, dict) or "task_kinds" not in trace.get("otherData", {}):
            raise ValueError(f"{path}: no otherData.task_kinds: not a trace of this epsim (`epsim run --trace`)")
        self.kinds = trace["otherData"]["task_kinds"]
        self.rows, self.names, self.rank_of, self.compute_busy_s = {}, {}, {}, {}
        self.step_s = 0.0
        compute_s = {}  # track -> compute busy time
        for e in trace["traceEvents"]:
            ph = e.get("ph")
            if ph == "X":
                key = (e["pid"], e["tid"])
                self.rows.setdefault(key, []).append(e)
                end_us = e["ts"] + e["dur"]
                if end_us > self.step_s * 1e6:
                    self.step_s = end_us / 1e6
                if e.get("cat") == "compute":
                    compute_s[key] = compute_s.get(key, 0.0) + e["dur"] / 1e6
            elif ph == "M" and e.get("name") == "thread_name":
                key = (e["pid"], e["tid"])
                self.names[key] = e["args"]["name"]
                if "rank" in e["args"]:
                    self.rank_of[key] = e["args"]["rank"]
        for key, busy in compute_s.items():
            rank = self.rank_of[key]
            self.compute_busy_s[rank] = self.compute_busy_s.get(rank, 0.0) + busy
        for rank in set(self.rank_of.values()):
            self.compute_busy_s.setdefault(rank, 0.0)

    def ranks(self):
        return sorted(set(self.rank_of.values()))


def differing_ranks(compute_busy_s):
    """The ranks with the largest, the median and the smallest compute busy
    time (ties by lower rank), each once, with the reason it was chosen."""
    order = sorted(compute_busy_s, key=lambda r: (-compute_busy_s[r], r))
    if not order:
        return []
    picks = [(order[0], "slowest"), (order[len(order) // 2], "median"), (order[-1], "fastest")]
    chosen, seen = [], set()
    for rank, why in picks:
        if rank not in seen:
            seen.add(rank)
            chosen.append((rank, why))
    return chosen


def plot_timeline(trace_path, out_dir, ranks=None):
    """Draws the chart; `ranks` (list of int) overrides the chosen ranks.
    Returns (the ranks drawn, the legend's labels). Raises ValueError for a
    rank not in the trace."""
    trace = Trace(trace_path)
    if ranks:
        missing = [r for r in ranks if r not in set(trace.ranks())]
        if missing:
            raise ValueError(f"--ranks: rank {missing[0]} is not in this trace (ranks {trace.ranks()[0]}.."
                             f"{trace.ranks()[-1]})")
        chosen = [(r, "named") for r in ranks]
    else:
        chosen = differing_ranks(trace.compute_busy_s)
    keys = []
    for rank, why in chosen:
        for key in sorted(k for k, r in trace.rank_of.items() if r == rank):
            keys.append((key, rank, why))
    colours = kind_colours(trace.kinds)
    height_in = 0.32 * len(keys) + 1.6
    fig, ax = plt.subplots(figsize=(11, height_in))
    used = set()
    for y, (key, _, _) in enumerate(keys):
        by_kind = {}
        for e in trace.rows.get(key, []):
            by_kind.setdefault(kind_of(e, trace.kinds), []).append((e["ts"] / 1e3, max(e["dur"], 1e-3) / 1e3))
        for kind, spans in by_kind.items():
            used.add(kind)
            if kind == WAIT:  # a thin strip under the row: a wait never covers a slice
                ax.broken_barh(spans, (y + 0.27, 0.13), color="#8c8c8c", linewidth=0, zorder=1)
            else:
                ax.broken_barh(spans, (y - 0.4, 0.65), color=colours.get(kind, "grey"), linewidth=0, zorder=2)
    ax.axvline(trace.step_s * 1e3, color="black", lw=1.0, ls="--")
    ax.set_xlim(0, trace.step_s * 1e3 * 1.02)
    labels, previous = [], None
    for y, (key, rank, why) in enumerate(keys):
        stream = trace.names.get(key, str(key[1])).split(" ", 1)[-1]
        if rank != previous:
            if previous is not None:
                ax.axhline(y - 0.5, color="grey", lw=0.5)
            busy_ms = trace.compute_busy_s.get(rank, 0.0) * 1e3
            labels.append(f"rank {rank} {stream} ({'' if why == 'named' else why + ': '}{busy_ms:.5g} ms computing)")
        else:
            labels.append(f"rank {rank} {stream}")
        previous = rank
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.set_xlabel("simulated time (ms)")
    ax.set_title(f"Timeline of one step ({trace.step_s * 1e3:.5g} ms, dashed line): {len(chosen)} of "
                 f"{len(trace.ranks())} ranks, chosen by compute busy time" if not ranks else
                 f"Timeline of one step ({trace.step_s * 1e3:.5g} ms, dashed line): ranks {', '.join(map(str, ranks))}"
                 f" of {len(trace.ranks())}", fontsize=10)
    shown = [k for k in trace.kinds if k in used]
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in shown]
    if WAIT in used:
        shown.append(WAIT)
        handles.append(plt.Rectangle((0, 0), 1, 0.3, color="#8c8c8c"))
    ax.legend(handles, shown, fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    for ext in ("png", "svg"):
        save_figure(fig, os.path.join(out_dir, f"timeline.{ext}"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(os.path.join(out_dir, "timeline.png"))
    return [r for r, _ in chosen], shown


def parse_ranks(text):
    try:
        ranks = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated rank numbers, got '{text}'")
    if not ranks:
        raise argparse.ArgumentTypeError("expected at least one rank")
    return ranks


def main():
    parser = argparse.ArgumentParser(description="Gantt chart of one epsim run")
    parser.add_argument("trace")
    parser.add_argument("--out", help="output directory (default: beside the trace)")
    parser.add_argument("--ranks", type=parse_ranks,
                        help="comma-separated ranks to draw (default: slowest, median and fastest compute)")
    args = parser.parse_args()
    if not os.path.exists(args.trace):
        sys.exit(f"plot_timeline: error: {args.trace}: no such file")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.trace))
    try:
        plot_timeline(args.trace, out_dir, args.ranks)
    except ValueError as e:
        sys.exit(f"plot_timeline: error: {e}")


if __name__ == "__main__":
    main()
