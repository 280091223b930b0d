#!/bin/sh
# ab-gate.sh: a pull-request performance gate that holds on noisy (shared, cloud) CI
# machines: `ocbench ab` runs the base branch's build and the change's build on the same
# runner, alternately, in a fresh random order over many short rounds, so that the
# runner's own drift hits both sides alike (instead of comparing with a baseline measured
# on another day or another VM). Exit: 0 no case slower, 1 a regression, 2 bad usage or
# input, 3 a failure.
#
#   ab-gate.sh [--base REV] [--threshold X] [--target-mde X] [-- AB-ARGS]
#
#   --base REV        the revision to compare with (default: origin/main, else main)
#   --threshold X     slowdown that fails the gate (default 5%)
#   --target-mde X    rounds chosen from a pilot so that 90% of the cases could see a
#                     change of X (default 3%; the output prints each case's MDE)
#   --ocbench BIN     the candidate binary (default: ./ocbench, built by the CI job)
# Anything after `--` goes to `ocbench ab` (e.g. --suite examples/suites/quick.json,
# --filter REGEX, --max-rounds N, --inject-slowdown BENCH:0.05 to check the gate).
#
# In a GitHub Actions job (actions/checkout with fetch-depth: 0, then `make`):
#   - run: examples/ci/ab-gate.sh --base origin/${{ github.base_ref }} -- --quick
set -u

base=
threshold=5%
mde=3%
bin=./ocbench
usage() {
	echo "ocbench: ab-gate: $1 (usage: ab-gate.sh [--base REV] [--threshold X]" \
	     "[--target-mde X] [--ocbench BIN] [-- AB-ARGS])" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--base) [ $# -ge 2 ] || usage "--base needs a revision"; base=$2; shift 2 ;;
	--threshold) [ $# -ge 2 ] || usage "--threshold needs a value"; threshold=$2; shift 2 ;;
	--target-mde) [ $# -ge 2 ] || usage "--target-mde needs a value"; mde=$2; shift 2 ;;
	--ocbench) [ $# -ge 2 ] || usage "--ocbench needs a path"; bin=$2; shift 2 ;;
	--) shift; break ;;
	*) usage "unexpected argument '$1'" ;;
	esac
done
[ -x "$bin" ] || usage "$bin: no ocbench binary (run make first)"
if [ -z "$base" ]; then
	for r in origin/main main; do
		git rev-parse --verify --quiet "$r^{commit}" >/dev/null && { base=$r; break; }
	done
fi
[ -n "$base" ] || usage "no base revision (give --base REV)"

dir=$(mktemp -d) || exit 3
trap 'rm -rf "$dir"' EXIT
# The base is built by ab itself in a temporary worktree; the candidate is this build.
# The store receives the machine and its ceilings (measured once); verdicts go to stdout.
"$bin" --db "$dir/ab.db" ab "$base" "$bin" --threshold "$threshold" --target-mde "$mde" "$@"
