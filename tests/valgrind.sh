#!/bin/bash
# make valgrind: memcheck on the CLI paths users take every day — run --suite all
# --quick, report, compare, export (3 formats), import, merge — each must end with 0
# errors and 0 bytes definitely lost. Prints one line per path; exits 1 if any fails.
#
# The checked run uses ceilings from the store: a normal (unchecked) seed run of the same
# suite measures them first (under valgrind the ceiling sweep alone takes hours). For the
# checked run to find them, valgrind's process must be the SAME machine as the seed's:
# valgrind hides AVX-512 from CPUID, so OpenBLAS would pick another core (Haswell instead
# of SkylakeX on the Xeon VM) and the machine's fingerprint (which holds the BLAS core)
# would differ; both runs therefore get one OPENBLAS_CORETYPE (Haswell: AVX2, which
# valgrind runs, on Intel and AMD alike). Without it the checked run re-measured every
# ceiling under valgrind with buffers sized from the reported 480 MiB L3 and had no
# result after 45 minutes. Our own kernels still see valgrind's CPUID (no AVX-512).
# Environment: OCB_BIN (./ocbench), VALGRIND_DIR (kept when given), VG_SUITE (all: the
# suite or suite file of the checked run, e.g. a small file for a quicker check).
set -u
cd "$(dirname "$0")/.."
bin=${OCB_BIN:-./ocbench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx2 /proc/cpuinfo; then
	export OPENBLAS_CORETYPE=Haswell
fi
if [ -n "${VALGRIND_DIR:-}" ]; then
	dir=$VALGRIND_DIR; mkdir -p "$dir"
else
	dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fi
db=$dir/vg.db
other=$dir/other.db
RUN_ARGS=(run --suite "${VG_SUITE:-all}" --quick --out "$dir/out")

vg() { # $1 name, rest: ocbench arguments
	local name=$1; shift
	valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
		--errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=30 \
		--log-file="$dir/vg-$name.log" "$bin" --db="$db" --quiet "$@" \
		> "$dir/out-$name" 2> "$dir/err-$name"
	local rc=$? errors lost
	# summed over every process in the log: `run` forks children (the training memory
	# measurement), which valgrind follows into the same file
	errors=$(grep -o 'ERROR SUMMARY: [0-9,]*' "$dir/vg-$name.log" | tr -d , |
		awk '{s += $3; n++} END {if (n) print s}')
	lost=$(grep -o 'definitely lost: [0-9,]* bytes' "$dir/vg-$name.log" | tr -d , |
		awk '{s += $3} END {print s + 0}')
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
start=$(date +%s)
"$bin" --db="$db" --quiet "${RUN_ARGS[@]}" --label vg-seed > /dev/null ||
	{ echo "seed run failed"; exit 1; }
echo "seed run (unchecked, measures the ceilings): $(($(date +%s) - start)) s"
start=$(date +%s)
vg run "${RUN_ARGS[@]}" --label vg-run
echo "checked run: $(($(date +%s) - start)) s, $(sqlite3 "$db" "SELECT count(*) FROM result r
	JOIN run u ON u.id = r.run_id WHERE u.label = 'vg-run'") results;" \
	"ceilings measured under valgrind: $(sqlite3 "$db" "SELECT count(*) FROM ceiling c
	JOIN run u ON u.id = c.run_id WHERE u.label = 'vg-run'") (must be 0)"
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
