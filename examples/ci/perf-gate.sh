#!/bin/sh
# perf-gate.sh: a performance gate for CI. Runs a CI-sized suite into a copy of a
# baseline database and compares the new run with the baseline's newest run
# (`ocbench compare`, Mann-Whitney U per case). Exit: 0 no case significantly slower,
# 1 a regression, 2 bad usage or input, 3 the run failed.
#
#   perf-gate.sh --init BASELINE.db            # once, on the reference commit
#   perf-gate.sh BASELINE.db                   # on every change
#
# Options (before BASELINE.db):
#   --suite FILE       suite file to run (default: examples/suites/quick.json)
#   --threshold X      slowdown that fails the gate, e.g. 10% (default 5%)
#   --ocbench BIN      the ocbench binary (default: ./ocbench, else ocbench on PATH)
#   --keep DIR         keep the candidate database in DIR (default: a temporary folder)
#   --init             run the suite into BASELINE.db (created) and exit
# Anything after `--` goes to `ocbench run` (e.g. --filter REGEX, --budget S,
# --inject-slowdown BENCH:0.2 to check that the gate catches a slowdown).
set -u

suite=examples/suites/quick.json
threshold=5%
bin=./ocbench
[ -x "$bin" ] || bin=ocbench
keep=
init=0
usage() {
	echo "ocbench: perf-gate: $1 (usage: perf-gate.sh [--init] [--suite FILE]" \
	     "[--threshold X] [--ocbench BIN] [--keep DIR] BASELINE.db [-- RUN-ARGS])" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) [ $# -ge 2 ] || usage "--suite needs a file"; suite=$2; shift 2 ;;
	--threshold) [ $# -ge 2 ] || usage "--threshold needs a value"; threshold=$2; shift 2 ;;
	--ocbench) [ $# -ge 2 ] || usage "--ocbench needs a path"; bin=$2; shift 2 ;;
	--keep) [ $# -ge 2 ] || usage "--keep needs a folder"; keep=$2; shift 2 ;;
	--init) init=1; shift ;;
	--) usage "BASELINE.db comes before --" ;;
	-*) usage "unknown option '$1'" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage "which baseline database?"
base_db=$1
shift
if [ $# -gt 0 ]; then
	[ "$1" = "--" ] || usage "unexpected argument '$1'"
	shift
fi
[ -f "$suite" ] || usage "$suite: no such suite file"

if [ "$init" = 1 ]; then
	[ -e "$base_db" ] && usage "$base_db exists: remove it to make a new baseline"
	"$bin" --db "$base_db" --quiet run --suite "$suite" --label ci-baseline "$@" >/dev/null
	exit $?
fi
[ -f "$base_db" ] || usage "$base_db: no such database (make one with --init)"

if [ -n "$keep" ]; then
	dir=$keep
	mkdir -p "$dir" || exit 2
else
	dir=$(mktemp -d) || exit 3
	trap 'rm -rf "$dir"' EXIT
fi
cand_db=$dir/perf-gate.db
cp "$base_db" "$cand_db" || exit 3
# The baseline's newest run, by uuid: `show latest` prints "run ID UUID" first.
base=$("$bin" --db "$cand_db" show latest | awk 'NR == 1 { print $3 }')
[ -n "$base" ] || usage "$base_db holds no run"

"$bin" --db "$cand_db" --quiet run --suite "$suite" --label ci-candidate \
	--out "$dir/out" "$@" >/dev/null
rc=$?
[ $rc -eq 0 ] || { echo "ocbench: perf-gate: the run failed (exit $rc)" >&2; exit $rc; }
"$bin" --db "$cand_db" compare "$base" latest --threshold "$threshold"
