#!/usr/bin/env python3
"""Published training throughputs of MoE models other than DeepSeek-V3's
production run, predicted by `epsim run` on the layouts that produced them
(docs/validation.md, "Other MoE models"). Nothing is fitted to these
numbers: each is a prediction of the presets as they stand.

Cases (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md,
26.02 container, DGX-H100; routing force-balanced, token-dropless):
  gpt-oss-120b     64 H100, BF16, TP1 PP4 EP8, GBS 1280     5993 tokens/s/GPU
  qwen3-235b-a22b  256 H100, FP8, TP2 PP8 VP4 EP32, GBS 8192 1633 tokens/s/GPU

A case whose full micro-batch count is too many to replay (Qwen3's 512 per
pipeline) is run at two smaller counts m0 < m1, multiples of the pipeline
depth, and extrapolated: with identical micro-batches each further pp of
them adds one steady-state round to every stage and nothing to the bubble,
so T(M) = T(m0) + (M - m0) / (m1 - m0) x (T(m1) - T(m0)) (exact for identical
micro-batches; here each has its own routing draw).

Usage: published-throughput.py EPSIM [CASE]...   (default: every case)
Prints one line per case: predicted tokens/s/GPU, published, the ratio.
"""
import json
import subprocess
import sys

CASES = {
    "gpt-oss-120b": {
        "platform": ["--platform", "h100"],
        "micro_batches": 80,  # 1280 sequences / DP16
        "runs": None,  # replayed in full
        "published": 5993.0,
        "source": "Megatron-Bridge 26.02, DGX-H100, 64 GPUs, BF16",
    },
    "qwen3-235b-a22b": {
        "platform": ["--platform", "h100", "--set", "platform.node.count=32"],
        "micro_batches": 512,  # 8192 sequences / DP16
        "runs": (16, 24),
        "published": 1633.0,
        "source": "Megatron-Bridge 26.02, DGX-H100, 256 GPUs, FP8",
    },
}


def step_s(epsim, case, name, micro_batches):
    cmd = [epsim, "run", "--json", "--workload", name] + case["platform"]
    if micro_batches is not None:
        cmd += ["--set", f"parallel.micro_batches={micro_batches}"]
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return report["step"]["sim_s"], report


def predict(epsim, name):
    case = CASES[name]
    if case["runs"] is None:
        t, report = step_s(epsim, case, name, None)
        how = f"{case['micro_batches']} micro-batches replayed"
    else:
        m0, m1 = case["runs"]
        t0, report = step_s(epsim, case, name, m0)
        t1, _ = step_s(epsim, case, name, m1)
        m = case["micro_batches"]
        t = t0 + (m - m0) / (m1 - m0) * (t1 - t0)
        how = f"T({m}) = T({m0}) + {m - m0}/{m1 - m0} x (T({m1}) - T({m0})) = {t0:.4f} s + {(m - m0) / (m1 - m0):g} x {t1 - t0:.4f} s"
    scenario = report["scenario"]
    tokens = case["micro_batches"] * scenario["dp"] * scenario["micro_batch"] * scenario["sequence_length"]
    gpus = scenario["tp"] * scenario["dp"] * scenario["pp"]
    per_gpu = tokens / t / gpus
    return per_gpu, t, how


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    epsim, names = argv[1], argv[2:] or list(CASES)
    for name in names:
        if name not in CASES:
            raise SystemExit(f"published-throughput.py: error: unknown case {name} (cases: {', '.join(CASES)})")
        per_gpu, t, how = predict(epsim, name)
        case = CASES[name]
        print(f"{name}: predicted {per_gpu:.1f} tokens/s/GPU, published {case['published']:.0f} ({case['source']}): "
              f"x{per_gpu / case['published']:.3f}; step {t:.4f} s ({how})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
