#!/bin/bash
# Kill torture (make torture): the database must survive any death of a writer.
#
#  1. KILLS times (default 50): start `ocbench run --suite all --quick` on one database,
#     kill -9 its whole process group after a random delay (0.2 .. MAX_DELAY s, default
#     40), then check: PRAGMA integrity_check is ok; every run that was complete before
#     is still complete with the same results and samples (count and sum); the killed
#     run is shown 'aborted' by `ocbench runs` (a reader's view of a dead process) and no
#     run is shown 'running'; after the next write-open it is stored 'aborted'.
#  2. MPI_KILLS times (default 5): start `run --suite dist --ranks 2 --quick`, kill -9
#     one MPI rank (OMPI_COMM_WORLD_RANK=1) a random 0.2..8 s after it started (each
#     such run first re-measures the ceilings, ~2 min on a busy 2-core host); the run must end by
#     itself (mpirun tears the job down) with exit 3, and the same checks hold.
# A seed run first measures the machine's ceilings, so kills land in the suites rather
# than all in the one-time ceiling measurement. Prints one line per kill and a summary;
# exits 1 if any check failed. Environment: OCB_BIN (./ocbench), KILLS, MPI_KILLS,
# MAX_DELAY, SEED, TORTURE_DIR (kept when given, else a temporary folder removed at exit).
set -u
cd "$(dirname "$0")/.."
bin=${OCB_BIN:-./ocbench}
kills=${KILLS:-50}
mpi_kills=${MPI_KILLS:-5}
max_delay=${MAX_DELAY:-40}
RANDOM=${SEED:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${TORTURE_DIR:-}" ]; then
	dir=$TORTURE_DIR; mkdir -p "$dir"
else
	dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fi
db=$dir/torture.db
out=$dir/out
q() { sqlite3 -cmd '.timeout 10000' "$db" "$1"; }

# The state of every complete run: id, results, samples, sum of sample values.
complete_state() {
	q "SELECT r.id, (SELECT count(*) FROM result x WHERE x.run_id = r.id),
	   (SELECT count(*) FROM sample s JOIN result x ON x.id = s.result_id WHERE x.run_id = r.id),
	   (SELECT printf('%.17g', total(s.value)) FROM sample s JOIN result x ON x.id = s.result_id
	    WHERE x.run_id = r.id), (SELECT count(*) FROM metric m WHERE m.run_id = r.id)
	   FROM run r WHERE r.status = 'complete' ORDER BY r.id"
}

# Status readers show for run $1 (ocbench runs --json).
shown_status() {
	"$bin" --db="$db" runs --json --limit 100000 2>/dev/null | awk -v id="$1" '
		/"id":/ { gsub(/[^0-9]/, "", $2); cur = $2 }
		/"status":/ && cur == id { gsub(/[",]/, "", $2); print $2; exit }'
}

# Random delay in seconds with 0.1 s resolution in [0.2, max].
rand_delay() {
	local tenths=$(( (RANDOM * 32768 + RANDOM) % ($1 * 10 - 1) + 2 ))
	printf '%d.%d' $((tenths / 10)) $((tenths % 10))
}

fail=0 intact=0 lost=0 shown_running=0 stored_aborted=0 finished=0
check_after() { # $1 label, $2 state before, $3 killed run id; sets $shown
	local ok st now
	ok=$(q 'PRAGMA integrity_check')
	now=$(complete_state)
	# every run complete before is complete now, with the same rows (new ones may follow)
	if [ "$ok" = ok ] && [ "${now:0:${#2}}" = "$2" ]; then
		intact=$((intact + 1))
	else
		lost=$((lost + 1)); fail=1
		echo "  $1: integrity '$ok' or complete runs changed"
	fi
	st=$(shown_status "$3")
	if [ "$st" = running ]; then
		shown_running=$((shown_running + 1)); fail=1
		echo "  $1: run $3 still shown running"
	fi
	shown=$st
}

echo "torture: $kills kills of 'run --suite all --quick' (delay 0.2..${max_delay} s), \
$mpi_kills MPI rank kills; db $db"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" --db="$db" --quiet run --suite baseline --quick --filter 'sgemm/\{"n":256' \
	--out "$out" > /dev/null || { echo "seed run failed"; exit 1; }

for i in $(seq 1 "$kills"); do
	before=$(complete_state)
	delay=$(rand_delay "$max_delay")
	setsid "$bin" --db="$db" --quiet run --suite all --quick --out "$out" \
		> /dev/null 2> "$dir/err" &
	pid=$!
	sleep "$delay"
	if kill -0 "$pid" 2> /dev/null; then
		kill -9 -- "-$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
		what=killed
	else
		wait "$pid"; what="finished (exit $?)"; finished=$((finished + 1))
	fi
	id=$(q 'SELECT max(id) FROM run')
	check_after "kill $i" "$before" "$id"
	echo "kill $i: after ${delay} s $what; run $id shown '$shown'; \
complete runs $(q "SELECT count(*) FROM run WHERE status = 'complete'")"
done
# the last killed run is marked by the next write-open
"$bin" --db="$db" --quiet run --suite baseline --quick --filter 'sgemm/\{"n":256' \
	--out "$out" > /dev/null 2>&1
stored_aborted=$(q "SELECT count(*) FROM run WHERE status = 'aborted'")
still=$(q "SELECT count(*) FROM run WHERE status = 'running'")
[ "$still" = 0 ] || { echo "runs still stored running: $still"; fail=1; }

# The pid of MPI rank 1 of an ocbench job on database $1, if one is alive.
rank1_of() {
	local p
	for p in $(pgrep -f -- "$1"); do
		if { tr '\0' '\n' < "/proc/$p/environ"; } 2> /dev/null |
			grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
			echo "$p"; return
		fi
	done
}

mpi_ok=0
for i in $(seq 1 "$mpi_kills"); do
	before=$(complete_state)
	setsid "$bin" --db="$db" --quiet run --suite dist --ranks 2 --quick --out "$out" \
		> /dev/null 2> "$dir/err" &
	pid=$!
	# `run --ranks` measures the ceilings first (cli/run_dist.c), then starts mpirun:
	# wait for rank 1 of this database's job, then kill it at a random moment
	victim=""
	for _ in $(seq 1 1200); do
		kill -0 "$pid" 2> /dev/null || break
		victim=$(rank1_of "$db")
		[ -n "$victim" ] && break
		sleep 0.5
	done
	delay=$(rand_delay 8)
	sleep "$delay"
	[ -n "$victim" ] && { kill -0 "$victim" 2> /dev/null || victim=""; }
	[ -n "$victim" ] && kill -9 "$victim"
	# the job must end by itself; a hang is a failure (then the group is killed)
	for _ in $(seq 1 600); do kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
	if kill -0 "$pid" 2> /dev/null; then
		echo "mpi kill $i: the run did not end within 300 s of the rank's death"
		kill -9 -- "-$pid"; fail=1
	fi
	wait "$pid"; rc=$?
	id=$(q 'SELECT max(id) FROM run')
	stored=$(q "SELECT status FROM run WHERE id = $id")
	check_after "mpi kill $i" "$before" "$id"
	if [ -n "$victim" ]; then
		if [ "$rc" = 3 ] && [ "$shown" != running ]; then
			mpi_ok=$((mpi_ok + 1))
		else
			fail=1
		fi
		echo "mpi kill $i: rank 1 (pid $victim) killed ${delay} s after it started; run exit $rc," \
			"run $id stored '$stored', shown '$shown': $(head -c 160 "$dir/err")"
	else
		echo "mpi kill $i: no rank 1 alive to kill (run exit $rc); not counted"
	fi
done

echo "torture summary: $intact/$((kills + mpi_kills)) intact, $lost lost, $shown_running" \
	"shown running after the kill, $finished finished before their kill," \
	"$stored_aborted stored aborted; MPI: $mpi_ok/$mpi_kills rank kills failed the run" \
	"cleanly (exit 3)"
exit $fail
