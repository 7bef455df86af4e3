#!/bin/bash
# check-exports.sh LIBDAO_SO DAO_H MAP - TAP: libdao.so exports exactly the
# functions dao.h declares with DAO_API, each in a version node of MAP.
#
# GNU ld defines every version node of a version script as an absolute
# symbol (`A DAO_0` in nm -D): those, and only those, are the defined
# symbols besides the dao_* functions.
set -u
so=$1 hdr=$2 map=$3
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

declared=$(grep -o '^DAO_API [^(]*(' "$hdr" | sed 's/($//; s/.*[ *]//' | sort)
nodes=$(sed -n 's/^\([A-Za-z_][A-Za-z0-9_.]*\) *{.*/\1/p' "$map" | sort)
others=$(nm -D --defined-only "$so" | grep -v ' dao_')
stray=$(printf '%s\n' "$others" | awk 'NF' | while read -r val type name; do
	if [ "$type" = A ] && printf '%s\n' $nodes | grep -qx "$name"; then continue; fi
	echo "$type $name"
done)
ok "$([ -z "$stray" ] && echo 0 || echo 1)" "no defined symbol but dao_* and the version nodes ($(echo $nodes))"
[ -z "$stray" ] || printf '# stray: %s\n' $stray

exported=$(nm -D --defined-only "$so" | awk '$3 ~ /^dao_/ { print $3 }' | sed 's/@.*//' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
ok "$([ -n "$declared" ] && [ -z "$missing" ] && echo 0 || echo 1)" \
	"every DAO_API function of dao.h ($(echo "$declared" | wc -l)) is exported"
[ -z "$missing" ] || echo "# missing: $(echo $missing)"
ok "$([ -z "$extra" ] && echo 0 || echo 1)" "nothing exported that dao.h does not declare"
[ -z "$extra" ] || echo "# extra: $(echo $extra)"

funcs=$(nm -D --defined-only "$so" | awk '$3 ~ /^dao_/ && $2 != "T" { print $3 }')
ok "$([ -z "$funcs" ] && echo 0 || echo 1)" "every exported dao_* symbol is a function"

unversioned=$(objdump -T "$so" | awk '$NF ~ /^dao_/' | while read -r line; do
	ver=$(echo "$line" | awk '{ print $(NF - 1) }')
	printf '%s\n' $nodes | grep -qx "$ver" || echo "$line"
done)
ok "$([ -z "$unversioned" ] && echo 0 || echo 1)" "every dao_* function carries a version node of the map"
echo "1..$n"
exit $fail
