#!/bin/bash
# SPDX-License-Identifier: MIT
# The pieces of issue 23's experiments on cuda-managed, against the CUDA
# runtime model (run by check-cudamodel with LD_LIBRARY_PATH naming it):
# libdao's request log (DAO_CUDA_REQUEST_LOG) on a real job, the
# diagnostic switches (DAO_CUDA_MANAGED), the analysis of the log against
# the model's own records of what it moved (um-analyze.pl), the probe
# (dao-umprobe) and the CUPTI collector's unavailable paths
# (libdao-umtrace.so). The analysis is also run on small fixtures of the
# record format (below), each built for one of its rules; they are inputs,
# not expected results.
#
# Environment: UM_JOB, UM_PROBE, DAO_BENCH (the binaries of the variant
# under test), UM_TRACE_SO (the collector; unset in sanitizer variants,
# whose programs cannot preload it), UM_ANALYZE, UM_EXPERIMENTS.
set -u

job=${UM_JOB:-build/rel/tests-cudamodel/um_job}
probe=${UM_PROBE:-build/bin/dao-umprobe}
bench=${DAO_BENCH:-build/bin/dao-bench}
analyze=${UM_ANALYZE:-tools/gpubench/um-analyze.pl}
experiments=${UM_EXPERIMENTS:-tools/gpubench/um-experiments.sh}
trace_so=${UM_TRACE_SO:-}
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG \
	DAO_CUDA_MANAGED DAO_CUDA_REQUEST_LOG DAO_UMTRACE DAO_UMTRACE_RECORDS DAO_UMTRACE_CUPTI
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tap.sh"

# run NAME [SWITCHES] [JOB ARGS]: the job with the log and the model's
# records; its analysis in $tmp/NAME.json.
run() {
	local name=$1 switches=$2
	shift 2
	DAO_CUDA_MANAGED=$switches DAO_CUDA_REQUEST_LOG=$tmp/$name.log \
		DAO_CUDAMODEL_UM_RECORDS=$tmp/$name.rec DAO_CUDAMODEL_STATS=1 \
		"$job" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	perl "$analyze" --log "$tmp/$name.log" --records "$tmp/$name.rec" >"$tmp/$name.json" \
		2>"$tmp/$name.aerr" || echo "analysis failed: $(cat "$tmp/$name.aerr")" >&2
	return $rc
}

# calls LOG: "call why" of every request, sorted, unique.
calls() {
	awk '$1 !~ /^#/ && NF == 8 { print $4, $5 }' "$1" | sort -u | tr '\n' ';'
}

# ---------------------------------------------------------------- the log
run default ""
ok $? "um_job on cuda-managed, logging its requests: results right"
ok "$(test "$(calls "$tmp/default.log")" = "discard-device output;discard-host dead;discard-host free;prefetch-device fetch;prefetch-host evict;prefetch-host host;"; echo $?)" \
	"the log names every kind of request the job makes, with why: $(calls "$tmp/default.log")"
ok "$(perl -ne '
	BEGIN { $bad = 0 }
	if ($. == 1) { $bad++ unless /^# dao-cuda-request-log 1 id=1 backend=cuda-managed pid=\d+ clock=monotonic switches=-$/; next }
	if (/^(\d+) 1 (h2d|d2h) (prefetch|discard)-(device|host) \S+ 0x[0-9a-f]+ (\d+) (\d+)$/) {
		$bad++ if $1 < $t || $5 % 65536 || ($2 eq "h2d") != ($4 eq "device");
		$bad++ if $6 <= $seq{$2}; $seq{$2} = $6; $t = $1; $moves++; next }
	if (/^(\d+) 1 (h2d|d2h) done (\d+)$/) { $bad++ if $3 > $seq{$2}; $done{$2} = $3; next }
	if (/^(\d+) 1 host host-(write|read)(-done)? host 0x[0-9a-f]+ 1048576$/) { $open += $3 ? -1 : 1; next }
	if (/^\d+ 1 - chunk-managed alloc 0x[0-9a-f]+ \d+$/) { next }
	$bad++;
	END { $bad++ if $open || !$moves || $done{h2d} != $seq{h2d} || $done{d2h} != $seq{d2h}; exit($bad ? 1 : 0) }' \
	"$tmp/default.log"; echo $?)" \
	"each line well formed: times in order, whole granules, each engine's numbers rising and all seen done by the end, every host access closed"
json_ok "$tmp/default.json" '
	$j->{goal}{met} && !%{$j->{migrations_not_asked}} &&
	!grep({ $_ ne "user" } map { keys %$_ } map { values %$_ } values %{$j->{migrations_asked}}) &&
	$j->{cpu_faults}{total} == 64 && $j->{cpu_faults}{"in-host-write"}{"never-moved"} == 64 &&
	$j->{readings}{"cpu-faults-populate-pages"}{supported} &&
	!$j->{readings}{"host-touches-behind-libdao"}{supported} &&
	!$j->{readings}{"driver-migrates-on-its-own"}{supported}'
ok $? "analysis: every migration the model made was one libdao asked for (a prefetch), and every CPU fault is dao_write populating fresh pages"

# ---------------------------------------------------------------- switches
run nodiscard no-discard
ok $? "DAO_CUDA_MANAGED=no-discard: results right"
ok "$(test "$(calls "$tmp/nodiscard.log")" = "prefetch-device fetch;prefetch-device output;prefetch-host dead;prefetch-host evict;prefetch-host free;prefetch-host host;" &&
	grep -q 'switches=no-discard$' "$tmp/nodiscard.log" &&
	grep -q ' 0 discarded,' "$tmp/nodiscard.err" &&
	grep -q 'diagnostic switches in force: DAO_CUDA_MANAGED=no-discard' "$tmp/nodiscard.err"; echo $?)" \
	"no-discard: outputs and dead data move by prefetch, the model discarded nothing, the log and a warning say so"
