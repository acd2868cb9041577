#!/usr/bin/env python3
"""Seeded mutation fuzz of every epsim input loader.

Mutates the shipped inputs (cluster TOML presets, platform XML, workload
TOML, a routing-trace CSV, a sweep spec, the measurement files) and the
command lines of `epsim collective` (one argument per line, mutated as a
text: numbers, units, deleted, repeated or emptied arguments) and runs a
cheap epsim command on each mutant under a time limit, counting what must never happen: a signal,
a sanitizer report, "inf" or "nan" in the output, a run over the time limit, an "internal error", an exit
code other than 0 or 2 (1 too for `sweep collect`, which says 1 when points
have no result), or a run above the memory limit. Prints one summary; exits 1
when any of these occurred. docs/reliability.md records the figures.

  tests/fuzz/fuzz_loaders.py --epsim build/tools/epsim --seconds 600 --seed 1

Run from the project root. With --sanitizer the memory limit is measured
(peak RSS), not imposed: AddressSanitizer reserves terabytes of address space.
"""
import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SPECIAL_NUMBERS = ["0", "-1", "1e308", "1e-320", "-1e308", "nan", "inf", "-inf", "9223372036854775807",
                   "-9223372036854775808", "4294967296", "65536", "1e300", "2147483648", "0.0", "1e6"]
UNIT_SUFFIXES = ["", "GBps", "Gbps", "s", "us", "Tf", "GiB", "B", "PBps", "ps", "xx"]
RELEASE_TIMEOUT_S, SANITIZER_TIMEOUT_S = 30, 120
SANITIZER_MARKS = ["ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer"]


def numbers_in(text):
    """(start, end) of each decimal number token."""
    spans, i = [], 0
    while i < len(text):
        if text[i].isdigit():
            j = i
            while j < len(text) and (text[j].isdigit() or text[j] in ".eE"):
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def mutate(text, rng):
    """One to three mutations of `text` (bytes as latin-1 text)."""
    for _ in range(rng.randint(1, 3)):
        lines = text.split("\n")
        kind = rng.choice(["number", "number", "number", "suffix", "flip", "delete_line", "duplicate_line",
                           "swap_lines", "truncate", "insert"])
        if kind == "number":
            spans = numbers_in(text)
            if spans:
                a, b = rng.choice(spans)
                text = text[:a] + rng.choice(SPECIAL_NUMBERS + [str(rng.randint(-10, 10**7))]) + text[b:]
        elif kind == "suffix":
            spans = numbers_in(text)
            if spans:
                a, b = rng.choice(spans)
                text = text[:b] + rng.choice(UNIT_SUFFIXES) + text[b:]
        elif kind == "flip" and text:
            i = rng.randrange(len(text))
            text = text[:i] + chr(ord(text[i]) ^ (1 << rng.randrange(8))) + text[i + 1:]
        elif kind == "delete_line" and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == "duplicate_line" and lines:
            i = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            text = "\n".join(lines)
        elif kind == "swap_lines" and len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "truncate" and text:
            text = text[:rng.randrange(len(text))]
        elif kind == "insert":
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(["\0", "\"", "[", "]]", "=", "<", "/>", "\n[x]\n", "\xff\xfe", "#"]) + text[i:]
    return text


TRACE_WORKLOAD = """schema = 1
[model]
name = "tiny-moe"
layers = 4
dense_layers = 1
hidden = 512
dense_ffn = 1024
expert_ffn = 256
experts = 32
shared_experts = 1
top_k = 4
node_limit = 2
vocab = 1000
[model.attention]
kind = "gqa"
heads = 8
kv_heads = 2
head_dim = 64
[parallel]
ep = 8
dp = 8
micro_batches = 2
micro_batch = 2
sequence_length = 128
ranks_per_node = 2
[precision]
dispatch = "fp8"
combine = "bf16"
gemm = "bf16"
expert_alignment = 16
[routing]
kind = "trace"
trace = "trace.csv"
seed = 7
"""


def trace_csv():
    rows = ["layer,expert,tokens"]
    for layer in range(1, 4):
        rows += [f"{layer},{e},{10 + 3 * e}" for e in range(32)]
    return "\n".join(rows) + "\n"


