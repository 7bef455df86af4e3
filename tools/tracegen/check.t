#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end checks of dao-tracegen (TAP, run by prove from `make check`):
# every family writes a trace daosim replays; the tiled Cholesky at the
# sample's parameters is the sample trace record for record; -o leaves the
# file alone on failure; bad command lines are refused with status 2. The
# formulas and format rules are checked in tests/unit/test_tracegen.c.
set -u

bin=${DAO_TRACEGEN:-build/bin/dao-tracegen}
sim=${DAOSIM:-build/bin/daosim}
traces=${TRACES:-tests/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../../tests/tap.sh"

refuse() {
	local want=$1 pat=$2 what=$3
	shift 3
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local st=$?
	[ "$st" -eq "$want" ] && grep -q -- "$pat" "$tmp/err" && [ ! -s "$tmp/out" ]
	ok $? "refuses $what (status $st: $(head -c 150 "$tmp/err" | tr '\n' ' '))"
}

"$bin" --help >"$tmp/help" 2>&1
ok $? "--help"
for f in cholesky lu gemm stencil2d stencil3d transformer lstm cnn; do
	grep -q "^$f " "$tmp/help"
	ok $? "--help lists $f"
done
"$bin" --help transformer | grep -q -- "--layers"
ok $? "--help FAMILY shows its parameters"

# Small members of every family, replayed by daosim at half their peak.
small=(
	"cholesky --tiles 6 --tile 256"
	"lu --tiles 5 --tile 256"
	"gemm --mt 3 --nt 4 --kt 5 --tile 256"
	"stencil2d --n 1024 --tile 256 --arrays 2 --steps 3"
	"stencil3d --n 128 --tile 32 --arrays 3 --steps 2"
	"transformer --layers 2 --hidden 256 --heads 4 --seq 128 --batch 2 --vocab 1000 --iters 2"
	"lstm --layers 2 --seq 10 --batch 8 --hidden 64 --classes 32"
	"cnn --stages 3 --blocks 2 --width 8 --image 16 --batch 4 --classes 10"
)
for args in "${small[@]}"; do
	set -- $args
	name=$1
	"$bin" "$@" -o "$tmp/$name.trace" 2>"$tmp/err"
	ok $? "$args: written"
	"$bin" "$@" | cmp -s - "$tmp/$name.trace"
	ok $? "$args: stdout and -o agree, byte for byte"
	"$sim" --policy all --budget 50% --json "$tmp/$name.trace" >"$tmp/$name.json" 2>"$tmp/err"
	ok $? "$args: daosim replays it ($(head -c 150 "$tmp/err" | tr '\n' ' '))"
	[ "$(json "$tmp/$name.json" 'my $t = $j->{traces}[0]; @{$t->{policies}} == 5 && !grep { $_->{error} } @{$t->{policies}}')" = 1 ]
	ok $? "$args: every policy ran"
done

"$bin" cholesky --tiles 16 --tile 4096 | grep -v '^#' >"$tmp/gen"
grep -v '^#' "$traces/cholesky-16x16.trace" | cmp -s - "$tmp/gen"
ok $? "cholesky --tiles 16 --tile 4096 is the sample trace, record for record"

echo keep >"$tmp/kept"
"$bin" stencil2d --n 1000 --tile 300 -o "$tmp/kept" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "not a multiple" "$tmp/err" && [ "$(cat "$tmp/kept")" = keep ] &&
	[ -z "$(ls "$tmp" | grep 'kept.tmp')" ]
ok $? "parameters that do not fit: status 1, -o file untouched, no temporary left"
"$bin" lstm -o "$tmp/nodir/x.trace" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "nodir" "$tmp/err"
ok $? "an unwritable -o: status 1 with the path"

refuse 2 "usage" "no arguments"
refuse 2 "unknown family" "an unknown family" bogus
refuse 2 "no parameter --tiles" "a parameter of another family" lstm --tiles 3
refuse 2 "outside" "a value out of range" cholesky --tiles 0
refuse 2 "decimal" "a malformed value" gemm --mt 3x
refuse 2 "needs a value" "a missing value" gemm --mt
refuse 2 "float32 or float64" "an unknown dtype" gemm --dtype half
refuse 2 "unexpected argument" "a stray argument" gemm extra
refuse 2 "needs a file" "-o without a file" gemm -o
refuse 1 "multiple of --heads" "heads that do not divide the width" transformer --heads 5

tap_done
