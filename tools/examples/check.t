#!/bin/bash
# SPDX-License-Identifier: MIT
# The documented examples build and run, the documentation shows them as
# they are, and `make install` gives a tree that a program links against
# with pkg-config (TAP, run by prove from `make check`).
set -u

build=${BUILD:-build}
make=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../../tests/tap.sh"

fc=${DAO_FC:-}
srcs=(tools/examples/*.c)
# Fortran examples are built when gfortran is installed (DAO_FC from make).
[ -n "$fc" ] && srcs+=(tools/examples/*.f90)
for src in "${srcs[@]}"; do
	name=$(basename "$src")
	name=${name%.*}
	"$build/bin/dao-example-$name" >"$tmp/$name.out" 2>&1
	ok $? "example $name runs and checks its own result"
	# Documentation/*.md embeds it after a line "<!-- example: PATH -->".
	doc=$(grep -l -- "<!-- example: $src -->" Documentation/*.md | head -1)
	if [ -n "$doc" ]; then
		awk -v mark="<!-- example: $src -->" '
			$0 == mark { found = 1; next }
			found == 1 && /^```/ { found = 2; next }
			found == 2 && /^```/ { exit }
			found == 2 { print }' "$doc" >"$tmp/$name.doc"
		cmp -s "$src" "$tmp/$name.doc"
		ok $? "example $name: $doc shows the source as it is"
	else
		ok 1 "example $name: no Documentation/*.md embeds it"
	fi
done

# Every status of dao.h, with its value, is in the documented table.
sed -n '/^typedef enum dao_status {/,/^} dao_status;/p' libdao/include/dao.h |
	sed -n -E 's/^[[:space:]]*(DAO_[A-Z_]+) = ([0-9]+).*/| \2 | `\1` |/p' >"$tmp/status.want"
missing=$(grep -v -F -f <(grep -o -E '^\| [0-9]+ \| `DAO_[A-Z_]+` \|' Documentation/libdao.md) \
	"$tmp/status.want")
test -s "$tmp/status.want" && test -z "$missing"
ok $? "Documentation/libdao.md lists every status code of dao.h${missing:+ (missing: $missing)}"

# DAO_SUMMARY: one line of figures when the device closes (the Slurm
# plugin sets it for every task); a malformed value is refused.
DAO_SUMMARY=$tmp/summary "$build/bin/dao-example-axpy" >/dev/null 2>&1
ok "$(test $? = 0 && test "$(wc -l <"$tmp/summary")" = 1 &&
	grep -q '^dao summary: slurm_job=0 pid=[0-9]* job=dao-example-axp.* backend=host policy=dao budget_bytes=4194304 kernels=48 h2d_bytes=[0-9]* d2h_bytes=[0-9]* evictions=[1-9][0-9]* stalls=[0-9]* peak_device_bytes=4194304 peak_pinned_bytes=[0-9]*$' \
	"$tmp/summary"; echo $?)" "DAO_SUMMARY=FILE appends one line with the job's figures"
SLURM_JOB_ID=77 DAO_SUMMARY=stderr "$build/bin/dao-example-axpy" >/dev/null 2>"$tmp/summary.err"
ok "$(test $? = 0 && grep -q '^dao summary: slurm_job=77 .* kernels=48 ' "$tmp/summary.err"
	echo $?)" "DAO_SUMMARY=stderr writes it to stderr, with SLURM_JOB_ID"
DAO_POLICY=plan DAO_SUMMARY=stderr "$build/bin/dao-example-axpy" >/dev/null 2>"$tmp/summary-plan.err"
ok "$(test $? = 0 && grep -q '^dao summary: .* policy=plan .* peak_pinned_bytes=[0-9]* plans_built=0 plans_late=0 iterations_followed=0 plan_departures=0$' \
	"$tmp/summary-plan.err"; echo $?)" "DAO_POLICY=plan: the plan's counts end the line (no iterations marked: none)"
DAO_SUMMARY=relative/path "$build/bin/dao-example-axpy" >/dev/null 2>"$tmp/summary-bad.err"
ok "$(test $? != 0 && grep -q 'DAO_SUMMARY' "$tmp/summary-bad.err"; echo $?)" \
	"a DAO_SUMMARY that is neither stderr nor an absolute path is refused, naming it"

dest=$tmp/dest
prefix=/usr/local
$make -s install DESTDIR="$dest" PREFIX=$prefix BUILD="$build" >"$tmp/install.log" 2>&1
ok $? "make install DESTDIR=... PREFIX=$prefix"
for f in include/dao.h lib/libdao.a lib/libdao.so lib/pkgconfig/dao.pc bin/dao-cholesky \
	bin/dao-bench; do
	test -e "$dest$prefix/$f"
	ok $? "installed $prefix/$f"
done
if [ -n "$fc" ]; then
	for f in include/dao/gfortran/dao.mod lib/libdao_fortran.a; do
		test -e "$dest$prefix/$f"
		ok $? "installed $prefix/$f"
	done
	"$fc" -I"$dest$prefix/include/dao/gfortran" tools/examples/matmul.f90 -o "$tmp/matmul-installed" \
		-L"$dest$prefix/lib" -ldao_fortran -ldao >"$tmp/fc.log" 2>&1 &&
		LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/matmul-installed" >/dev/null 2>&1
	ok $? "the Fortran example builds against the installed dao.mod and libdao_fortran.a and runs"
fi
soname=$(readelf -d "$dest$prefix/lib/libdao.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
test -n "$soname" && test -e "$dest$prefix/lib/$soname"
ok $? "libdao.so has a soname ($soname) and it is installed"

# The staged tree stands where it would be installed: its prefix moved under
# DESTDIR (a sysroot would also move the paths of libraries outside it).
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig
pkg-config() { command pkg-config --define-variable=prefix="$dest$prefix" "$@"; }
# shellcheck disable=SC2046
cc -std=gnu11 -Wall -Wextra -Werror tools/examples/axpy.c -o "$tmp/axpy-installed" \
	$(pkg-config --cflags --libs dao) >"$tmp/cc.log" 2>&1
ok $? "an example builds against the installed tree with pkg-config dao"
LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/axpy-installed" >/dev/null 2>&1
ok $? "and runs against the installed libdao.so"
# shellcheck disable=SC2046
cc -std=gnu11 tools/examples/axpy.c -o "$tmp/axpy-static" \
	$(pkg-config --cflags dao) "$dest$prefix/lib/libdao.a" $(pkg-config --static --libs dao | sed 's/-ldao\b//') >"$tmp/cc-static.log" 2>&1 &&
	"$tmp/axpy-static" >/dev/null 2>&1
ok $? "an example links statically with libdao.a and pkg-config --static"

tap_done
