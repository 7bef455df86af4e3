#!/bin/busybox sh
# /init of the test VM: load dao.ko, run every test program, check kmemleak,
# and leave through isa-debug-exit with the suite's status (0: all passed).
/bin/busybox --install -s /bin
export PATH=/bin:/tests
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
# Pseudo terminals: the soak test runs daoctl top on one.
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

leaks=/sys/kernel/debug/kmemleak
if [ -w $leaks ]; then
	# Whatever boot left behind is not ours to judge.
	echo scan > $leaks
	echo clear > $leaks
fi

status=0
echo "DAO-KCHECK: kernel $(uname -r)"
if ! insmod /lib/modules/dao.ko; then
	echo "DAO-KCHECK: insmod failed"
	vmexit 2
fi

for t in /tests/test_*; do
	[ -e "$t" ] || continue
	name=${t##*/}
	echo "DAO-KCHECK: run $name"
	start=$(date +%s)
	"$t"
	rc=$?
	echo "DAO-KCHECK: $name exit $rc after $(( $(date +%s) - start )) s"
	[ $rc -eq 0 ] || status=1
done

# libdao jobs with the module loaded (libdao_cuda_job: only where libdao
# was built with CUDA). DAO_GCOV=DIR (coverage-cuda-vm): a coverage build
# writes its .gcda files under DIR, printed in hex at the end.
[ -n "${DAO_GCOV:-}" ] && export GCOV_PREFIX=$DAO_GCOV
for t in /tests/libdao_*; do
	[ -x "$t" ] || continue
	name=${t##*/}
	echo "DAO-KCHECK: run $name"
	"$t"
	rc=$?
	echo "DAO-KCHECK: $name exit $rc"
	[ $rc -eq 0 ] || status=1
done

if [ -n "${DAO_GCOV:-}" ]; then
	echo "DAO-GCOV-BEGIN"
	tar -C "$DAO_GCOV" -cz . | xxd -p
	echo "DAO-GCOV-END"
fi

if ! rmmod dao; then
	echo "DAO-KCHECK: rmmod at the end failed"
	status=1
fi

if [ -w $leaks ]; then
	# kmemleak reports only objects older than five seconds: waiting is
	# its rule for telling a leak from an allocation still in flight.
	sleep 6
	echo scan > $leaks
	echo scan > $leaks
	if [ -s $leaks ]; then
		echo "DAO-KCHECK: kmemleak reports:"
		cat $leaks
		status=1
	else
		echo "DAO-KCHECK: kmemleak: no leaks"
	fi
fi

echo "DAO-KCHECK: status $status"
vmexit $status
