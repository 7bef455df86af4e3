#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end checks of dao-cholesky (TAP, run by prove from `make check`):
# the factor is right and bit-identical to an unlimited run at the tightest
# budgets, and every bad input is refused with exit status 2 and a reason.
set -u

bin=${DAO_CHOLESKY:-build/bin/dao-cholesky}
# The checks below set the DAO_* variables they are about, and only those.
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../../tests/tap.sh"

# run NAME ARGS...: run the tool, keep stdout, stderr and the status.
run() {
	local name=$1
	shift
	"$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}

rc_of() { cat "$tmp/$1.rc"; }

# A factorisation that must succeed, agree bit for bit with the unlimited
# run and move data both ways; $2 is the budget in bytes, $3.. more options.
check_tight() {
	local name=$1 budget=$2
	shift 2
	run "$name" --json --compare "$@" --budget "$budget"
	ok "$(test "$(rc_of "$name")" = 0; echo $?)" "$name: exit status 0"
	ok "$(test "$(json "$tmp/$name.out" '$j->{passed} && $j->{identical}')" = 1; echo $?)" \
		"$name: residual below the bound, factor identical to the unlimited run"
	ok "$(test "$(json "$tmp/$name.out" "\$j->{budget_bytes} == $budget")" = 1; echo $?)" \
		"$name: the budget in force is the one asked for"
	ok "$(test "$(json "$tmp/$name.out" \
		'$j->{h2d_bytes} > 0 && $j->{d2h_bytes} > 0 && $j->{evictions} > 0 &&
		 $j->{peak_device_bytes} <= $j->{budget_bytes}')" = 1; echo $?)" \
		"$name: data moved both ways, peak within the budget"
	ok "$(test "$(json "$tmp/$name.out" \
		'$j->{compare}{evictions} == 0 && $j->{compare}{residual} == $j->{residual}')" = 1; \
		echo $?)" "$name: the unlimited run evicts nothing, same residual"
}

# 256 = 8 x 8 tiles of order 32 (8192 bytes): a kernel needs at most 3 tiles.
tile_bytes=$((32 * 32 * 8))
min=$((3 * tile_bytes))
check_tight tight-default $min --n 256 --tile 32
for policy in dao belady lru fifo; do
	check_tight "tight-$policy" $min --n 256 --tile 32 --policy "$policy"
done
check_tight tight-lookahead1 $min --n 256 --tile 32 --lookahead 1
check_tight tight-seed $((min + tile_bytes)) --n 256 --tile 32 --seed 12345
# 100 is not a multiple of 24: padded to 120 = 5 x 5 tiles.
check_tight padded $((3 * 24 * 24 * 8)) --n 100 --tile 24
ok "$(test "$(json "$tmp/padded.out" '$j->{padded_n} == 120 && $j->{tiles} == 15')" = 1; \
	echo $?)" "padded: n 100 in tiles of 24 is padded to 120, 15 tiles held"

# Fewer than three tile columns need fewer tiles per kernel.
run one-tile --json --n 40 --tile 40 --budget $((40 * 40 * 8))
ok "$(test "$(rc_of one-tile)" = 0 && test "$(json "$tmp/one-tile.out" '$j->{passed}')" = 1; \
	echo $?)" "one tile column runs in a budget of one tile"
run two-tiles --json --n 64 --tile 32 --budget $((2 * tile_bytes))
ok "$(test "$(rc_of two-tiles)" = 0 && test "$(json "$tmp/two-tiles.out" '$j->{passed}')" = 1; \
	echo $?)" "two tile columns run in a budget of two tiles"

# A percentage is of the bytes of the tiles held (36 tiles here).
run percent --json --n 256 --tile 32 --budget 25%
ok "$(test "$(rc_of percent)" = 0 && test "$(json "$tmp/percent.out" \
	"\$j->{matrix_bytes} == 36 * $tile_bytes && \$j->{budget_bytes} == int(36 * $tile_bytes / 4)")" = 1; \
	echo $?)" "--budget 25% is a quarter of the bytes of the tiles held"

# Text output carries the verdict.
run text --n 128 --tile 32 --budget $min --compare
ok "$(test "$(rc_of text)" = 0 && grep -q '^check: passed$' "$tmp/text.out" &&
	grep -q 'bit-identical' "$tmp/text.out"; echo $?)" "text output says the check passed"

# --warm-up factors 3 x 3 tiles first, untimed: the report and the trace
# (written by each job at its end) are the timed jobs', not the warm-up's.
DAO_TRACE=$tmp/warm.trace run warm-up --json --compare --warm-up --n 256 --tile 32 --budget $min
ok "$(test "$(rc_of warm-up)" = 0 && test "$(json "$tmp/warm-up.out" \
	'$j->{passed} && $j->{identical} && $j->{kernels} == 120 && $j->{compare}{kernels} == 120')" = 1; \
	echo $?)" "--warm-up: the report is the 8 x 8-tile job's (120 kernels), correct"
ok "$(test "$(grep -c '^k ' "$tmp/warm.trace")" = 120; echo $?)" \
	"--warm-up: DAO_TRACE holds the timed job's 120 kernels, not the warm-up's"

# --check sample: the O(n^2) estimate of the same residual, held to the same
# bound, near the full one; the factor hash is the factor's, whichever check.
run full --json --compare --n 256 --tile 32 --budget $min
run sample --json --compare --n 256 --tile 32 --budget $min --check sample
ok "$(test "$(rc_of sample)" = 0 && test "$(json "$tmp/sample.out" \
	'$j->{passed} && $j->{identical} && $j->{check} eq "sample" && $j->{residual} < $j->{threshold}')" = 1
	echo $?)" "--check sample: passes, says so, residual below the bound"
