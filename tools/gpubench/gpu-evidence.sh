#!/bin/bash
# SPDX-License-Identifier: MIT
# gpu-evidence.sh - the prepared call of issue 23: everything this project
# wants to know from a lent GPU, in one command of at most 8 minutes, run
# from the bundle (`make gpu-bundle`, tools/gpubench/bundle.mk):
#
#     OUT=<folder> bash gpu-bundle/gpu-evidence.sh
#
# `make gpu-evidence-report DIR=<folder>` turns what it wrote into a dated
# section of Documentation/cuda.md (Documentation/cuda.md, "The prepared
# call", says how the device tool is driven).
#
# Steps, most valuable first (time may run out): setup (the bundle's system
# libraries unpacked, CUDA and CUPTI found); info (card, driver, CUDA
# versions, memory); bandwidth (dao-gpubw: pinned copies each way, both at
# once, device to device); rates (dao-gpurate: dao-cholesky's tile kernels,
# dgemm's rate for daosim); the Cholesky table (one step per row, below);
# copy (dao-bench copy on both backends); the GPU tests of tests/gpu (their
# TAP kept); um-experiments and torch when their scripts are in the bundle.
#
# The Cholesky table: the matrices are sized by a base budget B (1 GiB) in
# tiles of T (2048): at ratio r, nt tile columns with nt (nt + 1) / 2 tiles
# at most r times the tiles B holds, and the device budget the matrix bytes
# divided by r (rounded down to 64 KiB), so r is exact: matrix bytes /
# budget. Each row is one dao-cholesky process (--json --warm-up --check
# sample: one-time costs outside the clock, the O(n^2) residual, the factor
# hash), under policy dao, lru, or dao with --lookahead 1 (no prefetch), on
# cuda-explicit or cuda-managed; beside them the in-memory run of the same
# matrix on the same backend (budget = matrix bytes), which at 1x is also
# the dao row; plain UVM (--backend uvm) at 1x only. Every libdao row's
# trace (DAO_TRACE) goes into traces.tar for daosim, here and later.
#
# Time: OUT/evidence.jsonl says what each step took. A hard deadline
# (DAO_EVIDENCE_SECONDS after the start, default 450) stops the whole: the
# script runs its steps in a session of their own and kills every process
# of it then, and records which step was running. Each step has a cap (its
# timeout) and runs only when the time left, less what the end needs, is
# at least its cap; otherwise it is recorded as skipped, with the figures.
# Expected seconds on an H100 machine (16 cores) / cap, full size:
#   setup 2/30, info 3/30, bandwidth 4/30, rates 5/40,
#   rows: 1x 4/25, 2x 6/35, 4x 12/60 each (23 rows, about 170 s),
#   copy 4/30 per backend, tests 15/90, 10/60, 10/60,
#   um-experiments -/90, torch 120/150 (its build about 60); the end 2
#   (kept in reserve: 10).
# The rehearsal (DAO_EVIDENCE_SIZE=tiny, `make check`) runs the same steps
# on tiles of 128 and a base budget of 1 MiB with short caps, against the
# CUDA runtime model (DAO_CUDA_LIBDIR naming it).
#
# Safety on shared lent cards (enforced here, and by the programs): every
# CUDA call is checked (the programs do); the card's settings are never
# changed (nvidia-smi only reads); oversubscription is emulated only by
# libdao's device budget; before each row the device's free memory is read
# (dao-gpuinfo --free) and the row is skipped unless its managed memory
# (cuda-managed, uvm: the whole matrix) fits in 15/16 of it and its device
# pool (cuda-explicit: the budget) fits with 1 GiB to spare; plain UVM runs
# only where its matrix fits (dao-cholesky refuses more); the GPU tests skip
# themselves below 8 GiB free.
#
# Output, at most 8 files in OUT (the device tool returns 8), each written
# as soon as its part exists:
#   evidence.jsonl  one JSON object per line: the start, every step (status
#                   ok, failed, timeout or skipped, its reason, seconds,
#                   result: the programs' own JSON), the end
#   log.txt         what every step printed, in order
#   nvidia-smi.txt  nvidia-smi and nvidia-smi -q, when nvidia-smi exists
#   tests.tap       the GPU tests' TAP, each test headed by its name
#   traces.tar      the traces of the Cholesky rows (ROW.trace) and of the
#                   PyTorch runs (torch-BACKEND.trace)
#   um-experiments.json, torch.json  the optional steps' outputs
#
# Contract with the optional pieces (other fragments add them to the
# bundle; each one missing is recorded as skipped and the rest goes on):
#   lib/libdao-umtrace.so  LD_PRELOADed into every managed run (cuda-managed,
#       uvm) with DAO_UMTRACE=<file>: at exit it writes there one JSON
#       object, CUPTI's unified-memory counters by direction and cause, or
#       {"available": false, "reason": ...}; embedded as the row's
#       "umtrace" (absent: {"available": false, "reason": "not collected:
#       ..."}).
#   um-experiments.sh OUTFILE  the cuda-managed experiments: writes OUTFILE
#       (OUT/um-experiments.json), must end by DAO_EVIDENCE_DEADLINE (epoch
#       seconds; its cap is 90 s); the same LD_LIBRARY_PATH and bundle.
#   torch-evidence.sh OUTFILE  the PyTorch device's GPU run: builds the
#       extension from src/ and writes OUTFILE (OUT/torch.json, one JSON
#       object) by DAO_EVIDENCE_DEADLINE (cap 150 s).
#   Both run with DAO_EVIDENCE_BUNDLE (this folder), DAO_EVIDENCE_BIN (the
#   runnable copy of its bin/, the libraries beside it) and the rows'
#   LD_LIBRARY_PATH (the CUDA libraries, CUPTI) in the environment.
#
# Environment: OUT (required), DAO_EVIDENCE_SECONDS, DAO_EVIDENCE_SIZE
# (full | tiny), DAO_EVIDENCE_ROWS (rows to run, "RATIO BACKEND VARIANT"
# separated by commas; default the table), DAO_EVIDENCE_STEPS (the kinds of
# step to run, separated by commas, from info, bandwidth, rates, row, copy,
# test, um-experiments, torch; default all; the others are recorded as
# skipped: a second call on the same card reruns only what failed),
# DAO_CUDA_LIBDIR (the CUDA libraries, default /usr/local/cuda/lib64),
# DAO_CUPTI_DIR (default: looked for), DAO_EVIDENCE_UNPACK (python: unpack
# with python3's tarfile, as when tar or gzip is missing).
# Exit status: 0 when the call ran to its end or its deadline (what failed
# is in the results), 2 when OUT is not set or not writable.
set -u

