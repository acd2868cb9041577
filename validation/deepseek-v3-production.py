#!/usr/bin/env python3
"""DeepSeek-V3's production step (workloads/presets/deepseek-v3-production.toml:
2,048 H800, PP16 DualPipe, EP64, DP128, 120 micro-batches of one 4096-token
sequence per DP rank) predicted by `epsim run` on its exact symmetric
reduction, and compared with the ~1,543 tokens/s/GPU of DeepSeek's report
(docs/validation.md, "End to end: DeepSeek-V3's production step").

The reduction (docs/validation.md says where it is exact and where not):
  - one EP64 group per stage (dp = ep = 64, 1,024 ranks on 128 nodes): the
    stage's second EP group (EDP2) is an identical replica;
  - m0 = 2 pp and m0 + 2 micro-batches per DP rank: with identical
    micro-batches each further pair (one per direction, one more steady-state
    iteration) adds the same time, so T(M) = T(m0) + (M - m0) / 2 x (T(m0 + 2) - T(m0)).

Usage: deepseek-v3-production.py EPSIM [--schedule dualpipe|1f1b[/no-grad-overlap]]... [--check]
Prints one line per schedule (/no-grad-overlap: parallel.overlap_grad_reduce
= false, the gradient buckets reduced after the whole backward); --check
exits 1 unless DualPipe is within +-15 % of 1,543 tokens/s/GPU and every
other schedule given is slower.
"""
import json
import os
import subprocess
import sys
import tomllib

PUBLISHED_TOKENS_PER_S_PER_GPU = 1543.0  # 180K H800 GPU hours per trillion tokens (report sec. 1)
BAND = 0.15

HERE = os.path.dirname(os.path.abspath(__file__))
PRESET = os.path.join(HERE, "..", "workloads", "presets", "deepseek-v3-production.toml")


def layout():
    with open(PRESET, "rb") as f:
        p = tomllib.load(f)["parallel"]
    return {"pp": p["pp"], "ep": p["ep"], "dp": p["dp"], "micro_batches": p["micro_batches"]}


def run(epsim, lay, config, micro_batches):
    # "1f1b/no-grad-overlap": 1F1B with the gradient buckets reduced after the whole backward.
    schedule, _, variant = config.partition("/")
    extra = ["--set", "parallel.overlap_grad_reduce=false"] if variant == "no-grad-overlap" else []
    if variant not in ("", "no-grad-overlap"):
        raise SystemExit(f"deepseek-v3-production.py: error: unknown variant /{variant} (only /no-grad-overlap)")
    dp = lay["ep"]  # one EP group per stage
    nodes = lay["pp"] * dp // 8
    cmd = [epsim, "run", "--json", "--platform", "h800", "--workload", "deepseek-v3-production",
           "--set", f"platform.node.count={nodes}", "--set", f"parallel.dp={dp}",
           "--set", f"parallel.micro_batches={micro_batches}",
           "--set", f'parallel.schedule="{schedule}"'] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def phase(report, name):
    for p in report["phases"]:
        if p["name"] == name:
            return p["sim_s"]
    return 0.0


def predict(epsim, lay, schedule):
    m0 = 2 * lay["pp"]
    a, b = run(epsim, lay, schedule, m0), run(epsim, lay, schedule, m0 + 2)
    t0, t1 = a["step"]["sim_s"], b["step"]["sim_s"]
    per_pair = t1 - t0
    step = t0 + (lay["micro_batches"] - m0) / 2 * per_pair
    sc = a["scenario"]  # micro-batch and sequence length: the base preset's
    tokens_per_gpu = lay["micro_batches"] * sc["micro_batch"] * sc["sequence_length"] / lay["pp"]
    tps = tokens_per_gpu / step
    t = a["throughput"]
    mfu = tps * t["model_flops_per_token"] / t["peak_flops_per_s_per_npu"]
    return {"schedule": schedule, "m0": m0, "step_m0_s": t0, "step_m0_plus_2_s": t1, "per_pair_s": per_pair,
            "step_s": step, "tokens_per_s_per_gpu": tps, "mfu": mfu, "peak_dtype": t["peak_dtype"],
            "exposed_comm_m0_s": a["communication"]["exposed_mean_s"],
            "grad_sync_m0_s": phase(a, "gradient sync")}


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: deepseek-v3-production.py EPSIM [--schedule dualpipe|1f1b[/no-grad-overlap]]... "
                         "[--check]\n")
        return 2
    epsim, schedules, check = argv[1], [], False
    i = 2
    while i < len(argv):
        if argv[i] == "--schedule" and i + 1 < len(argv):
            schedules.append(argv[i + 1])
            i += 2
        elif argv[i] == "--check":
            check, i = True, i + 1
        else:
            sys.stderr.write(f"deepseek-v3-production.py: error: unknown argument {argv[i]}\n")
            return 2
    schedules = schedules or ["dualpipe"]
    lay = layout()
    results = [predict(epsim, lay, s) for s in schedules]
    for r in results:
        print(f"{r['schedule']}: step {r['step_s']:.3f} s at {lay['micro_batches']} micro-batches "
              f"(T({r['m0']}) {r['step_m0_s']:.4f} s + {(lay['micro_batches'] - r['m0']) // 2} x "
              f"{r['per_pair_s'] * 1e3:.2f} ms per further micro-batch pair), "
              f"{r['tokens_per_s_per_gpu']:.1f} tokens/s/GPU "
              f"({r['tokens_per_s_per_gpu'] / PUBLISHED_TOKENS_PER_S_PER_GPU - 1:+.1%} vs the report's "
              f"{PUBLISHED_TOKENS_PER_S_PER_GPU:.0f}), MFU {r['mfu']:.2%} of the {r['peak_dtype']} peak; "
              f"at {r['m0']} micro-batches: exposed communication {r['exposed_comm_m0_s']:.3f} s per rank, "
              f"gradient sync {r['grad_sync_m0_s']:.3f} s")
    if not check:
        return 0
    dual = next((r for r in results if r["schedule"] == "dualpipe"), None)
    ok = dual is not None and abs(dual["tokens_per_s_per_gpu"] / PUBLISHED_TOKENS_PER_S_PER_GPU - 1) <= BAND
    for r in results:
        if dual is not None and r is not dual and r["step_s"] <= dual["step_s"]:
            ok = False
    print("check: " + ("passed" if ok else "FAILED") +
          f" (DualPipe within +-{BAND:.0%} of {PUBLISHED_TOKENS_PER_S_PER_GPU:.0f} tokens/s/GPU, other schedules slower)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