def targets(root):
    """(name, seed text, file name of the mutant, command after epsim, accepted exit codes, companions)."""
    out = []
    for name in sorted(os.listdir(os.path.join(root, "platforms"))):
        if name.endswith(".toml"):
            text = open(os.path.join(root, "platforms", name), encoding="latin-1").read()
            out.append(("platform check " + name, text, "p.toml", ["platform", "check", "{f}"], {0, 2}, {}))
            out.append(("platform show " + name, text, "p.toml", ["platform", "show", "{f}"], {0, 2}, {}))
    for name in sorted(os.listdir(os.path.join(root, "tests/sim/platforms"))):
        text = open(os.path.join(root, "tests/sim/platforms", name), encoding="latin-1").read()
        out.append(("platform check " + name, text, "p.xml", ["platform", "check", "{f}"], {0, 2}, {}))
    # deepseek-v3 is left out: sampling its routing alone costs ~8 s of CPU
    # per run; deepep-ascend and tiny-moe have the same keys. So is
    # deepseek-v3-production (2,048 ranks x 120 micro-batches: minutes per
    # run); deepseek-v3-pp8 has its keys (a base and [parallel]). So are
    # gpt-oss-120b and qwen3-235b-a22b (80 and 512 micro-batches: 10 s and
    # minutes of sampling); tiny-moe has their keys but the window's.
    for name in sorted(os.listdir(os.path.join(root, "workloads/presets"))):
        if name in ("deepseek-v3.toml", "deepseek-v3-production.toml", "gpt-oss-120b.toml", "qwen3-235b-a22b.toml"):
            continue
        text = open(os.path.join(root, "workloads/presets", name), encoding="latin-1").read()
        out.append(("workload show " + name, text, "w.toml", ["workload", "show", "{f}"], {0, 2}, {}))
    out.append(("workload show trace.csv", trace_csv(), "trace.csv", ["workload", "show", "{dir}/w.toml"], {0, 2},
                {"w.toml": TRACE_WORKLOAD}))
    out.append(("workload show trace workload", TRACE_WORKLOAD, "w.toml", ["workload", "show", "{f}"], {0, 2},
                {"trace.csv": trace_csv()}))
    text = open(os.path.join(root, "tools/sweeps/a2_ep.toml"), encoding="latin-1").read()
    out.append(("sweep collect a2_ep.toml", text, "s.toml",
                ["sweep", "collect", "{f}", "--results", "{dir}/r.jsonl", "--csv", "{dir}/r.csv"], {0, 1, 2}, {}))
    # Measurement files: `validate` reads, checks and calibrates (0.1-0.6 s
    # each). End-to-end files run whole steps (the production one minutes):
    # their keys are fuzzed on the test's small one (about a second).
    end_to_end = [os.path.join(root, "tests/tools/end_to_end/small.toml")]
    for name in sorted(os.listdir(os.path.join(root, "validation"))):
        if name.endswith(".toml"):
            text = open(os.path.join(root, "validation", name), encoding="latin-1").read()
            if 'kind = "end_to_end"' not in text:
                out.append(("validate " + name, text, "m.toml", ["validate", "{f}"], {0, 2}, {}))
    for path in end_to_end:
        text = open(path, encoding="latin-1").read()
        out.append(("validate " + os.path.basename(path), text, "m.toml", ["validate", "{f}"], {0, 1, 2}, {}))
    # Command lines: the mutant's lines are the arguments (file name None).
    for name, args in COLLECTIVE_COMMANDS:
        out.append((name, "\n".join(args), None, [], {0, 2}, {}))
    return out


# `epsim collective` command lines whose options the fuzz mutates: every
# option of both kinds of op, with lists (--sizes, --tokens) and --set.
COLLECTIVE_COMMANDS = [
    ("collective allgather options",
     ["collective", "--platform", "tests/tools/collective/single_switch.toml", "--npus", "8", "--npus-per-node", "8",
      "--op", "allgather", "--sizes", "1MB,16MB", "--algorithm", "ring", "--fidelity", "aggregated"]),
    ("collective alltoallv options",
     ["collective", "--platform", "a2", "--set", "node.count=2", "--npus", "16", "--npus-per-node", "8",
      "--op", "alltoallv", "--workload", "tiny-moe", "--tokens", "64,128", "--hidden", "512", "--top-k", "4",
      "--experts", "32", "--routing", "zipf", "--set", "routing.zipf_s=1.1", "--seed", "3", "--json"]),
]


NON_FINITE = re.compile(r"\b(inf|nan|infinity)\b", re.IGNORECASE)
STRING_LITERAL = re.compile(r'"([^"\n]*)"')


def computed_output(stdout, mutant):
    """stdout without the mutant's own string values, which epsim echoes
    (a platform named "2to-inf" is not a non-finite number)."""
    for literal in sorted(set(STRING_LITERAL.findall(mutant)), key=len, reverse=True):
        if NON_FINITE.search(literal):
            stdout = stdout.replace(literal, "")
    return stdout


