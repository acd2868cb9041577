#!/usr/bin/env python3
"""Checks that the plan's bound is at or below the simulated step of every
layout of a plan, pruned ones included (a bound above a step is a bug):
`epsim plan ... --json --emit-sweep S` gives each layout's bounds, `epsim
sweep S --results R` simulates every layout the plan checked.
Usage: check_bound_below_step.py PLAN_JSON SWEEP_RESULTS [min_comm_pruned=N]
Prints "check_bound_below_step: ok: ..." with the count of layouts, the
largest bound/step and how many layouts the communication bound decides.
"""
import json
import sys

KEYS = ("tp", "pp", "vpp", "ep", "etp", "dp", "micro_batch", "global_batch", "schedule", "recompute", "zero_stage")


def fail(message):
    print("check_bound_below_step: " + message)
    sys.exit(1)


plan = json.load(open(sys.argv[1]))["platforms"][0]
steps = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    if r.get("status") != "ok":
        fail(f"point {r.get('point')} failed: {r.get('error')}")
    c = {k.split(".")[-1]: v for k, v in r["coordinates"].items()}
    steps[tuple(str(c[k]) for k in KEYS)] = r["result"]["step"]["sim_s"]
pins = dict(a.split("=", 1) for a in sys.argv[3:])

checked, worst, comm, comm_pruned = 0, 0.0, 0, 0
for c in plan["candidates"]:
    if c["status"] not in ("simulated", "bound", "not_simulated"):
        continue
    key = tuple(str(c["layout"][k]) for k in KEYS)
    if key not in steps:
        fail(f"{c['name']}: not in the sweep's results")
    step = steps[key]
    for name in ("bound_s", "compute_bound_s", "comm_bound_s"):
        if not c[name] <= step * (1 + 1e-9):
            fail(f"{c['name']}: {name} {c[name]:.6g} s above its simulated step {step:.6g} s")
    checked += 1
    worst = max(worst, c["bound_s"] / step)
    comm += c["comm_bound_s"] > c["compute_bound_s"]
    comm_pruned += c["status"] == "bound" and c["comm_bound_s"] > c["compute_bound_s"]
if checked != len(steps):
    fail(f"{len(steps)} simulated points, {checked} layouts passed the checks")
if comm_pruned < int(pins.get("min_comm_pruned", 0)):
    fail(f"only {comm_pruned} layouts pruned by the communication bound")
print(f"check_bound_below_step: ok: {checked} layouts ({comm_pruned} pruned by the communication bound, which decides "
      f"{comm}), every bound at or below its step, the largest at {worst:.3f} of it")
