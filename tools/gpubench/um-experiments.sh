#!/bin/bash
# SPDX-License-Identifier: MIT
# um-experiments.sh OUTFILE - issue 23's experiments on cuda-managed, run
# unattended on a GPU machine (Documentation/cuda.md, "Experiments"):
#
#  1. dao-umprobe: one managed-memory primitive at a time, timed, with the
#     CUPTI records each caused;
#  2. dao-cholesky at 2x oversubscription (--warm-up) on cuda-managed in
#     four variants, the same matrix each time: default, no-discard,
#     no-advise and split-to-host (DAO_CUDA_MANAGED), each with libdao's
#     request log
#     (DAO_CUDA_REQUEST_LOG) and the CUPTI collector preloaded
#     (libdao-umtrace.so: DAO_UMTRACE, DAO_UMTRACE_RECORDS); and once on
#     cuda-explicit, the time to compare with;
#  3. um-analyze.pl on each managed run: the migrations and CPU faults
#     libdao did not ask for, and the readings the figures support.
#
# OUTFILE is one JSON object, rewritten as soon as each part exists (so a
# run cut short still leaves what it had): {"probe": ..., "runs": {NAME:
# {"job": ..., "collector": ..., "analysis": ...}}, "compare": ...,
# "skipped": [...], "errors": [...]}.
#
# Contract with the main script (tools/gpubench/gpu-evidence.sh, `make
# gpu-bundle`, which list this script, um-analyze.pl, dao-umprobe and
# libdao-umtrace.so in GPU_BUNDLE_SCRIPTS, _BINS and _LIBS through
# gpubench.mk): it calls `um-experiments.sh OUTFILE` as an optional step,
# with DAO_EVIDENCE_DEADLINE set; this script never runs past that
# deadline, writes only OUTFILE (and scratch under a temporary folder it
# removes), needs nothing the bundle lacks, and exits 0 when OUTFILE was
# written (parts that failed or were skipped are listed in it), 1 when it
# could not be, 2 on a bad argument.
#
# Environment:
#   DAO_EVIDENCE_DEADLINE  epoch seconds by which to be done (default: now + 300)
#   DAO_UM_BIN, DAO_UM_LIB the folder of dao-umprobe and dao-cholesky, and of
#                          libdao-umtrace.so (unset: DAO_EVIDENCE_BIN and
#                          its ../lib, then beside this script, its bin/ and
#                          lib/, its ../bin and ../lib, then build/bin and
#                          build/lib; set but empty: none)
#   DAO_UM_PROBE_MIB       the probe's buffers (default 256)
#   DAO_UM_BUDGET, DAO_UM_TILE, DAO_UM_RATIO  the matrix: RATIO times the
#                          budget (defaults 1G, 2048, 2 when dao-cholesky has
#                          a sampled check; else 256M, 1024, 2, whose full
#                          residual check takes seconds, not a minute)
#   DAO_UM_VARIANTS        managed variants, "name=switches" (default "default=
#                          no-discard=no-discard no-advise=no-advise
#                          split-to-host=split-to-host")
#   DAO_UM_JOB             a job to run instead of dao-cholesky (no arguments;
#                          the explicit run is left out): for rehearsals
#                          against the CUDA runtime model
#
# Safety on shared cards: the probe refuses unless 8 of its buffers are
# free; the matrix is RATIO x a budget far below the card, and libdao never
# allocates managed memory beyond what the card has free.
set -u

out=${1:-}
[ -n "$out" ] && [ $# = 1 ] || { echo "usage: um-experiments.sh OUTFILE" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
deadline=${DAO_EVIDENCE_DEADLINE:-$(($(date +%s) + 300))}
case $deadline in *[!0-9]* | '') echo "um-experiments: DAO_EVIDENCE_DEADLINE: epoch seconds" >&2; exit 2 ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts"

