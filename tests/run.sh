#!/bin/sh
# Runs every test: the Criterion binary (unit tests per module and the end-to-end CLI
# cases in tests/test_cli*.c). OCB_BUILD picks the build folder (make sanitize).
set -e
cd "$(dirname "$0")/.."
build=${OCB_BUILD:-build}
# The drift canaries of every `run` cost seconds of wall time per run on a loaded
# machine; the tests of them (tests/test_regress_noise.c) turn them back on.
export OCBENCH_NO_CANARIES=1
# Every temporary file of the tests (cli_tmpdir, mpirun's session folders, the ranks'
# database copies) goes to one scratch folder, removed when the tests end however they
# end: a test that fails or is killed leaves nothing in /tmp.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ocbench-check-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
export TMPDIR="$scratch"
"$build/ocbench-tests" --jobs 2 "$@"
