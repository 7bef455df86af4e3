#!/bin/bash
# SPDX-License-Identifier: MIT
# The dao SPANK plugin on a real Slurm (TAP, run by `make check-slurm`):
# munged, slurmctld and slurmd from Debian, started here with a generated
# single-node configuration in a temporary directory, stopped at the end
# even on failure. Needs root. Only our own cluster's jobs are looked at.
set -u
cd "$(dirname "$0")/.."
. tests/tap.sh
. slurm/cluster.sh

build=${BUILD:-build}
plugin=$PWD/$build/lib/slurm/dao_spank.so
cholesky=$PWD/$build/bin/dao-cholesky
pubjob=$PWD/$build/rel/tests/daoctl/dao-pubjob
daoctl=$PWD/$build/bin/daoctl

for tool in munged slurmctld slurmd srun sbatch squeue scancel sinfo; do
	if ! command -v $tool >/dev/null; then
		echo "1..0 # skip $tool is not installed (Debian: slurmctld slurmd slurm-client munge)"
		exit 0
	fi
done
if [ ! -e /usr/include/slurm/spank.h ]; then
	echo "1..0 # skip Slurm's headers are not installed (Debian: libslurm-dev)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # skip slurmd must run as root"
	exit 0
fi
for f in "$plugin" "$cholesky" "$pubjob" "$daoctl"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "Bail out! $f is not built"; exit 1; }
done