json_ok "$tmp/nodiscard.json" '$j->{goal}{met}'
ok $? "no-discard: every migration asked for"
run noadvise no-advise,no-discard
ok $? "DAO_CUDA_MANAGED=no-advise,no-discard: results right"
ok "$(grep -q 'switches=no-discard,no-accessed-by,no-preferred-host$' "$tmp/noadvise.log"; echo $?)" \
	"no-advise is both advices off, named in a fixed order"
json_ok "$tmp/noadvise.json" '$j->{goal}{met}'
ok $? "no-advise: every migration asked for"
for bad in bogus "no-discard," ",no-advise" "no-discard,,no-advise" "No-Discard"; do
	DAO_CUDA_MANAGED=$bad "$job" >"$tmp/bad.out" 2>"$tmp/bad.err"
	ok "$(test $? = 1 && grep -q "DAO_CUDA_MANAGED=$bad: '.*' is not a switch (a comma-separated list of no-discard, no-accessed-by, no-preferred-host, split-to-host, no-advise)" "$tmp/bad.err" &&
		grep -q 'configuration' "$tmp/bad.err"; echo $?)" \
		"DAO_CUDA_MANAGED='$bad': dao_open refuses it, naming the variable and the switches"
done
# Evictions of 8 MiB buffers cut into four slices of 2 MiB, each on its
# own stream (the model checks their order against everything else).
DAO_CUDA_MANAGED=split-to-host DAO_CUDA_REQUEST_LOG=$tmp/split.log \
	DAO_CUDAMODEL_UM_RECORDS=$tmp/split.rec "$bench" copy --json --backend cuda-managed \
	--buffer-bytes 8M --buffers 4 --rounds 1 >"$tmp/split.json" 2>"$tmp/split.err"
ok $? "DAO_CUDA_MANAGED=split-to-host: dao-bench copy's data comes back unchanged"
ok "$(perl -ne '
	next unless /^\d+ \d+ d2h prefetch-host \S+ 0x[0-9a-f]+ (\d+) (\d+)$/;
	$bad++ if $1 != 2 << 20; $n{$2}++;
	END { $bad++ if !%n || grep { $_ != 4 } values %n; exit($bad ? 1 : 0) }' "$tmp/split.log"; echo $?)" \
	"split-to-host: every eviction of 8 MiB is four 2 MiB prefetches under one number"
perl "$analyze" --log "$tmp/split.log" --records "$tmp/split.rec" >"$tmp/split.ajson"
json_ok "$tmp/split.ajson" '$j->{goal}{met} && $j->{migrations_asked}{dtoh}{"prefetch-host"}{user}{bytes} > 0'
ok $? "split-to-host: every migration asked for"
DAO_CUDA_REQUEST_LOG=$tmp/no/such/dir/log "$job" >"$tmp/nolog.out" 2>"$tmp/nolog.err"
ok "$(test $? = 1 && grep -q "DAO_CUDA_REQUEST_LOG: cannot open $tmp/no/such/dir/log: No such file or directory" "$tmp/nolog.err"; echo $?)" \
	"a request log that cannot be written: dao_open fails, saying why"

