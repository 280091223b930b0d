#!/bin/sh
# Runs every test: the Criterion binary (unit tests per module and the end-to-end CLI
# cases in tests/test_cli*.c). OCB_BUILD picks the build folder (make sanitize).
set -e
cd "$(dirname "$0")/.."
build=${OCB_BUILD:-build}
exec "$build/ocbench-tests" --jobs 2 "$@"
