#!/usr/bin/env python3
"""Checks `epsim plan --json` on stdin against what the search promises
(docs/plan.md): the counts add up, only layouts that passed every check were
simulated, simulated ones come first and fastest first, the plan's bound is
below the replay's bound and the step, no layout slower by bound than the
best step was simulated, and each refused layout names its reason.
Usage: epsim plan ... --json | check_plan_json.py [KEY=VALUE ...]
Each KEY=VALUE pins a figure of the first platform: considered, checked,
simulated, or pruned:<reason> (a count), comm_decides (layouts whose
communication bound exceeds their compute bound), or best (the best layout's name).
"""
import json
import sys


def fail(message):
    print("check_plan_json: " + message)
    sys.exit(1)


doc = json.load(sys.stdin)
for p in doc["platforms"]:
    cands = p["candidates"]
    bound_by = {}
    if p["checked"] != len(cands):
        fail(f"checked {p['checked']} but {len(cands)} candidates listed")
    cheap = sum(n for reason, n in p["pruned"].items() if reason.startswith("cheap check: "))
    if p["considered"] != cheap + len(cands):
        fail(f"considered {p['considered']} != cheap-check skips {cheap} + checked {len(cands)}")
    later = sum(n for reason, n in p["pruned"].items() if not reason.startswith("cheap check: "))
    if later + p["simulated"] != len(cands):
        fail(f"pruned after the cheap checks {later} + simulated {p['simulated']} != checked {len(cands)}")
    sim = [c for c in cands if c["status"] == "simulated"]
    if len(sim) != p["simulated"] or cands[: len(sim)] != sim:
        fail("simulated layouts are not listed first")
    steps = [c["step"]["step_s"] for c in sim]
    if steps != sorted(steps):
        fail("simulated layouts are not ranked fastest first")
    best = steps[0] if steps else float("inf")
    for c in cands:
        if ("step" in c) != (c["status"] == "simulated"):
            fail(f"{c['name']}: status {c['status']} but step {'present' if 'step' in c else 'absent'}")
        if c["status"] in ("invalid", "memory", "too_large") and not c["key"]:
            fail(f"{c['name']}: refused without a key")
        if c["status"] == "simulated":
            s = c["step"]
            if not (0 < c["bound_s"] <= s["replay_bound_s"] * (1 + 1e-9) and s["replay_bound_s"] <= s["step_s"] * (1 + 1e-9)):
                fail(f"{c['name']}: plan bound {c['bound_s']}, replay bound {s['replay_bound_s']}, step {s['step_s']} out of order")
            # The plan's bound is the larger of its two, each at or below the step (a bound above it is a bug).
            if c["bound_s"] != max(c["compute_bound_s"], c["comm_bound_s"]):
                fail(f"{c['name']}: bound {c['bound_s']} is not the larger of compute {c['compute_bound_s']} and communication {c['comm_bound_s']}")
            if c["bound_s"] > best:
                fail(f"{c['name']}: simulated although its bound {c['bound_s']} exceeds the best step {best}")
        if c["status"] == "bound" and not c["bound_s"] > best:
            fail(f"{c['name']}: pruned by bound {c['bound_s']} <= best step {best}")
        if c["status"] == "bound":
            by = "communication" if c["comm_bound_s"] > c["compute_bound_s"] else "compute"
            bound_by[by] = bound_by.get(by, 0) + 1
    for by, n in bound_by.items():
        if p["pruned"].get(f"bound: slower than the best simulated step ({by})", 0) != n:
            fail(f"{n} layouts pruned by the {by} bound, the counts say {p['pruned']}")

first = doc["platforms"][0]
for pin in sys.argv[1:]:
    key, value = pin.split("=", 1)
    if key == "best":
        got = next((c["name"] for c in first["candidates"] if c["status"] == "simulated"), "")
    elif key == "comm_decides":  # layouts whose communication bound is the larger
        got = sum(1 for c in first["candidates"] if c["status"] != "invalid" and c["comm_bound_s"] > c["compute_bound_s"])
    elif key.startswith("pruned:"):
        got = first["pruned"].get(key[len("pruned:"):], 0)
    else:
        got = first[key]
    if str(got) != value:
        fail(f"{key}: expected {value}, got {got}")
print("check_plan_json: ok")
