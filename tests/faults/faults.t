# SPDX-License-Identifier: MIT
# faults.t - every failure point of a job in turn (tests/faults/faults.mk):
# each job below is run once counting the calls to the world it makes
# (DAO_FAULT=count for libdao's, DAO_CUDAMODEL_FAIL=count for the CUDA
# runtime model's), then once per point with that call failing, each run in
# a child under a timeout. A run passes when it ends by itself (no hang, no
# signal), with no sanitizer report and no refused CUDA call, and either
# completes with the right results or stops with a clear status having
# kept what dao.h promises (fault_job.c checks that; dao-cholesky checks
# its factor, the Fortran example its product). One TAP line per job and
# kind says how many points were tried and how they ended.
#
# Environment: FAULT_JOB (fault_job), FAULT_PROPERTY (fault_property),
# FAULT_MODEL (the model's folder),
# FAULT_CHOL (dao-cholesky; empty: not run), FAULT_F90 (the Fortran
# matmul example, linked with libdao.so; empty: not run), FAULT_TORCH (the
# torch device's job, torch/tests/fault_torch.py, as a command with its
# PYTHONPATH; empty: not built), FAULT_MAX_TORCH (points per kind for it,
# default FAULT_MAX: a run starts Python and PyTorch), FAULT_MAX
# (points per kind and job, spread evenly over them; "all": every one),
# FAULT_MAX_CUDA (the same for the CUDA runtime's calls; default FAULT_MAX),
# FAULT_RUN (a prefix for each run: setarch for TSan), FAULT_JOBS_LIST
# (which jobs; default all), FAULT_PAR (runs at once, default 2),
# FAULT_TIMEOUT (seconds per run, default 60).
set -u

. "$(dirname "$0")/../tap.sh"

job=${FAULT_JOB:?FAULT_JOB: the fault_job binary}
model=${FAULT_MODEL:-}
max_dao=${FAULT_MAX:-40}
max_cuda=${FAULT_MAX_CUDA:-$max_dao}
par=${FAULT_PAR:-2}
export FAULT_RUN=${FAULT_RUN:-}
export FAULT_TIMEOUT=${FAULT_TIMEOUT:-60}
jobs_list=${FAULT_JOBS_LIST:-}
max_torch=${FAULT_MAX_TORCH:-$max_dao}
[ -n "$jobs_list" ] || jobs_list="host host-2 property cuda-explicit cuda-managed cholesky fortran torch"
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG \
	DAO_CUDAMODEL_MEM DAO_CUDAMODEL_MISUSE_OK DAO_FAULT DAO_CUDAMODEL_FAIL DAO_TRACE
[ -n "$model" ] && export LD_LIBRARY_PATH=$model${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FAULT_TMP=$tmp
# dao_strerror's texts of the statuses a failure of the world may give.
export FAULT_CLEAR='out of memory|backend unavailable or failed|a kernel reported failure|context failed earlier|latest contents were lost|input/output error'

# The command line of a job, or nothing when it is not built here.
job_cmd() {
	case $1 in
	host) echo "$job host 1" ;;
	host-2) echo "$job host 2" ;;
	property) [ -n "${FAULT_PROPERTY:-}" ] && echo "$FAULT_PROPERTY 5" ;;
	cuda-explicit) echo "$job cuda-explicit 3" ;;
	cuda-managed) echo "$job cuda-managed 4" ;;
	cholesky) [ -n "${FAULT_CHOL:-}" ] &&
		echo "$FAULT_CHOL --json --n 256 --tile 64 --budget 40% --backend cuda-explicit --check full" ;;
	fortran) [ -n "${FAULT_F90:-}" ] && echo "$FAULT_F90" ;;
	torch) [ -n "${FAULT_TORCH:-}" ] && echo "$FAULT_TORCH" ;;
	esac
}