# Jobs run as root with their own working directory: everything world
# readable, the job output files in it.
tmp=$(mktemp -d /tmp/dao-slurm.XXXXXX)
chmod 755 "$tmp"
finish() {
	cluster_stop
	if [ "$failed" != 0 ]; then
		for f in "$tmp"/cluster/*.log; do
			echo "# --- $f (last lines)"
			tail -n 15 "$f" | sed 's/^/# /'
		done
	fi
	rm -rf "$tmp"
}
trap finish EXIT
# The settings under test come from the options only.
unset DAO_BACKEND DAO_DEVICE_BUDGET DAO_HOST_BUDGET DAO_POLICY DAO_LOOKAHEAD DAO_SUMMARY DAO_LOG

t0=$SECONDS
cluster_start "$tmp/cluster" "$plugin"
ok $? "slurmctld, slurmd and munged start and the node is idle ($((SECONDS - t0)) s)"
if ! node_idle; then
	echo "Bail out! no Slurm to test on"
	exit 1
fi

jobs_known() { scontrol -o show jobs 2>/dev/null | grep -c '^JobId='; }

# ---------------------------------------------------------- srun, options
# 10 tiles of 8 KiB under a 96 KiB budget, policy lru, lookahead 7.
srun -n1 --dao-budget=96K --dao-policy=lru --dao-lookahead=7 \
	bash -c 'echo "slurm_job=$SLURM_JOB_ID" >&2; exec "$0" --json --n 128 --tile 32' \
	"$cholesky" >"$tmp/srun.out" 2>"$tmp/srun.err"
rc=$?
job=$(sed -n 's/^slurm_job=\([0-9][0-9]*\)$/\1/p' "$tmp/srun.err")
ok $(( rc != 0 )) "srun --dao-budget=96K --dao-policy=lru --dao-lookahead=7 dao-cholesky exits 0"
ok "$(test "$(json "$tmp/srun.out" \
	'$j->{passed} && $j->{budget_bytes} == 98304 && $j->{policy} eq "lru" && $j->{lookahead} == 7')" = 1
	echo $?)" "its JSON shows the budget, policy and lookahead of the options"
grep -q "^dao summary: slurm_job=$job pid=[0-9]* job=dao-cholesky backend=host policy=lru budget_bytes=98304 kernels=20 h2d_bytes=[0-9]* d2h_bytes=[0-9]* .*peak_device_bytes=[0-9]* peak_pinned_bytes=[0-9]*$" \
	"$tmp/srun.err"
ok $? "the task's figures are in the job's output (job $job)"
echo "# $(grep '^dao summary' "$tmp/srun.err")"

# ------------------------------------------------------- sbatch, #SBATCH
cat >"$tmp/batch.sh" <<BATCH
#!/bin/bash
#SBATCH --dao-budget=128K --dao-policy=fifo
#SBATCH -n1 -o $tmp/batch-%j.out
exec "$cholesky" --json --n 128 --tile 32
BATCH
bjob=$(sbatch --parsable "$tmp/batch.sh" 2>"$tmp/sbatch.err")
ok $? "sbatch of a script with #SBATCH --dao-budget=128K --dao-policy=fifo is accepted"
job_done() {
	local st
	st=$(squeue -h -t all -j "$1" -o %T 2>/dev/null)
	case $st in COMPLETED | CANCELLED | FAILED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;; esac
	return 1
}
poll 120 job_done "$bjob"
ok $? "the batch job $bjob ends"
grep "^{" "$tmp/batch-$bjob.out" >"$tmp/batch.json" 2>/dev/null
ok "$(test "$(json "$tmp/batch.json" \
	'$j->{passed} && $j->{budget_bytes} == 131072 && $j->{policy} eq "fifo"')" = 1
	echo $?)" "the batch job's JSON shows the #SBATCH budget and policy"
grep -q "^dao summary: slurm_job=$bjob .*policy=fifo budget_bytes=131072 kernels=20 " \
	"$tmp/batch-$bjob.out"
ok $? "the batch job's output has its figures"

# ------------------------------------------------------ bad values refused
before=$(jobs_known)
refuse() {
	local what=$1 pattern=$2
	shift 2
	"$@" >"$tmp/refused.out" 2>"$tmp/refused.err"
	local rc=$?
	ok "$(test $rc != 0 && grep -q -- "$pattern" "$tmp/refused.err" &&
		test "$(jobs_known)" = "$before"; echo $?)" \
		"$what is refused at submission, saying why, and no job is made"
}
refuse "srun --dao-budget=12x" 'dao: --dao-budget=12x: not a size' \
	srun -n1 --dao-budget=12x true
refuse "srun --dao-budget=0%" 'dao: --dao-budget=0%: a percentage must be 1 to 100' \
	srun -n1 --dao-budget=0% true
refuse "srun --dao-policy=nope" 'dao: --dao-policy=nope: unknown policy' \
	srun -n1 --dao-policy=nope true
refuse "srun --dao-backend=gpu" 'dao: --dao-backend=gpu: unknown backend' \
	srun -n1 --dao-backend=gpu true
refuse "srun --dao-lookahead=0" 'dao: --dao-lookahead=0: must be 1 to 65536' \
	srun -n1 --dao-lookahead=0 true
printf '#!/bin/bash\n#SBATCH --dao-budget=lots\ntrue\n' >"$tmp/bad.sh"
refuse "#SBATCH --dao-budget=lots" 'dao: --dao-budget=lots: not a size' sbatch "$tmp/bad.sh"

# ------------------------------- two jobs at once, seen by daoctl, scancel
# Each runs until signalled; --forever ends cleanly on SIGTERM.
for name in a b; do
	cat >"$tmp/hold-$name.sh" <<BATCH
#!/bin/bash
#SBATCH -n1 -o $tmp/hold-$name-%j.out --dao-budget=256K
exec "$pubjob" --forever --buffers 4 --size 32K --kernels 10
BATCH
done
ja=$(sbatch --parsable "$tmp/hold-a.sh")
jb=$(sbatch --parsable "$tmp/hold-b.sh")
# Both publish: daoctl ps lists a process for each of our two job ids.
both_listed() {
	"$daoctl" ps --json >"$tmp/ps.json" 2>/dev/null &&
		json_ok "$tmp/ps.json" "my @p = @{\$j->{processes}};
			(grep { (\$_->{slurm_job_id} // 0) == $ja } @p) == 1 &&
			(grep { (\$_->{slurm_job_id} // 0) == $jb } @p) == 1"
}
poll 60 both_listed
ok $? "two jobs ($ja, $jb) run at once and daoctl ps --json lists both with their Slurm job ids"
pid_of() {
	perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
		print map { "$_->{pid}\n" } grep { ($_->{slurm_job_id} // 0) == $ARGV[0] }
		@{$j->{processes}}' "$1" <"$tmp/ps.json"
}
pa=$(pid_of "$ja")
pb=$(pid_of "$jb")
ok "$(json "$tmp/ps.json" "my @p = grep { (\$_->{slurm_job_id} // 0) == $ja } @{\$j->{processes}};
	\$p[0]{budget_bytes} == 262144" | grep -q 1; echo $?)" \
	"daoctl shows the budget the option set (256K)"
"$daoctl" ps >"$tmp/ps.txt"
awk -v a="$pa" -v ja="$ja" -v b="$pb" -v jb="$jb" \
	'$1 == a && $2 == ja { x++ } $1 == b && $2 == jb { y++ } END { exit !(x == 1 && y == 1) }' \
	"$tmp/ps.txt"
ok $? "daoctl ps shows the SLURM column for both"
grep -E "^ *($pa|$pb) |PID" "$tmp/ps.txt" | sed 's/^/# /'

gone() {
	[ -n "$1" ] && ! kill -0 "$1" 2>/dev/null && ! ls /dev/shm/dao.0."$1".* >/dev/null 2>&1
}
# scancel: SIGTERM, the job closes its context itself.
scancel "$ja"
poll 60 job_done "$ja" && poll 30 gone "$pa"
ok $? "scancel $ja: the job ends, its process $pa is gone and no /dev/shm/dao.0.$pa.* is left"
# A task killed outright (SIGKILL, the OOM killer) cannot remove its
# segment; the plugin does at the end of the step, and says so in the log.
# (scancel itself lets the task exit on SIGTERM first.)
kill -KILL "$pb"
poll 60 job_done "$jb" && poll 30 gone "$pb"
ok $? "task of job $jb killed by SIGKILL: the job ends, its process $pb is gone and no /dev/shm/dao.0.$pb.* is left"
grep -q "dao: removed /dev/shm/dao.0.$pb.[0-9]* left by a task of job $jb" "$tmp/cluster/slurmd.log"
ok $? "the plugin removed the killed task's segment (slurmd's log says so)"
if [ -e /dev/dao ]; then
	"$daoctl" status --json >"$tmp/status.json"
	ok "$(json "$tmp/status.json" '!$j->{module}{loaded} || $j->{module}{processes} == 0' |
		grep -q 1; echo $?)" "the module holds no pins of the cancelled jobs"
else
	echo "# /dev/dao absent: no module, no pages could be pinned"
fi

echo "# check-slurm took $((SECONDS - t0)) s"
tap_done