self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")

size=${DAO_EVIDENCE_SIZE:-full}
case $size in
full)
	tile=2048 base_budget=$((1 << 30)) reserve=10
	pool_spare=$((1 << 30))
	bw_args=(268435456 8) rate_args=(2048 10)
	copy_args=(--buffer-bytes 64M --buffers 8 --rounds 4)
	test_env=()
	;;
tiny)
	tile=128 base_budget=$((1 << 20)) reserve=5
	pool_spare=0
	bw_args=(4194304 2) rate_args=(128 2)
	copy_args=(--buffer-bytes 1M --buffers 4 --rounds 2)
	test_env=(DAO_TEST_GPU_MIN_FREE=268435456 DAO_TEST_GPU_BUF_MIB=2 DAO_TEST_PROGRAMS=0)
	;;
*)
	echo "gpu-evidence: DAO_EVIDENCE_SIZE=$size: full or tiny" >&2
	exit 2
	;;
esac

# cap STEP [RATIO]: a step's time cap in seconds.
cap() {
	if [ "$size" = tiny ]; then
		case $1 in
		row) echo 20 ;;
		test) echo 60 ;;
		*) echo 20 ;;
		esac
		return
	fi
	case $1 in
	setup | info | bandwidth | copy) echo 30 ;;
	rates) echo 40 ;;
	row) case $2 in 1) echo 25 ;; 2) echo 35 ;; *) echo 60 ;; esac ;;
	test) case $2 in test_gpu_property) echo 90 ;; *) echo 60 ;; esac ;;
	um-experiments) echo 90 ;;
	torch) echo 150 ;;
	esac
}

