#!/usr/bin/env python3
"""Measures a workload's own operators on one device and writes an epsim
compute measurement file (kind = "compute") that a stack prices by
(`[tables] compute`, docs/stacks.md "Measured tables") and `epsim validate`
predicts row by row.

  python3 tools/profiling/profile_ops.py --workload qwen3-30b-a3b \\
      --npu-model "H200 SXM" --out my-h200.toml [--set KEY=VALUE ...]
      [--device cuda|npu] [--dtype bf16|fp8|both] [--dry-run]

The operators come from `epsim workload show W --json` (each compute task's
operators, as the stack prices them): GEMMs and grouped GEMMs by shape, the
attention core forward (and forward + backward), each memory-bound class's
forward kernel by bytes. Shapes are deduplicated, GEMM rows rounded to 64
(the stack interpolates between rows). Each is timed with device events
after warm-up, the median of --repeat runs, with eager PyTorch calls
(torch_npu's on an Ascend NPU where they exist): what a framework that
issues these kernels one by one reaches. --dry-run lists the rows without
importing torch."""
import argparse, json, math, os, statistics, subprocess, sys

MEMORY = ["elementwise", "norm", "activation", "gather", "scatter_add", "router", "loss", "optimizer"]


def operators(args):
    cmd = [args.epsim, "workload", "show", args.workload, "--json"]
    for s in args.set or []:
        cmd += ["--set", s]
    graph = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    rows = {}
    for task in graph["tasks"]:
        for op in task.get("ops", []):
            kind = op["op"]
            if kind in ("gemm", "grouped_gemm"):
                if op["dtype"] not in ("bf16", "fp8"):
                    continue  # FP32 GEMMs (the router's scores) keep the model's price
                m = max(64, int(round(op["m"] / 64.0)) * 64)
                key = (kind, op["dtype"], m, int(op["n"]), int(op["k"]), int(op.get("groups", 0)))
            elif kind == "attention":
                d, c = int(op["head_dim"]), op["context"]
                seq = int(round(2 * c - 1))
                heads = max(1, int(round(op["flops"] / (seq * c * 2.0 * 2 * d))))
                key = ("attention", "bf16", heads, d, seq)
            elif kind in MEMORY and not op.get("backward", False):
                key = (kind, "bf16", int(op["bytes"]))
            else:
                continue  # backward kernels: priced by the model (the stack reads forward rows)
            rows[key] = True
    return sorted(rows)


def toml_row(key, seconds, name):
    kind, dtype = key[0], key[1]
    out = '\n[[row]]\nname = "{}"\nop = "{}"\n'.format(name, kind)
    if kind in ("gemm", "grouped_gemm"):
        _, _, m, n, k, g = key
        out += 'dtype = "{}"\n'.format(dtype)
        if kind == "grouped_gemm":
            out += "groups = {}\n".format(g)
        out += "m = {}\nn = {}\nk = {}\n".format(m, n, k)
    elif kind == "attention":
        _, _, heads, d, seq = key
        out += 'pass = "{}"\nheads = {}\nd_qk = {}\nd_v = {}\nseq = {}\n'.format(seconds[1], heads, d, d, seq)
        seconds = seconds[0]
    else:
        out += "bytes = {}\n".format(key[2])
    return out + "seconds = {:.6e}\n".format(seconds)


def timer(torch, device, repeat):
    dev = torch.npu if device == "npu" else torch.cuda

    def run(fn):
        for _ in range(3):
            fn()
        times = []
        for _ in range(repeat):
            start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            dev.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return statistics.median(times)
    return run


