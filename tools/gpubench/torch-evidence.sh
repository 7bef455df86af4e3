#!/bin/bash
# SPDX-License-Identifier: MIT
# torch-evidence.sh OUTFILE - the dao PyTorch device on a GPU (issue 24,
# deliverable 4), one optional step of gpu-evidence.sh (its contract:
# DAO_EVIDENCE_BUNDLE, DAO_EVIDENCE_BIN, DAO_EVIDENCE_DEADLINE in the
# environment; OUTFILE is OUT/torch.json).
#
# 1. Finds a Python whose PyTorch has CUDA and sees a device, a C++
#    compiler (CXX, c++, g++, clang++) and the CUDA runtime's headers
#    (CUDA_HOME, /usr/local/cuda, the nvidia-* wheels PyTorch installs);
#    any of them missing: OUTFILE says
#    {"status": "skipped", "reason": ...}, one line says so, exit 0.
# 2. Builds the extension from the bundle's sources (src/torch/csrc)
#    against that PyTorch, with the CUDA kernels (DAO_TORCH_CUDA), linked
#    to the bundle's libdao.so (lib/, its CUDA backends), in a temporary
#    folder, one compiler per core.
# 3. Runs src/torch/bench/gpt.py: a GPT-style transformer with random
#    weights, plain PyTorch in memory, save_on_cpu(pin_memory=True), dao
#    on cuda-explicit and cuda-managed at the plain step's peak / 2;
#    gpt.py rewrites OUTFILE after each run, so what finished is kept.
#    Each dao run's DAO_TRACE (torch-BACKEND.trace) is added to traces.tar
#    beside OUTFILE.
# Everything ends by DAO_EVIDENCE_DEADLINE (epoch seconds; default 150 s
# from now): the build and the run are under `timeout`, and gpt.py skips
# the runs that would not end in time. DAO_TORCH_EVIDENCE_SIZE (full |
# small | tiny; default DAO_EVIDENCE_SIZE, tiny in the rehearsal, else
# full) picks the model's size. DAO_TORCH_EVIDENCE_CPU=1 rehearses it all
# on a machine without a GPU: built without the CUDA kernels, gpt.py --cpu
# (plain PyTorch on the CPU, dao on the host backend).
# Exit status: 0 when it ran or was skipped, 1 when the build or the run
# failed (the reason and the log's tail in OUTFILE), 2 for no OUTFILE.
set -u

outfile=${1:-}
if [ -z "$outfile" ]; then
	echo "usage: torch-evidence.sh OUTFILE" >&2
	exit 2