# One run: NAME VAR SPEC CMD...; prints "SPEC VERDICT" (completed,
# stopped, or what went wrong) and keeps the output of a failed run.
one_run() {
	local name=$1 var=$2 spec=$3 out rc verdict
	shift 3
	out=$FAULT_TMP/$name.${spec//[:+]/_}
	env "$var=$spec" timeout -s KILL "$FAULT_TIMEOUT" $FAULT_RUN "$@" >"$out.out" 2>"$out.err"
	rc=$?
	if [ $rc -eq 137 ] || [ $rc -eq 124 ]; then
		verdict="hang (killed after ${FAULT_TIMEOUT}s)"
	elif [ $rc -ge 128 ]; then
		verdict="crash (signal $((rc - 128)))"
	elif grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer|cudamodel: ERROR|refused \(|DEFECT' "$out.err"; then
		verdict="report: $(grep -m1 -E 'AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer|cudamodel: ERROR|refused \(|DEFECT' "$out.err" | cut -c1-200)"
	else
		case $name:$rc in
		host*:0 | property:0 | cuda-*:0) verdict=completed ;;
		host*:10 | property:10 | cuda-*:10) verdict=stopped ;;
		cholesky:0 | fortran:0 | torch:0) verdict=completed ;;
		# A dao call raised: its message must name a clear status.
		torch:10)
			if grep -qE "$FAULT_CLEAR" "$out.err"; then
				verdict=stopped
			else
				verdict="exit status 10 without a clear status: $(grep -m1 'fault_torch:' "$out.err" | cut -c1-160)"
			fi
			;;
		# Both exit 1 having printed the status of the call that
		# failed; the Fortran example also where its product is
		# wrong or a handle leaked, said otherwise.
		cholesky:1 | fortran:1)
			if grep -qE '^(correct;|tile .* differs)' "$out.out"; then
				verdict="exit status 1: $(grep -m1 -E '^(correct;|tile .* differs)' "$out.out" | cut -c1-80) (a wrong product or a leak)"
			elif grep -qE "$FAULT_CLEAR" "$out.out" "$out.err"; then
				verdict=stopped
			else
				verdict="exit status 1 without a clear status: $(tail -1 "$out.out" "$out.err" | grep . | tail -1 | cut -c1-160)"
			fi
			;;
		*) verdict="exit status $rc" ;;
		esac
	fi
	case $verdict in
	completed | stopped) rm -f "$out.out" "$out.err" ;;
	esac
	echo "$spec $verdict"
}
export -f one_run

# Points 1..N, at most $max of them spread evenly (the first and the last
# included).
points() {
	local n=$1 i
	if [ "$max" = all ] || [ "$n" -le "$max" ]; then
		seq 1 "$n"
	else
		for ((i = 0; i < max; i++)); do echo $((1 + i * (n - 1) / (max - 1))); done | uniq
	fi
}

total=0
for name in $jobs_list; do
	cmd=$(job_cmd "$name") || true
	if [ -z "$cmd" ]; then
		echo "ok $((n_test += 1)) - $name # SKIP not built here"
		continue
	fi
	DAO_FAULT=count DAO_CUDAMODEL_FAIL=count timeout -s KILL "$FAULT_TIMEOUT" $FAULT_RUN $cmd \
		>"$tmp/$name.count.out" 2>"$tmp/$name.count.err"
	rc=$?
	counts=$(sed -n 's/^dao: DAO_FAULT: calls //p' "$tmp/$name.count.err" | tail -1)
	cuda=$(sed -n 's/^cudamodel: DAO_CUDAMODEL_FAIL: calls all=[0-9]* *//p' "$tmp/$name.count.err" | tail -1)
	ok "$([ $rc -eq 0 ] && [ -n "$counts" ]; echo $?)" "$name: runs clean, counting: libdao $counts${cuda:+; CUDA $cuda}"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/$name.count.err" | tail -20; continue; }
	for kc in $counts $cuda; do
		kind=${kc%=*} n=${kc#*=}
		[ "$n" -gt 0 ] || continue
		case $kind in
		alloc | thread | mmap | open | ioctl | shm) var=DAO_FAULT max=$max_dao ;;
		*) var=DAO_CUDAMODEL_FAIL max=$max_cuda ;;
		esac
		[ "$name" = torch ] && max=$max_torch
		points "$n" | sed "s/^/$kind:/" |
			xargs -P "$par" -I{} bash -c 'one_run "$@"' _ "$name" "$var" {} $cmd \
			>"$tmp/$name.$kind.res"
		tried=$(wc -l <"$tmp/$name.$kind.res")
		done_n=$(grep -c ' completed$' "$tmp/$name.$kind.res")
		stop_n=$(grep -c ' stopped$' "$tmp/$name.$kind.res")
		bad=$((tried - done_n - stop_n))
		total=$((total + tried))
		ok "$bad" "$name $kind: $tried of $n points: $done_n completed, $stop_n stopped on a clear status"
		if [ "$bad" -ne 0 ]; then
			grep -vE ' (completed|stopped)$' "$tmp/$name.$kind.res" | head -5 | sed 's/^/#   /'
			f=$(grep -vE ' (completed|stopped)$' "$tmp/$name.$kind.res" | head -1 | cut -d' ' -f1)
			echo "#   $var=$f $cmd:"
			tail -15 "$tmp/$name.${f//[:+]/_}.err" 2>/dev/null | sed 's/^/#     /'
		fi
	done
done
echo "# $total points tried"
tap_done
