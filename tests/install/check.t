#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-install: the packages of `make deb` installed on this machine
# as a site installs them (apt-get install ./*.deb), checked, then purged,
# and the purge checked to leave nothing behind (TAP, run by prove; root).
#
# The packages change what every build on the machine finds (/usr/include/
# dao.h, libdao.so.0), so the window from install to purge is one run of
# this script, the EXIT trap purges whatever happens, and the script refuses
# to start when any of them is installed already (it would purge a site's
# own installation).
set -u
. "$(dirname "$0")/../tap.sh"

deb_dir=${DEB_DIR:-build/deb}
make=${MAKE:-make}
build=${BUILD:-build}

bail() {
	echo "Bail out! $*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || bail "check-install installs packages: run it as root"
shopt -s nullglob
[ -d "$deb_dir" ] || bail "no $deb_dir: run make deb first"
deb_dir=$(cd "$deb_dir" && pwd)
debs=("$deb_dir"/*.deb)
[ ${#debs[@]} -gt 0 ] || bail "no packages in $deb_dir: run make deb first"
pkgs=()
for d in "${debs[@]}"; do
	pkgs+=("$(dpkg-deb -f "$d" Package)")
done
version=$(dpkg-deb -f "$deb_dir"/dao-dkms_*.deb Version 2>/dev/null)
[ -n "$version" ] || bail "no dao-dkms package in $deb_dir"

installed() {
	dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null
}

# One check-install on the machine at a time; and apt's lock (the one every
# helper's `flock /tmp/apt.lock apt-get install` takes) held from the first
# file list to the last, so that no other installation changes /usr between
# them.
exec 9>/tmp/dao-check-install.lock
flock 9
exec 8>/tmp/apt.lock
flock 8

for p in "${pkgs[@]}"; do
	st=$(installed "$p")
	case $st in "" | not-installed) ;;
	*) bail "$p is already on this machine ($st): this test installs and purges it" ;;
	esac
done
dkms status -m dao 2>/dev/null | grep -q . && bail "dkms already holds a dao module: $(dkms status -m dao)"

tmp=$(mktemp -d)
group_before=$(getent group dao)

cleanup() {
	local p left=()
	for p in "${pkgs[@]}"; do
		case $(installed "$p") in "" | not-installed) ;; *) left+=("$p") ;; esac
	done
	if [ ${#left[@]} -gt 0 ]; then
		echo "# cleanup: purging ${left[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 purge -y -q "${left[@]}" >/dev/null 2>&1 ||
			dpkg --purge --force-all "${left[@]}" >/dev/null 2>&1
	fi
	if dkms status -m dao 2>/dev/null | grep -q .; then
		echo "# cleanup: dkms remove dao/$version --all" >&2
		dkms remove "dao/$version" --all >/dev/null 2>&1
	fi
	# The package keeps the group on purge (Documentation/admin.md); the
	# test removes it when it created it.
	if [ -z "$group_before" ] && getent group dao >/dev/null; then
		delgroup --system --quiet dao >/dev/null 2>&1 || groupdel dao
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Every file and link where packages install (/lib is /usr/lib here), but
# /usr/local and the byte-code caches that any Python run may write; and
# two kinds of files that stay by design, not by the packages: dkms's
# module-signing key (made on its first build of any module, kept for
# Secure Boot, where it may be enrolled) and the shadow tools' backups of
# /etc/group and /etc/gshadow (the group dao stays, see below).
file_list() {
	find /usr /etc /var/lib/dkms -xdev \( -path /usr/local -o -name __pycache__ \) -prune -o \
		\( -type f -o -type l \) -print 2>/dev/null |
		grep -v -x -E '/var/lib/dkms/mok\.(key|pub)|/etc/(group|gshadow|passwd|shadow)-' |
		LC_ALL=C sort
}
file_list >"$tmp/files.before"

# ------------------------------------------------------------ install
export DEBIAN_FRONTEND=noninteractive
# dpkg's own lock: wait for an installation that does not take apt.lock.
apt_get() {
	apt-get -o DPkg::Lock::Timeout=900 "$@"
}
# Only the packages themselves: a dependency apt pulled in would stay
# after the purge (.ci/packages installs them all beforehand).
apt_get install -s -q --no-install-recommends "${debs[@]}" 2>/dev/null | sed -n 's/^Inst \([^ ]*\).*/\1/p' |
	LC_ALL=C sort >"$tmp/inst"
printf '%s\n' "${pkgs[@]}" | LC_ALL=C sort >"$tmp/ours"
extra=$(comm -23 "$tmp/inst" "$tmp/ours" | tr '\n' ' ')
test -s "$tmp/inst" && [ -z "$extra" ]
ok $? "apt-get would install only the packages (other packages: ${extra:-none})"
[ -z "$extra" ] || bail "install the dependencies first: $extra"

apt_get install -y -q --no-install-recommends "${debs[@]}" >"$tmp/install.log" 2>&1
st=$?
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/install.log" | tail -30 >&2
ok $st "apt-get install $deb_dir/*.deb"
for p in "${pkgs[@]}"; do
	[ "$(installed "$p")" = installed ]
	ok $? "$p is installed ($(installed "$p"))"
done

# ------------------------------------------------------------ dkms
# Every installed kernel whose headers are installed gets the module.
kernels=()
for b in /lib/modules/*/build; do
	[ -e "$b/Makefile" ] && kernels+=("$(basename "$(dirname "$b")")")
done
[ ${#kernels[@]} -gt 0 ]
ok $? "kernels with headers: ${kernels[*]}"
ko_61=
kver_61=
for k in "${kernels[@]}"; do
	dkms status -m dao -v "$version" -k "$k" | grep -q ': installed'
	ok $? "dkms status: dao/$version installed for $k ($(dkms status -m dao -v "$version" -k "$k" | tr '\n' ' '))"
	ko=$(modinfo -k "$k" -n dao 2>/dev/null)
	case $ko in /lib/modules/$k/updates/dkms/dao.ko*) st=0 ;; *) st=1 ;; esac
	ok $st "$k: modprobe's dao is the DKMS build (${ko:-none})"
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	[ "$(modinfo -F name "$ko" 2>/dev/null)" = dao ] && [ "${vermagic%% *}" = "$k" ] &&
		modinfo -F license "$ko" 2>/dev/null | grep -q GPL
	ok $? "$k: modinfo: name dao, vermagic ${vermagic%% *}, GPL"
	case $k in 6.1.*) ko_61=$ko kver_61=$k ;; esac
done

# ------------------------------------------------------------ libdao-dev
cflags=$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs dao 2>&1)
ok $? "pkg-config --cflags --libs dao: $cflags"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$(env -u PKG_CONFIG_PATH pkg-config --variable=libdir dao)" = "/usr/lib/$multiarch" ]
ok $? "dao.pc: libdir is /usr/lib/$multiarch"
# shellcheck disable=SC2046
cc -std=gnu11 -Wall -Wextra -Werror tools/examples/axpy.c -o "$tmp/axpy" \
	$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs dao) >"$tmp/cc.log" 2>&1
ok $? "an example compiles against /usr/include/dao.h and links /usr's libdao"
loaded=$(ldd "$tmp/axpy" 2>/dev/null | sed -n 's/^[[:space:]]*libdao\.so\.0 => \([^ ]*\) .*/\1/p')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "/usr/lib/$multiarch/libdao.so.0")" ]
ok $? "it loads /usr/lib/$multiarch/libdao.so.0 (${loaded:-not found})"
env -u LD_LIBRARY_PATH DAO_BACKEND=host "$tmp/axpy" >"$tmp/axpy.out" 2>&1
ok $? "it runs a job on the host backend and checks its result"
test -e "/usr/lib/$multiarch/libdao.a" && test -e /usr/include/dao.h
ok $? "libdao.a and dao.h are installed"

# ------------------------------------------------------------ dao-slurm
plugin=/usr/lib/dao/slurm/dao_spank.so
nm -D --defined-only "$plugin" 2>/dev/null | grep -qw slurm_spank_init
ok $? "dao-slurm: $plugin installed, a SPANK plugin (slurm_spank_init)"

# ------------------------------------------------------------ dao-tools
out=$(/usr/bin/daoctl --version 2>&1)
st=$?
[ $st -eq 0 ] && echo "$out" | grep -q "${version%%-*}"
ok $? "/usr/bin/daoctl --version: $out"
for t in daosim dao-cholesky dao-tracegen; do
	"/usr/bin/$t" --help >/dev/null 2>&1
	ok $? "/usr/bin/$t --help"
done
for m in daoctl daosim dao-cholesky dao-tracegen; do
	[ "$(man -w "$m" 2>/dev/null)" = "/usr/share/man/man1/$m.1.gz" ]
	ok $? "man page of $m installed"
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings "$m" 2>&1 >/dev/null)
	[ -z "$warn" ]
	ok $? "man $m renders without warnings${warn:+: $warn}"
done

# ------------------------------------------------------------ dao-dkms
rule=/lib/udev/rules.d/60-dao.rules
grep -q -E '^KERNEL=="dao",.*GROUP="dao", MODE="0660"' "$rule" 2>/dev/null
ok $? "$rule gives /dev/dao to group dao, 0660"
grep -qx dao /usr/lib/modules-load.d/dao.conf 2>/dev/null
ok $? "/usr/lib/modules-load.d/dao.conf loads dao at boot"
gid=$(getent group dao | cut -d: -f3)
sys_max=$(sed -n 's/^LAST_SYSTEM_GID=//p' /etc/adduser.conf 2>/dev/null)
[ -n "$gid" ] && [ "$gid" -le "${sys_max:-999}" ]
ok $? "group dao exists and is a system group (gid ${gid:-none})"

# The VM suite on Debian's 6.1 kernel, loading the module DKMS built.
if [ -n "$ko_61" ]; then
	case $ko_61 in
	*.xz) xz -dc "$ko_61" >"$tmp/dao.ko" ;;
	*) cp "$ko_61" "$tmp/dao.ko" ;;
	esac
	$make --no-print-directory -j2 kcheck BUILD="$build" KCHECK_KVERS="$kver_61" \
		KCHECK_DAO_KO="$tmp/dao.ko" >"$tmp/kcheck.log" 2>&1
	st=$?
	[ $st -eq 0 ] || tail -30 "$tmp/kcheck.log" | sed 's/^/# /' >&2
	ok $st "make kcheck with the module DKMS built for 6.1 ($(grep -c '^ok ' "$tmp/kcheck.log") ok lines)"
