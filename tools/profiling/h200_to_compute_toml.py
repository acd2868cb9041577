#!/usr/bin/env python3
"""Turns the H200 kernel tables (../shared/reference/h200/*.csv) into epsim
compute measurement files (kind = "compute", docs/validation.md "Compute
tables"), marking the rows the hopper-eager stack calibrates on.
  python3 tools/profiling/h200_to_compute_toml.py REFERENCE_DIR OUT_DIR
Writes h200-gemm.toml, h200-attention.toml and h200-layer-ops.toml."""
import csv, os, sys

ref, out = sys.argv[1], sys.argv[2]
HEAD = '''# {what} measured on one H200 (../shared/reference/h200/{csv}), predicted row
# by row by the hopper-eager stack (stacks/hopper-eager.toml): rows marked
# calibration set one of its parameters, every other row is a prediction.
# Written by tools/profiling/h200_to_compute_toml.py.
#   epsim validate validation/{name}
schema = 1
kind = "compute"
source = "../shared/reference/h200/{csv}: one H200 SXM, PyTorch 2.11 eager, CUDA events"
platform = "h100"

[platform_set]
"npu.model" = "H200 SXM"
"npu.hbm_bandwidth" = "4.8TBps"
"npu.hbm_capacity" = "141GB"
"stack.name" = "hopper-eager"
'''
# hopper-eager's GEMM parameters, each on its row (stacks/hopper-eager.toml):
# max, half_rows (BF16), the kernel's fixed time, the GEMMs' memory
# roofline and FP8's host time per call; half_n (BF16) and half_k below.
GEMM_CAL = {("dense", "bf16", "dsv3.dense_up.fwd", "4096"), ("dense", "bf16", "trend.n7168k16384", "1024"),
            ("dense", "fp8", "dsv3.dense_up.fwd", "4096"), ("dense", "bf16", "trend.n7168k2048", "64"),
            ("dense", "bf16", "trend.n7168k16384", "64"), ("dense", "fp8", "trend.n7168k2048", "64")}
def gemm_cal(r):
    key = (r["kind"], r["dtype"], r["tag"], r["m_rows_per_group"])
    if key in GEMM_CAL: return True
    if r["kind"] == "dense" and r["dtype"] == "bf16" and r["tag"] == "trend.n" and r["n"] == "256": return True
    if r["kind"] == "dense" and r["tag"] == "trend.k" and r["k"] == "256": return True
    if r["kind"] == "grouped" and r["groups"] == "8" and r["m_rows_per_group"] == "4096": return True
    # The grouped kernels' weight-streaming rate ([grouped_gemm.*] memory), each dtype's.
    if r["kind"] == "grouped" and r["tag"] == "dsv3.up" and r["groups"] == "32" and r["m_rows_per_group"] == "128":
        return True
    return False

def write(name, body):
    with open(os.path.join(out, name), "w") as f:
        f.write(body)

rows = list(csv.DictReader(open(os.path.join(ref, "gemm.csv"))))
body = HEAD.format(what="Dense and grouped GEMMs", csv="gemm.csv", name="h200-gemm.toml")
for r in rows:
    grouped = r["kind"] == "grouped"
    body += "\n[[row]]\nname = \"{}\"\nop = \"{}\"\ndtype = \"{}\"\n".format(r["tag"], "grouped_gemm" if grouped else "gemm", r["dtype"])
    if grouped: body += "groups = {}\n".format(r["groups"])
    body += "m = {}\nn = {}\nk = {}\nseconds = {}\n".format(r["m_rows_per_group"], r["n"], r["k"], r["seconds"])
    if gemm_cal(r): body += "calibration = true\n"
write("h200-gemm.toml", body)

rows = list(csv.DictReader(open(os.path.join(ref, "attention.csv"))))
body = HEAD.format(what="Causal flash attention (cuDNN)", csv="attention.csv", name="h200-attention.toml")
for r in rows:
    for p, col in (("forward", "s_fwd"), ("forward_backward", "s_fwd_bwd")):
        cal = (p == "forward" and ((r["tag"] == "trend.d" and r["d_qk"] == "64") or (r["tag"] == "trend.seq" and r["seq"] == "1024"))) \
            or (p == "forward_backward" and r["tag"] == "dsv3.mla")
        body += "\n[[row]]\nname = \"{}\"\nop = \"attention\"\npass = \"{}\"\nheads = {}\nd_qk = {}\nd_v = {}\nseq = {}\nseconds = {}\n".format(
            r["tag"], p, r["heads"], r["d_qk"], r["d_v"], r["seq"], r[col])
        if cal: body += "calibration = true\n"
write("h200-attention.toml", body)

rows = list(csv.DictReader(open(os.path.join(ref, "layer_ops.csv"))))
T = 4096
SHAPES = {"dsv3": (7168, 256, 8, 129280), "qwen3_30b": (2048, 128, 8, 151936), "qwen3_235b": (4096, 128, 8, 151936),
          "gptoss": (2880, 128, 4, 201088), "qwen3": (4096, 128, 8, 151936)}
CAL = {"qwen3_235b.residual_add", "qwen3_235b.rmsnorm", "dsv3.ep64.swiglu", "dsv3.permute", "dsv3.unpermute",
       "dsv3.cross_entropy", "adamw_fused.fp32.250M", "dsv3.router"}
body = HEAD.format(what="The memory-bound operators of a layer, forward", csv="layer_ops.csv", name="h200-layer-ops.toml")
for r in rows:
    name = r["op"]
    kind = name.split(".")[-1] if not name.startswith("adamw") else "adamw"
    seconds = r["s_fwd"] or r["s_fwd_bwd"]
    extra = ""
    if kind == "rmsnorm": op, b = "norm", r["bytes_fwd"]
    elif kind == "residual_add": op, b = "elementwise", r["bytes_fwd"]
    elif kind == "swiglu": op, b = "activation", r["bytes_fwd"]
    elif kind == "permute": op, b = "gather", r["bytes_fwd"]
    elif kind == "unpermute": op, b = "scatter_add", r["bytes_fwd"]
    elif kind == "adamw": op, b = "optimizer", r["bytes_fwd"]
    elif kind == "cross_entropy":
        h, E, k, V = SHAPES[name.split(".")[0]]
        op, b = "loss", T * V * 6  # BF16 logits read, FP32 upcast written and read (epsim's loss bytes)
    elif kind == "router":
        h, E, k, V = SHAPES[name.split(".")[0]]
        op, b = "router", T * E * 4 + T * k * 8
        extra = "m = {}\nn = {}\nk = {}\n".format(T, E, h)
    else:
        continue
    body += "\n[[row]]\nname = \"{}\"\nop = \"{}\"\nbytes = {}\n{}seconds = {}\n".format(name, op, b, extra, seconds)
    if name in CAL: body += "calibration = true\n"
write("h200-layer-ops.toml", body)
