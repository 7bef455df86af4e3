#!/bin/bash
# run-vm.sh --kernel IMAGE --initrd CPIO --log FILE [--timeout S] [--memory MB]
#           [--append 'NAME=VALUE ...']   (environment of the suite, via the kernel command line)
# Boot the test VM under qemu (TCG: -enable-kvm hangs on the CI hosts), copy
# the console to FILE and to stdout, and fail unless the suite reported
# success through isa-debug-exit within the timeout and the console holds
# no kernel warning, bug, oops, lockdep, KASAN or kmemleak report.
set -u
kernel= initrd= log= timeout=900 memory=1024 append=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	*) echo "run-vm: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ ! -r "$kernel" ] || [ ! -r "$initrd" ] || [ -z "$log" ]; then
	echo "run-vm: need --kernel, --initrd and --log" >&2
	exit 2
fi

# loglevel=5: KERN_WARNING (4) reaches the console, where WARN() prints.
# no_timer_check: on a loaded host TCG misses the IO-APIC timer check and
# the kernel panics at boot; and a vCPU starved by the host for 21 s reads
# as an RCU stall, so the stall timeout is 120 s (a real one still shows).
start=$(date +%s)
timeout --signal=KILL "$timeout" qemu-system-x86_64 \
	-machine pc -cpu max -smp 2 -m "$memory" \
	-nographic -no-reboot -monitor none -serial stdio \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=5 no_timer_check rcupdate.rcu_cpu_stall_timeout=120 rdinit=/init $append" \
	</dev/null 2>&1 | tr -d '\r' | tee "$log"
qemu=${PIPESTATUS[0]}
took=$(( $(date +%s) - start ))

fail=0
case $qemu in
1) ;; # vmexit 0: (0 << 1) | 1
137) echo "run-vm: FAIL: no result within $timeout s (watchdog)"; fail=1 ;;
*) echo "run-vm: FAIL: VM exit status $qemu (suite status $(( (qemu - 1) / 2 )) or no exit device reached)"; fail=1 ;;
esac

# What the kernel says when something is wrong, whatever the tests think.
bad='WARNING:|BUG:|Oops|general protection|Kernel panic|Call Trace:|INFO: (possible|task|rcu)|'
bad+='DEBUG_LOCKS_WARN_ON|possible (recursive|circular) locking|inconsistent lock state|'
bad+='lockdep|KASAN|UBSAN:|kmemleak: [0-9]+ new suspected|unreferenced object'
if grep -E -n "$bad" "$log" | grep -v -E 'DAO-KCHECK|Lock dependency validator|MAX_LOCKDEP|kasan: KernelAddressSanitizer initialized' > "$log.bad"; then
	echo "run-vm: FAIL: the kernel complained:"
	cat "$log.bad"
	# A "Call Trace:" alone does not say what it was: the lines above the
	# first complaint do (an OOM kill, an allocation failure, a hung task).
	first=$(head -1 "$log.bad" | cut -d: -f1)
	echo "run-vm: the console around the first complaint (line $first):"
	sed -n "$(( first > 4 ? first - 4 : 1 )),$(( first + 2 ))p" "$log" | sed 's/^/  /'
	fail=1
fi

pass=$(grep -c -E '^ok [0-9]+ ' "$log")
notok=$(grep -c -E '^not ok [0-9]+ ' "$log")
if [ "$notok" -gt 0 ]; then
	# Each failed test with the harness's lines before it (its assertions).
	echo "run-vm: the failed tests:"
	grep -E -B4 '^not ok [0-9]+ ' "$log" | sed 's/^/  /'
fi
echo "run-vm: $pass ok, $notok not ok, VM ran $took s"
[ "$notok" -eq 0 ] || fail=1
[ "$fail" -eq 0 ] && echo "run-vm: PASS" || echo "run-vm: FAIL"
exit $fail
