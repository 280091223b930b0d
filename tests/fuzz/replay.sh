#!/bin/sh
# Replays every fuzz target's seed corpus and past crashes once (make check, make
# sanitize): BUILD/fuzz-replay/T tests/fuzz/corpus/T tests/fuzz/regress/T.
set -e
cd "$(dirname "$0")/../.."
build=${1:-build}
for bin in "$build"/fuzz-replay/*; do
	t=$(basename "$bin")
	"$bin" "tests/fuzz/corpus/$t" "tests/fuzz/regress/$t"
done
