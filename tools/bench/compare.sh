#!/bin/bash
# SPDX-License-Identifier: MIT
# Overhead of this tree's libdao beside an earlier revision's, in one run.
#
#   tools/bench/compare.sh BASE_REV [dao-bench overhead options]
#
# Builds today's dao-bench twice: against this tree's libdao and against
# BASE_REV's (a temporary git worktree; dao-bench uses only the public API,
# so the same measuring code runs over both libraries). Then runs the two
# alternately, ROUNDS times (default 2), keeps the best figure of each row
# and prints them side by side with the ratio new / old (dao_open's time in
# microseconds too, not part of any other column). Noise on a shared
# machine only ever adds time, and alternating spreads it over both.
#
# RUN_PREFIX, when set, goes before each dao-bench run (not the builds),
# e.g. RUN_PREFIX="chrt -f 10" to keep other processes of a busy machine
# from preempting the benchmark's threads.
#
# COMPARE_FROM=DIR prints the table from runs made elsewhere (another
# machine, the same two binaries): DIR holds old.R.json and new.R.json,
# the `dao-bench overhead --json` outputs of rounds R = 1..ROUNDS, made
# alternately; nothing is built or run here.
set -euo pipefail

base=${1:?usage: compare.sh BASE_REV [dao-bench overhead options]}
shift
rounds=${ROUNDS:-2}
read -r -a run_prefix <<<"${RUN_PREFIX:-}"
top=$(git rev-parse --show-toplevel)
cd "$top"
if [ -n "${COMPARE_FROM:-}" ]; then
	tmp=$COMPARE_FROM
else
	tmp=$(mktemp -d)
	cleanup() {
		git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
		rm -rf "$tmp"
	}
	trap cleanup EXIT

	git worktree add --detach "$tmp/base" "$base" >/dev/null
	# Today's dao-bench, with what it includes from the other tools
	# (tools/kinds: the names libdao gives, asked at run time).
	for d in tools/bench tools/kinds; do
		rm -rf "${tmp:?}/base/$d"
		cp -r "$d" "$tmp/base/$d"
	done
	make -s -C "$tmp/base" -j2 build/bin/dao-bench >/dev/null
	make -s -j2 build/bin/dao-bench >/dev/null

	for r in $(seq "$rounds"); do
		"${run_prefix[@]}" "$tmp/base/build/bin/dao-bench" overhead --json "$@" >"$tmp/old.$r.json"
		"${run_prefix[@]}" build/bin/dao-bench overhead --json "$@" >"$tmp/new.$r.json"
	done
fi

perl -MJSON::PP -e '
	my ($tmp, $rounds, $base, $head) = @ARGV;
	my @metrics = ("ns_per_kernel", "ns_per_kernel_sync", "ns_per_create", "us_open");
	my (%best, @order);
	for my $side ("old", "new") {
		for my $r (1 .. $rounds) {
			local $/;
			open my $f, "<", "$tmp/$side.$r.json" or die;
			for my $row (@{ decode_json(<$f>) }) {
				my $k = "$row->{placement} $row->{live_buffers}";
				push @order, $k unless $best{$k};
				for my $m (@metrics) {
					my $v = \$best{$k}{$side}{$m};
					next unless defined $row->{$m}; # us_open: not in older runs
					$$v = $row->{$m} if !defined $$v || $row->{$m} < $$v;
				}
			}
		}
	}
	printf "libdao %s (old) against %s (new), best of %d alternating runs\n\n",
		$base, $head, $rounds;
	printf "%-9s %10s %9s %9s %6s %9s %9s %6s %9s %9s %6s %9s %9s %6s\n", "placement",
		"live", "old ns/k", "new ns/k", "ratio", "old sync", "new sync", "ratio",
		"old crt", "new crt", "ratio", "old open", "new open", "ratio";
	for my $k (@order) {
		my ($o, $n) = ($best{$k}{old}, $best{$k}{new});
		printf "%-9s %10s", split / /, $k;
		for my $m (@metrics) {
			if (defined $o->{$m} && defined $n->{$m}) {
				printf " %9.1f %9.1f %6.2f", $o->{$m}, $n->{$m}, $n->{$m} / $o->{$m};
			} else {
				printf " %9s %9s %6s", "-", "-", "-";
			}
		}
		print "\n";
	}
	print "\nns/k, sync, crt: ns per kernel pipelined, per kernel +dao_sync, per create;\n",
		"open: us per dao_open, the best of the rounds (the first row\x27s is a process\x27s first)\n";
' "$tmp" "$rounds" "$(git rev-parse --short "$base")" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- libdao || echo +)"
