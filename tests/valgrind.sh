#!/bin/bash
# make valgrind: memcheck on the CLI paths users take every day — run --quick (a
# subset: see RUN_ARGS), report, compare, export (3 formats), import, merge — each must
# end with 0 errors and 0 bytes definitely lost. A normal (unchecked) seed run measures
# the machine's ceilings first, so that the checked run uses them from the store (under
# valgrind the ceiling sweep alone would take an hour). Kernels see valgrind's CPUID
# (no AVX-512), as does OpenBLAS. Prints one line per path; exits 1 if any path fails.
# Environment: OCB_BIN (./ocbench), VALGRIND_DIR (kept when given).
set -u
cd "$(dirname "$0")/.."
bin=${OCB_BIN:-./ocbench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ -n "${VALGRIND_DIR:-}" ]; then
	dir=$VALGRIND_DIR; mkdir -p "$dir"
else
	dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fi
db=$dir/vg.db
other=$dir/other.db
# The checked run: `run --quick` of a suite file holding the baseline and quantized
# kernels at small sizes (the built-in quick sizes take hours under valgrind): OpenBLAS
# sgemv/sgemm, q4_0/q8_0 GEMV, each checked against its reference, with counters.
cat > "$dir/vg-suite.json" << 'EOF'
{"name": "vg", "threads": [1], "budget": 0.01, "passes": 1, "min_reps": 3, "max_reps": 5,
 "benches": [{"bench": "sgemv", "suite": "baseline", "cases": [{"m": 256, "n": 256}]},
	     {"bench": "sgemm", "suite": "baseline", "cases": [{"n": 64}]},
	     {"bench": "quant_gemv", "suite": "quant",
	      "grid": {"format": ["q4_0", "q8_0"]}, "params": {"m": 256, "k": 256}}]}
EOF
RUN_ARGS=(run --suite "$dir/vg-suite.json" --quick --out "$dir/out")

vg() { # $1 name, rest: ocbench arguments
	local name=$1; shift
	valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
		--errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=30 \
		--log-file="$dir/vg-$name.log" "$bin" --db="$db" --quiet "$@" \
		> "$dir/out-$name" 2> "$dir/err-$name"
	local rc=$? errors lost
	errors=$(grep -o 'ERROR SUMMARY: [0-9,]*' "$dir/vg-$name.log" | tail -1 | tr -dc 0-9)
	lost=$(grep -o 'definitely lost: [0-9,]* bytes' "$dir/vg-$name.log" | tail -1 |
		cut -d: -f2 | tr -dc 0-9)
	printf '%-8s exit %-3s errors %-4s definitely lost %s bytes\n' "$name" "$rc" \
		"${errors:-?}" "${lost:-0}"
	if [ "$rc" = 99 ] || [ "${errors:-1}" != 0 ] || [ "${lost:-0}" != 0 ]; then
		sed -n '/ERROR SUMMARY/q;p' "$dir/vg-$name.log" | grep -A12 -m3 '^==[0-9]*== [A-Z]' |
			head -40
		fail=1
	fi
}

fail=0
echo "valgrind $(valgrind --version) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-);" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" --db="$db" --quiet "${RUN_ARGS[@]}" --label vg-seed > /dev/null ||
	{ echo "seed run failed"; exit 1; }
vg run "${RUN_ARGS[@]}" --label vg-run
vg report report --out "$dir/report" --format md,csv,json,html --allow-mixed
vg compare compare vg-seed vg-run
vg export export --run vg-run --format json
cp "$dir/out-export" "$dir/run2.json"
vg export-gb export --run vg-run --format gbench
cp "$dir/out-export-gb" "$dir/run2-gbench.json"
vg export-csv export --run vg-run --format csv
vg import import "$dir/run2-gbench.json" --label imported
# merge: a second database holding an imported run
"$bin" --db="$other" --quiet import "$dir/run2-gbench.json" --label other > /dev/null ||
	{ echo "making the other database failed"; exit 1; }
vg merge merge "$other"
exit $fail