# The table, most valuable rows first: the goals of issue 23 are at 2x and
# 4x (dao against in-memory, cuda-managed against cuda-explicit, dao
# against no prefetch), then the baselines, then 1x.
default_rows="2 cuda-explicit in-memory,2 cuda-explicit dao,2 cuda-managed in-memory,\
2 cuda-managed dao,4 cuda-explicit in-memory,4 cuda-explicit dao,4 cuda-managed in-memory,\
4 cuda-managed dao,4 cuda-explicit lookahead1,4 cuda-managed lookahead1,\
2 cuda-explicit lookahead1,2 cuda-managed lookahead1,2 cuda-explicit lru,2 cuda-managed lru,\
4 cuda-explicit lru,4 cuda-managed lru,1 cuda-explicit in-memory,1 cuda-explicit lookahead1,\
1 cuda-explicit lru,1 cuda-managed in-memory,1 cuda-managed lookahead1,1 cuda-managed lru,\
1 uvm driver"
gpu_tests="test_gpu_property test_gpu_budget test_gpu_threads"

now() { date +%s; }

# A JSON string of $1: quotes, backslashes and control characters escaped.
json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')"
}

# The content of FILE when it is one JSON object (as the programs print
# it), else null.
json_file() {
	local body
	[ -s "$1" ] || { echo null; return; }
	body=$(tr -d '\n' <"$1")
	case $body in
	\{*\}) printf '%s' "$body" ;;
	*) echo null ;;
	esac
}

# The last lines of FILE as a JSON string.
json_tail() {
	json_str "$(tail -c 2000 "$1" 2>/dev/null)"
}

# record JSON: one line of evidence.jsonl, written at once.
record() {
	printf '%s\n' "$1" >>"$OUT/evidence.jsonl"
}

log() {
	printf '%s\n' "$*" >>"$OUT/log.txt"
}

elapsed() { echo $(($(now) - DAO_EVIDENCE_START)); }

# ---------------------------------------------------------------- steps --
# Each runs as `gpu-evidence.sh --step NAME ARGS` under its cap, prints
# what it has to say to the log, and leaves its result (one JSON object)
# in $work/result.json; status 3 means skipped, the reason in
# $work/reason.

work=${DAO_EVIDENCE_WORK:-}
# The programs run from a copy in the work folder, the system libraries
# unpacked beside them (their DT_RPATH is $ORIGIN/../lib): the bundle is
# only read, and stays as it was made.
bin=$work/run/bin
lib=$work/run/lib

skip() {
	printf '%s' "$1" >"$work/reason"
	echo "skipped: $1"
	exit 3
}

step_info() {
	local driver=null
	if command -v nvidia-smi >/dev/null; then
		{ nvidia-smi; nvidia-smi -q; } >"$OUT/nvidia-smi.txt" 2>&1
	else
		echo "nvidia-smi: not on this machine" >"$OUT/nvidia-smi.txt"
	fi
	[ -r /proc/driver/nvidia/version ] && driver=$(json_str "$(head -1 /proc/driver/nvidia/version)")
	"$bin/dao-gpuinfo" >"$work/gpu.json" || exit 1
	cat "$work/gpu.json"
	printf '{"gpu":%s,"nvidia_driver":%s,"host":{"cpus":%s,"mem_total_kib":%s,"cpu":%s,"kernel":%s,"os":%s}}' \
		"$(json_file "$work/gpu.json")" "$driver" "$(nproc)" \
		"$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" \
		"$(json_str "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)")" \
		"$(json_str "$(uname -r)")" \
		"$(json_str "$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")")" >"$work/result.json"
}

step_bandwidth() {
	"$bin/dao-gpubw" "${bw_args[@]}" >"$work/result.json" || exit 1
	cat "$work/result.json"
}

step_rates() {
	"$bin/dao-gpurate" "${rate_args[@]}" >"$work/result.json" || exit 1
	cat "$work/result.json"
}

step_copy() {
	"$bin/dao-bench" copy --json --backend "$1" "${copy_args[@]}" >"$work/copy.json" || exit 1
	cat "$work/copy.json"
	# dao-bench copy prints an array: wrapped, so that every result is
	# an object.
	printf '{"backend":"%s","runs":%s}' "$1" "$(tr -d '\n' <"$work/copy.json")" >"$work/result.json"
}

# The sizes of a row: nt, n, matrix bytes, budget bytes.
row_sizes() {
	local ratio=$1 variant=$2 tb=$((tile * tile * 8)) nt=1 tiles matrix budget
	tiles=$((ratio * (base_budget / tb)))
	while [ $(((nt + 1) * (nt + 2) / 2)) -le "$tiles" ]; do
		nt=$((nt + 1))
	done
	matrix=$((nt * (nt + 1) / 2 * tb))
	budget=$((matrix / ratio / 65536 * 65536))
	[ "$variant" = in-memory ] && budget=$matrix
	echo "$nt $((nt * tile)) $matrix $budget"
}