ok "$(test "$(json "$tmp/sample.out" \
	'$j->{residual} > 0 && $j->{residual} < 100 * $k->{residual} && $k->{check} eq "full"' \
	"$tmp/full.out")" = 1; echo $?)" "--check sample: within two orders of the full residual"
ok "$(test "$(json "$tmp/sample.out" \
	'$j->{factor_hash} =~ /^[0-9a-f]{16}$/ && $j->{factor_hash} eq $j->{compare}{factor_hash} &&
	 $j->{factor_hash} eq $k->{factor_hash}' "$tmp/full.out")" = 1; echo $?)" \
	"factor_hash: 16 hex digits, the same for the same factor in every run and check"
run other-seed --json --n 256 --tile 32 --budget $min --seed 2 --check sample
ok "$(test "$(json "$tmp/other-seed.out" '$j->{factor_hash} ne $k->{factor_hash}' \
	"$tmp/full.out")" = 1; echo $?)" "factor_hash: another matrix, another hash"

# Refusals: exit status 2, a reason on stderr, nothing on stdout.
refuse() {
	local name=$1 pattern=$2
	shift 2
	run "$name" "$@"
	ok "$(test "$(rc_of "$name")" = 2 && test ! -s "$tmp/$name.out" &&
		grep -qi -- "$pattern" "$tmp/$name.err"; echo $?)" \
		"refused with a reason: $*"
}
refuse small-budget "too small" --n 256 --tile 32 --budget $((min - 1))
refuse small-percent "too small" --n 256 --tile 32 --budget 1%
refuse small-two "too small" --n 64 --tile 32 --budget $((2 * tile_bytes - 1))
refuse n-zero "--n" --n 0 --tile 32 --budget 1M
refuse n-junk "--n" --n abc --tile 32 --budget 1M
refuse n-negative "--n" --n -5 --tile 32 --budget 1M
refuse n-trailing "--n" --n 12x --tile 4 --budget 1M
refuse n-overflow "--n" --n 99999999999999999999999 --tile 32 --budget 1M
refuse tile-zero "--tile" --n 64 --tile 0 --budget 1M
refuse tile-large "larger than" --n 64 --tile 65 --budget 1M
refuse budget-zero "--budget" --n 64 --tile 32 --budget 0
refuse budget-junk "--budget" --n 64 --tile 32 --budget 12x
refuse budget-pct-zero "--budget" --n 64 --tile 32 --budget 0%
refuse budget-pct-big "--budget" --n 64 --tile 32 --budget 1001%
refuse budget-pct-junk "--budget" --n 64 --tile 32 --budget 1e2%
refuse budget-pct-bare "--budget" --n 64 --tile 32 --budget %
refuse policy "policy" --n 64 --tile 32 --budget 1M --policy nope
refuse backend "backend" --n 64 --tile 32 --budget 1M --backend nope
refuse lookahead-zero "--lookahead" --n 64 --tile 32 --budget 1M --lookahead 0
refuse lookahead-big "--lookahead" --n 64 --tile 32 --budget 1M --lookahead 65537
refuse threads-zero "--threads" --n 64 --tile 32 --budget 1M --threads 0
refuse seed-junk "--seed" --n 64 --tile 32 --budget 1M --seed x
refuse check "unknown check" --n 64 --tile 32 --budget 1M --check some
refuse unknown "unknown option" --n 64 --tile 32 --budget 1M --bogus
refuse no-value "needs a value" --n 64 --tile 32 --budget
refuse positional "unexpected" --n 64 --tile 32 --budget 1M extra
refuse missing "required" --n 64 --tile 32
# --backend uvm runs without libdao: no budget from libdao's environment,
# none of its options, and the 64 KiB pages of managed memory round a tile.
refuse uvm-no-budget "needs --budget" --n 64 --tile 32 --backend uvm
refuse uvm-policy "no --policy" --n 64 --tile 32 --budget 1M --backend uvm --policy lru
refuse uvm-lookahead "--lookahead" --n 64 --tile 32 --budget 1M --backend uvm --lookahead 4
refuse uvm-small "64 KiB managed pages" --n 256 --tile 32 --budget $((3 * 65536 - 1)) --backend uvm
# Plain UVM is never oversubscribed (uvm.h): a budget below the matrix (ten
# tiles of 128 KiB here) is refused before any device is asked.
refuse uvm-over "runs only where the matrix fits" --n 512 --tile 128 --budget 512K --backend uvm
env_run_uvm() {
	DAO_DEVICE_BUDGET=1M "$bin" --n 64 --tile 32 --backend uvm >"$tmp/uvm-env.out" 2>"$tmp/uvm-env.err"
	echo $? >"$tmp/uvm-env.rc"
}
env_run_uvm
ok "$(test "$(rc_of uvm-env)" = 2 && grep -q 'needs --budget' "$tmp/uvm-env.err"; echo $?)" \
	"refused with a reason: --backend uvm with DAO_DEVICE_BUDGET instead of --budget"