find_in() { # NAME DIR...: the first DIR/NAME that exists
	local name=$1 d
	shift
	for d in "$@"; do
		[ -n "$d" ] && [ -e "$d/$name" ] && { echo "$d/$name"; return 0; }
	done
	return 1
}
# DAO_UM_BIN or DAO_UM_LIB set, even empty, is the only place looked in.
# In the prepared call: the runnable copy of the bundle's bin/ that
# gpu-evidence.sh made (DAO_EVIDENCE_BIN, its libraries in ../lib), then
# the bundle's own bin/ and lib/ beside this script; in the tree, build/.
bins=(${DAO_EVIDENCE_BIN:+"$DAO_EVIDENCE_BIN"} "$here" "$here/bin" "$here/../bin" build/bin)
libs=(${DAO_EVIDENCE_BIN:+"$DAO_EVIDENCE_BIN/../lib"} "$here" "$here/lib" "$here/../lib" build/lib)
[ -n "${DAO_UM_BIN+set}" ] && bins=("$DAO_UM_BIN")
[ -n "${DAO_UM_LIB+set}" ] && libs=("$DAO_UM_LIB")
probe=$(find_in dao-umprobe "${bins[@]}")
chol=$(find_in dao-cholesky "${bins[@]}")
trace_so=$(find_in libdao-umtrace.so "${libs[@]}")
analyze=$(find_in um-analyze.pl "$here" tools/gpubench)
[ -n "$trace_so" ] && trace_so=$(cd "$(dirname "$trace_so")" && pwd)/$(basename "$trace_so")

note() { # FILE TEXT: one line of a list
	printf '%s\n' "$2" >>"$tmp/$1"
	echo "um-experiments: $2" >&2
}

# Seconds left before the deadline, less a margin for writing OUTFILE.
left() { echo $((deadline - $(date +%s) - 5)); }

# capped SECONDS NAME CMD...: CMD under a cap (never past the deadline);
# skipped when not even a third of the cap is left. Its status, 124 when cut.
capped() {
	local cap=$1 name=$2 l
	shift 2
	l=$(left)
	if [ "$l" -lt $((cap / 3)) ]; then
		note skipped "$name: ${l}s left before the deadline, wants up to ${cap}s"
		return 125
	fi
	[ "$l" -lt "$cap" ] && cap=$l
	timeout -k 5 "$cap" "$@"
}