step_row() {
	local ratio=$1 backend=$2 variant=$3 name="${1}x $2 $3" nt n matrix budget free
	local args envs=() trace="" um=""
	read -r nt n matrix budget <<<"$(row_sizes "$ratio" "$variant")"
	free=$("$bin/dao-gpuinfo" --free) || exit 1
	case $backend in
	cuda-explicit)
		[ $((budget + pool_spare)) -le "$free" ] ||
			skip "its $budget-byte pool and $pool_spare bytes to spare are more than the $free bytes free"
		;;
	*)
		[ "$matrix" -le $((free / 16 * 15)) ] ||
			skip "its $matrix bytes of managed memory are more than 15/16 of the $free bytes free"
		;;
	esac
	args=(--json --warm-up --check sample --n "$n" --tile "$tile" --budget "$budget")
	case $variant in
	lru) args+=(--policy lru) ;;
	lookahead1) args+=(--lookahead 1) ;;
	esac
	args+=(--backend "$backend")
	if [ "$backend" != uvm ]; then
		trace=$work/traces/${ratio}x-$backend-$variant.trace
		mkdir -p "$work/traces"
		envs+=(DAO_TRACE="$trace")
	fi
	if [ "$backend" != cuda-explicit ] && [ -f "$lib/libdao-umtrace.so" ]; then
		um=$work/umtrace.json
		rm -f "$um"
		envs+=(LD_PRELOAD="$lib/libdao-umtrace.so" DAO_UMTRACE="$um")
	fi
	echo "row $name: n $n ($nt x $nt tiles of $tile), matrix $matrix bytes, budget $budget, $free free"
	local t0 t1 rc
	t0=$(date +%s.%N)
	env ${envs[@]+"${envs[@]}"} "$bin/dao-cholesky" "${args[@]}" >"$work/row.json" 2>"$work/row.err"
	rc=$?
	t1=$(date +%s.%N)
	cat "$work/row.err"
	if [ -n "$trace" ] && [ -s "$trace" ]; then
		tar -C "$work/traces" -rf "$OUT/traces.tar" "$(basename "$trace")"
	fi
	local umtrace='{"available":false,"reason":"not collected: no libdao-umtrace.so in the bundle"}'
	[ "$backend" = cuda-explicit ] && umtrace=null
	if [ -n "$um" ]; then
		umtrace=$(json_file "$um")
		[ "$umtrace" != null ] ||
			umtrace='{"available":false,"reason":"not collected: libdao-umtrace.so wrote nothing"}'
	fi
	printf '{"ratio":%s,"backend":"%s","variant":"%s","n":%s,"tile":%s,"matrix_bytes":%s,"budget_bytes":%s,"free_bytes":%s,"exit":%s,"wall_s":%s,"trace":%s,"cholesky":%s,"umtrace":%s,"stderr":%s}' \
		"$ratio" "$backend" "$variant" "$n" "$tile" "$matrix" "$budget" "$free" "$rc" \
		"$(echo "$t1 - $t0" | awk '{ printf "%.3f", $1 - $3 }')" \
		"$([ -n "$trace" ] && [ -s "$trace" ] && json_str "$(basename "$trace")" || echo null)" \
		"$(json_file "$work/row.json")" "$umtrace" "$(json_tail "$work/row.err")" >"$work/result.json"
	[ $rc = 0 ] || exit 1
}