# Without a usable CUDA device (this machine has no driver) --backend uvm
# refuses with status 77 and says why; with one it runs, and says that the
# driver did not report what it moved (null, never a made-up zero).
run uvm --json --compare --n 128 --tile 32 --budget 1M --backend uvm
ok "$( { test "$(rc_of uvm)" = 77 && test ! -s "$tmp/uvm.out" &&
	grep -Eq 'no usable CUDA device|built without CUDA' "$tmp/uvm.err"; } ||
	{ test "$(rc_of uvm)" = 0 && test "$(json "$tmp/uvm.out" \
	'$j->{passed} && $j->{backend} eq "uvm" && !defined $j->{h2d_bytes} &&
	 !defined $j->{d2h_bytes} && $j->{budget_bytes} == 1048576')" = 1; }; echo $?)" \
	"--backend uvm: runs on a CUDA device, else exit status 77 with a reason"

# The DAO_* environment counts unless a flag says otherwise (a batch system
# sets it for every task): the tool's own defaults must not win over it.
env_run() {
	local name=$1
	shift
	env "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
env_run env-backend DAO_BACKEND=cuda-managed "$bin" --json --n 64 --tile 32 --budget 1M
# With a GPU it runs there; without one libdao refuses the backend. Never host.
ok "$( { test "$(rc_of env-backend)" = 0 &&
	test "$(json "$tmp/env-backend.out" '$j->{backend} eq "cuda-managed"')" = 1; } ||
	{ test "$(rc_of env-backend)" != 0 && grep -qi 'backend' "$tmp/env-backend.err"; }; echo $?)" \
	"DAO_BACKEND=cuda-managed is honoured (runs there or is refused, never on host)"
env_run env-backend-flag DAO_BACKEND=cuda-managed "$bin" --json --n 64 --tile 32 --budget 1M \
	--backend host
ok "$(test "$(rc_of env-backend-flag)" = 0 &&
	test "$(json "$tmp/env-backend-flag.out" '$j->{backend} eq "host"')" = 1; echo $?)" \
	"--backend host wins over DAO_BACKEND"
env_run env-budget DAO_DEVICE_BUDGET=96K DAO_POLICY=lru DAO_LOOKAHEAD=7 "$bin" --json \
	--n 128 --tile 32
ok "$(test "$(rc_of env-budget)" = 0 && test "$(json "$tmp/env-budget.out" \
	'$j->{passed} && $j->{budget_bytes} == 98304 && $j->{policy} eq "lru" && $j->{lookahead} == 7')" = 1
	echo $?)" "DAO_DEVICE_BUDGET, DAO_POLICY and DAO_LOOKAHEAD stand in for --budget, --policy, --lookahead"
env_run env-budget-flag DAO_DEVICE_BUDGET=96K DAO_POLICY=lru "$bin" --json --n 128 --tile 32 \
	--budget 128K --policy fifo
ok "$(test "$(rc_of env-budget-flag)" = 0 && test "$(json "$tmp/env-budget-flag.out" \
	'$j->{budget_bytes} == 131072 && $j->{policy} eq "fifo"')" = 1; echo $?)" \
	"--budget and --policy win over DAO_DEVICE_BUDGET and DAO_POLICY"
env_run env-budget-bad DAO_DEVICE_BUDGET=lots "$bin" --n 64 --tile 32
ok "$(test "$(rc_of env-budget-bad)" = 2 && grep -q DAO_DEVICE_BUDGET "$tmp/env-budget-bad.err"
	echo $?)" "refused with a reason: DAO_DEVICE_BUDGET=lots"

# A malformed DAO_* variable is a bad input too (libdao names it).
DAO_POLICY=nope "$bin" --n 64 --tile 32 --budget 1M >"$tmp/env.out" 2>"$tmp/env.err"
ok "$(test $? = 2 && test ! -s "$tmp/env.out" && grep -q DAO_POLICY "$tmp/env.err"; echo $?)" \
	"refused with a reason: DAO_POLICY=nope"

tap_done
