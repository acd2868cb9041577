#!/usr/bin/env python3
"""Times a compute file's dense GEMMs again on one GPU and records the SM
clock and power while each runs, to test the mechanism docs/validation.md
names for the H200 GEMM misses: where the smaller operand fits in L2, the
kernel re-reads it from L2 instead of HBM, draws less power and holds a
higher clock under the power limit.

  python3 tools/profiling/gemm_clocks.py validation/h200-gemm.toml \\
      [--out gemm_clocks.csv] [--l2 50MB] [--sustain-ms 400] [--dry-run]

Each row runs as the reference benchmark ran it (torch.mm for BF16,
torch._scaled_mm with per-tensor scales for FP8, ~40 ms of back-to-back
calls timed by CUDA events), then for --sustain-ms more, while
`nvidia-smi` samples the SM clock, power and temperature every 10 ms.
Writes one CSV line per row: the shape, the smaller operand in MB and its
regime against the L2 (fits half / fits / exceeds), the time per call,
TFLOP/s, the mean SM clock and power over the timed window, and
TFLOP/s per GHz. If the mechanism holds, TFLOP/s per GHz is about the same
in every regime while the clock is higher where the operand fits; if the
rate per GHz differs instead, the kernels differ, not the clocks. The
summary prints the medians per regime and dtype. No clock is locked or
changed. --dry-run lists the rows and their regimes without importing
torch.
"""
import argparse, csv, datetime, os, statistics, subprocess, sys, threading, time, tomllib


def size_bytes(text):
    units = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
    for unit, scale in sorted(units.items(), key=lambda u: -len(u[0])):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def regime(smaller, l2):
    return "fits_half" if smaller <= l2 / 2 else "fits" if smaller <= l2 else "exceeds"


def rows_of(path, l2):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    out = []
    for r in doc.get("row", []):
        if r.get("op") != "gemm":
            continue  # grouped GEMMs read every expert's weights once: no operand stays in L2
        width = 1 if r["dtype"] == "fp8" else 2
        smaller = min(r["m"], r["n"]) * r["k"] * width
        out.append(dict(name=r["name"], dtype=r["dtype"], m=r["m"], n=r["n"], k=r["k"],
                        reference_us=r["seconds"] * 1e6, smaller_MB=smaller / 1e6, regime=regime(smaller, l2)))
    return out


class Sampler:
    """nvidia-smi every 10 ms in the background: (time, SM MHz, W, C)."""

    def __init__(self, gpu):
        self.samples = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "-i", str(gpu), "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
             "--format=csv,noheader,nounits", "-lms", "10"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                when = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                self.samples.append((when, float(parts[1]), float(parts[2]), float(parts[3])))
            except (ValueError, IndexError):
                continue  # a field this driver cannot report: no sample

    def window(self, start, end):
        return [s for s in self.samples if start <= s[0] <= end]

    def stop(self):
        self.proc.terminate()


def measure(torch, row, sustain_ms, sampler):
    dev = torch.device("cuda")
    a = torch.randn(row["m"], row["k"], device=dev, dtype=torch.bfloat16)
    b = torch.randn(row["n"], row["k"], device=dev, dtype=torch.bfloat16)
    if row["dtype"] == "bf16":
        bt = b.t()
        fn = lambda: torch.mm(a, bt)
    else:
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev, dtype=torch.float32)
        fn = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    one_ms = max(s.elapsed_time(e), 1e-3)
    calls = max(3, int((40.0 + sustain_ms) / one_ms))
    started = time.time()
    s.record()
    for _ in range(calls):
        fn()
    e.record(); torch.cuda.synchronize()
    ended = time.time()
    seconds = s.elapsed_time(e) / calls / 1e3
    time.sleep(0.05)  # the sampler's last lines
    window = sampler.window(started, ended) if sampler else []
    clock = statistics.mean(w[1] for w in window) if window else float("nan")
    power = statistics.mean(w[2] for w in window) if window else float("nan")
    temp = max(w[3] for w in window) if window else float("nan")
    tflops = 2 * row["m"] * row["n"] * row["k"] / seconds / 1e12
    del a, b
    torch.cuda.empty_cache()
    return dict(measured_us=seconds * 1e6, tflops=tflops, sm_MHz=clock, power_W=power, max_temp_C=temp,
                tflops_per_GHz=tflops / (clock / 1e3) if clock == clock else float("nan"), samples=len(window))


def summary(rows):
    print("regime     dtype  rows  median TFLOP/s  median SM MHz  median W  median TFLOP/s per GHz")
    for reg in ("fits_half", "fits", "exceeds"):
        for dtype in ("bf16", "fp8"):
            sel = [r for r in rows if r["regime"] == reg and r["dtype"] == dtype and r.get("samples", 0) > 0]
            if not sel:
                continue
            med = lambda key: statistics.median(r[key] for r in sel)
            print("{:<10} {:<5} {:>5} {:>15.1f} {:>14.0f} {:>9.0f} {:>24.1f}".format(
                reg, dtype, len(sel), med("tflops"), med("sm_MHz"), med("power_W"), med("tflops_per_GHz")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", help="a compute measurement file (kind = \"compute\"); its dense GEMM rows run")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "gemm_clocks.csv"))
    ap.add_argument("--l2", default="50MB", help="the GPU's L2 (H100/H200 SXM: 50MB)")
    ap.add_argument("--sustain-ms", type=float, default=400.0, help="back-to-back time after the reference's 40 ms")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--dry-run", action="store_true", help="list the rows and their regimes, measure nothing")
    args = ap.parse_args()
    try:
        rows = rows_of(args.file, size_bytes(args.l2))
    except (OSError, KeyError, ValueError, tomllib.TOMLDecodeError) as ex:
        sys.exit("gemm_clocks.py: {}: {}".format(args.file, ex))
    if not rows:
        sys.exit("gemm_clocks.py: {}: no dense GEMM rows (op = \"gemm\")".format(args.file))
    if os.path.exists(args.out) and os.path.samefile(args.out, args.file):
        sys.exit("gemm_clocks.py: --out {}: is the compute file it reads; write elsewhere".format(args.out))
    if args.dry_run:
        for r in rows:
            print("{name} {dtype} {m}x{n}x{k} smaller operand {smaller_MB:.1f} MB {regime}".format(**r))
        counts = {reg: sum(r["regime"] == reg for r in rows) for reg in ("fits_half", "fits", "exceeds")}
        print("{} rows: {} fits_half, {} fits, {} exceeds (L2 {})".format(
            len(rows), counts["fits_half"], counts["fits"], counts["exceeds"], args.l2))
        return
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.set_device(args.gpu)
    try:
        sampler = Sampler(args.gpu)
    except OSError:
        sampler = None  # no nvidia-smi: times only
        print("gemm_clocks.py: nvidia-smi not found; clocks not recorded", file=sys.stderr)
    fields = ["name", "dtype", "m", "n", "k", "smaller_MB", "regime", "reference_us", "measured_us", "tflops",
              "sm_MHz", "power_W", "max_temp_C", "tflops_per_GHz", "samples"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            try:
                r.update(measure(torch, r, args.sustain_ms, sampler))
            except RuntimeError as ex:  # out of memory, an FP8 GEMM this build lacks: say so, go on
                print("gemm_clocks.py: {}: {}".format(r["name"], str(ex)[:200]), file=sys.stderr)
                continue
            writer.writerow({k: r.get(k) for k in fields})
            f.flush()
    if sampler:
        sampler.stop()
    summary(rows)


if __name__ == "__main__":
    main()
