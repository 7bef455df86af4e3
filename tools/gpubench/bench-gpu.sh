#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-gpu.sh - the GPU benchmark of `make bench-gpu` (issue 6): pinned
# copy bandwidth, then dao-cholesky with the matrix at 1x (in memory), 2x
# and 4x the device budget under cuda-explicit, cuda-managed, a baseline
# (lru, no lookahead, on cuda-explicit) and plain UVM (dao-cholesky
# --backend uvm: managed memory, no libdao, at 1x). Each time is given as
# a ratio to the in-memory time of the same matrix (dao-cholesky --compare's unlimited run) and to the bound
# max(compute, bytes moved / measured bandwidth), compute being that
# in-memory time; beside it, daosim's modeled time of the same job (its
# trace, DAO_TRACE) on the h100 preset at the same budget, policy and
# lookahead. The driver does not report what plain UVM moves: its bytes
# are n/a and its bound is the in-memory time alone; daosim has no model
# of the driver. Plain UVM runs at 1x only, where the matrix fits the card
# (dao-cholesky refuses to oversubscribe it: uvm.h says why).
#
# Safety on lent cards: the budget (DAO_BENCH_BUDGET, default 1G) is far
# below any card's memory and the largest matrix is 4x the budget, so
# managed memory never exceeds what the card has free; nothing about the
# card is changed.
#
# Environment: DAO_GPUBW, DAO_CHOLESKY, DAO_DAOSIM (the binaries), DAO_BENCH_BUDGET,
# DAO_BENCH_TILE (default 2048), DAO_BENCH_RATIOS (default "1 2 4"),
# DAO_BENCH_OUT (markdown copy of the table, default bench-gpu.md),
# DAO_BENCH_UVM (0: no plain-UVM rows), DAO_BENCH_ONLY (runs to keep, by
# name, comma-separated: e.g. "cuda-explicit dao,uvm driver"; default all).
# Exit status 77 when no CUDA device is usable.
set -u

