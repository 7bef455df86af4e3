#!/bin/bash
# SPDX-License-Identifier: MIT
# dao-bench copy on both CUDA backends against the CUDA runtime model (run
# by check-cudamodel with LD_LIBRARY_PATH naming the model): the data comes
# back unchanged, the bytes moved are those of a miss on every kernel, and
# the model saw no fault, no eviction by the card's size and no refused
# call. No figure is checked: performance is never asserted (TAP).
set -u

bin=${DAO_BENCH:-build/bin/dao-bench}
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tap.sh"
. "$(dirname "$0")/counters.sh"

for backend in cuda-explicit cuda-managed; do
	DAO_CUDAMODEL_STATS=1 "$bin" copy --json --backend "$backend" --buffer-bytes 1M \
		--buffers 4 --rounds 2 >"$tmp/$backend.json" 2>"$tmp/$backend.err"
	ok $? "$backend: copy --json runs (and the data came back unchanged)"
	# 4 buffers of 1 MiB cycled through 2 slots under LRU: every kernel
	# misses, so each timed run of 2 rounds fetches 8 MiB, and with rw
	# writes back as much. A read-only buffer leaves the device without a
	# copy on cuda-explicit (the host copy is current); on cuda-managed its
	# pages have one home, so evicting it migrates them back: 8 MiB too.
	fetch_d2h=$([ "$backend" = cuda-managed ] && echo 8 || echo 0)
	json_ok "$tmp/$backend.json" '
		ref($j) eq "ARRAY" && @$j == 2 &&
		!(grep { $_->{backend} ne "'"$backend"'" } @$j) &&
		$j->[0]{pattern} eq "writeback+fetch" && $j->[0]{h2d_bytes} == 8 << 20 &&
		$j->[0]{d2h_bytes} == 8 << 20 &&
		$j->[1]{pattern} eq "fetch" && $j->[1]{h2d_bytes} == 8 << 20 &&
		$j->[1]{d2h_bytes} == '"$fetch_d2h"' << 20 &&
		!grep { !($_->{gbps} > 0 && $_->{memcpy_gbps} > 0 && $_->{ratio} > 0) } @$j'
	ok $? "$backend: bytes moved are those of a miss on every kernel"
	ok "$(test "$(counter "$tmp/$backend.err" refused_calls)" = 0; echo $?)" \
		"$backend: the model refused no call"
	ok "$(test "$(counter "$tmp/$backend.err" fault_migrations)" = 0 &&
		test "$(counter "$tmp/$backend.err" device_faults)" = 0 &&
		test "$(counter "$tmp/$backend.err" evicted)" = 0; echo $?)" \
		"$backend: no fault and no eviction by the card: residency moved only when libdao said so"
done

# --backend refuses what is not a backend; without it DAO_BACKEND counts.
"$bin" copy --backend cuda >"$tmp/r.out" 2>"$tmp/r.err"
ok "$(test $? = 2 && test ! -s "$tmp/r.out" && grep -q 'unknown backend' "$tmp/r.err"; echo $?)" \
	"--backend cuda: refused with a reason"
"$bin" overhead --backend host >"$tmp/r.out" 2>"$tmp/r.err"
ok "$(test $? = 2 && grep -q "applies to 'copy' only" "$tmp/r.err"; echo $?)" \
	"--backend applies to copy only"
DAO_BACKEND=cuda-explicit "$bin" copy --json --buffer-bytes 1M --buffers 2 --rounds 1 \
	>"$tmp/env.json" 2>"$tmp/env.err"
json_ok "$tmp/env.json" '@$j == 2 && !grep { $_->{backend} ne "cuda-explicit" } @$j'
ok $? "DAO_BACKEND=cuda-explicit without --backend: the copy runs there"
DAO_BACKEND=cuda-explicit "$bin" copy --json --backend host --buffer-bytes 1M --buffers 2 \
	--rounds 1 >"$tmp/flag.json" 2>"$tmp/flag.err"
json_ok "$tmp/flag.json" '@$j == 2 && !grep { $_->{backend} ne "host" } @$j'
ok $? "--backend host wins over DAO_BACKEND"

tap_done
