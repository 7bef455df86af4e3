#!/bin/bash
# SPDX-License-Identifier: MIT
# daosim's output from this tree beside an earlier revision's, in one run:
# for a refactor that must not change a figure.
#
#   tools/daosim/compare-builds.sh [BASE_REV]     (default: main)
#
# Builds daosim from BASE_REV (exported with git archive into a temporary
# folder) and from this tree, then runs the two side by side, one case
# after the other, on every trace in tests/traces and on every
# dao-tracegen family (its default parameters, written by this tree's
# dao-tracegen, so both builds read the same bytes) at budgets of 50, 33
# and 25% of the peak, `--policy all`, once with --json and once with the
# table; and on the sample traces with --time-bound-limit 0 (the
# time-indexed bound skipped: its null fields). One line per case: the
# --json output and the exit status must be byte-identical ("same" or
# "DIFFERENT"); the table and stderr are compared too and their
# differences named. Exit status 0 when every --json output and status
# agrees, 1 otherwise. daosim's --json has no field that is a measured
# time (every *_ns is modeled), so nothing is left out of the comparison.
#
# NEW_FIELDS and NEW_POLICIES (space-separated; default none), for a change
# that only adds to --json: the fields of a trace or a policy so named and
# the policies so named are taken out of this tree's --json, and both
# documents compared in a canonical form (keys sorted: their order is
# check-daosim's to check), so that every field the base has must be the
# same, e.g. NEW_FIELDS="plan_ns time_ratio_to_plan" NEW_POLICIES=plan.
#
# TIME_BOUND_LIMIT (default 600) is the --time-bound-limit of the runs:
# generous, so that a loaded machine does not stop one build's LP and not
# the other's. DAOSIM_BASE and DAOSIM_NEW, when set, are daosim binaries
# to compare instead of building them (then BASE_REV is not used).
set -euo pipefail

base_rev=${1:-main}
limit=${TIME_BOUND_LIMIT:-600}
top=$(git rev-parse --show-toplevel)
cd "$top"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s -j2 build/bin/daosim build/bin/dao-tracegen >/dev/null
new=${DAOSIM_NEW:-$top/build/bin/daosim}
if [ -n "${DAOSIM_BASE:-}" ]; then
	old=$DAOSIM_BASE
	echo "base: $old"
else
	mkdir "$tmp/base"
	git archive "$base_rev" | tar -x -C "$tmp/base"
	make -s -C "$tmp/base" -j2 build/bin/daosim >/dev/null
	old=$tmp/base/build/bin/daosim
	echo "base: $base_rev ($(git rev-parse --short "$base_rev"))"
fi
echo "new:  this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with changes'))"

traces=()
for t in tests/traces/*.trace; do
	traces+=("$t")
done
for fam in $(build/bin/dao-tracegen --list | awk '{ print $1 }' | sort -u); do
	build/bin/dao-tracegen "$fam" -o "$tmp/$fam.trace"
	traces+=("$tmp/$fam.trace")
done

# canonical: a --json document (and its "status N" line) without
# NEW_FIELDS and NEW_POLICIES, keys sorted.
canonical() {
	perl -MJSON::PP -e '
		my %f = map { $_ => 1 } split " ", ($ENV{NEW_FIELDS} // "");
		my %p = map { $_ => 1 } split " ", ($ENV{NEW_POLICIES} // "");
		my ($doc, $status) = (do { local $/; <STDIN> }) =~ /\A(.*?)(status \d+\n)\z/s;
		if ($doc =~ /\S/) {
			my $j = decode_json($doc);
			for my $t (@{$j->{traces} // []}) {
				delete $t->{$_} for keys %f;
				$t->{policies} = [grep { !$p{$_->{policy}} } @{$t->{policies}}];
				for my $q (@{$t->{policies}}) { delete $q->{$_} for keys %f }
			}
			print JSON::PP->new->canonical->pretty->encode($j);
		}
		print $status;'
}

cases=0 differ=0
# run NAME ARGS...: both builds with ARGS; prints one line.
run() {
	local name=$1 d
	shift
	cases=$((cases + 1))
	set +e
	"$old" "$@" >"$tmp/old.out" 2>"$tmp/old.err"
	echo "status $?" >>"$tmp/old.out"
	"$new" "$@" >"$tmp/new.out" 2>"$tmp/new.err"
	echo "status $?" >>"$tmp/new.out"
	set -e
	case " $* " in
	*" --json "*)
		if [ -n "${NEW_FIELDS:-}${NEW_POLICIES:-}" ]; then
			canonical <"$tmp/old.out" >"$tmp/old.canon" && mv "$tmp/old.canon" "$tmp/old.out"
			canonical <"$tmp/new.out" >"$tmp/new.canon" && mv "$tmp/new.canon" "$tmp/new.out"
		fi
		;;
	esac
	if cmp -s "$tmp/old.out" "$tmp/new.out"; then
		d=same
	else
		d=DIFFERENT
		case " $* " in
		*" --json "*)
			differ=$((differ + 1))
			diff "$tmp/old.out" "$tmp/new.out" | head -20 | sed 's/^/    /'
			;;
		esac
	fi
	cmp -s "$tmp/old.err" "$tmp/new.err" || d="$d (stderr differs: $(diff "$tmp/old.err" \
		"$tmp/new.err" | grep '^[<>]' | head -2 | tr '\n' ' '))"
	printf '%-34s %s\n' "$name" "$d"
}

for t in "${traces[@]}"; do
	for b in 50 33 25; do
		n="$(basename "$t" .trace) $b%"
		run "$n json" --policy all --budget "$b%" --json --time-bound-limit "$limit" "$t"
		run "$n table" --policy all --budget "$b%" --time-bound-limit "$limit" "$t"
	done
done
for t in tests/traces/*.trace; do
	run "$(basename "$t" .trace) 33% json, limit 0" --policy all --budget 33% --json \
		--time-bound-limit 0 "$t"
	run "$(basename "$t" .trace) 33% table, limit 0" --policy all --budget 33% \
		--time-bound-limit 0 "$t"
done
echo "$cases cases, $differ --json outputs differ"
[ "$differ" -eq 0 ]
