#!/bin/bash
# selftest.sh - TAP: check-layers.pl refuses a tree that breaks each rule
# (fixture/: a call and an include up the layers, two files in a circle, a
# map that misses a file and names one that is not there), so the check on
# libdao cannot pass vacuously.
set -u
here=$(dirname "$0")
out=$(perl "$here/check-layers.pl" "$here/fixture/src" "$here/fixture/layers" "" "$here/fixture/map" 2>&1)
rc=$?
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
has() { grep -qF -- "$1" <<<"$out"; }
ok "$([ $rc != 0 ] && echo 0 || echo 1)" "the checker fails on the wrong fixture (exit $rc)"
ok "$(has 'bottom/b.c includes top/t.h: up from bottom/ to top/' && echo 0 || echo 1)" "an include up the layers is reported"
ok "$(has 'bottom/b.c calls top_fn in top/t.c: up from bottom/ to top/' && echo 0 || echo 1)" "a call up the layers is reported"
ok "$(has 'circle: bottom/ping <-> bottom/pong' && echo 0 || echo 1)" "files calling each other in a circle are reported"
ok "$(has 'not in the map: bottom/pong.c' && echo 0 || echo 1)" "a file the map does not name is reported"
ok "$(has 'the map names bottom/ghost.c, which is not in' && echo 0 || echo 1)" "a file the map names that is not there is reported"
ok "$(! has 'not in the map: bottom/b.c' && ! has 'not in the map: top/t.h' && ! has 'not in the map: bottom/ping' &&
	echo 0 || echo 1)" "files the map names, their headers too, are not reported"
ok "$(! has 'top/t.c calls bottom_fn in bottom/b.c: ' && ! has 'top/t.c includes bottom/b.h: ' &&
	echo 0 || echo 1)" "a call and an include down the layers are not reported as such"
[ $fail = 0 ] || printf '# %s\n' "$out"
echo "1..$n"
exit $fail