step_test() {
	local t=$1 rc
	{
		echo "# ==== $t (both CUDA backends) ===="
	} >>"$OUT/tests.tap"
	env ${test_env[@]+"${test_env[@]}"} "$bin/$t" 2>&1 | tee -a "$OUT/tests.tap"
	rc=${PIPESTATUS[0]}
	echo "# ==== $t: exit $rc" >>"$OUT/tests.tap"
	# Counted over this test's part of the file only.
	awk -v t="$t" -v rc="$rc" '
		$0 == "# ==== " t " (both CUDA backends) ====" { on = 1; ok = nok = todo = 0; plan = "null"; skip = "null"; next }
		on && /^# ==== / { on = 0 }
		on && /^ok / { ok++; if (/# TODO/) todo++ }
		on && /^not ok / { nok++; if (/# TODO/) todo++ }
		on && /^1\.\.[0-9]+/ { plan = $0; sub(/^1\.\./, "", plan); sub(/ .*/, "", plan)
			if ($0 ~ /# SKIP/) { skip = $0; sub(/.*# SKIP */, "", skip); gsub(/["\\]/, "", skip); skip = "\"" skip "\"" } }
		END { printf "{\"test\":\"%s\",\"exit\":%s,\"planned\":%s,\"ok\":%d,\"not_ok\":%d,\"todo\":%d,\"skipped\":%s}",
			t, rc, plan, ok, nok, todo, skip }' "$OUT/tests.tap" >"$work/result.json"
	[ "$rc" = 0 ] || exit 1
}

# um-experiments and torch: a script of the bundle writing OUT/FILE.
step_script() {
	local script=$1 file=$2 cap=$3 rc
	[ -f "$here/$script" ] || skip "$script is not in the bundle"
	DAO_EVIDENCE_DEADLINE=$(($(now) + cap - 3)) DAO_EVIDENCE_BUNDLE=$here DAO_EVIDENCE_BIN=$bin \
		bash "$here/$script" "$OUT/$file"
	rc=$?
	printf '{"script":"%s","file":"%s","exit":%s}' "$script" "$file" "$rc" >"$work/result.json"
	[ $rc = 0 ] || exit 1
}

run_one_step() {
	local name=$1
	shift
	case $name in
	info) step_info ;;
	bandwidth) step_bandwidth ;;
	rates) step_rates ;;
	copy) step_copy "$@" ;;
	row) step_row "$@" ;;
	test) step_test "$@" ;;
	um-experiments) step_script um-experiments.sh um-experiments.json "$@" ;;
	torch) step_script torch-evidence.sh torch.json "$@" ;;
	*) echo "unknown step $name" >&2; exit 2 ;;
	esac
}

# ---------------------------------------------------------- the sequence --

# run_step KIND NAME CAP ARGS...: the step under its cap, when time allows.
run_step() {
	local kind=$1 name=$2 cap=$3 left t0 t1 rc status reason=null result
	shift 3
	case ,${DAO_EVIDENCE_STEPS:-$kind}, in
	*,"$kind",*) ;;
	*)
		log "== [$(elapsed) s] $name: skipped, not in DAO_EVIDENCE_STEPS ($DAO_EVIDENCE_STEPS)"
		record "{\"step\":\"$kind\",\"name\":$(json_str "$name"),\"status\":\"skipped\",\"reason\":$(json_str "not in DAO_EVIDENCE_STEPS ($DAO_EVIDENCE_STEPS)"),\"cap_s\":$cap,\"t\":$(elapsed)}"
		return
		;;
	esac
	left=$((DAO_EVIDENCE_DEADLINE - reserve - $(now)))
	if [ "$left" -lt "$cap" ]; then
		log "== [$(elapsed) s] $name: skipped, needs up to $cap s, $left s left"
		record "{\"step\":\"$kind\",\"name\":$(json_str "$name"),\"status\":\"skipped\",\"reason\":$(json_str "time: needs up to $cap s, $left s left"),\"cap_s\":$cap,\"t\":$(elapsed)}"
		return
	fi
	printf '%s' "$name" >"$work/current"
	rm -f "$work/result.json" "$work/reason"
	log "== [$(elapsed) s] $name (cap $cap s)"
	t0=$(date +%s.%N)
	timeout -k 3 "$cap" bash "$self" --step "$kind" "$@" >>"$OUT/log.txt" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	case $rc in
	0) status=ok ;;
	3) status=skipped reason=$(json_str "$(cat "$work/reason" 2>/dev/null)") ;;
	124 | 137) status=timeout reason=$(json_str "stopped at its cap of $cap s") ;;
	*) status=failed reason=$(json_str "exit status $rc (log.txt says why)") ;;
	esac
	result=$(json_file "$work/result.json")
	record "{\"step\":\"$kind\",\"name\":$(json_str "$name"),\"status\":\"$status\",\"reason\":$reason,\"cap_s\":$cap,\"seconds\":$(echo "$t1 $t0" | awk '{ printf "%.3f", $1 - $2 }'),\"t\":$(elapsed),\"result\":$result}"
	log "== [$(elapsed) s] $name: $status"
}

