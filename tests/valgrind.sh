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
#
# The checked `run` is one run per suite of `all` (examples/suites/all.json), in a row,
# each its own valgrind process and log (run-<suite>), from tests/valgrind/<suite>.json:
# the suite's benches on --quick's code paths (quick: true) with operands and step counts
# cut to memcheck sizes, e.g. 3 training steps instead of 40. Memcheck runs this machine's
# training code ~100x slower, so `run --suite all --quick` (~3 min) would take most of a
# day under it; a training step, an evaluation, a checkpoint or a forked memory
# measurement runs the same code at step 3 as at step 40. The seed is one unchecked
# `run --suite all --quick` (its checkpoints feed quant_accuracy and compress).
# Both take the run options VG_RUN_OPTS (default: `--budget 0 --min-reps 6 --max-reps 6`,
# run's documented options, i.e. 2 timed repetitions in each of the 3 interleaved
# passes): memcheck checks memory, not timings, and a repetition runs the same code as
# the one before it; warm-up, passes, merging, counters and statistics all still run.
# Suppressed: Open MPI's own allocations in MPI_Init and MPI_Finalize that it never frees
# (tests/valgrind/openmpi-init.supp: a definite leak below PMPI_Init or
# ompi_mpi_finalize only) and, where installed, Open MPI's packaged suppressions
# (openmpi-valgrind.supp); none of ours.
# Checked: run, report, compare, export (3 formats), import, merge.
# Environment: OCB_BIN (./ocbench), VALGRIND_DIR (kept when given), VG_SUITE (the
# comma-separated suites of the checked runs, each run from tests/valgrind/<suite>.json
# where there is one, else as `--suite <suite> --quick`; default: those of all),
# VG_RUN_OPTS (above; empty: the suite's own budget and repetitions).
set -u
cd "$(dirname "$0")/.."
bin=${OCB_BIN:-./ocbench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# OpenBLAS's idle workers spin ~0.1 s after each call by default; valgrind runs one
# thread at a time, so in 2-thread cases the spinning took most of the wall time
export OPENBLAS_THREAD_TIMEOUT=4
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
# the suites of all.json's "suites" list, comma-separated
all_suites=$(tr -d ' \n' < examples/suites/all.json | sed -n 's/.*"suites":\[\([^]]*\)\].*/\1/p' |
	tr -d '"')
suites=${VG_SUITE:-$all_suites}
read -r -a run_opts <<< "${VG_RUN_OPTS---budget 0 --min-reps 6 --max-reps 6}"

supp=(--suppressions=tests/valgrind/openmpi-init.supp)
[ -r /usr/share/openmpi/openmpi-valgrind.supp ] &&
	supp+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)

vg() { # $1 name, rest: ocbench arguments
	local name=$1; shift
	local t0=$SECONDS
	valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
		--errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=30 "${supp[@]}" \
		--log-file="$dir/vg-$name.log" "$bin" --db="$db" --quiet "$@" \
		> "$dir/out-$name" 2> "$dir/err-$name"
	local rc=$? errors lost
	# summed over every process in the log: `run` forks children (the training memory
	# measurement), which valgrind follows into the same file
	errors=$(grep -o 'ERROR SUMMARY: [0-9,]*' "$dir/vg-$name.log" | tr -d , |
		awk '{s += $3; n++} END {if (n) print s}')
	lost=$(grep -o 'definitely lost: [0-9,]* bytes' "$dir/vg-$name.log" | tr -d , |
		awk '{s += $3} END {print s + 0}')
	printf '%-14s exit %-3s errors %-4s definitely lost %-6s bytes %5s s  load %s\n' \
		"$name" "$rc" "${errors:-?}" "${lost:-0}" "$((SECONDS - t0))" \
		"$(cut -d' ' -f1 /proc/loadavg)"
	if [ "$rc" = 99 ] || [ "${errors:-1}" != 0 ] || [ "${lost:-0}" != 0 ]; then
		sed -n '/ERROR SUMMARY/q;p' "$dir/vg-$name.log" | grep -A12 -m3 '^==[0-9]*== [A-Z]' |
			head -40
		fail=1
	fi
}

fail=0
echo "valgrind $(valgrind --version) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-);" \
	"load $(cut -d' ' -f1-3 /proc/loadavg); run options: ${run_opts[*]:-none}"
start=$SECONDS
"$bin" --db="$db" --quiet run --suite all --quick "${run_opts[@]}" --out "$dir/out" \
	--label vg-seed > /dev/null || { echo "seed run failed"; exit 1; }
echo "seed run (unchecked, measures the ceilings): $((SECONDS - start)) s"
IFS=, read -r -a suite_list <<< "$suites"
for s in "${suite_list[@]}"; do
	file=tests/valgrind/$s.json
	[ -r "$file" ] || file=$s
	vg "run-$(basename "$s" .json)" run --suite "$file" --quick "${run_opts[@]}" \
		--out "$dir/out" --label "vg-run-$s"
	q() { sqlite3 "$db" "SELECT $1 FROM result r JOIN run u ON u.id = r.run_id
		WHERE u.label = 'vg-run-$s' ${2:-}"; }
	echo "  $(q 'count(*)') results, $(q 'count(*)' "AND r.status <> 'ok'") not ok," \
		"run $(sqlite3 "$db" "SELECT status FROM run WHERE label = 'vg-run-$s'");" \
		"ceilings measured under valgrind: $(sqlite3 "$db" "SELECT count(*) FROM ceiling c
		JOIN run u ON u.id = c.run_id WHERE u.label = 'vg-run-$s'") (must be 0)"
done
vg report report --out "$dir/report" --format md,csv,json,html --allow-mixed
# exports of the seed run: every suite's results and metrics
vg export export --run vg-seed --format json
vg export-gb export --run vg-seed --format gbench
cp "$dir/out-export-gb" "$dir/seed-gbench.json"
vg export-csv export --run vg-seed --format csv
vg import import "$dir/seed-gbench.json" --label imported
# compare: the seed against its own re-import, which holds every kernel case of the seed
vg compare compare vg-seed imported
# merge: a second database holding an imported run
"$bin" --db="$other" --quiet import "$dir/seed-gbench.json" --label other > /dev/null ||
	{ echo "making the other database failed"; exit 1; }
vg merge merge "$other"
echo "valgrind.sh: $((SECONDS - start)) s in all; $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