# ---------------------------------------------------------------- behind libdao's back
run touch "" --touch-behind
ok $? "um_job --touch-behind: results right"
json_ok "$tmp/touch.json" '
	!$j->{goal}{met} && $j->{goal}{migrations_not_asked} == 1 &&
	$j->{migrations_not_asked}{dtoh}{coherence}{"left-on-device"}{bytes} == 65536 &&
	$j->{cpu_faults}{"outside-host-access"}{"left-on-device"} == 1 &&
	$j->{readings}{"host-touches-behind-libdao"}{supported} &&
	!$j->{readings}{"driver-migrates-on-its-own"}{supported}'
ok $? "analysis: the host's read of a page libdao left on the device is a fault and a migration libdao did not ask for"

# ---------------------------------------------------------------- cuda-explicit
DAO_CUDA_REQUEST_LOG=$tmp/explicit.log "$bench" copy --json --backend cuda-explicit \
	--buffer-bytes 1M --buffers 4 --rounds 1 >"$tmp/explicit.json" 2>"$tmp/explicit.err"
ok "$(test $? = 0 && calls "$tmp/explicit.log" | grep -q 'memcpy-d2h evict;memcpy-h2d fetch;' &&
	! calls "$tmp/explicit.log" | grep -q -e prefetch- -e discard- &&
	grep -q ' - chunk-device alloc ' "$tmp/explicit.log" &&
	grep -q ' - chunk-pinned alloc ' "$tmp/explicit.log" &&
	grep -q 'switches=-$' "$tmp/explicit.log"; echo $?)" \
	"cuda-explicit logs its copies, its pool and its pinned staging"

# ---------------------------------------------------------------- the probe
"$probe" --mib 8 >"$tmp/probe.json" 2>"$tmp/probe.err"
ok $? "dao-umprobe runs every step against the model"
json_ok "$tmp/probe.json" '
	!$j->{um}{available} && $j->{um}{reason} =~ /model/ && @{$j->{steps}} == 39 &&
	!grep({ exists $_->{error} || $_->{bytes} != 8 << 20 || !defined $_->{seconds} ||
		defined $_->{um} } @{$j->{steps}})'
ok $? "its JSON: 39 steps of 8 MiB, each timed, no error, no CUPTI under the model (said why)"
"$probe" --mib 7 >/dev/null 2>"$tmp/probe7.err"
ok "$(test $? = 2 && grep -q usage "$tmp/probe7.err"; echo $?)" "dao-umprobe --mib 7: refused (even sizes only)"
DAO_CUDAMODEL_MEM=64M "$probe" --mib 16 >"$tmp/probe-big.json" 2>/dev/null
ok "$(test $? = 2; echo $?)" "a card with less than 8 buffers free: the probe refuses before allocating"
json_ok "$tmp/probe-big.json" '$j->{error} =~ /^refused: 16777216 bytes per buffer need 8 times that free on the device, 67108864 are/'
ok $? "and says why in its JSON"

# ---------------------------------------------------------------- the collector
if [ -n "$trace_so" ]; then
	LD_PRELOAD=$trace_so DAO_UMTRACE=$tmp/um.json "$job" >/dev/null 2>&1
	ok $? "the collector preloaded into a job under the model: the job runs"
	json_ok "$tmp/um.json" '!$j->{available} && $j->{reason} eq "the CUDA runtime model is loaded, not a driver"'
	ok $? "and it says it collects nothing, and why"
	LD_PRELOAD=$trace_so DAO_UMTRACE=$tmp/um2.json DAO_UMTRACE_CUPTI=$tmp/no-cupti.so /bin/true
	json_ok "$tmp/um2.json" '!$j->{available} && $j->{reason} =~ /^libcupti cannot be loaded \(.*no-cupti.so/'
	ok $? "without CUPTI: {available: false} with the loader's reason"
	LD_PRELOAD=$trace_so /bin/true
	ok $? "without DAO_UMTRACE it does nothing"
fi

# ---------------------------------------------------------------- the call's script
# A rehearsal of um-experiments.sh with um_job standing in for dao-cholesky
# (which needs cuBLAS): the probe, three managed variants, their analyses
# from the model's records, side by side, in one JSON file.
DAO_UM_JOB=$job DAO_UM_BIN=$(dirname "$probe") DAO_UM_LIB=${trace_so:+$(dirname "$trace_so")} \
	DAO_UM_PROBE_MIB=8 bash "$experiments" "$tmp/exp.json" >"$tmp/exp.out" 2>"$tmp/exp.err"
