#!/bin/bash
# SPDX-License-Identifier: MIT
# bundle.sh OUT MAX_BYTES CUDA_HOME - assemble the GPU bundle (bundle.mk) in
# OUT from GPU_BUNDLE_BINS, GPU_BUNDLE_LIBS, GPU_BUNDLE_SCRIPTS and
# GPU_BUNDLE_SRCS (space-separated paths, from the environment).
#
# The shared libraries the programs load come with them, except the CUDA
# libraries (the GPU machine's own: whatever resolves under CUDA_HOME's
# real path) and the C runtime the GPU machine's newer system provides
# (glibc, libgcc_s, libstdc++: an older copy would shadow it). They travel
# as one gzip'd tar, unpacked into lib/ there by gpu-evidence.sh: Debian's
# libopenblas.so.0 alone is 36.5 MB (a DYNAMIC_ARCH build, every CPU's
# kernels), 10.7 MB gzip'd. gzip rather than xz (4.2 MB): xz took 30 times
# longer here (70 s at -6 on a shared core) and is not on every minimal
# system, gzip is. Static linking was the other way: with DYNAMIC_ARCH it
# keeps every CPU's kernels too, and in each program that links OpenBLAS.
#
# Fails (status 1, nothing left at OUT) when a library cannot be found or
# the folder would exceed MAX_BYTES, naming the largest files.
set -eu -o pipefail

out=${1:?usage: bundle.sh OUT MAX_BYTES CUDA_HOME}
max=${2:?usage: bundle.sh OUT MAX_BYTES CUDA_HOME}
cuda_real=$(readlink -f "${3:?usage: bundle.sh OUT MAX_BYTES CUDA_HOME}")
stage=$out.tmp.$$
trap 'rm -rf "$stage" "$stage.libs"' EXIT

die() {
	echo "gpu-bundle: $*" >&2
	exit 1
}

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage.libs"
for f in ${GPU_BUNDLE_BINS:-}; do
	cp "$f" "$stage/bin/"
done
for f in ${GPU_BUNDLE_LIBS:-}; do
	cp "$f" "$stage/lib/"
done
for f in ${GPU_BUNDLE_SCRIPTS:-}; do
	install -m 0755 "$f" "$stage/"
done
for f in ${GPU_BUNDLE_SRCS:-}; do
	mkdir -p "$stage/src/$(dirname "$f")"
	cp -r "$f" "$stage/src/$f"
done

# The system's side of the C runtime, found on every Linux and newer there.
system_lib() {
	case $1 in
	linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | \
		librt.so.* | libresolv.so.* | libutil.so.* | libgcc_s.so.* | libstdc++.so.*)
		return 0 ;;
	esac
	return 1
}

# Every shared library the programs and libraries load, as ldd resolves it
# here (with the CUDA libraries' directory, as the GPU machine has it).
: >"$stage.libs/list"
for f in "$stage"/bin/* "$stage"/lib/*; do
	[ -f "$f" ] || continue
	LD_LIBRARY_PATH=$cuda_real/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$f" >"$stage.libs/ldd" ||
		die "ldd $f failed"
	while read -r name arrow path _; do
		[ "$arrow" = "=>" ] || continue
		system_lib "$name" && continue
		[ "$path" != "not" ] || die "$(basename "$f") needs $name, which is not found here"
		real=$(readlink -f "$path")
		case $real in "$cuda_real"/*) continue ;; esac
		[ -e "$stage/lib/$name" ] || echo "$name $real" >>"$stage.libs/list"
	done <"$stage.libs/ldd"
done
mkdir -p "$stage.libs/tree"
sort -u "$stage.libs/list" | while read -r name real; do
	cp "$real" "$stage.libs/tree/$name"
done
# Reproducible: sorted names, no owners or times of this machine.
(cd "$stage.libs/tree" && ls | LC_ALL=C sort >../names)
if [ -s "$stage.libs/names" ]; then
	tar -C "$stage.libs/tree" --owner=0 --group=0 --numeric-owner --mtime=@0 \
		-cf - -T "$stage.libs/names" | gzip -6 -n >"$stage/syslibs.tar.gz"
fi

{
	echo "# gpu-bundle: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "# bytes sha256 path"
	(cd "$stage" && find . -type f ! -name MANIFEST | LC_ALL=C sort | while read -r f; do
		echo "$(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1) ${f#./}"
	done)
	echo "# syslibs.tar.gz: the system libraries (soname <- file here)"
	sort -u "$stage.libs/list" | sed 's/^/#   /'
} >"$stage/MANIFEST"

bytes=$(du -sb "$stage" | cut -f1)
if [ "$bytes" -gt "$max" ]; then
	echo "gpu-bundle: $bytes bytes, more than the $max allowed; the largest files:" >&2
	(cd "$stage" && find . -type f -printf '%s %p\n' | sort -rn | head -10) >&2
	exit 1
fi
rm -rf "$out"
mv "$stage" "$out"
echo "gpu-bundle: $out, $bytes bytes ($(find "$out" -type f | wc -l) files; at most $max)"
