#!/usr/bin/python3
"""Tests of tools/plot_sweep.py, tools/plot_timeline.py and tools/plot_serving.py.

    EPSIM=build/tools/epsim EPSIM_ROOT=. test_plots.py [SweepAxis|SweepPlots|ServingCurve|ServingLayouts|TimelinePlot]

SweepAxis: the choice of the x axis on tables of small synthetic records.
SweepFeasibility: points that do not fit in HBM, refused or simulated anyway,
are marked, never dropped; a power-of-two axis is log2 with two points; the
ratio axis fits the ratios.
SweepPlots: a 4-point sweep of tiny-moe on a2 (a string axis first, a numeric
one second): the axis chosen, the stacked parts equal to the step time, the
files written, a bad --x. ServingCurve: `epsim serve --json` of a tiny
decode step: latency and throughput grow with the batch, the best batch
meets --tpot and the next replayed one does not, --micro-batches keeps each
batch's fastest count, the plot is written.
ServingLayouts: `epsim serve --ep-list 8,16`: a curve per layout, each the
plain curve of that layout, the best layout the one serving most within
--tpot, one line when none meets it, --traffic sizing each layout's pool
(the best then the fewest nodes), every layout plotted.
TimelinePlot: a tiny-moe trace with skewed (Zipf)
routing: the ranks chosen differ and are the slowest, median and fastest,
--ranks, a rank not in the trace.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("EPSIM_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
EPSIM = os.environ.get("EPSIM", os.path.join(ROOT, "build", "tools", "epsim"))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import plot_serving  # noqa: E402
import plot_sweep  # noqa: E402
import plot_timeline  # noqa: E402


def record(point, axes, coordinates):
    return {"point": point, "axes": axes, "coordinates": coordinates, "status": "ok"}


class SweepAxis(unittest.TestCase):
    def test_first_varying_axis_in_spec_order_even_if_strings(self):
        # The spec's first axis holds strings; the numeric second one must not win.
        axes = ["platform.scaleout.nic_bandwidth", "platform.scaleout.oversubscription"]
        rs = [record(i, axes, {axes[0]: nic, axes[1]: o})
              for i, (nic, o) in enumerate([("200Gbps", 1.0), ("200Gbps", 2.0), ("400Gbps", 1.0), ("400Gbps", 2.0)])]
        self.assertEqual(plot_sweep.pick_axis(rs), axes[0])
        x = plot_sweep.XAxis(rs, axes[0])
        self.assertFalse(x.numeric)
        self.assertEqual(x.categories, ["200Gbps", "400Gbps"])
        self.assertEqual([x.of(r) for r in rs], [0, 0, 1, 1])
        self.assertEqual([label for label, _ in plot_sweep.series(rs, axes[0])],
                         ["scaleout.oversubscription=1.0", "scaleout.oversubscription=2.0"])

    def test_constant_axis_is_skipped(self):
        axes = ["schedule", "workload.parallel.ep"]
        rs = [record(i, axes, {"schedule": "overlap", "workload.parallel.ep": ep}) for i, ep in enumerate([8, 16, 32])]
        self.assertEqual(plot_sweep.pick_axis(rs), "workload.parallel.ep")
        self.assertTrue(plot_sweep.XAxis(rs, "workload.parallel.ep").numeric)
        self.assertEqual([label for label, _ in plot_sweep.series(rs, "workload.parallel.ep")], [""])

    def test_zipped_axis_is_not_a_choice_and_not_a_series(self):
        axes = ["platform.node.count", "workload.parallel.ep", "schedule"]
        rs = [record(i, axes, {"platform.node.count": n, "workload.parallel.ep": 8 * n, "schedule": s})
              for i, (n, s) in enumerate([(1, "serial"), (1, "overlap"), (2, "serial"), (2, "overlap")])]
        self.assertEqual(plot_sweep.pick_axis(rs), "platform.node.count")
        self.assertEqual(plot_sweep.pick_axis(rs, "schedule"), "schedule")
        self.assertEqual([label for label, _ in plot_sweep.series(rs, "platform.node.count")],
                         ["schedule=serial", "schedule=overlap"])

    def test_unknown_x_names_the_axes(self):
        rs = [record(0, ["seed"], {"seed": 1}), record(1, ["seed"], {"seed": 2})]
        with self.assertRaisesRegex(plot_sweep.PlotError, r"--x ep: not an axis of this sweep \(axes: seed\)"):
            plot_sweep.pick_axis(rs, "ep")
        self.assertEqual(plot_sweep.pick_axis([record(0, ["seed"], {"seed": 1})]), None)

    def test_binding_bound(self):
        self.assertEqual(plot_sweep.binding_bound({"critical_path_bound_s": 2.0, "rank_streams_bound_s": 1.0}),
                         "critical path")
        self.assertEqual(plot_sweep.binding_bound({"critical_path_bound_s": 1.0, "rank_streams_bound_s": 2.0}),
                         "rank streams")
        self.assertEqual(plot_sweep.binding_bound({"critical_path_bound_s": 2.0, "rank_streams_bound_s": 2.0}), "both")
        self.assertIsNone(plot_sweep.binding_bound({"bound_s": 2.0}))

    def test_stacked_parts_of_a_report_without_communication(self):
        with self.assertRaisesRegex(plot_sweep.PlotError, "communication.exposed_mean_s"):
            plot_sweep.stacked_parts({"step": {"sim_s": 1.0}, "phases": []})


class SweepPlots(unittest.TestCase):
    AXES = ["platform.scaleout.nic_bandwidth", "platform.scaleout.oversubscription"]

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="epsim-plots-")
        spec = os.path.join(cls.work.name, "spec.toml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write('schema_version = 1\n[base]\nplatform = "a2"\nworkload = "tiny-moe"\nschedule = "overlap"\n'
                    '[[axis]]\nkey = "platform.scaleout.nic_bandwidth"\nvalues = ["100Gbps", "200Gbps"]\n'
                    '[[axis]]\nkey = "platform.scaleout.oversubscription"\nvalues = [1.0, 2.0]\n')
        subprocess.run([EPSIM, "sweep", spec, "-j", "2", "-q"], check=True)
        cls.results = os.path.join(cls.work.name, "spec.results.jsonl")
        cls.records = plot_sweep.latest_ok_records(cls.results)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_all_points_ran(self):
        self.assertEqual(len(self.records), 4)

    def test_string_axis_first_is_the_x_axis(self):
        self.assertEqual(plot_sweep.pick_axis(self.records), self.AXES[0])

    def test_stacked_parts_sum_to_the_step_time(self):
        for r in self.records:
            result = r["result"]
            parts = plot_sweep.stacked_parts(result)
            step_s = result["step"]["sim_s"]
            self.assertAlmostEqual(sum(s for _, s in parts), step_s, delta=1e-9 * step_s)
            self.assertTrue(all(s >= 0 for _, s in parts), parts)
            names = [n for n, _ in parts]
            self.assertEqual(names[-2:], [plot_sweep.EXPOSED, plot_sweep.IDLE])
            self.assertNotIn("dispatch", names)
            # The compute parts are the mean rank's compute busy time.
            compute_s = sum(s for n, s in parts[:-2])
            self.assertAlmostEqual(compute_s, result["straggler"]["mean_compute_s"], delta=1e-9 * step_s)
            self.assertAlmostEqual(dict(parts)[plot_sweep.EXPOSED], result["communication"]["exposed_mean_s"],
                                   delta=0)

    def test_bound_is_the_larger_part(self):
        for r in self.records:
            step = r["result"]["step"]
            binds = plot_sweep.binding_bound(step)
            larger = max(step["critical_path_bound_s"], step["rank_streams_bound_s"])
            self.assertAlmostEqual(step["bound_s"], larger, delta=1e-12 * larger)
            self.assertIn(binds, ("critical path", "rank streams", "both"))

    def test_script_writes_every_plot(self):
        out = os.path.join(self.work.name, "plots")
        done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot_sweep.py"), self.results,
                               "--out", out], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        for name in ("step_time", "ratio", "phases", "throughput"):
            for ext in ("png", "svg"):
                self.assertGreater(os.path.getsize(os.path.join(out, f"{name}.{ext}")), 1000, f"{name}.{ext}")

    def test_script_rejects_an_unknown_axis(self):
        done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot_sweep.py"), self.results,
                               "--x", "workload.parallel.ep", "--out", self.work.name], capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--x workload.parallel.ep: not an axis of this sweep (axes: "
                      "platform.scaleout.nic_bandwidth, platform.scaleout.oversubscription)", done.stderr)


class SweepFeasibility(unittest.TestCase):
    """Three points of tiny-moe along the vocabulary (numbers of two only): one
    fits, one is refused for memory (--keep-going), one is simulated anyway
    (memory.allow_oversubscribed): none is dropped, both misfits are marked."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="epsim-feasible-")
        spec = os.path.join(cls.work.name, "spec.toml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write('schema_version = 1\n[base]\nplatform = "a2"\nworkload = "tiny-moe"\n'
                    'set = ["platform.node.count=1", "workload.parallel.ranks_per_node=8"]\n'
                    '[[axis]]\nkey = "workload.model.vocab"\nvalues = [1024, 16777216, 8388608]\n'
                    '[[axis]]\nkey = "workload.memory.allow_oversubscribed"\nvalues = [false, false, true]\n'
                    'zip_with = "workload.model.vocab"\n')
        subprocess.run([EPSIM, "sweep", spec, "-q", "--keep-going"], capture_output=True)
        everything = plot_sweep.latest_records(os.path.join(cls.work.name, "spec.results.jsonl"))
        cls.records = [r for r in everything if r["status"] == "ok"]
        cls.refused = plot_sweep.refused_for_memory(everything)
        cls.x = plot_sweep.XAxis(cls.records + cls.refused, "workload.model.vocab")

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_the_misfits_are_found(self):
        self.assertEqual([r["coordinates"]["workload.model.vocab"] for r in self.refused], [16777216])
        self.assertEqual([plot_sweep.oversubscribed(r) for r in self.records], [False, True])
        headroom = [plot_sweep.throughput_of(r["result"])[2] for r in self.records]
        self.assertGreater(headroom[0], 0)
        self.assertLess(headroom[1], 0)

    def test_a_power_of_two_axis_is_log2_even_with_few_points(self):
        self.assertTrue(self.x.log2(self.records + self.refused))
        two = [record(i, ["workload.parallel.ep"], {"workload.parallel.ep": ep}) for i, ep in enumerate([8, 16])]
        self.assertTrue(plot_sweep.XAxis(two, "workload.parallel.ep").log2(two))

    def test_plots_mark_them(self):
        labels = plot_sweep.plot_step_time(self.records, self.x, self.work.name, self.refused)
        self.assertIn("does not fit in HBM (refused)", labels)
        self.assertIn("does not fit in HBM (simulated anyway)", labels)
        panels = plot_sweep.plot_throughput(self.records, self.x, self.work.name, self.refused)
        for panel in panels:
            self.assertIn("does not fit in HBM (refused)", panel)
        self.assertIn("does not fit in HBM (simulated anyway)", panels[2])

    def test_ratio_axis_fits_the_ratios(self):
        low, high = plot_sweep.plot_ratio(self.records, self.x, self.work.name, self.refused)
        ratios = [plot_sweep.ratio_of(r) for r in self.records]
        self.assertGreater(low, 0.5)  # not from 0: x1.003 and x1.05 must look apart
        self.assertLessEqual(low, min(ratios + [1.0]))
        self.assertGreaterEqual(high, max(ratios))


