#!/bin/sh
# build-kernel.sh OUTDIR - build the kcheck-debug kernel from Debian's
# linux-source-6.1: tinyconfig plus tests/vm/debug.config.
#
# Cached: the source is extracted once per tarball, and the build runs only
# when the fragment changed (OUTDIR/stamp); Kbuild then recompiles just
# what the changed options touch.
set -eu

out=$1
here=$(cd "$(dirname "$0")" && pwd)
frag=$here/debug.config
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
jobs=${KJOBS:-2}
tree=$out/linux

[ -r "$tarball" ] || { echo "build-kernel: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }

src_key=$(ls -l --time-style=+%s "$tarball" | sha256sum | cut -d' ' -f1)
key=$( (cat "$frag" "$0"; echo "$src_key") | sha256sum | cut -d' ' -f1)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$key" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "build-kernel: cached kernel in $tree is up to date"
	exit 0
fi

start=$(date +%s)
if [ ! -f "$out/source-stamp" ] || [ "$(cat "$out/source-stamp")" != "$src_key" ]; then
	echo "build-kernel: extracting $tarball"
	rm -rf "$out"
	mkdir -p "$out"
	tar -xJf "$tarball" -C "$out"
	mv "$out/linux-source-6.1" "$tree"
	echo "$src_key" > "$out/source-stamp"
fi
rm -f "$out/stamp"

make -C "$tree" -s ARCH=x86_64 tinyconfig
"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "$frag" >/dev/null 2>&1
make -C "$tree" -s ARCH=x86_64 olddefconfig

# merge_config only warns when Kconfig drops a request; a silently missing
# KASAN or lockdep would make the run meaningless, so refuse instead.
bad=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | while IFS= read -r line; do
	opt=${line%%=*}
	case $line in
	*=n) grep -q "^$opt=" "$tree/.config" && echo "$opt should be off" ;;
	*) grep -qx "$line" "$tree/.config" || echo "$line did not survive olddefconfig" ;;
	esac
done)
if [ -n "$bad" ]; then
	echo "build-kernel: $bad" >&2
	exit 1
fi

make -C "$tree" -s ARCH=x86_64 -j"$jobs" bzImage modules
echo "$key" > "$out/stamp"
echo "build-kernel: built in $(( $(date +%s) - start )) s"