bw_bin=${DAO_GPUBW:-build/bin/dao-gpubw}
chol=${DAO_CHOLESKY:-build/bin/dao-cholesky}
daosim=${DAO_DAOSIM:-build/bin/daosim}
budget=${DAO_BENCH_BUDGET:-1G}
tile=${DAO_BENCH_TILE:-2048}
ratios=${DAO_BENCH_RATIOS:-1 2 4}
out=${DAO_BENCH_OUT:-bench-gpu.md}
runs=("cuda-explicit dao" "cuda-managed dao" "cuda-explicit lru-baseline")
[ "${DAO_BENCH_UVM:-1}" = 0 ] || runs+=("uvm driver")
if [ -n "${DAO_BENCH_ONLY:-}" ]; then
	kept=()
	for run in "${runs[@]}"; do
		case ",$DAO_BENCH_ONLY," in *",$run,"*) kept+=("$run") ;; esac
	done
	[ ${#kept[@]} -gt 0 ] || { echo "bench-gpu: DAO_BENCH_ONLY names no run" >&2; exit 2; }
	runs=("${kept[@]}")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# json FILE EXPR: a Perl expression over the decoded object $j.
json() {
	perl -MJSON::PP -e '
		local $/; open(my $f, "<", $ARGV[0]) or die; my $j = decode_json(<$f>);
		my $v = eval $ARGV[1]; die $@ if $@; print "$v\n";' "$1" "$2"
}

"$bw_bin" >"$tmp/bw.json"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "bench-gpu: dao-gpubw failed" >&2; exit 1; }

budget_bytes=$(perl -e '
	my ($v, $s) = $ARGV[0] =~ /^(\d+)([KMGT]?)$/i or die "bad budget\n";
	my %m = (""=>1, K=>1<<10, M=>1<<20, G=>1<<30, T=>1<<40);
	print $v * $m{uc $s};' "$budget") || exit 2
tile_bytes=$((tile * tile * 8))

gpu=$(json "$tmp/bw.json" '$j->{gpu}')
driver=$(sed -n 's/.*Kernel Module *\([0-9.]*\).*/\1/p' /proc/driver/nvidia/version 2>/dev/null)
h2d=$(json "$tmp/bw.json" '$j->{h2d_bytes_per_s}')
d2h=$(json "$tmp/bw.json" '$j->{d2h_bytes_per_s}')
bidir=$(json "$tmp/bw.json" '$j->{bidir_bytes_per_s}')

{
	echo "GPU: $gpu; NVIDIA driver ${driver:-unknown}; CUDA driver API $(json "$tmp/bw.json" '$j->{cuda_driver}'); $(date -u +%Y-%m-%d)"
	echo
	printf 'Pinned bandwidth: host-to-device %.1f GB/s, device-to-host %.1f GB/s, both at once %.1f GB/s\n' \
		"$(perl -e "print $h2d/1e9")" "$(perl -e "print $d2h/1e9")" "$(perl -e "print $bidir/1e9")"
	echo
	echo "dao-cholesky, tile $tile ($tile_bytes bytes), device budget $budget_bytes bytes"
	echo
	echo "| matrix / budget | n | run | seconds | in-memory s | vs in-memory | bound s | vs bound | daosim h100 s | vs daosim | Gflop/s | h2d GiB | d2h GiB | check |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} | tee "$out"

for ratio in $ratios; do
	# Tiles of the lower triangle: nt (nt + 1) / 2 closest to ratio x the
	# tiles the budget holds (at most that many for 1x: it must fit).
	nt=$(perl -e '
		my ($r, $b, $t) = @ARGV; my $want = $r * int($b / $t); my $nt = 1;
		$nt++ while ($nt + 1) * ($nt + 2) / 2 <= $want;
		print $nt;' "$ratio" "$budget_bytes" "$tile_bytes")
	n=$((nt * tile))
	trace=$tmp/cholesky-$ratio.trace
	for run in "${runs[@]}"; do
		set -- $run
		backend=$1
		name="$1 $2"
		if [ "$backend" = uvm ] && [ "$ratio" != 1 ]; then
			echo "| ${ratio}x | $n | $name | not run: plain UVM only where the matrix fits (1x) ||||||||||| |" | tee -a "$out"
			continue
		fi
		# --warm-up: the process's one-time costs (CUDA module loading,
		# library handles) fall on no timed run.
		args=(--json --compare --warm-up --n "$n" --tile "$tile" --budget "$budget_bytes"
		      --backend "$backend")
		[ "$2" = lru-baseline ] && args+=(--policy lru --lookahead 1)
		# The job's trace, once per matrix: every libdao run submits the
		# same buffers and kernels (the unlimited run of --compare writes
		# it last).
		if [ ! -s "$trace" ] && [ "$backend" != uvm ]; then
			DAO_TRACE=$trace "$chol" "${args[@]}" >"$tmp/run.json" 2>"$tmp/run.err"
		else
			"$chol" "${args[@]}" >"$tmp/run.json" 2>"$tmp/run.err"
		fi
		rc=$?
		if [ $rc != 0 ] || [ ! -s "$tmp/run.json" ]; then
			echo "| ${ratio}x | $n | $name | failed (exit $rc): $(tr '\n' ' ' <"$tmp/run.err") ||||||||||| |" | tee -a "$out"
			continue
		fi
		# daosim at the run's budget, policy and lookahead in force.
		modeled=undef
		if [ "$backend" != uvm ] && [ -s "$trace" ]; then
			if "$daosim" --json --device h100 --time-bound-limit 0 \
				--budget "$(json "$tmp/run.json" '$j->{budget_bytes}')" \
				--policy "$(json "$tmp/run.json" '$j->{policy}')" \
				--lookahead "$(json "$tmp/run.json" '$j->{lookahead}')" \
				"$trace" >"$tmp/sim.json" 2>"$tmp/sim.err"; then
				modeled=$(json "$tmp/sim.json" '$j->{traces}[0]{policies}[0]{modeled_ns} / 1e9')
			else
				echo "bench-gpu: daosim failed on $name: $(tr '\n' ' ' <"$tmp/sim.err")" >&2
			fi
		fi
		json "$tmp/run.json" "
			my (\$s, \$m, \$sim) = (\$j->{seconds}, \$j->{compare}{seconds}, $modeled);
			my (\$in, \$back) = (\$j->{h2d_bytes}, \$j->{d2h_bytes});
			my \$known = defined \$in && defined \$back;
			my \$bound = \$m;
			for my \$t (\$known ? (\$in / $h2d, \$back / $d2h, (\$in + \$back) / $bidir) : ()) {
				\$bound = \$t if \$t > \$bound;
			}
			sprintf('| ${ratio}x | $n | $name | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %.1f | %s | %s | %s |',
				\$s, \$m, \$s / \$m, \$bound, \$s / \$bound,
				defined \$sim ? sprintf('%.4g', \$sim) : 'n/a',
				defined \$sim && \$sim > 0 ? sprintf('%.3f', \$s / \$sim) : 'n/a',
				\$j->{gflops},
				\$known ? sprintf('%.2f', \$in / 2**30) : 'n/a',
				\$known ? sprintf('%.2f', \$back / 2**30) : 'n/a',
				\$j->{passed} ? 'passed' : 'FAILED')" | tee -a "$out"
	done
done
echo
echo "bench-gpu: table written to $out; record it in Documentation/cuda.md"
