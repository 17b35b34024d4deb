#!/bin/sh
# run-cron.sh [SECONDS] -- build tests/fuzz/fuzz_cron.c with libFuzzer and
# the address and undefined-behaviour sanitizers, then fuzz the cron
# parser for SECONDS (default 600) under nice.  Needs clang and a
# configured build in _build (for config.h).  Crashes land in
# tests/fuzz/crashes/; keep each as a case in tests/unit/cron.c.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-600}
out=$top/_build/fuzz
mkdir -p "$out/corpus" "$top/tests/fuzz/crashes"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$top/_build" -I"$top/src" \
	"$top/tests/fuzz/fuzz_cron.c" "$top/src/cron.c" "$top/src/isotime.c" "$top/src/util.c" \
	-o "$out/fuzz_cron"
cp "$top"/tests/fuzz/corpus_cron/* "$out/corpus/" 2>/dev/null || true
nice "$out/fuzz_cron" -max_total_time="$secs" -max_len=200 -timeout=10 \
	-artifact_prefix="$top/tests/fuzz/crashes/" "$out/corpus"
