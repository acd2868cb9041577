#!/usr/bin/env python3
"""Turns one section of OpenXLA's matmul performance table (kDefaultMatmulPTable
in xla/backends/gpu/cost_model/matmul_interpolator_data.h: FLOP/s of single
dots by b, m, n, k and dtype, each the median CUPTI kernel time of five runs,
matmul_perf_table_gen) into an epsim compute measurement file (kind =
"compute", docs/validation.md "Compute tables"). Its input is that section as
CSV (b,m,n,k,bf16,fp8_e4m3,f32: the keys "bf16xbf16->bf16" and
"f8e4m3fnxf8e4m3fn->bf16"); the unbatched rows (b = 1) become BF16 gemm rows,
timed as 2 m n k / FLOP/s. The FP8 figures are left out: the sm_90 section's
reach 2,424 TFLOP/s at 4096^3, above the H100's dense FP8 peak (1,979), so
the median kernel time of an FP8 dot is not its whole time (it compiles to
more than one kernel).
  python3 tools/profiling/xla_to_compute_toml.py SECTION.csv OUT.toml NAME PLATFORM STACK NPU CALIBRATION...
CALIBRATION: rows marked calibration, as m:n:k (4096:4096:4096); none: every row a prediction."""
import csv, sys

src, out, name, platform, stack, npu = sys.argv[1:7]
cal = {tuple(c.split(":")) for c in sys.argv[7:]}
XLA = ("tensorflow/tensorflow third_party/xla/xla/backends/gpu/cost_model/matmul_interpolator_data.h "
       "(a305421)")
with open(src) as f:
    rows = [r for r in csv.DictReader(f) if r["b"] == "1"]
lines = [f'''# OpenXLA's matmul performance table, section {name} ({XLA}):
# single dots compiled by XLA (cuBLAS), each the median kernel time of five
# runs under CUPTI (xla/tools/matmul_perf_table_gen), BF16, predicted row
# by row by the {stack} stack. Device time only: the stack's host and launch
# costs are set to zero. The table's FP8 figures are left out (on sm_90 they
# exceed the dense FP8 peak: the tracer's median kernel is not the whole
# dot). Rows marked calibration would set one stack parameter each; every
# other row is a prediction. Written by tools/profiling/xla_to_compute_toml.py
# from that section as CSV.
#   epsim validate validation/xla-{name.replace("_", "")}-gemm.toml
schema = 1
kind = "compute"
source = "OpenXLA matmul perf table ({XLA}), {name}: XLA dots, CUPTI median kernel time"
platform = "{platform}"

[platform_set]
"npu.model" = "{npu}"
"stack.name" = "{stack}"
"stack.framework.launch" = "0us"
"stack.framework.host_per_kernel" = "0us"
''']
for dtype, col in (("bf16", "bf16"),):
    for r in rows:
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        seconds = 2.0 * m * n * k / int(r[col])
        lines.append(f'''
[[row]]
name = "xla.{dtype}.{m}x{n}x{k}"
op = "gemm"
dtype = "{dtype}"
m = {m}
n = {n}
k = {k}
seconds = {seconds:.6e}
''' + ("calibration = true\n" if (str(m), str(n), str(k)) in cal else ""))
with open(out, "w") as f:
    f.write("".join(lines))
