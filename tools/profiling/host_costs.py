#!/usr/bin/env python3
"""Framework costs of eager PyTorch on one GPU (epsim's stack keys
framework.host_per_kernel and framework.moe_host_sync; docs/stacks.md).

1. host_per_kernel: seconds the host takes to issue one small kernel,
   from back-to-back tiny ops (the GPU finishes each before the next
   arrives, so the loop runs at the host's pace).
2. moe_host_sync: what one host round trip costs a layer's forward, as
   Megatron's token dispatcher makes before its all-to-all (it reads the
   per-expert token counts back with .tolist()): a GPT-OSS-shaped MoE
   block's forward kernels timed with and without one sync per layer;
   the difference per sync.
Writes $OUT/host_costs.json.
"""
import json, os, time
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
out_dir = os.environ.get("OUT", ".")
rec = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}


def wall(fn, n):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


x = torch.zeros(1, device=dev)
rec["host_per_kernel_s"] = wall(lambda: x.add_(1.0), 20000)

T, h, E, k, f = 4096, 2880, 128, 4, 2880
bf = torch.bfloat16
a = torch.randn(T, h, device=dev, dtype=bf)
wr = torch.randn(E, h, device=dev, dtype=bf)
w1 = torch.randn(2 * f, h, device=dev, dtype=bf) * 0.02
w2 = torch.randn(h, f, device=dev, dtype=bf) * 0.02
nw = torch.ones(h, device=dev, dtype=bf)


def block(sync):
    y = F.rms_norm(a, (h,), nw)
    s = torch.sigmoid((y @ wr.t()).float())
    v, i = torch.topk(s, k, dim=-1)
    counts = torch.bincount(i.flatten(), minlength=E)
    if sync:
        counts.tolist()  # the dispatcher's host round trip
    order = torch.argsort(i.flatten(), stable=True)
    rows = y.index_select(0, order // k)[: T]  # a stand-in for the received rows
    hmid = rows @ w1.t()
    hmid = F.silu(hmid[:, :f]) * hmid[:, f:]
    return a + hmid @ w2.t()


layers = 9
t_no = wall(lambda: [block(False) for _ in range(layers)], 20)
t_sync = wall(lambda: [block(True) for _ in range(layers)], 20)
rec["block_forward_s"] = t_no / layers
rec["block_forward_sync_s"] = t_sync / layers
rec["moe_host_sync_s"] = (t_sync - t_no) / layers
print(json.dumps(rec, indent=1))
with open(os.path.join(out_dir, "host_costs.json"), "w") as fh:
    json.dump(rec, fh, indent=1)