else
	ok 1 "make kcheck with the module DKMS built for 6.1 (DKMS built none)"
fi

# ------------------------------------------------------------ purge
for p in "${pkgs[@]}"; do
	dpkg -L "$p" 2>/dev/null
done | LC_ALL=C sort -u >"$tmp/owned"
apt_get purge -y -q "${pkgs[@]}" >"$tmp/purge.log" 2>&1
st=$?
[ $st -eq 0 ] || tail -20 "$tmp/purge.log" | sed 's/^/# /' >&2
ok $st "apt-get purge ${pkgs[*]}"
for p in "${pkgs[@]}"; do
	case $(installed "$p") in "" | not-installed) st=0 ;; *) st=1 ;; esac
	ok $st "$p is gone from dpkg's database"
done
left=$(dkms status -m dao 2>/dev/null)
[ -z "$left" ]
ok $? "dkms status has no dao${left:+ ($left)}"
left=$(find /lib/modules -name 'dao.ko*' 2>/dev/null | tr '\n' ' ')
[ -z "$left" ]
ok $? "no dao.ko under /lib/modules${left:+ ($left)}"
# Directories (and /lib, a link to one) are shared with other packages.
left=$(while read -r f; do [ ! -d "$f" ] && { [ -f "$f" ] || [ -L "$f" ]; } && echo "$f"; done <"$tmp/owned" |
	tr '\n' ' ')
[ -z "$left" ]
ok $? "every file the packages listed is gone${left:+ ($left)}"
file_list >"$tmp/files.after"
diff "$tmp/files.before" "$tmp/files.after" >"$tmp/files.diff"
st=$?
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/files.diff" | head -40 >&2
ok $st "the files under /usr, /etc and /var/lib/dkms are those before the install"
getent group dao >/dev/null
ok $? "group dao is kept after the purge (documented; the test removes it if it created it)"

tap_done
