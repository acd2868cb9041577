#!/bin/sh
# Runs `epsim ARGS...` and compares its standard output with a golden file.
# Usage: golden.sh EPSIM GOLDEN_FILE ARGS...   (regenerate: EPSIM ARGS > GOLDEN_FILE)
epsim="$1"; golden="$2"; shift 2
"$epsim" "$@" | diff -u "$golden" -