# Put the parts together into OUTFILE (atomically).
assemble() {
	perl -MJSON::PP -e '
		my ($dir, $tmp) = @ARGV;
		sub slurp { my ($f) = @_; local $/; open(my $h, "<", $f) or return undef;
			my $t = <$h>; my $v = eval { decode_json($t) };
			return defined $v ? $v : { unreadable => substr($t // "", 0, 2000) } }
		sub lines { my ($f) = @_; open(my $h, "<", $f) or return []; chomp(my @l = <$h>); \@l }
		my %o = (deadline => $ARGV[2] + 0, written => time,
			 skipped => lines("$tmp/skipped"), errors => lines("$tmp/errors"));
		$o{probe} = slurp("$dir/probe.json") if -e "$dir/probe.json";
		$o{compare} = slurp("$dir/compare.json") if -e "$dir/compare.json";
		for my $f (sort glob("$dir/run-*.json")) {
			my ($name, $part) = $f =~ m{/run-(.+)\.(job|collector|analysis)\.json$} or next;
			$o{runs}{$name}{$part} = slurp($f);
		}
		print JSON::PP->new->canonical->encode(\%o), "\n";' "$tmp/parts" "$tmp" "$deadline" \
		>"$out.tmp" && mv "$out.tmp" "$out"
}

assemble || { echo "um-experiments: cannot write $out" >&2; exit 1; }
[ -n "$analyze" ] || note errors "um-analyze.pl not found: no analysis"

# ---------------------------------------------------------------- 1. the probe
if [ -z "$probe" ]; then
	note errors "dao-umprobe not found"
else
	capped 90 probe "$probe" --mib "${DAO_UM_PROBE_MIB:-256}" >"$tmp/parts/probe.json" \
		2>"$tmp/probe.err"
	rc=$?
	[ $rc = 0 ] || [ $rc = 125 ] ||
		note errors "dao-umprobe exited $rc: $(tail -c 300 "$tmp/probe.err" | tr '\n' ' ')"
	[ -s "$tmp/parts/probe.json" ] || rm -f "$tmp/parts/probe.json"
	assemble
fi

# ---------------------------------------------------------------- 2. the job
sampled=0
job=()
if [ -n "${DAO_UM_JOB:-}" ]; then
	job=("$DAO_UM_JOB")
elif [ -z "$chol" ]; then
	note errors "dao-cholesky not found: no runs"
else
	"$chol" --help 2>/dev/null | grep -q -- '--check' && sampled=1
	if [ $sampled = 1 ]; then
		budget=${DAO_UM_BUDGET:-1G} tile=${DAO_UM_TILE:-2048}
	else
		budget=${DAO_UM_BUDGET:-256M} tile=${DAO_UM_TILE:-1024}
	fi
	ratio=${DAO_UM_RATIO:-2}
	budget_bytes=$(perl -e '
		my ($v, $s) = $ARGV[0] =~ /^(\d+)([KMGT]?)$/i or exit 1;
		print $v * {"" => 1, K => 1 << 10, M => 1 << 20, G => 1 << 30, T => 1 << 40}->{uc $s};' \
		"$budget") || { echo "um-experiments: DAO_UM_BUDGET: a size" >&2; exit 2; }
	# The lower triangle's tiles closest to ratio x what the budget holds
	# (as bench-gpu.sh sizes its matrices).
	nt=$(perl -e '
		my ($r, $b, $t) = @ARGV; my $want = $r * int($b / $t); my $nt = 1;
		$nt++ while ($nt + 1) * ($nt + 2) / 2 <= $want; print $nt;' \
		"$ratio" "$budget_bytes" "$((tile * tile * 8))")
	job=("$chol" --json --warm-up --n "$((nt * tile))" --tile "$tile" --budget "$budget_bytes")
	[ $sampled = 1 ] && job+=(--check sample)
fi

# run NAME BACKEND SWITCHES: the job, logged and traced when managed.
run() {
	local name=$1 backend=$2 switches=$3 rc
	local log=$tmp/$name.log rec=$tmp/$name.rec sum=$tmp/parts/run-$name.collector.json
	local cmd=("${job[@]}")
	[ -z "${DAO_UM_JOB:-}" ] && cmd+=(--backend "$backend")
	if [ "$backend" = cuda-managed ]; then
		rm -f "$log"
		# Under the CUDA runtime model (a rehearsal) the collector
		# collects nothing and the model writes the records instead.
		capped 120 "run $name" env DAO_CUDA_MANAGED="$switches" DAO_CUDA_REQUEST_LOG="$log" \
			${trace_so:+LD_PRELOAD="$trace_so"} DAO_UMTRACE="$sum" DAO_UMTRACE_RECORDS="$rec" \
			DAO_CUDAMODEL_UM_RECORDS="$rec" "${cmd[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
	else
		capped 120 "run $name" "${cmd[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
	fi
	rc=$?
	[ $rc = 125 ] && return
	if [ $rc != 0 ]; then
		note errors "run $name exited $rc: $(tail -c 300 "$tmp/$name.err" | tr '\n' ' ')"
	fi
	if [ -s "$tmp/$name.out" ]; then
		cp "$tmp/$name.out" "$tmp/parts/run-$name.job.json"
	else
		printf '{"exit": %d}\n' "$rc" >"$tmp/parts/run-$name.job.json"
	fi
	assemble
	[ "$backend" = cuda-managed ] && [ -n "$analyze" ] || return
	if [ ! -s "$rec" ]; then
		note skipped "analysis of $name: no CUPTI records (see its collector part)"
		return
	fi
	local with=()
	[ -s "$sum" ] && with=(--summary "$sum")
	capped 90 "analysis of $name" perl "$analyze" --log "$log" --records "$rec" "${with[@]}" \
		>"$tmp/parts/run-$name.analysis.json" 2>"$tmp/$name.aerr"
	rc=$?
	[ $rc = 0 ] || [ $rc = 125 ] ||
		note errors "analysis of $name exited $rc: $(tail -c 300 "$tmp/$name.aerr" | tr '\n' ' ')"
	[ -s "$tmp/parts/run-$name.analysis.json" ] || rm -f "$tmp/parts/run-$name.analysis.json"
	assemble
}

if [ ${#job[@]} -gt 0 ]; then
	[ -n "$trace_so" ] || note errors "libdao-umtrace.so not found: runs without CUPTI records"
	# A sampled check that this dao-cholesky refuses: the full one.
	if [ $sampled = 1 ] && ! "$chol" --check sample --help >/dev/null 2>&1; then
		job=("${job[@]:0:${#job[@]}-2}")
	fi
	for v in ${DAO_UM_VARIANTS:-default= no-discard=no-discard no-advise=no-advise split-to-host=split-to-host}; do
		run "managed-${v%%=*}" cuda-managed "${v#*=}"
	done
	[ -n "${DAO_UM_JOB:-}" ] || run explicit cuda-explicit ""
fi

# ---------------------------------------------------------------- 3. side by side
perl -MJSON::PP -e '
	my ($dir) = @ARGV; my (%c, %o);
	sub slurp { local $/; open(my $h, "<", $_[0]) or return undef; eval { decode_json(<$h>) } }
	my $ex = slurp("$dir/run-explicit.job.json");
	for my $f (sort glob("$dir/run-managed-*.job.json")) {
		my ($name) = $f =~ m{/run-(managed-.+)\.job\.json$};
		my ($j, $a) = (slurp($f), slurp("$dir/run-$name.analysis.json"));
		my %r;
		$r{seconds} = $j->{seconds} if $j && defined $j->{seconds};
		$r{vs_explicit} = $j->{seconds} / $ex->{seconds}
			if $j && $ex && $j->{seconds} && $ex->{seconds};
		if ($a) {
			$r{$_} = $a->{goal}{$_} for qw(migrations_not_asked bytes_not_asked cpu_faults_outside_host_access met);
			$r{other_cause_bytes} = $a->{readings}{"other-migrations-are-discards"}{evidence}{other_cause_bytes};
			$r{dtoh_gb_per_s} = $a->{throughput}{dtoh}{gb_per_s};
			$r{readings} = { map { $_ => $a->{readings}{$_}{supported} } keys %{ $a->{readings} } };
		}
		$c{$name} = \%r;
	}
	$o{variants} = \%c;
	# Eviction throughput (goal: within 1.5x of pinned copies), from the
	# probe: the advised buffer as libdao has it, each way off the device.
	my $p = slurp("$dir/probe.json");
	if ($p && $p->{steps}) {
		my %g = map { ($_->{buffer} eq "advised" ? "" : "$_->{buffer}:") . $_->{name} =>
			      $_->{gb_per_s} } grep { defined $_->{gb_per_s} } @{ $p->{steps} };
		my $ex = $g{"explicit-memcpy-device-to-pinned"};
		my %e = map { $_ => $g{$_} } grep { defined $g{$_} } ("prefetch-to-host-again",
			"prefetch-to-host-4-streams", "prefetch-to-host-batch-of-8",
			"memcpy-device-managed-to-pinned", "explicit-memcpy-device-to-pinned");
		$e{pinned_over_prefetch} = $ex / $e{"prefetch-to-host-again"}
			if $ex && $e{"prefetch-to-host-again"};
		$o{eviction_gb_per_s} = \%e;
	}
	# Discards are the other migrations if those vanish with them.
	my ($d, $n) = ($c{"managed-default"}, $c{"managed-no-discard"});
	if ($d && $n && $d->{other_cause_bytes} && defined $n->{other_cause_bytes}) {
		$o{discards_explain_other_migrations} =
			$d->{other_cause_bytes} > 0 && $n->{other_cause_bytes} == 0
			? JSON::PP::true : JSON::PP::false;
	}
	print JSON::PP->new->canonical->encode(\%o), "\n";' "$tmp/parts" >"$tmp/parts/compare.json" ||
	rm -f "$tmp/parts/compare.json"
assemble || exit 1
exit 0