ok $? "um-experiments.sh, rehearsed against the model: exit 0"
want_errors=
[ -n "$trace_so" ] || want_errors="libdao-umtrace.so not found: runs without CUPTI records"
json_ok "$tmp/exp.json" '
	@{$j->{probe}{steps}} == 39 && !@{$j->{skipped}} &&
	join(",", @{$j->{errors}}) eq "'"$want_errors"'" &&
	join(",", sort keys %{$j->{runs}}) eq "managed-default,managed-no-advise,managed-no-discard,managed-split-to-host" &&
	!grep({ $_->{job}{exit} != 0 || !$_->{analysis}{goal}{met} ||
		$_->{analysis}{log}{backends}[0]{backend} ne "cuda-managed" } values %{$j->{runs}}) &&
	$j->{runs}{"managed-no-discard"}{analysis}{log}{backends}[0]{switches} eq "no-discard" &&
	$j->{compare}{variants}{"managed-no-advise"}{met} &&
	$j->{compare}{eviction_gb_per_s}{pinned_over_prefetch} > 0 &&
	keys %{$j->{compare}{eviction_gb_per_s}} == 6'
ok $? "its JSON: the probe, each variant's job, log and analysis, side by side, and the probe's ways off the device"
DAO_EVIDENCE_DEADLINE=$(($(date +%s) + 8)) DAO_UM_JOB=$job DAO_UM_BIN=$(dirname "$probe") \
	DAO_UM_LIB= bash "$experiments" "$tmp/late.json" >/dev/null 2>&1
ok $? "with 8 s to the deadline: exit 0"
json_ok "$tmp/late.json" '!$j->{probe} && !$j->{runs} && @{$j->{skipped}} == 5 &&
	$j->{skipped}[0] =~ /^probe: \d+s left before the deadline, wants up to 90s$/'
ok $? "every step skipped, said so, and the file written"
bash "$experiments" >/dev/null 2>&1
ok "$(test $? = 2; echo $?)" "um-experiments.sh without OUTFILE: usage"

# ---------------------------------------------------------------- fixtures
# Each is a request log and a records file written for one rule of the
# analysis (times in ns, addresses in 64 KiB granules at 0x10000000).
# fix NAME [ANALYSIS OPTIONS]: a log of a backend with one 1 MiB managed
# chunk at 0x10000000 and the lines on stdin, records ${recs[@]}; the
# analysis in $tmp/NAME.json.
head='# dao-cuda-request-log 1 id=1 backend=cuda-managed pid=1 clock=monotonic switches=-'
fix() {
	local name=$1
	shift
	{ echo "$head"; echo "100 1 - chunk-managed alloc 0x10000000 1048576"; cat; } >"$tmp/$name.log"
	printf '%s\n' "# dao-umtrace-records 1 clock=monotonic source=fixture dropped=0" \
		"${recs[@]}" >"$tmp/$name.rec"
	perl "$analyze" "$@" --log "$tmp/$name.log" --records "$tmp/$name.rec" >"$tmp/$name.json"
}

# A discard to the host and one to the device, each reported as a
# migration of another cause than "user" while pending; a prefetch as
# "user".
recs=("dtoh 1500 1600 0x10000000 65536 coherence" "htod 2500 2600 0x10010000 65536 unknown"
      "htod 3500 3600 0x10020000 65536 user")
fix discards <<EOF
1000 1 d2h discard-host dead 0x10000000 65536 1
2000 1 h2d discard-device output 0x10010000 65536 1
3000 1 h2d prefetch-device fetch 0x10020000 65536 2
5000 1 d2h done 1
5000 1 h2d done 2
EOF
json_ok "$tmp/discards.json" '
	$j->{goal}{met} && $j->{readings}{"other-migrations-are-discards"}{supported} &&
	$j->{readings}{"other-migrations-are-discards"}{evidence}{of_discards} == 131072 &&
	$j->{migrations_asked}{dtoh}{"discard-host"}{coherence}{bytes} == 65536 &&
	$j->{migrations_asked}{htod}{"discard-device"}{unknown}{bytes} == 65536'
ok $? "fixture: migrations of other causes while discards are pending are the discards' (reading supported)"