def measure(key, torch, dev, run):
    kind, dtype = key[0], key[1]
    bf16 = torch.bfloat16
    if kind == "gemm":
        _, _, m, n, k, _ = key
        a, b = torch.randn(m, k, device=dev, dtype=bf16), torch.randn(n, k, device=dev, dtype=bf16)
        if dtype == "fp8":
            a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
            one = torch.ones((), device=dev, dtype=torch.float32)
            return run(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=bf16))
        return run(lambda: torch.mm(a, b.t()))
    if kind == "grouped_gemm":
        _, _, m, n, k, g = key
        a, w = torch.randn(g * m, k, device=dev, dtype=bf16), torch.randn(g, n, k, device=dev, dtype=bf16)
        offs = torch.arange(m, g * m + 1, m, device=dev, dtype=torch.int32)
        return run(lambda: torch._grouped_mm(a, w.transpose(-2, -1), offs=offs))
    if kind == "attention":
        _, _, heads, d, seq = key
        q, k_, v = (torch.randn(1, heads, seq, d, device=dev, dtype=bf16, requires_grad=True) for _ in range(3))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        fwd = run(lambda: sdpa(q, k_, v, is_causal=True))
        grad = torch.randn(1, heads, seq, d, device=dev, dtype=bf16)
        both = run(lambda: sdpa(q, k_, v, is_causal=True).backward(grad))
        return [(fwd, "forward"), (both, "forward_backward")]
    # Memory-bound kernels: a representative eager kernel moving the row's bytes.
    n = max(1024, key[2] // 2 // 3)
    x = torch.randn(n, device=dev, dtype=bf16)
    if kind == "elementwise":
        return run(lambda: x + x)  # reads 2, writes 1 per element: 3 x 2 B
    if kind == "norm":
        h = 4096
        y = torch.randn(max(1, key[2] // 4 // h), h, device=dev, dtype=bf16)
        w = torch.ones(h, device=dev, dtype=bf16)
        return run(lambda: torch.nn.functional.rms_norm(y, (h,), w))
    if kind == "activation":
        z = torch.randn(2, max(1, key[2] // 2 // 3 // 2), device=dev, dtype=bf16)
        return run(lambda: torch.nn.functional.silu(z[0]) * z[1])
    if kind == "gather":
        src = torch.randn(max(1, key[2] // 4 // 4096), 4096, device=dev, dtype=bf16)
        idx = torch.randint(0, src.shape[0], (src.shape[0],), device=dev)
        return run(lambda: src.index_select(0, idx))
    if kind == "scatter_add":
        src = torch.randn(max(1, key[2] // 4 // 4096), 4096, device=dev, dtype=bf16)
        idx = torch.randint(0, src.shape[0], (src.shape[0],), device=dev)
        out = torch.zeros_like(src)
        return run(lambda: out.index_add_(0, idx, src))
    if kind == "router":
        logits = torch.randn(max(1, key[2] // 2 // 256), 256, device=dev, dtype=torch.float32)
        return run(lambda: torch.topk(torch.softmax(logits, -1), 8, dim=-1))
    if kind == "loss":
        vocab = 129280
        logits = torch.randn(max(1, key[2] // 2 // vocab), vocab, device=dev, dtype=bf16)
        target = torch.randint(0, vocab, (logits.shape[0],), device=dev)
        return run(lambda: torch.nn.functional.cross_entropy(logits.float(), target))
    if kind == "optimizer":  # AdamW in FP32: 28 B per parameter
        p = [torch.randn(max(1, key[2] // 28), device=dev, dtype=torch.float32)]
        for t in p:
            t.grad = torch.randn_like(t)
        opt = torch.optim.AdamW(p, fused=True)
        return run(opt.step)
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True)
    ap.add_argument("--set", action="append")
    ap.add_argument("--npu-model", required=True, help='the npu.model of the platform it prices for, e.g. "H200 SXM"')
    ap.add_argument("--platform", default="h100", help="the platform preset validate prices the rows on")
    ap.add_argument("--out", help="the compute file to write (required unless --dry-run)")
    ap.add_argument("--device", choices=["cuda", "npu"], default="cuda")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--epsim", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "tools", "epsim"))
    ap.add_argument("--dry-run", action="store_true", help="list the rows, measure nothing")
    args = ap.parse_args()
    rows = operators(args)
    if args.dry_run:
        for key in rows:
            print(" ".join(str(x) for x in key))
        print("{} rows".format(len(rows)), file=sys.stderr)
        return
    if not args.out:
        ap.error("--out is required unless --dry-run")
    import torch
    if args.device == "npu":
        import torch_npu  # noqa: F401  (registers the NPU device)
    run = timer(torch, args.device, args.repeat)
    body = ('# {} operators measured on one {} ({}), by tools/profiling/profile_ops.py.\n'
            'schema = 1\nkind = "compute"\nsource = "profile_ops.py --workload {}"\nplatform = "{}"\n\n'
            '[platform_set]\n"npu.model" = "{}"\n').format(args.workload, args.npu_model, args.device,
                                                         args.workload, args.platform, args.npu_model)
    for i, key in enumerate(rows):
        t = measure(key, torch, args.device, run)
        name = "{}.{}".format(key[0], i)
        if isinstance(t, list):
            body += "".join(toml_row(key, s, name) for s in t)
        else:
            body += toml_row(key, t, name)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(body)
    os.replace(tmp, args.out)  # never a half-written table in place of an earlier one
    print("wrote {}: {} rows".format(args.out, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
