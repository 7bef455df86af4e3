#!/bin/bash
# SPDX-License-Identifier: MIT
# dao-bench keeps working: every measurement runs at a small size and prints
# well-formed JSON with the documented keys, and bad arguments are refused.
# No figure is checked: performance is never asserted (TAP, run by prove).
set -u

bin=${DAO_BENCH:-build/bin/dao-bench}
# The checks below set the DAO_* variables they are about, and only those.
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../../tests/tap.sh"

"$bin" overhead --json --kernels 2000 --live 1000,1000000 >"$tmp/overhead.json" 2>"$tmp/overhead.err"
ok $? "overhead --json runs"
# Split needs two CPUs in the affinity mask; shared is always measured.
split=$(test "$(nproc)" -ge 2 && echo 1 || echo 0)
json_ok "$tmp/overhead.json" '
	my @shared = grep { $_->{placement} eq "shared" } @$j;
	my @split = grep { $_->{placement} eq "split" } @$j;
	ref($j) eq "ARRAY" && @$j == @shared + @split &&
	join(",", map { $_->{live_buffers} } @shared) eq "1000,1000000" &&
	join(",", map { $_->{live_buffers} } @split) eq ('"$split"' ? "1000,1000000" : "") &&
	!grep { !($_->{ns_per_kernel} > 0 && $_->{ns_per_kernel_sync} > 0 &&
		  $_->{ns_per_call} > 0 && $_->{ns_per_create} > 0) } @$j'
ok $? "overhead --json: one row per placement and live-buffer count, with ns_per_kernel and ns_per_create"
test ! -s "$tmp/overhead.err"
ok $? "overhead: operands stayed resident (no warning)"

"$bin" overhead --json --kernels 500 --live 16 --placement shared >"$tmp/one.json" 2>&1
json_ok "$tmp/one.json" '@$j == 1 && $j->[0]{placement} eq "shared" && $j->[0]{live_buffers} == 16'
ok $? "overhead --placement shared --live 16: exactly that row"

"$bin" copy --json --buffer-bytes 1M --buffers 4 --rounds 2 >"$tmp/copy.json" 2>"$tmp/copy.err"
ok $? "copy --json runs (and the data came back unchanged)"
# 4 buffers cycled through 2 slots under LRU: every kernel misses, so each
# timed run of 2 rounds fetches 8 MiB, and with rw writes back as much.
json_ok "$tmp/copy.json" '
	ref($j) eq "ARRAY" && @$j == 2 &&
	$j->[0]{pattern} eq "writeback+fetch" && $j->[0]{h2d_bytes} == 8 << 20 &&
	$j->[0]{d2h_bytes} == 8 << 20 &&
	$j->[1]{pattern} eq "fetch" && $j->[1]{h2d_bytes} == 8 << 20 && $j->[1]{d2h_bytes} == 0 &&
	!grep { !($_->{gbps} > 0 && $_->{memcpy_gbps} > 0 && $_->{ratio} > 0) } @$j'
ok $? "copy --json: bytes moved are those of a miss on every kernel"

"$bin" iterations --json --kernels 2000 >"$tmp/iter.json" 2>"$tmp/iter.err"
ok $? "iterations --json runs"
# The policy in force is behaviour, not a figure: with none chosen, dao
# while every buffer fits, plan once the job has had to evict; a chosen
# one stays.
json_ok "$tmp/iter.json" '
	ref($j) eq "ARRAY" && @$j == 6 &&
	join(" ", map { "$_->{budget}/$_->{policy_asked}/$_->{policy_in_force}" } @$j) eq
	  "fits/default/dao fits/dao/dao fits/plan/plan half/default/plan half/dao/dao half/plan/plan" &&
	!grep { !($_->{ns_per_kernel} > 0 && $_->{kernels} == 2000 &&
		  ($_->{budget} eq "fits") == ($_->{evictions} == 0)) } @$j'
ok $? "iterations --json: six rows; no policy chosen is dao while the data fits and plan once it does not"

# DAO_BACKEND counts (a batch system sets it for every task): the tool's own
# default must not win. Without a GPU libdao refuses cuda-managed; never host.
DAO_LOG=info DAO_BACKEND=cuda-managed "$bin" overhead --kernels 10 --json >"$tmp/env.out" \
	2>"$tmp/env.err"
rc=$?
ok "$( { test $rc = 0 && grep -q 'opened context on cuda-managed backend' "$tmp/env.err" &&
	! grep -q 'on host backend' "$tmp/env.err"; } ||
	{ test $rc != 0 && grep -qi backend "$tmp/env.err"; }; echo $?)" \
	"DAO_BACKEND=cuda-managed is honoured (runs there or is refused, never on host)"

refuse() {
	"$bin" "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	ok "$(test $? = 2 && test ! -s "$tmp/r.out" && test -s "$tmp/r.err"; echo $?)" \
		"refused with a reason: ${*:-no arguments}"
}
refuse
refuse nope
refuse overhead --bogus
refuse overhead --kernels 0
refuse overhead --kernels x
refuse overhead --buffers 4
refuse overhead --live 3
refuse overhead --live 1000,,
refuse overhead --live 1,2,3,4,5,6,7,8,9
refuse overhead --placement sideways
refuse copy --live 1000
refuse copy --kernels 5
refuse copy --buffers 1
refuse copy --buffer-bytes 0
refuse copy --buffer-bytes 2T
refuse copy --rounds
refuse copy extra
refuse iterations --buffers 4
refuse iterations --kernels 0
refuse iterations --live 1000

tap_done