# The bundle's system libraries beside its own, the CUDA libraries and
# CUPTI on the loader's path: in this process, so every step inherits it.
setup() {
	local t0 unpacked=0 cupti=null missing="" rows_json cuda_libdir=${DAO_CUDA_LIBDIR:-/usr/local/cuda/lib64}
	t0=$(now)
	printf setup >"$work/current"
	mkdir -p "$lib"
	cp -r "$here/bin" "$bin"
	[ ! -d "$here/lib" ] || cp -r "$here/lib/." "$lib/"
	if [ -f "$here/syslibs.tar.gz" ]; then
		if [ "${DAO_EVIDENCE_UNPACK:-}" != python ] && command -v tar >/dev/null &&
			command -v gzip >/dev/null; then
			unpacked=$(tar -C "$lib" -xvzf "$here/syslibs.tar.gz" | wc -l)
		else
			unpacked=$(python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2]); print(len(t.getnames()))' \
				"$here/syslibs.tar.gz" "$lib")
		fi
	fi
	local dir="${DAO_CUPTI_DIR:-}"
	if [ -z "$dir" ]; then
		for d in "$cuda_libdir" "$cuda_libdir/../extras/CUPTI/lib64" "$cuda_libdir/../lib"; do
			if ls "$d"/libcupti.so* >/dev/null 2>&1; then
				dir=$d
				break
			fi
		done
	fi
	if [ -z "$dir" ] && command -v python3 >/dev/null; then
		# The pip wheel (nvidia-cuda-cupti), as PyTorch installs it.
		dir=$(python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null |
			while read -r p; do find "$p" -name 'libcupti.so*' 2>/dev/null; done |
			head -1 | xargs -r dirname)
	fi
	[ "$dir" = none ] && dir=""
	[ -n "$dir" ] && cupti=$(json_str "$(readlink -f "$dir")")
	export LD_LIBRARY_PATH="$cuda_libdir${dir:+:$dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	# What the loader cannot find is said once, here.
	for f in "$bin"/*; do
		missing+=$(ldd "$f" 2>/dev/null | awk -v f="$(basename "$f")" '/not found/ { printf "%s: %s; ", f, $1 }')
	done
	rows_json=$(IFS=, read -r -a r <<<"${DAO_EVIDENCE_ROWS:-$default_rows}"
		for x in "${r[@]}"; do json_str "$x"; printf ','; done)
	record "{\"step\":\"setup\",\"name\":\"setup\",\"status\":\"ok\",\"reason\":null,\"seconds\":$(($(now) - t0)),\"t\":$(elapsed),\"result\":{\"size\":\"$size\",\"rows\":[${rows_json%,}],\"tile\":$tile,\"base_budget_bytes\":$base_budget,\"cuda_libdir\":$(json_str "$cuda_libdir"),\"cupti_dir\":$cupti,\"syslibs\":$unpacked,\"umtrace\":$([ -f "$lib/libdao-umtrace.so" ] && echo true || echo false),\"missing_libraries\":$(json_str "$missing"),\"openblas\":$(json_str "$(readlink -f "$(ldd "$bin/dao-cholesky" 2>/dev/null | awk '$1 == "libopenblas.so.0" { print $3 }')")"),\"manifest\":$(json_str "$(head -1 "$here/MANIFEST" 2>/dev/null)")}}"
	log "== setup: CUDA from $cuda_libdir, CUPTI from ${dir:-nowhere}, $unpacked system libraries; ${missing:-all libraries found}"
}

inner() {
	local rows row ratio backend variant t
	echo $$ >"$work/sid"
	setup
	run_step info info "$(cap info)"
	run_step bandwidth bandwidth "$(cap bandwidth)"
	run_step rates rates "$(cap rates)"
	IFS=, read -r -a rows <<<"${DAO_EVIDENCE_ROWS:-$default_rows}"
	for row in "${rows[@]}"; do
		read -r ratio backend variant <<<"$row"
		run_step row "row ${ratio}x $backend $variant" "$(cap row "$ratio")" \
			"$ratio" "$backend" "$variant"
	done
	for backend in cuda-explicit cuda-managed; do
		run_step copy "copy $backend" "$(cap copy)" "$backend"
	done
	for t in $gpu_tests; do
		run_step test "test $t" "$(cap test "$t")" "$t"
	done
	run_step um-experiments um-experiments "$(cap um-experiments)" "$(cap um-experiments)"
	run_step torch torch "$(cap torch)" "$(cap torch)"
}

# Every process of the inner sequence: its session when it leads one (it
# was started by setsid), and its descendants in any case.
kill_all() {
	local sig=$1 root=$2 pids
	pids=$(for s in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$s" || continue
		rest=${line##*) }
		set -- $rest
		echo "${s//[^0-9]/} $2 $4"
	done | awk -v root="$root" '
		{ pid[NR] = $1; ppid[$1] = $2; sid[$1] = $3 }
		END {
			for (i in pid) {
				p = pid[i]
				if (sid[p] == root && p != root) { print p; continue }
				for (q = ppid[p]; q > 1; q = ppid[q]) if (q == root) { print p; break }
			}
			print root
		}')
	# shellcheck disable=SC2086
	kill -s "$sig" $pids 2>/dev/null
}

outer() {
	local pid rc killed=0 current sid
	if [ -z "${OUT:-}" ]; then
		echo "gpu-evidence: OUT must name the folder for the results" >&2
		exit 2
	fi
	# A run's files replace those of an earlier one.
	mkdir -p "$OUT" && : >"$OUT/evidence.jsonl" && : >"$OUT/log.txt" || {
		echo "gpu-evidence: cannot write to $OUT" >&2
		exit 2
	}
	rm -f "$OUT"/{nvidia-smi.txt,tests.tap,traces.tar,um-experiments.json,torch.json}
	DAO_EVIDENCE_START=$(now)
	DAO_EVIDENCE_DEADLINE=$((DAO_EVIDENCE_START + ${DAO_EVIDENCE_SECONDS:-450}))
	DAO_EVIDENCE_WORK=$(mktemp -d)
	export OUT DAO_EVIDENCE_START DAO_EVIDENCE_DEADLINE DAO_EVIDENCE_WORK
	work=$DAO_EVIDENCE_WORK
	record "{\"step\":\"start\",\"name\":\"start\",\"status\":\"ok\",\"t\":0,\"result\":{\"date\":$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),\"epoch\":$DAO_EVIDENCE_START,\"deadline_s\":$((DAO_EVIDENCE_DEADLINE - DAO_EVIDENCE_START)),\"size\":\"$size\",\"steps\":$(json_str "${DAO_EVIDENCE_STEPS:-all}"),\"host\":$(json_str "$(uname -n)")}}"
	log "gpu-evidence: $(date -u), deadline in $((DAO_EVIDENCE_DEADLINE - DAO_EVIDENCE_START)) s, size $size"
	if command -v setsid >/dev/null; then
		setsid bash "$self" --inner </dev/null >>"$OUT/log.txt" 2>&1 &
	else
		bash "$self" --inner </dev/null >>"$OUT/log.txt" 2>&1 &
	fi
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$(now)" -ge "$DAO_EVIDENCE_DEADLINE" ]; then
			killed=1
			sid=$(cat "$work/sid" 2>/dev/null || echo "$pid")
			kill_all TERM "$sid"
			sleep 2
			kill_all KILL "$sid"
			break
		fi
		sleep 1
	done
	wait "$pid"
	rc=$?
	current=$(cat "$work/current" 2>/dev/null)
	if [ $killed = 1 ]; then
		record "{\"step\":\"deadline\",\"name\":\"deadline\",\"status\":\"killed\",\"reason\":$(json_str "the deadline of ${DAO_EVIDENCE_SECONDS:-450} s came during: ${current:-nothing}"),\"t\":$(elapsed)}"
		log "== [$(elapsed) s] deadline: stopped everything during ${current:-nothing}"
	fi
	record "{\"step\":\"end\",\"name\":\"end\",\"status\":\"ok\",\"t\":$(elapsed),\"result\":{\"inner_exit\":$rc,\"killed\":$([ $killed = 1 ] && echo true || echo false)}}"
	log "gpu-evidence: done in $(elapsed) s"
	rm -rf "$work"
	exit 0
}

case ${1:-} in
--inner) inner ;;
--step)
	shift
	run_one_step "$@"
	;;
"") outer ;;
*)
	echo "usage: OUT=<folder> bash gpu-evidence.sh" >&2
	exit 2
	;;
esac