class ServingCurve(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        base = [EPSIM, "serve", "--platform", "a2", "--set", "node.count=1", "--workload",
                os.path.join(ROOT, "tests", "tools", "serve", "tiny_decode.toml"), "--batches", "2,8,32,128", "--json"]
        first = json.loads(subprocess.run(base, check=True, capture_output=True, text=True).stdout)
        # A limit between the 8- and the 32-sequence steps' TPOT: the search bisects between them.
        lat = {p["batch"]: p["latency_s"] for p in first["points"]}
        cls.limit_ms = (lat[8] + lat[32]) / 2 * 1e3
        cls.path = os.path.join(cls.tmp.name, "serve.json")
        out = subprocess.run(base + ["--tpot", f"{cls.limit_ms:.6f}ms"], check=True, capture_output=True, text=True)
        with open(cls.path, "w", encoding="utf-8") as f:
            f.write(out.stdout)
        cls.doc = json.loads(out.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_latency_and_throughput_grow_with_the_batch(self):
        pts = self.doc["points"]
        self.assertEqual([p["batch"] for p in pts], sorted(p["batch"] for p in pts))
        self.assertGreater(len(pts), 4)  # the four asked for and the bisection's
        for a, b in zip(pts, pts[1:]):
            self.assertGreater(b["latency_s"], a["latency_s"])
            self.assertGreater(b["tokens_per_s_per_npu"], a["tokens_per_s_per_npu"])

    def test_best_meets_the_limit_and_the_next_does_not(self):
        pts = self.doc["points"]
        i = [p["batch"] for p in pts].index(self.doc["best_batch"])
        self.assertLessEqual(pts[i]["latency_s"] * 1e3, self.limit_ms)
        self.assertGreater(pts[i + 1]["latency_s"] * 1e3, self.limit_ms)
        self.assertEqual(pts[i + 1]["batch"] - pts[i]["batch"], 2)  # bisected down to one micro-batch pair

    def test_tokens_per_npu_are_the_batch_over_the_tpot(self):
        for p in self.doc["points"]:
            self.assertAlmostEqual(p["tokens_per_s_per_npu"], p["batch"] / p["latency_s"], delta=1e-6 * p["batch"] / p["latency_s"])

    def test_each_batch_keeps_its_fastest_micro_batch_count(self):
        base = [EPSIM, "serve", "--platform", "a2", "--set", "node.count=1", "--workload",
                os.path.join(ROOT, "tests", "tools", "serve", "tiny_decode.toml"), "--batches", "2,8,32", "--json"]
        def curve(*extra):
            out = subprocess.run(base + list(extra), check=True, capture_output=True, text=True).stdout
            return {p["batch"]: p for p in json.loads(out)["points"]}
        both = curve("--micro-batches", "1,2")
        one, two = curve("--micro-batches", "1"), curve("--micro-batches", "2")
        self.assertEqual(two, curve())  # the workload's own count (2): the same steps
        for b, p in both.items():
            best = min((one[b], two[b]), key=lambda q: (q["step_s"], q["micro_batches"]))
            self.assertEqual(p, best)
        self.assertEqual({p["micro_batches"] for p in one.values()}, {1})

    def test_script_writes_the_plot(self):
        out = os.path.join(self.tmp.name, "serve.png")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "plot_serving.py"), self.path, "--out", out],
                       check=True)
        self.assertGreater(os.path.getsize(out), 1000)
        self.assertTrue(os.path.exists(os.path.join(self.tmp.name, "serve.svg")))