fi
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
bundle=${DAO_EVIDENCE_BUNDLE:-$here}
src=$bundle/src
deadline=${DAO_EVIDENCE_DEADLINE:-$(($(date +%s) + 150))}
size=${DAO_TORCH_EVIDENCE_SIZE:-${DAO_EVIDENCE_SIZE:-full}}
cpu=${DAO_TORCH_EVIDENCE_CPU:-0}
case $outfile in
/*) ;;
*) outfile=$PWD/$outfile ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Away from the repository: its torch/ folder would pass for a namespace
# package named torch in a Python that has none.
cd "$work" || exit 2

left() { echo $((deadline - $(date +%s))); }

# A JSON string of $1.
json_str() {
	python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1" 2>/dev/null ||
		printf '"%s"' "$(printf '%s' "$1" | tr -d '"\\\000-\037')"
}

finish() { # STATUS REASON [LOGFILE]
	local tail='""'
	[ -n "${3:-}" ] && tail=$(json_str "$(tail -c 3000 "$3")")
	printf '{"status":"%s","reason":%s,"log_tail":%s,"size":"%s"}\n' "$1" "$(json_str "$2")" \
		"$tail" "$size" >"$outfile"
	echo "torch-evidence: $1: $2"
	[ "$1" = failed ] && exit 1
	exit 0
}

# --- what the machine has -------------------------------------------------
python=""
for p in ${DAO_TORCH_PYTHON:-} python3 python; do
	command -v "$p" >/dev/null 2>&1 || continue
	"$p" -c 'import torch; torch.__version__' >/dev/null 2>&1 && { python=$p; break; }
done
[ -n "$python" ] || finish skipped "no Python with PyTorch (python3, python)"
info=$("$python" -c 'import torch; print(torch.__version__, torch.version.cuda or "none", torch.cuda.is_available())' 2>&1 | tail -1)
read -r tv tc ta _ <<<"$info"
case $cpu:$tc:$ta in
1:*) ;;
0:none:*) finish skipped "PyTorch $tv ($(command -v "$python")) is built without CUDA" ;;
0:*:True) ;;
*) finish skipped "PyTorch $tv ($(command -v "$python"), CUDA $tc) sees no CUDA device: $info" ;;
esac
cxx=""
for c in ${CXX:-} c++ g++ clang++; do
	command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }
done
[ -n "$cxx" ] || finish skipped "no C++ compiler (CXX, c++, g++, clang++): the extension cannot be built here"
for f in torch/config.py torch/bench/gpt.py torch/dao_torch/__init__.py torch/csrc/dao_torch.h libdao/include/dao.h; do
	[ -f "$src/$f" ] || finish failed "the bundle lacks src/$f"
done
libdao=$(ls "${DAO_EVIDENCE_BIN:-$bundle/bin}/../lib"/libdao.so.* "$bundle"/lib/libdao.so.* 2>/dev/null | head -1)
[ -n "$libdao" ] || finish failed "no libdao.so in the bundle's lib/"

"$python" "$src/torch/config.py" >"$work/config.mk" 2>&1 || finish failed "torch/config.py failed" "$work/config.mk"
conf() { sed -n "s/^$1 := //p" "$work/config.mk"; }
[ -z "$(conf TORCH_SKIP)" ] || finish skipped "$(conf TORCH_SKIP)"
cuda_inc=""
[ "$cpu" = 1 ] && cuda_inc=none
for d in ${CUDA_HOME:+$CUDA_HOME/include} /usr/local/cuda/include \
	$("$python" -c 'import nvidia, os; [print(os.path.join(p, s, "include")) for p in nvidia.__path__ for s in sorted(os.listdir(p))]' 2>/dev/null); do
	[ -z "$cuda_inc" ] && [ -f "$d/cuda_runtime_api.h" ] && cuda_inc=$d
done
[ -n "$cuda_inc" ] || finish skipped "no cuda_runtime_api.h (CUDA_HOME, /usr/local/cuda, the nvidia wheels)"

# --- the build ------------------------------------------------------------
mkdir -p "$work/obj" "$work/pkg/dao_torch" "$work/lib"
soname=$(readelf -d "$libdao" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
cp "$libdao" "$work/lib/"
ln -sf "$(basename "$libdao")" "$work/lib/${soname:-libdao.so.0}"
ln -sf "$(basename "$libdao")" "$work/lib/libdao.so"
# The same flags as torch.mk, without -Werror (a PyTorch these sources
# were never compiled against here may warn).
flags=(-std=c++17 -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter
	"-D_GLIBCXX_USE_CXX11_ABI=$(conf TORCH_CXX11_ABI)" -I"$src/libdao/include"
	-isystem "$(conf TORCH_INCLUDE)" -isystem "$(conf TORCH_INCLUDE)/torch/csrc/api/include"
	-isystem "$(conf TORCH_PY_INCLUDE)")
cuda_libs=()
gpt_args=()
if [ "$cpu" = 1 ]; then
	gpt_args=(--cpu)
else
	flags+=(-DDAO_TORCH_CUDA -isystem "$cuda_inc")
	cuda_libs=(-lc10_cuda -ltorch_cuda)
fi
t0=$(date +%s)
echo "torch-evidence: building with $cxx against PyTorch $(conf TORCH_VERSION) (CUDA $(conf TORCH_CUDA)), $(left) s left"
export cxx work
printf '%s\n' "$src"/torch/csrc/*.cpp |
	timeout -k 2 "$(($(left) - 10))" xargs -P "$(nproc 2>/dev/null || echo 4)" -I{} \
		bash -c 'f={}; o=$work/obj/$(basename "${f%.cpp}").o; "$cxx" "$@" -c "$f" -o "$o" >"$o.log" 2>&1 ||
			{ cat "$o.log"; exit 1; }' _ "${flags[@]}" >"$work/build.log" 2>&1
rc=$?
if [ $rc != 0 ]; then
	# A PyTorch these sources were never built against fails with many
	# files' warnings after the errors: the errors, each with the lines
	# the compiler adds under it, are what the report needs.
	grep -E -A 3 '(^|: )(fatal )?error[: ]' "$work/build.log" | head -c 2900 >"$work/build.errors"
	[ -s "$work/build.errors" ] || cp "$work/build.log" "$work/build.errors"
	finish failed "the build failed (status $rc$([ $rc = 124 ] && echo ': out of time'))" "$work/build.errors"
fi
"$cxx" -shared -o "$work/pkg/dao_torch/_C$(conf TORCH_EXT_SUFFIX)" "$work"/obj/*.o \
	-L"$work/lib" -ldao -Wl,-rpath,"$work/lib" -L"$(conf TORCH_LIBDIR)" -Wl,-rpath,"$(conf TORCH_LIBDIR)" \
	"${cuda_libs[@]}" -ltorch -ltorch_cpu -lc10 >>"$work/build.log" 2>&1 ||
	finish failed "the link failed" "$work/build.log"
cp "$src"/torch/dao_torch/*.py "$work/pkg/dao_torch/"
build_s=$(($(date +%s) - t0))
echo "torch-evidence: built in $build_s s, $(left) s left"

# --- the run --------------------------------------------------------------
[ "$(left)" -gt 15 ] || finish skipped "time: built in $build_s s, $(left) s left for the run"
mkdir -p "$work/traces"
PYTHONPATH=$work/pkg PYTHONDONTWRITEBYTECODE=1 timeout -k 2 "$(($(left) - 3))" \
	"$python" "$src/torch/bench/gpt.py" "${gpt_args[@]}" --size "$size" --out "$outfile" --deadline "$((deadline - 6))" \
	--trace-dir "$work/traces" \
	--meta "{\"status\":\"ok\",\"build_s\":$build_s,\"compiler\":$(json_str "$("$cxx" --version | head -1)")}" \
	2>&1 | tee "$work/run.log"
rc=${PIPESTATUS[0]}
# The dao runs' traces (torch-BACKEND.trace) join the rows' in traces.tar
# beside OUTFILE, for daosim (the report replays them on the card's rates).
traces=()
for f in "$work/traces"/*.trace; do
	[ -f "$f" ] && traces+=("$(basename "$f")")
done
if [ ${#traces[@]} -gt 0 ]; then
	tarball=$(dirname "$outfile")/traces.tar
	append=-cf
	[ -f "$tarball" ] && append=-rf
	tar -C "$work/traces" "$append" "$tarball" "${traces[@]}" ||
		echo "torch-evidence: the traces could not be added to $tarball" >&2
fi
if [ "$rc" != 0 ]; then
	why="gpt.py ended with status $rc$([ "$rc" = 124 ] && echo ': out of time')"
	# gpt.py's own file keeps the runs that finished: the failure beside them.
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
d.update(status="failed", reason=sys.argv[2], log_tail=open(sys.argv[3]).read()[-3000:])
json.dump(d, open(sys.argv[1], "w"), indent=1, sort_keys=True)' "$outfile" "$why" "$work/run.log" 2>/dev/null ||
		finish failed "$why" "$work/run.log"
	echo "torch-evidence: failed: $why"
	exit 1
fi