def run_one(argv, timeout_s, mem_bytes, sanitizer, err_path, out_path):
    def limits():
        os.setsid()
        if not sanitizer:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    with open(err_path, "wb") as err, open(out_path, "wb") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=limits)
        start = time.monotonic()
        timed_out = False
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout_s:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
    p.returncode = 0  # reaped by wait4; stop Popen from waiting again
    rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return rc, timed_out, usage.ru_maxrss * 1024, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epsim", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, help="per-run limit, s (default 30; 120 with --sanitizer)")
    ap.add_argument("--mem-mb", type=int, default=2048, help="per-run memory limit, MiB")
    ap.add_argument("--sanitizer", action="store_true", help="the epsim build uses ASan: measure memory, do not limit it")
    ap.add_argument("--keep", help="folder to copy each failing mutant to")
    args = ap.parse_args()
    if args.timeout is None:
        # A hang is what the limit catches. ASan and UBSan run the routing
        # sampler ~10x slower, and `workload show` of an unmutated preset
        # takes ~3 s in release, so 30 s would flag honest work as a hang.
        args.timeout = SANITIZER_TIMEOUT_S if args.sanitizer else RELEASE_TIMEOUT_S

    root = os.getcwd()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="epsim-fuzz-")
    all_targets = targets(root)
    counts = {"runs": 0, "signals": 0, "sanitizer_reports": 0, "timeouts": 0, "internal_errors": 0,
              "unexpected_exit": 0, "over_memory": 0, "non_finite_output": 0}
    exit_codes, max_rss, max_seconds, slowest, failures = {}, 0, 0.0, "", []
    deadline = time.monotonic() + args.seconds
    try:
        while time.monotonic() < deadline:
            name, seed_text, file_name, command, accepted, companions = all_targets[counts["runs"] % len(all_targets)]
            mutant = mutate(seed_text, rng)
            d = os.path.join(work, "case")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            for companion, text in companions.items():
                with open(os.path.join(d, companion), "w", encoding="latin-1") as f:
                    f.write(text)
            if file_name is None:  # a command line: one argument per line (NULs cannot be arguments)
                argv = [args.epsim] + mutant.replace("\0", "").split("\n")
                with open(os.path.join(d, "argv.txt"), "w", encoding="latin-1") as f:
                    f.write(mutant)
            else:
                path = os.path.join(d, file_name)
                with open(path, "w", encoding="latin-1") as f:
                    f.write(mutant)
                argv = [args.epsim] + [a.replace("{f}", path).replace("{dir}", d) for a in command]
            err_path = os.path.join(work, "stderr")
            out_path = os.path.join(work, "stdout")
            rc, timed_out, rss, seconds = run_one(argv, args.timeout, args.mem_mb << 20, args.sanitizer, err_path,
                                                  out_path)
            stderr = open(err_path, encoding="latin-1").read()
            stdout = open(out_path, encoding="latin-1").read()
            counts["runs"] += 1
            exit_codes[rc] = exit_codes.get(rc, 0) + 1
            max_rss = max(max_rss, rss)
            if seconds > max_seconds:
                max_seconds, slowest = seconds, name
            problems = []
            if timed_out:
                problems.append("timeouts")
            elif rc < 0:
                problems.append("signals")
            if any(m in stderr for m in SANITIZER_MARKS):
                problems.append("sanitizer_reports")
            if "internal error" in stderr:
                problems.append("internal_errors")
            if NON_FINITE.search(computed_output(stdout, mutant)):
                problems.append("non_finite_output")
            if not timed_out and rc >= 0 and rc not in accepted:
                problems.append("unexpected_exit")
            if rss > args.mem_mb << 20 or (not args.sanitizer and "std::bad_alloc" in stderr):
                problems.append("over_memory")
            for p in problems:
                counts[p] += 1
            if args.keep and seconds > args.timeout / 3:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copytree(d, os.path.join(args.keep, f"slow{counts['runs']}"))
            if problems:
                failures.append({"target": name, "run": counts["runs"], "problems": problems, "exit": rc,
                                 "stderr": stderr.strip().splitlines()[-1:] if stderr.strip() else []})
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copytree(d, os.path.join(args.keep, f"run{counts['runs']}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = dict(counts, seed=args.seed, seconds=args.seconds, targets=len(all_targets),
                   exit_codes={str(k): v for k, v in sorted(exit_codes.items())},
                   max_rss_MiB=round(max_rss / 2**20, 1), slowest_run_s=round(max_seconds, 2), slowest_target=slowest,
                   failures=failures[:20])
    print(json.dumps(summary, indent=1))
    bad = sum(v for k, v in counts.items() if k != "runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
