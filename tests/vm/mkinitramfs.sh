#!/bin/sh
# mkinitramfs.sh OUT.cpio DAO_KO PROGRAM... - the VM's whole root file
# system: busybox, tests/vm/init.sh as /init, the module and the programs.
set -eu
out=$1
ko=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

# A dynamic busybox would find no libc in the VM.
if [ ! -x "$busybox" ] || readelf -l "$busybox" | grep -q 'program interpreter'; then
	echo "mkinitramfs: $busybox is missing or not static (apt-get install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tests" "$root/lib/modules" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/etc"
cp "$busybox" "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
chmod 0755 "$root/init"
cp "$ko" "$root/lib/modules/dao.ko"
for p in "$@"; do
	cp "$p" "$root/tests/"
done
echo "root:x:0:0:root:/:/bin/sh" > "$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >> "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) > "$out"