class ServingLayouts(unittest.TestCase):
    """`epsim serve --ep-list` on two A2 nodes: EP8 on one node and EP16 on both."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.workload = os.path.join(ROOT, "tests", "tools", "serve", "tiny_decode.toml")
        cls.base = [EPSIM, "serve", "--platform", "a2", "--set", "node.count=2", "--workload", cls.workload,
                    "--batches", "2,8,32,128", "--json"]
        free = json.loads(subprocess.run(cls.base + ["--ep-list", "8,16"], check=True, capture_output=True,
                                         text=True).stdout)
        # A limit between the 8- and the 32-sequence steps of both layouts: each bisects.
        lat = [{p["batch"]: p["latency_s"] for p in lay["points"]} for lay in free["layouts"]]
        cls.limit_ms = (max(x[8] for x in lat) + min(x[32] for x in lat)) / 2 * 1e3
        cls.path = os.path.join(cls.tmp.name, "layouts.json")
        out = subprocess.run(cls.base + ["--ep-list", "8,16", "--tpot", f"{cls.limit_ms:.6f}ms"], check=True,
                             capture_output=True, text=True).stdout
        with open(cls.path, "w", encoding="utf-8") as f:
            f.write(out)
        cls.doc = json.loads(out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_layouts_in_the_order_asked_each_a_unit_of_ep_ranks(self):
        self.assertEqual([(x["ep"], x["dp"], x["tp"], x["nodes"], x["redundant_experts"]) for x in self.doc["layouts"]],
                         [(8, 8, 1, 1, 0), (16, 16, 1, 2, 0)])

    def test_a_layouts_curve_is_serve_of_that_layout(self):
        # One way to do each thing: the search's EP16 curve is the plain curve with the layout --set.
        plain = json.loads(subprocess.run(self.base + ["--set", "parallel.ep=16", "--set", "parallel.dp=16",
                                                       "--tpot", f"{self.limit_ms:.6f}ms"],
                                          check=True, capture_output=True, text=True).stdout)
        lay = self.doc["layouts"][1]
        self.assertEqual(lay["points"], plain["points"])
        self.assertEqual(lay["best_batch"], plain["best_batch"])

    def test_the_best_layout_serves_most_within_the_limit(self):
        bests = {}
        for lay in self.doc["layouts"]:
            p = next(p for p in lay["points"] if p["batch"] == lay["best_batch"])
            self.assertLessEqual(p["latency_s"] * 1e3, self.limit_ms)
            bests[lay["ep"]] = p["tokens_per_s_per_npu"]
        self.assertEqual(self.doc["best_ep"], max(bests, key=bests.get))

    def test_no_layout_meets_a_limit_is_one_line_naming_the_fastest(self):
        run = subprocess.run(self.base[:-1] + ["--ep-list", "8,16", "--tpot", "1us"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertRegex(run.stderr, r"^epsim: error: --tpot: no layout meets 0\.001 ms: the fastest, EP(8|16) at 2 "
                                     r"sequences per rank, takes [0-9.]+ ms \(TPOT\); use more ranks, a faster "
                                     r"platform or a longer limit\n$")

    def test_traffic_sizes_each_layouts_pool_and_the_best_takes_fewest_nodes(self):
        traffic = 1.0e6
        doc = json.loads(subprocess.run(self.base + ["--ep-list", "8,16", "--tpot", f"{self.limit_ms:.6f}ms",
                                                     "--traffic", str(traffic)],
                                        check=True, capture_output=True, text=True).stdout)
        nodes = {}
        for lay in doc["layouts"]:
            best = next(p for p in lay["points"] if p["batch"] == lay["best_batch"])
            pool = lay["pool"]
            self.assertAlmostEqual(pool["nodes_needed"], traffic / best["tokens_per_s_per_node"], delta=1e-9)
            self.assertEqual(pool["unit_nodes"], lay["nodes"])
            self.assertEqual(pool["units"], math.ceil(pool["nodes_needed"] / lay["nodes"]))
            self.assertEqual(pool["nodes"], pool["units"] * lay["nodes"])
            self.assertNotIn("kv_handoff_Bps", pool)  # decode hands nothing on
            nodes[lay["ep"]] = pool["nodes"]
        self.assertEqual(nodes[doc["best_ep"]], min(nodes.values()))

    def test_script_plots_every_layout(self):
        out = os.path.join(self.tmp.name, "layouts.png")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "plot_serving.py"), self.path, "--out", out],
                       check=True)
        self.assertGreater(os.path.getsize(out), 1000)
        import plot_serving as ps
        curves = ps.curves_of(self.doc)
        self.assertEqual(len(curves), 2)
        self.assertEqual([thick for _, _, thick in curves], [x["ep"] == self.doc["best_ep"] for x in self.doc["layouts"]])


class TimelinePlot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="epsim-timeline-")
        cls.trace_path = os.path.join(cls.work.name, "trace.json")
        run = subprocess.run([EPSIM, "run", "--platform", "a2", "--workload", "tiny-moe", "--json",
                              "--trace", cls.trace_path], check=True, capture_output=True, text=True)
        cls.report = json.loads(run.stdout)
        cls.trace = plot_timeline.Trace(cls.trace_path)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_trace_totals_match_the_report(self):
        self.assertEqual(self.trace.ranks(), list(range(self.report["ranks"])))
        busy = self.trace.compute_busy_s
        # The trace prints each duration to the nanosecond: a rank's sum is
        # off by at most 0.5 ns per compute event it adds up.
        events = sum(1 for row in self.trace.rows.values() for e in row if e.get("cat") == "compute")
        self.assertAlmostEqual(sum(busy.values()) / len(busy), self.report["straggler"]["mean_compute_s"],
                               delta=0.5e-9 * events / len(busy))
        self.assertAlmostEqual(self.trace.step_s, self.report["step"]["sim_s"], delta=1e-9)
        # Every rank has its three streams (compute, ep-comm, dp-comm) as tracks.
        for rank in self.trace.ranks():
            self.assertEqual(sum(1 for r in self.trace.rank_of.values() if r == rank), 3, f"rank {rank}")

    def test_chosen_ranks_differ(self):
        busy = self.trace.compute_busy_s
        chosen = plot_timeline.differing_ranks(busy)
        self.assertEqual([why for _, why in chosen], ["slowest", "median", "fastest"])
        ranks = [r for r, _ in chosen]
        self.assertEqual(len(set(ranks)), 3)
        self.assertEqual(ranks[0], self.report["straggler"]["rank"])
        self.assertEqual(busy[ranks[0]], max(busy.values()))
        self.assertEqual(busy[ranks[2]], min(busy.values()))
        self.assertGreater(busy[ranks[0]], busy[ranks[2]])  # Zipf routing: the ranks really differ

    def test_differing_ranks_of_one_rank_and_of_ties(self):
        self.assertEqual(plot_timeline.differing_ranks({}), [])
        self.assertEqual(plot_timeline.differing_ranks({4: 1.0}), [(4, "slowest")])
        self.assertEqual(plot_timeline.differing_ranks({2: 0.5, 1: 1.0, 0: 1.0}),
                         [(0, "slowest"), (1, "median"), (2, "fastest")])

    def test_named_ranks_and_files(self):
        out = os.path.join(self.work.name, "named")
        os.makedirs(out)
        self.assertEqual(plot_timeline.plot_timeline(self.trace_path, out, [5, 0])[0], [5, 0])
        for ext in ("png", "svg"):
            self.assertGreater(os.path.getsize(os.path.join(out, f"timeline.{ext}")), 1000)

    def test_kinds_come_from_the_trace(self):
        self.assertEqual(self.trace.kinds, self.report["task_kinds"])
        self.assertIn("pipeline p2p", self.trace.kinds)
        self.assertIn("TP all-reduce", self.trace.kinds)
        self.assertEqual(plot_timeline.kind_of({"name": "L3 TP all-reduce fwd mb0"}, self.trace.kinds),
                         "TP all-reduce")
        self.assertEqual(plot_timeline.kind_of({"name": "wait: L3 dispatch fwd mb0", "cat": "wait"}, self.trace.kinds),
                         plot_timeline.WAIT)

    def test_communication_slices_carry_bytes_and_peers(self):
        with open(self.trace_path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        comm = [e for e in events if e.get("cat") == "comm"]
        self.assertTrue(comm)
        self.assertTrue(all("bytes" in e["args"] and "peers" in e["args"] for e in comm))
        dispatch = [e for e in comm if " dispatch " in e["name"]]
        self.assertTrue(any(e["args"]["bytes"] > 0 and e["args"]["peers"] > 0 for e in dispatch))
        self.assertEqual(sum(1 for e in events if e["ph"] == "s"), sum(1 for e in events if e["ph"] == "f"))
        self.assertGreater(sum(1 for e in events if e["ph"] == "s"), 0)  # the critical path's arrows

    def test_rank_not_in_trace(self):
        done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot_timeline.py"), self.trace_path,
                               "--ranks", "3,8", "--out", self.work.name], capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("plot_timeline: error: --ranks: rank 8 is not in this trace (ranks 0..7)", done.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=1)
