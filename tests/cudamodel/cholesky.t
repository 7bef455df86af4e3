#!/bin/bash
# SPDX-License-Identifier: MIT
# dao-cholesky's GPU path end to end against the CUDA runtime model and its
# cuBLAS and cuSOLVER (run by check-cudamodel with LD_LIBRARY_PATH naming
# the model): on cuda-explicit and cuda-managed the tile kernels are the
# libraries' calls of tools/cholesky/tile_kernels_gpu.c on libdao's streams,
# checked for races with libdao's copies. The factor passes, is bit-identical
# to the host backend's (the models compute with the same OpenBLAS and LAPACK
# as the host kernels, in the same order) and the model saw no fault, no
# eviction by the card and no refused call. Plain UVM (--backend uvm) runs
# where the matrix fits and is refused where it does not. TAP.
set -u

bin=${DAO_CHOLESKY:-build/bin/dao-cholesky}
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG \
	DAO_CUDAMODEL_MEM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tap.sh"
. "$(dirname "$0")/counters.sh"

# 512 in tiles of 64: 36 tiles of 32 KiB; a quarter of them is 9 tiles,
# room for dgemm's three in cuda-managed's 64 KiB pages.
job=(--json --warm-up --n 512 --tile 64)
"$bin" "${job[@]}" --budget 25% --backend host >"$tmp/host.json" 2>"$tmp/host.err"
ok $? "host: the reference factor"

for backend in cuda-explicit cuda-managed; do
	for check in sample full; do
		name=$backend-$check
		DAO_CUDAMODEL_STATS=1 "$bin" "${job[@]}" --compare --budget 25% --backend "$backend" \
			--check "$check" >"$tmp/$name.json" 2>"$tmp/$name.err"
		ok $? "$name: runs, the check passes, the factors of both runs are identical"
		json_ok "$tmp/$name.json" '
			$j->{passed} && $j->{identical} && $j->{backend} eq "'"$backend"'" &&
			$j->{check} eq "'"$check"'" && $j->{evictions} > 0 &&
			$j->{h2d_bytes} > $j->{matrix_bytes} && $j->{d2h_bytes} > 0 &&
			$j->{peak_device_bytes} <= $j->{budget_bytes} &&
			$j->{factor_hash} eq $k->{factor_hash}' "$tmp/host.json"
		ok $? "$name: evicts at a quarter of the matrix, peak within the budget, factor bit-identical to the host backend's"
		ok "$(test "$(counter "$tmp/$name.err" refused_calls)" = 0 &&
			test "$(counter "$tmp/$name.err" device_faults)" = 0 &&
			test "$(counter "$tmp/$name.err" host_faults)" = 0 &&
			test "$(counter "$tmp/$name.err" evicted)" = 0; echo $?)" \
			"$name: the model refused no call and saw no fault and no eviction by the card"
	done
done

# The plain-UVM baseline: the whole card, no hints, no libdao.
"$bin" "${job[@]}" --compare --budget 100% --backend uvm --check sample \
	>"$tmp/uvm.json" 2>"$tmp/uvm.err"
ok $? "uvm at 1x: runs"
json_ok "$tmp/uvm.json" '$j->{passed} && $j->{identical} && !defined $j->{h2d_bytes} &&
	$j->{factor_hash} eq $k->{factor_hash}' "$tmp/host.json"
ok $? "uvm at 1x: the host backend's factor, bytes moved unknown (null)"
"$bin" "${job[@]}" --budget 50% --backend uvm >"$tmp/uvm2.out" 2>"$tmp/uvm2.err"
ok "$(test $? = 2 && grep -q 'runs only where the matrix fits' "$tmp/uvm2.err"; echo $?)" \
	"uvm at 2x: refused with a reason, never oversubscribed"
# 21 tiles of 512 KiB on an 8 MiB card: more than 15/16 of it free.
DAO_CUDAMODEL_MEM=8M "$bin" --n 1536 --tile 256 --budget 100% --backend uvm \
	>"$tmp/uvm3.out" 2>"$tmp/uvm3.err"
ok "$(test $? = 2 && grep -q '15/16 of the' "$tmp/uvm3.err"; echo $?)" \
	"uvm: a matrix above 15/16 of the free device memory is refused"

tap_done
