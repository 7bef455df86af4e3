#!/bin/bash
# check-abi.sh LIBDAO_SO BASELINE HEADERS_DIR - TAP: libdao.so's ABI against
# the committed baseline (abidw output). Any difference abidiff reports fails
# unless the soname or the set of version nodes changed too: an ABI change
# must come with one of those bumps, and then the baseline is regenerated on
# purpose with `make abi-baseline` (Documentation/libdao.md, "ABI").
set -u
so=$1 base=$2 hdrs=$3
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

cur_soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
base_soname=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$base")
cur_nodes=$(objdump -T "$so" | awk '$NF ~ /^dao_/ { print $(NF - 1) }' | sort -u | tr '\n' ' ')
base_nodes=$(grep -o "<elf-symbol name='dao_[^']*' version='[^']*'" "$base" |
	sed "s/.*version='\([^']*\)'/\1/" | sort -u | tr '\n' ' ')
ok "$([ -n "$base_soname" ] && [ -n "$base_nodes" ] && echo 0 || echo 1)" \
	"baseline names a soname ($base_soname) and version nodes ($base_nodes)"

report=$(abidiff --headers-dir1 "$hdrs" --headers-dir2 "$hdrs" "$base" "$so" 2>&1)
rc=$?
if [ $rc = 0 ]; then
	ok 0 "ABI identical to the baseline"
elif [ $((rc & 3)) != 0 ]; then
	ok 1 "abidiff ran (exit $rc)"
	printf '# %s\n' "$report"
elif [ "$cur_soname" != "$base_soname" ] || [ "$cur_nodes" != "$base_nodes" ]; then
	ok 0 "ABI changed with a bump (soname $base_soname -> $cur_soname, nodes $base_nodes-> $cur_nodes)"
	echo "# regenerate the baseline: make abi-baseline"
else
	ok 1 "ABI unchanged, or changed with a soname or version-node bump"
	printf '# %s\n' "$report"
	echo "# the ABI changed but the soname ($cur_soname) and version nodes ($cur_nodes) did not:"
	echo "# bump SOVERSION (Makefile) or add a version node (libdao/libdao.map), then make abi-baseline"
fi
echo "1..$n"
exit $fail
