# SPDX-License-Identifier: MIT
# cluster.sh - a private single-node Slurm for slurm/check.t: munged,
# slurmctld and slurmd started from a configuration generated in $1, on
# ports of their own on 127.0.0.1, stopped by cluster_stop (call it from a
# trap). Sourced; sets SLURM_CONF for the clients.

# A port the kernel says is free now.
free_port() {
	perl -MIO::Socket::INET -e \
		'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1")->sockport'
}

# poll SECONDS CMD...: until CMD succeeds, at most SECONDS.
poll() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

cluster_pids=()

# cluster_start DIR PLUGIN_SO
cluster_start() {
	local dir=$1 plugin=$2 host
	host=$(hostname -s)
	mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
	chmod 700 "$dir/munge"
	head -c 1024 /dev/urandom >"$dir/munge/key"
	chmod 400 "$dir/munge/key"
	munged --force --socket="$dir/munge/sock" --key-file="$dir/munge/key" \
		--pid-file="$dir/munge/pid" --log-file="$dir/munge/log" \
		--seed-file="$dir/munge/seed" || return 1
	poll 10 test -s "$dir/munge/pid" || return 1
	cluster_pids+=("$(cat "$dir/munge/pid")")

	echo "required $plugin" >"$dir/plugstack.conf"
	cat >"$dir/slurm.conf" <<CONF
ClusterName=daotest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$dir/plugstack.conf
KillWait=5
NodeName=daonode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=dao Nodes=daonode Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
	cluster_pids+=($!)
	slurmd -D -N daonode -f "$dir/slurm.conf" >"$dir/slurmd.out" 2>&1 &
	cluster_pids+=($!)
	poll 60 node_idle
}

node_idle() { [ "$(sinfo -h -n daonode -o %t 2>/dev/null)" = idle ]; }

# Cancel what is left of our jobs, then stop the daemons, newest first.
cluster_stop() {
	local i
	if [ -n "${SLURM_CONF:-}" ] && [ -e "$SLURM_CONF" ]; then
		scancel --full -s KILL $(squeue -h -o %i 2>/dev/null) 2>/dev/null
		poll 20 test -z "$(squeue -h -o %i 2>/dev/null)"
	fi
	for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
		kill "${cluster_pids[i]}" 2>/dev/null
	done
	for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
		poll 20 eval "! kill -0 ${cluster_pids[i]} 2>/dev/null" ||
			kill -9 "${cluster_pids[i]}" 2>/dev/null
	done
	cluster_pids=()
}
