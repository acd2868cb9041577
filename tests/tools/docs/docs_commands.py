#!/usr/bin/env python3
"""Runs every command shown in README.md and docs/*.md, as a user would.

Commands are found in fenced code blocks (not toml/xml/csv/json ones): lines
whose first word is `epsim`, `build/tools/epsim`, `bash tools/...` or
`[/usr/bin/]python3 tools/...`, with an optional `$ ` prompt. Indented lines
right after a command continue it (a synopsis over several lines); `[...]`
around options is dropped, so a synopsis runs with the values it shows; a
trailing `# comment` is cut. In indented (4-space) code blocks, the examples,
the `$ ` commands run too (their unprompted lines are synopses with
placeholders). Each command must exit 0, except a `$ ` command whose next
line in the block is an `error:` line: it must exit 2 and print exactly
that line on stderr. The lines a `$ ` command shows after it, up to the
next command or the block's end, are its printed output: each must be a
line of what the command prints, in order, numbers included (a `...` line
skips any number of lines; spaces are compared as one), so a doc's figures
cannot go stale.

They run in a scratch copy of the project (so outputs such as `-o a2.xml`
land there), with EPSIM_DATA_DIR pointing at the copy and
`build/tools/epsim` and `epsim` being the binary under test. Placeholders in
the docs are real files of the copy: my.xml and my_cluster.xml (a four-node
test platform), my.toml (the tiny-moe preset), SPEC.toml (this folder's
two-point spec), PREFIX/bin/epsim (the binary), TRACE.json (a 4-layer DeepSeek-V3 trace at EP64 on A2,
written before the docs run) and DIR (an empty folder); AXIS stands for that
spec's axis, `seed`. What cannot run here, honestly treated:
  - bash tools/run_tests.sh is this suite: skipped.
  - bash tools/run_default.sh builds first: its final `epsim run` line runs.
  - sbatch (no Slurm here): skipped; the script it submits is still written.
  - cmake --install: skipped; tests/tools/install runs it into a scratch prefix.
  - end-to-end measurement files (`epsim validate validation/X.toml` of a
    kind = "end_to_end" file: whole production steps, minutes each):
    skipped; the CTest e2e_deepseek_v3_production runs and checks the
    production one, e2e_validate_small the format.
  - the shipped sweeps under tools/sweeps/ (a full DeepSeek-V3 step per point,
    minutes in all) run every point with the model cut to 32 layers
    (workload.model.layers=32 added to base.set in the copy), so the sweep, its
    results file and the plots made from it are real, only smaller.
Usage: docs_commands.py <epsim binary> <project root>
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

TIMEOUT_S = 300
SKIP_LANGS = {"toml", "xml", "csv", "json"}
PREFIXES = ("epsim ", "build/tools/epsim ", "bash tools/", "python3 tools/", "/usr/bin/python3 tools/",
            "sbatch ", "cmake --install ")
PLACEHOLDERS = {"AXIS": "seed"}
SHRINK_SET = "workload.model.layers=32"  # a PP16 stage of two interleaved chunks needs 32


def strip_comment(line):
    """The line without a trailing `# comment` (outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def is_command(text):
    if not text.startswith(PREFIXES):
        return False
    words = text.split()
    # "epsim run: 32 ranks, ..." and "epsim 0.1.0 run report" are output, not commands.
    return len(words) > 1 and not words[1].endswith(":") and not words[1][:1].isdigit()


def code_lines(path):
    """(line number, text, indented) of every line inside a code block: fenced
    (not toml/xml/csv/json) or indented by 4 spaces after a blank line, the
    indentation removed; a block ends with None."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out, in_fence, lang, in_indent = [], False, "", False
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            if in_fence:
                out.append(None)
            in_fence, lang = not in_fence, line[3:].strip()
            continue
        if in_fence:
            if lang not in SKIP_LANGS:
                out.append((n, line, False))
            continue
        previous = lines[n - 2] if n >= 2 else ""
        if line.startswith("    ") and (in_indent or not previous.strip()):
            in_indent = True
            out.append((n, line[4:], True))
            continue
        if in_indent and line.strip():
            in_indent = False
            out.append(None)
    out.append(None)
    return out


def commands_in(path):
    """(line number, command, expected error line or None, expected output lines) for each command of a
    markdown file."""
    found = []
    lines = code_lines(path)
    i = 0
    while i < len(lines):
        if lines[i] is None:
            i += 1
            continue
        start, line, indented = lines[i]
        prompted = line.startswith("$ ")
        text = line[2:] if prompted else line
        if not is_command(text) or (indented and not prompted):
            i += 1
            continue
        command = strip_comment(text)
        while i + 1 < len(lines) and lines[i + 1] and lines[i + 1][1][:1].isspace() and \
                lines[i + 1][1].strip().startswith("["):
            i += 1
            command += " " + strip_comment(lines[i][1].strip())
        expected, output = None, []
        if prompted and i + 1 < len(lines) and lines[i + 1] and "error:" in lines[i + 1][1]:
            expected = lines[i + 1][1]
        elif prompted:
            j = i + 1
            while j < len(lines) and lines[j] and not lines[j][1].startswith("$ "):
                output.append(lines[j][1])
                j += 1
        found.append((start, re.sub(r"\[([^\[\]]*)\]", r"\1", command), expected, output))
        i += 1
    return found


def squeeze(line):
    return " ".join(line.split())


def output_mismatch(shown, printed):
    """None when every shown line is a printed line, in order (`...` skips
    lines), else the first shown line that is not, with the printed line most
    like it (the same words once numbers are masked)."""
    printed = [squeeze(l) for l in printed.splitlines()]
    masked = [re.sub(r"[-+]?\d[\d.,e+-]*", "#", l) for l in printed]
    at, skipping = 0, False
    for line in shown:
        want = squeeze(line)
        if want == "...":
            skipping = True
            continue
        if not want:
            continue
        found = None
        for k in range(at, len(printed) if skipping else min(at + 1, len(printed))):
            if printed[k] == want:
                found = k
                break
        if found is None:
            like = re.sub(r"[-+]?\d[\d.,e+-]*", "#", want)
            near = next((printed[k] for k in range(len(printed)) if masked[k] == like), "(no such line)")
            return f"shown:   {want}\n  printed: {near}"
        at, skipping = found + 1, False
    return None


def prepare(copy, epsim, root):
    shutil.copytree(root, copy, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "build", "build-*", "__pycache__"))
    os.makedirs(os.path.join(copy, "build", "tools"))
    os.symlink(epsim, os.path.join(copy, "build", "tools", "epsim"))
    bin_dir = os.path.join(copy, "build", "bin")
    os.makedirs(bin_dir)
    os.symlink(epsim, os.path.join(bin_dir, "epsim"))
    # --slurm-epsim PREFIX/bin/epsim must name an executable (an installed copy).
    os.makedirs(os.path.join(copy, "PREFIX", "bin"))
    os.symlink(epsim, os.path.join(copy, "PREFIX", "bin", "epsim"))
    platform = os.path.join(copy, "tests", "sim", "platforms", "four_nodes.xml")
    shutil.copy(platform, os.path.join(copy, "my.xml"))
    shutil.copy(platform, os.path.join(copy, "my_cluster.xml"))
    shutil.copy(os.path.join(copy, "workloads", "presets", "tiny-moe.toml"), os.path.join(copy, "my.toml"))
    shutil.copy(os.path.join(copy, "tests", "tools", "docs", "SPEC.toml"), os.path.join(copy, "SPEC.toml"))
    shutil.copy(os.path.join(copy, "validation", "deepep-h800-normal.toml"), os.path.join(copy, "my-measurements.toml"))
    sweeps = os.path.join(copy, "tools", "sweeps")
    for name in sorted(os.listdir(sweeps)):
        if not name.endswith(".toml"):
            continue
        spec = os.path.join(sweeps, name)
        text = open(spec, encoding="utf-8").read()
        if "set" in tomllib.loads(text).get("base", {}):
            if text.count("\nset = [") != 1:
                sys.exit(f"FAIL: {name}: base.set not on one `set = [` line: extend docs_commands.py's shrinking")
            text = text.replace("\nset = [", f'\nset = ["{SHRINK_SET}", ', 1)
        else:
            text = text.replace("\n[base]\n", f'\n[base]\nset = ["{SHRINK_SET}"]   # docs test: fewer layers\n', 1)
        open(spec, "w", encoding="utf-8").write(text)
    env = dict(os.environ, EPSIM_DATA_DIR=copy, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    os.makedirs(os.path.join(copy, "DIR"))
    trace = subprocess.run([epsim, "run", "--platform", "a2", "--workload", "deepseek-v3", "--ep", "64",
                            "--set", "node.count=8", "--set", "model.layers=4", "--trace", "TRACE.json"],
                           cwd=copy, env=env, capture_output=True, text=True)
    if trace.returncode != 0:
        sys.exit(f"FAIL: writing TRACE.json: {trace.stderr}")
    return env


def runnable(command, copy):
    """The shell line to run for a docs command, or (None, why) when it cannot run here."""
    if command.startswith("bash tools/run_tests.sh"):
        return None, "this test suite itself"
    if command.startswith("sbatch "):
        return None, "no Slurm here"
    if command.startswith("cmake --install "):
        return None, "tests/tools/install runs it"
    words = command.split()
    if len(words) > 2 and words[:2] in (["epsim", "validate"], ["build/tools/epsim", "validate"]):
        path = os.path.join(copy, words[2])
        if os.path.isfile(path) and 'kind = "end_to_end"' in open(path, encoding="utf-8").read():
            return None, "an end-to-end file: whole steps, minutes; the e2e CTests run it"
    if command.startswith("bash tools/run_default.sh"):
        script = open(os.path.join(copy, "tools", "run_default.sh"), encoding="utf-8").read()
        exec_line = [l for l in script.splitlines() if l.startswith("exec ")][-1]
        extra = command[len("bash tools/run_default.sh"):]
        return f'root="{copy}"; build="{copy}/build"; set -- {extra}; {exec_line}', None
    for word, value in PLACEHOLDERS.items():
        command = re.sub(rf"\b{word}\b", value, command)
    return command, None


def main():
    epsim, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs"))
                                  if f.endswith(".md"))
    failures, ran = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "epsim")
        env = prepare(copy, epsim, root)
        for doc in docs:
            for line, command, expected, output in commands_in(os.path.join(root, doc)):
                shell, why = runnable(command, copy)
                where = f"{doc}:{line}"
                if shell is None:
                    print(f"skip {where}: {command}  ({why})")
                    continue
                ran += 1
                try:
                    # Each command its own cache folder: a plan's results file (docs/plan.md) never
                    # carries one command's simulations into the next, as on a user's first run.
                    cache = os.path.join(tmp, f"cache{ran}")
                    r = subprocess.run(["bash", "-c", shell], cwd=copy, env=dict(env, XDG_CACHE_HOME=cache),
                                       capture_output=True, text=True, timeout=TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    print(f"FAIL {where}: {command}\n  no answer within {TIMEOUT_S} s")
                    failures += 1
                    continue
                want = 0 if expected is None else 2
                ok = r.returncode == want and (expected is None or r.stderr.strip() == expected)
                stale = output_mismatch(output, r.stdout) if ok and output else None
                if ok and not stale:
                    print(f"ok   {where}: {command}" + (f" ({len(output)} output lines compared)" if output else ""))
                    continue
                failures += 1
                if stale:
                    print(f"FAIL {where}: {command}\n  the printed output differs from the doc's:\n  {stale}")
                    continue
                print(f"FAIL {where}: {command}\n  exit code {r.returncode}, expected {want}")
                if expected is not None:
                    print(f"  expected stderr: {expected}")
                print("  stderr: " + "\n  ".join(r.stderr.strip().splitlines()[-5:]))
    print(f"{ran} commands run, {failures} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
