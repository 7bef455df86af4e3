#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end checks of daoctl (TAP, run by prove from `make check`): real
# libdao jobs under small budgets against what they report themselves, stale
# segments of killed jobs, refusals, top under tmux, a node_exporter scrape.
#
# Waiting is always polling with a deadline on something observable; the
# short sleeps in `poll` only pace the polling.
set -u

daoctl=${DAOCTL:-build/bin/daoctl}
pubjob=${DAO_PUBJOB:-build/rel/tests/daoctl/dao-pubjob}
cholesky=${DAO_CHOLESKY:-build/bin/dao-cholesky}
daoctl_abs=$(readlink -f "$daoctl")
tmp=$(mktemp -d)
uid=$(id -u)
tmux_sock=daoctl-test-$$
top_runs=0
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for i in $(seq 1 "$top_runs"); do tmux -L "$tmux_sock.$i" kill-server 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../tap.sh"

skip() {
	n_test=$((n_test + 1))
	echo "ok $n_test # skip $1"
}

is1() { [ "$1" = 1 ]; echo $?; }

# poll SECONDS COMMAND...: true once COMMAND succeeds, false at the deadline.
poll() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
	return 0
}

has_line() { [ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; }
segments_of() { ls /dev/shm/dao."$uid"."$1".* 2>/dev/null; }
has_segment() { [ -n "$(segments_of "$1")" ]; }

# start_job NAME ARGS...: a pubjob reading its stdin from a fifo we hold
# open on a file descriptor stored in fd_NAME; its pid in pid_NAME.
start_job() {
	local name=$1
	shift
	mkfifo "$tmp/$name.in"
	DAO_JOB=$name "$pubjob" "$@" <"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	eval "pid_$name=$!"
	pids+=($!)
	exec {fd}>"$tmp/$name.in"
	eval "fd_$name=$fd"
}

module_loaded() { [ -d /sys/module/dao ]; }

# ---------------------------------------------------------------- usage
"$daoctl" --help >"$tmp/help" 2>&1
rc=$?
grep -q 'status' "$tmp/help" && grep -q 'show PID' "$tmp/help" && grep -q 'limit' "$tmp/help" &&
	grep -q 'top' "$tmp/help" && grep -q -- '--prometheus' "$tmp/help"
ok $(( rc + $? )) "--help documents every command and exits 0"

# refuse NAME ARGS...: exit status 2, a reason on stderr, nothing on stdout.
refuse() {
	local what=$1
	shift
	"$daoctl" "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	local rc=$?
	[ $rc -eq 2 ] && [ ! -s "$tmp/r.out" ] && grep -q '^daoctl: ' "$tmp/r.err"
	ok $? "$what is refused with status 2 and a reason (got $rc: $(head -1 "$tmp/r.err"))"
}
refuse "no command"
refuse "an unknown command" frobnicate
refuse "an unknown option" ps --bogus
refuse "show without a pid" show
refuse "show with a pid that is not a number" show 12x
refuse "show with pid 0" show 0
refuse "show with two pids" show 1 2
refuse "--sort with an unknown key" show 1 --sort bogus
refuse "--sort on ps" ps --sort size
refuse "--json with --prometheus" ps --json --prometheus
refuse "--prometheus on show" show 1 --prometheus
refuse "--json on top" top --json
refuse "an argument to ps" ps extra
refuse "a limit that is not a size" limit lots
refuse "a limit that is not whole MiB" limit 1000
refuse "two limits" limit 1G 2G

"$daoctl" top </dev/null >"$tmp/top.out" 2>"$tmp/top.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'needs a terminal' "$tmp/top.err"
ok $? "top without a terminal fails with status 1 and says why"

# The documentation covers what the tool does.
man_page=$(dirname "$0")/../../Documentation/daoctl.1
doc=$(dirname "$0")/../../Documentation/daoctl.md
if command -v man >/dev/null; then
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$man_page" 2>&1 >/dev/null)
	[ -z "$warn" ] && LC_ALL=C.UTF-8 man -l "$man_page" 2>/dev/null | grep -q 'EXIT STATUS'
	ok $? "the man page renders without warnings${warn:+: $warn}"
else
	skip "man is not installed"
fi

# ------------------------------------------------------- module absent
if module_loaded; then
	skip "the dao module is loaded on this host: module-absent checks belong to make kcheck"
	skip "module absent: limit"
	skip "module absent: status --json"
else
	"$daoctl" status >"$tmp/st.out" 2>&1
	rc=$?
	grep -q '^module: *not loaded' "$tmp/st.out"
	ok $(( rc + $? )) "status works without the module and says it is not loaded"
	"$daoctl" limit >"$tmp/lim.out" 2>"$tmp/lim.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q 'not loaded' "$tmp/lim.err"
	ok $? "limit without the module fails with status 1 and says why"
	"$daoctl" status --json >"$tmp/st.json"
	ok $(is1 "$(json "$tmp/st.json" '$j->{schema} eq "daoctl/1" && !$j->{module}{loaded}')") \
		"status --json: schema daoctl/1, module not loaded"
fi

# ------------------------------------------ a held job against its report
# 10 buffers of 32K..320K (1.72 MiB in all) under a 640K budget.
start_job held --buffers 10 --size 32K --budget 640K --kernels 300 --hold
poll 30 has_line "$tmp/held.out"
ok $? "the held job ran its kernels and reported"
"$daoctl" ps --json >"$tmp/ps.json"
ok $? "ps --json exits 0"
"$daoctl" show "$pid_held" --json >"$tmp/show.json"
ok $? "show PID --json exits 0"

fields='h2d_bytes d2h_bytes fetches prefetches writebacks evictions drops stalls stall_ns kernels
	device_bytes peak_device_bytes host_bytes live_buffers budget_bytes host_budget_bytes'
for f in $fields; do
	r=$(json "$tmp/ps.json" "my (\$p) = grep { \$_->{pid} == $pid_held } @{\$j->{processes}};
		\$p && \$p->{$f} == \$k->{stats}{$f}" "$tmp/held.out")
	ok $(is1 "$r") "ps --json: $f equals the job's own dao_stats"
done
ok $(is1 "$(json "$tmp/ps.json" "my (\$p) = grep { \$_->{pid} == $pid_held } @{\$j->{processes}};
	\$p->{job} eq 'held' && \$p->{backend} eq 'host' && \$p->{devices} == 1 && \$p->{uid} == $uid")") \
	"ps --json: job name from DAO_JOB, backend, one device, the uid"
undocumented=$(perl -MJSON::PP -e 'local $/; open(my $f, "<", $ARGV[0]) or die;
	my $j = decode_json(<$f>); open(my $d, "<", $ARGV[1]) or die; my $doc = <$d>;
	my %k = map { %$_ } @{$j->{processes}}; print join " ", grep { $doc !~ /`\Q$_\E`/ } sort keys %k' \
	"$tmp/ps.json" "$doc")
[ -z "$undocumented" ]
ok $? "Documentation/daoctl.md documents every member of ps --json${undocumented:+ (missing: $undocumented)}"
ok $(is1 "$(json "$tmp/held.out" '$j->{stats}{evictions} > 0')") \
	"the budget forced evictions (the comparisons above mean something)"

# An older libdao (layout 1, no slurm_job_id; layout 2, no policy in the
# summary) still running beside a new daoctl: made from the held job's
# segment by cutting the appended words out of its header (the 8 bytes at
# 184, layout 1 only) and out of its summary (the policy, the last of the
# summary area's 176 bytes at 192), as serial 99 and 98 of the same (live)
# process.
held_seg=$(ls /dev/shm/dao."$uid"."$pid_held".* | grep -v '\.9[89]$' | head -1)
older() {
	perl -e 'my ($layout, $serial) = @ARGV[2, 3]; local $/; open(my $f, "<", $ARGV[0]) or die;
	my $s = <$f>; my $hb = $layout == 1 ? 184 : 192; my $cut = 192 - $hb + 8;
	my $h = substr($s, 0, $hb); my $sum = substr($s, 192, 168); my $rest = substr($s, 192 + 176);
	substr($h, 8, 4) = pack("L<", $layout);                               # version
	substr($h, 16, 8) = pack("Q<", unpack("Q<", substr($h, 16, 8)) - $cut); # total_bytes
	substr($h, 24, 8) = pack("Q<", $hb);                                  # summary_off
	substr($h, 32, 8) = pack("Q<", unpack("Q<", substr($h, 32, 8)) - $cut); # table_off
	substr($h, 64, 4) = pack("L<", $serial);                              # serial
	umask 077; open(my $o, ">", $ARGV[1]) or die; print $o $h . $sum . $rest; close $o or die' \
		"$held_seg" "$2" "$1" "$3"
}
v1=/dev/shm/dao.$uid.$pid_held.99
v2=/dev/shm/dao.$uid.$pid_held.98
older 1 "$v1" 99
older 2 "$v2" 98
"$daoctl" show "$pid_held" --json >"$tmp/show-v1.json"
ok $(is1 "$(json "$tmp/show-v1.json" '$j->{process}{devices} == 3 &&
	(grep { $_->{serial} == 99 && $_->{kernels} > 0 } @{$j->{devices}}) == 1 &&
	(grep { $_->{serial} == 98 && $_->{kernels} > 0 && $_->{policy} eq "dao" } @{$j->{devices}}) == 1 &&
	!defined $j->{process}{slurm_job_id}')") \
	"layout-1 and layout-2 segments are read beside a layout-3 one (no Slurm job id, the header's policy)"
rm -f "$v1" "$v2"
# The summary's policy word is the job's to write: one that names no policy
# (99), or names one only in its low 32 bits (2^32 + 3, lru), leaves the
# header's name. The word is the summary area's last (at 192 + 8 + 160).
bogus() {
	perl -e 'local $/; open(my $f, "<", $ARGV[0]) or die; my $s = <$f>;
	substr($s, 360, 8) = pack("Q<", $ARGV[2]); substr($s, 64, 4) = pack("L<", $ARGV[3]);
	umask 077; open(my $o, ">", $ARGV[1]) or die; print $o $s; close $o or die' \
		"$held_seg" "$1" "$2" "$3"
}
b1=/dev/shm/dao.$uid.$pid_held.97
b2=/dev/shm/dao.$uid.$pid_held.96
bogus "$b1" 99 97
bogus "$b2" $(( (1 << 32) + 3 )) 96
"$daoctl" show "$pid_held" --json >"$tmp/show-bogus.json"
ok $(is1 "$(json "$tmp/show-bogus.json" '(grep { ($_->{serial} == 97 || $_->{serial} == 96) &&
	$_->{policy} eq "dao" } @{$j->{devices}}) == 2')") \
	"a summary policy word that names no policy, or only in its low bits, leaves the header's name"
rm -f "$b1" "$b2"
ok $(is1 "$(json "$tmp/show.json" '$j->{process}{kernels} == $k->{stats}{kernels} &&
	$j->{devices}[0]{kernels} == $k->{stats}{kernels}' "$tmp/held.out")") \
	"show --json: process and device summaries equal the job's"
ok $(is1 "$(json "$tmp/show.json" 'my @b = @{$j->{devices}[0]{buffers}};
	my %want = map { $_->{label} => $_->{size} } @{$k->{buffers}};
	@b == keys(%want) && !grep { !exists $want{$_->{label}} || $want{$_->{label}} != $_->{size} } @b' \
	"$tmp/held.out")") "show --json: every buffer with the label and size the job gave it"
ok $(is1 "$(json "$tmp/show.json" 'my @b = @{$j->{devices}[0]{buffers}};
	!grep { $b[$_]{size} < $b[$_ + 1]{size} } 0 .. $#b - 1')") "show --json: largest first"
ok $(is1 "$(json "$tmp/show.json" 'my @b = @{$j->{devices}[0]{buffers}};
	!grep { $_->{location} !~ /^(device|host|both|nowhere)$/ || ($_->{dirty} && $_->{location} ne "device") } @b')") \
	"show --json: locations are device/host/both/nowhere; dirty ones are on the device only"
ok $(is1 "$(json "$tmp/show.json" 'my ($d, $s) = (0, 0); for (@{$j->{devices}[0]{buffers}}) {
	$d += $_->{size} if $_->{location} =~ /device|both/ } $d <= $j->{process}{device_bytes}')") \
	"show --json: bytes shown on the device fit in its device bytes"
ok $(is1 "$(json "$tmp/show.json" '!grep { defined $_->{next_use} || !defined $_->{since_last} }
	@{$j->{devices}[0]{buffers}}')") "show --json: after the sync no next use, a last use for each"
for key in next last; do
	"$daoctl" show "$pid_held" --json --sort $key >"$tmp/sort.json"
	member=$([ $key = next ] && echo next_use || echo since_last)
	ok $(is1 "$(json "$tmp/sort.json" "my @b = @{\$j->{devices}[0]{buffers}};
		my \$big = 2**64; !grep { (\$b[\$_]{$member} // \$big) > (\$b[\$_ + 1]{$member} // \$big) } 0 .. \$#b - 1")") \
		"show --sort $key orders by $member, none last"
done
"$daoctl" ps >"$tmp/ps.txt"
grep -Eq "^ *$pid_held +- +held +host " "$tmp/ps.txt"
ok $? "ps shows the job on a line of its own"
"$daoctl" show "$pid_held" >"$tmp/show.txt"
grep -q "job held" "$tmp/show.txt" && grep -Eq '^ +[0-9]+ +buf9 ' "$tmp/show.txt"
ok $? "show lists the job's buffers"

"$daoctl" show $$ >"$tmp/none.out" 2>"$tmp/none.err"
rc=$?
[ $rc -eq 1 ] && grep -q "no dao process with pid $$" "$tmp/none.err"
ok $? "show of a process without dao fails with status 1 and says so"

# A user sees only their own processes.
if [ "$uid" -eq 0 ] && id nobody >/dev/null 2>&1; then
	(cd / && runuser -u nobody -- "$daoctl_abs" ps --json) >"$tmp/nobody.json" 2>"$tmp/nobody.err"
	rc=$?
	ok $(( rc + $(is1 "$(json "$tmp/nobody.json" "!grep { \$_->{pid} == $pid_held } @{\$j->{processes}}")") )) \
		"another user does not see root's job"
	has_segment "$pid_held"
	ok $? "and leaves its segment alone"
else
	skip "not root: cannot run daoctl as another user"
	skip "not root"
fi

# The held job chose no policy and marks no iterations: dao. One that marks
# them and evicts takes plan at a mark, after its header was written: the
# summary's policy (layout 3) names it.
ok $(is1 "$(json "$tmp/show.json" '$j->{process}{policy} eq "dao" && $j->{devices}[0]{policy} eq "dao"')") \
	"show --json: a job that chose no policy and marks no iterations runs dao"
start_job iter --buffers 10 --size 32K --budget 640K --kernels 300 --iterate 50 --hold
poll 30 has_line "$tmp/iter.out"
"$daoctl" show "$pid_iter" --json >"$tmp/iter.json"
[ "$(json "$tmp/iter.json" '$j->{process}{policy} eq "plan" && $j->{devices}[0]{policy} eq "plan"')$(
	json "$tmp/iter.out" '$j->{stats}{evictions} > 0')" = 11 ]
ok $? "show --json: one that marks iterations and evicts runs plan, as the summary says"
"$daoctl" show "$pid_iter" >"$tmp/iter.txt"
grep -q "policy plan" "$tmp/iter.txt"
ok $? "show: so does the text view"
eval "exec $fd_iter>&-"
wait "$pid_iter"
ok $? "the iterating job closed cleanly"

eval "exec $fd_held>&-"
wait "$pid_held"
ok $? "the held job closed cleanly"
! has_segment "$pid_held"
ok $? "closing removed the job's segment"
"$daoctl" ps --json >"$tmp/ps2.json"
ok $(is1 "$(json "$tmp/ps2.json" "!grep { \$_->{pid} == $pid_held } @{\$j->{processes}}")") \
	"ps no longer lists the job"

# -------------------------------------------------------- stale segments
start_job killed --buffers 4 --size 16K --kernels 10 --hold
# Out of the job table: bash still reaps it, without a "Killed" notice.
disown "$pid_killed"
poll 30 has_line "$tmp/killed.out"
seg=$(segments_of "$pid_killed")
# A copy claiming the same live pid but another start time: a reused pid.
forged=${seg%.*}.$(( ${seg##*.} + 100 ))
perl -e '
	open(my $in, "<:raw", $ARGV[0]) or die; local $/; my $d = <$in>;
	my $st = unpack("Q<", substr($d, 48, 8)); substr($d, 48, 8) = pack("Q<", $st + 1);
	substr($d, 64, 4) = pack("L<", unpack("L<", substr($d, 64, 4)) + 100);
	open(my $out, ">:raw", $ARGV[1]) or die; print $out $d;' "$seg" "$forged"
chmod 600 "$forged"
"$daoctl" status --json >"$tmp/stale1.json"
[ ! -e "$forged" ] && [ -e "$seg" ]
ok $? "a segment whose start time is not its pid's is removed, the real one kept"
kill -9 "$pid_killed"
gone() { ! kill -0 "$pid_killed" 2>/dev/null; }
poll 30 gone
[ -e "$seg" ]
ok $? "a killed job leaves its segment behind"
"$daoctl" status --json >"$tmp/stale2.json"
[ ! -e "$seg" ]
ok $? "daoctl removes the killed job's segment"
ok $(is1 "$(json "$tmp/stale2.json" '$j->{stale_removed} >= 1')") "status --json counts the removal"
"$daoctl" ps --json >"$tmp/ps3.json"
ok $(is1 "$(json "$tmp/ps3.json" "!grep { \$_->{pid} == $pid_killed } @{\$j->{processes}}")") \
	"ps does not list the killed job"

# ------------------------------------------------------ the Cholesky job
if [ -x "$cholesky" ]; then
	DAO_JOB=cholesky "$cholesky" --n 4096 --tile 256 --budget 25% --json \
		>"$tmp/chol.json" 2>"$tmp/chol.err" &
	pid_chol=$!
	pids+=($pid_chol)
	seen=0
	: >"$tmp/chol.seen"
	while kill -0 "$pid_chol" 2>/dev/null; do
		"$daoctl" ps --json >"$tmp/cps.json" 2>/dev/null || continue
		r=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
			my ($p) = grep { $_->{pid} == $ARGV[0] } @{$j->{processes}};
			print $p ? encode_json($p) : "";' "$pid_chol" <"$tmp/cps.json")
		[ -n "$r" ] && echo "$r" >>"$tmp/chol.seen" && seen=$((seen + 1))
	done
	wait "$pid_chol"
	rc=$?
	ok $rc "the Cholesky job factored correctly under a quarter of its matrix"
	tap_diag=$(wc -l <"$tmp/chol.seen")
	echo "# daoctl saw the Cholesky job $tap_diag times"
	[ "$seen" -gt 0 ]
	ok $? "ps --json listed the running Cholesky job"
	r=$(perl -MJSON::PP -e '
		local $/; open(my $f, "<", $ARGV[0]) or die; my $fin = decode_json(<$f>);
		open(my $s, "<", $ARGV[1]) or die; my @obs = map { decode_json($_) } split /\n/, <$s>;
		# DAO_JOB names the job unless the program configures a name itself.
		my $bad = grep { $_->{job} !~ /^(cholesky|dao-cholesky)$/ || $_->{backend} ne $fin->{backend} ||
			$_->{budget_bytes} != $fin->{budget_bytes} ||
			$_->{device_bytes} > $fin->{budget_bytes} ||
			$_->{peak_device_bytes} > $fin->{peak_device_bytes} ||
			$_->{kernels} > $fin->{kernels} || $_->{h2d_bytes} > $fin->{h2d_bytes} ||
			$_->{d2h_bytes} > $fin->{d2h_bytes} || $_->{evictions} > $fin->{evictions} } @obs;
		my $back = grep { $obs[$_]{kernels} > $obs[$_ + 1]{kernels} } 0 .. $#obs - 1;
		print @obs && !$bad && !$back ? 1 : 0;' "$tmp/chol.json" "$tmp/chol.seen")
	ok $(is1 "$r") "every view of the Cholesky job agrees with its final report (name, backend, budget, bounds, growth)"
	! has_segment "$pid_chol"
	ok $? "the Cholesky job removed its segment at exit"
else
	for i in 1 2 3 4; do skip "$cholesky not built"; done
fi

# -------------------------------------------------------- top under tmux
start_job busy --buffers 6 --size 16K --budget 192K --forever
poll 30 has_segment "$pid_busy"
ok $? "a busy job publishes"
# top_run KEY: top in a tmux pane (tall: other jobs on the node may come
# first), the terminal settings saved around it;
# KEY ends it. Leaves the last screen in $tmp/screen.
top_run() {
	local key=$1 ok_screen=1 sock
	# A server of its own each time: the last one may still be exiting.
	top_runs=$((top_runs + 1))
	sock=$tmux_sock.$top_runs
	rm -f "$tmp/top.rc" "$tmp/stty.before" "$tmp/stty.after"
	tmux -L "$sock" new-session -d -x 150 -y 120 \
		"stty -g >'$tmp/stty.before'; '$daoctl_abs' top; echo \$? >'$tmp/top.rc.tmp'; stty -g >'$tmp/stty.after'; mv '$tmp/top.rc.tmp' '$tmp/top.rc'"
	screen_ready() {
		tmux -L "$sock" capture-pane -p >"$tmp/screen" 2>/dev/null &&
			grep -q 'daoctl top' "$tmp/screen" &&
			grep -Eq "^ *$pid_busy +busy +host .* [0-9.]+[kMG]? +[0-9.]+[KMG]?B? " "$tmp/screen" &&
			! grep -Eq "^ *$pid_busy .* - +- +- +- *$" "$tmp/screen"
	}
	poll 30 screen_ready && ok_screen=0
	[ $ok_screen -eq 0 ] || sed 's/^/# screen: /' "$tmp/screen"
	tmux -L "$sock" send-keys "$key"
	poll 30 test -e "$tmp/top.rc"
	TOP_SCREEN=$ok_screen
}
top_run q
ok $TOP_SCREEN "top shows the busy job with rates per second"
cp "$tmp/screen" "$tmp/screen.q"
[ "$(cat "$tmp/top.rc" 2>/dev/null)" = 0 ]
ok $? "top quits on q with status 0"
cmp -s "$tmp/stty.before" "$tmp/stty.after"
ok $? "top restored the terminal settings after q"
top_run C-c
ok $TOP_SCREEN "top shows the busy job again"
[ "$(cat "$tmp/top.rc" 2>/dev/null)" = 0 ]
ok $? "top quits on Ctrl-C with status 0"
cmp -s "$tmp/stty.before" "$tmp/stty.after"
ok $? "top restored the terminal settings after Ctrl-C"

# --------------------------------------------------- node_exporter scrape
exporter=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$exporter" ]; then
	mkdir -p "$tmp/textfile"
	# Written then renamed, as the textfile collector asks.
	"$daoctl" ps --prometheus >"$tmp/textfile/dao-ps.prom.tmp" &&
		mv "$tmp/textfile/dao-ps.prom.tmp" "$tmp/textfile/dao-ps.prom"
	rc1=$?
	"$daoctl" status --prometheus >"$tmp/textfile/dao-status.prom.tmp" &&
		mv "$tmp/textfile/dao-status.prom.tmp" "$tmp/textfile/dao-status.prom"
	ok $(( rc1 + $? )) "ps and status write Prometheus text"
	port=
	for try in 1 2 3 4 5; do
		p=$(( 20000 + (RANDOM % 20000) ))
		"$exporter" --web.listen-address="127.0.0.1:$p" --collector.disable-defaults \
			--collector.textfile --collector.textfile.directory="$tmp/textfile" \
			>"$tmp/exporter.log" 2>&1 &
		ex_pid=$!
		pids+=($ex_pid)
		scraped() { curl -sf "http://127.0.0.1:$p/metrics" >"$tmp/metrics" 2>/dev/null; }
		alive() { kill -0 "$ex_pid" 2>/dev/null; }
		ready() { scraped || ! alive; }
		poll 20 ready
		if alive && scraped; then port=$p; break; fi
		kill "$ex_pid" 2>/dev/null
		wait "$ex_pid" 2>/dev/null
	done
	[ -n "$port" ]
	ok $? "node_exporter serves on loopback with the textfile directory"
	grep -Eq "^dao_process_device_bytes\{.*pid=\"$pid_busy\".*\} [0-9]+" "$tmp/metrics" &&
		grep -Eq "^dao_process_kernels_total\{.*job=\"busy\".*\} [0-9]+" "$tmp/metrics" &&
		grep -Eq '^dao_module_loaded [01]' "$tmp/metrics" && grep -Eq '^dao_processes [0-9]+' "$tmp/metrics"
	ok $? "the scrape carries the dao metrics"
	! grep -Eq '^node_textfile_scrape_error 1' "$tmp/metrics"
	ok $? "node_exporter parsed the files without error"
	kill "$ex_pid" 2>/dev/null
	wait "$ex_pid" 2>/dev/null
else
	for i in 1 2 3 4; do skip "prometheus-node-exporter not installed"; done
fi

kill -TERM "$pid_busy"
wait "$pid_busy"
ok $? "the busy job stops cleanly on SIGTERM"
eval "exec $fd_busy>&-"
eval "exec $fd_killed>&-"

tap_done