# The driver's own prefetch of a page libdao never asked to move, and a
# GPU fault.
recs=("htod 1500 1600 0x10030000 65536 prefetch" "gpu-fault 1700 1800 0x10030000 1 read")
fix driver </dev/null
json_ok "$tmp/driver.json" '
	!$j->{goal}{met} && $j->{migrations_not_asked}{htod}{prefetch}{"never-moved"}{bytes} == 65536 &&
	$j->{gpu_faults}{"never-moved"} == 1 && $j->{readings}{"driver-migrates-on-its-own"}{supported} &&
	!$j->{readings}{"host-touches-behind-libdao"}{supported}'
ok $? "fixture: a migration of the driver's own cause and a GPU fault are not libdao's (reading supported)"

# Pipelined: out, in, out issued before the first moves; all three asked.
recs=("dtoh 4000 4100 0x10000000 65536 user" "htod 4200 4300 0x10000000 65536 user"
      "dtoh 4400 4500 0x10000000 65536 user")
fix pipelined <<EOF
1000 1 d2h prefetch-host evict 0x10000000 65536 1
2000 1 h2d prefetch-device fetch 0x10000000 65536 1
3000 1 d2h prefetch-host evict 0x10000000 65536 2
9000 1 d2h done 2
9000 1 h2d done 1
EOF
json_ok "$tmp/pipelined.json" '$j->{goal}{met} && $j->{migrations_asked}{dtoh}{"prefetch-host"}{user}{count} == 2'
ok $? "fixture: requests queued ahead of their migrations are each matched once, in order"

# A request seen done before a migration cannot explain it; within the
# tolerance a record may start a little before its request was logged.
recs=("dtoh 6000000 6100000 0x10000000 65536 coherence"
      "htod 7950000 8000000 0x10010000 65536 user")
fix expiry <<EOF
1000000 1 d2h prefetch-host evict 0x10000000 65536 1
2000000 1 d2h done 1
8000000 1 h2d prefetch-device fetch 0x10010000 65536 1
EOF
json_ok "$tmp/expiry.json" '
	$j->{goal}{migrations_not_asked} == 1 && $j->{migrations_not_asked}{dtoh}{coherence}{total}{count} == 1 &&
	$j->{matched_within_tolerance} == 1'
ok $? "fixture: a request seen done explains no later migration; one issued 50 us after its record's start matches within the tolerance"
perl "$analyze" --tolerance-us 0 --log "$tmp/expiry.log" --records "$tmp/expiry.rec" >"$tmp/expiry0.json"
json_ok "$tmp/expiry0.json" '$j->{goal}{migrations_not_asked} == 2'
ok $? "fixture: with no tolerance it does not"

# CPU faults: inside a dao_read on a page libdao left on the device (an
# ordering defect), inside a dao_write after a discard (populating), and
# outside any host access.
recs=("cpu-fault 1500 1500 0x10000000 0 -" "cpu-fault 3500 3500 0x10010000 0 -"
      "cpu-fault 5000 5000 0x10020000 0 -")
fix faults --tolerance-us 0 <<EOF
1000 1 h2d prefetch-device fetch 0x10000000 65536 1
1100 1 host host-read host 0x10000000 65536
1900 1 host host-read-done host 0x10000000 65536
2000 1 d2h discard-host dead 0x10010000 65536 1
3000 1 host host-write host 0x10010000 65536
4000 1 host host-write-done host 0x10010000 65536
EOF
json_ok "$tmp/faults.json" '
	!$j->{goal}{met} && $j->{cpu_faults}{"in-host-read"}{"left-on-device"} == 1 &&
	$j->{cpu_faults}{"in-host-write"}{"after-discard-to-host"} == 1 &&
	$j->{cpu_faults}{"outside-host-access"}{"never-moved"} == 1 &&
	$j->{readings}{"host-touches-behind-libdao"}{supported} &&
	!$j->{readings}{"cpu-faults-populate-pages"}{supported}'
ok $? "fixture: CPU faults told apart by host access and by what libdao last did to the page"

printf '%s\n' "$head" "1000 1 h2d teleport fetch 0x10000000 65536 1" >"$tmp/bad.log"
perl "$analyze" --log "$tmp/bad.log" --records "$tmp/faults.rec" >/dev/null 2>"$tmp/bad.err"
ok "$(test $? = 2 && grep -q "bad.log:2: unknown call 'teleport'" "$tmp/bad.err"; echo $?)" \
	"a malformed log is refused, naming the file, the line and why"
perl "$analyze" --records "$tmp/faults.rec" >/dev/null 2>"$tmp/usage.err"
ok "$(test $? = 2 && grep -q usage "$tmp/usage.err"; echo $?)" "without a log: usage"

tap_done
