#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# um-analyze.pl - what the driver did to managed memory that libdao did not
# ask for. Matches the driver's unified-memory records (CUPTI's, as
# libdao-umtrace.so writes them, or the CUDA runtime model's) by address and
# time against libdao's own log of what it asked for (DAO_CUDA_REQUEST_LOG),
# and prints one JSON object: the migrations libdao asked for, by call and
# cause; those it did not, by direction and cause, with bytes; the CPU
# faults inside and outside dao_write/dao_read, by what libdao last did to
# the page; GPU faults; and which of the readings of Documentation/cuda.md
# ("Experiments") the figures support.
#
# usage: um-analyze.pl --log FILE [--log FILE ...] --records FILE
#                      [--summary FILE] [--tolerance-us N]
#
# Matching, per 64 KiB granule (libdao's unit on cuda-managed): a request
# of libdao's (a prefetch or a discard, to the device or to the host) is
# pending from the time it was issued until a migration of that granule in
# its direction consumes it (at most the bytes it covers there), until
# libdao saw its engine's work done past it (the log's "done" lines), or
# until a request issued after it has been met in the other direction
# (libdao orders the requests of one buffer, so the earlier one ran). A
# migration explains itself by the oldest pending request in its direction
# issued no later than its start (plus the tolerance, for the two clocks'
# offset); one without is a migration libdao did not ask for. Whether a
# prefetch or a discard caused it is certain only when every such pending
# request is of one kind (a request that moves nothing, a prefetch of a
# page already there or perhaps a discard, leaves no record): the bytes of
# migrations of another cause than "user" are told by that
# (other_cause_bytes: discard, prefetch, either, not_asked). A CPU fault is
# libdao's when a dao_write or dao_read was touching that address then.
#
# Exit status: 0, or 2 for bad arguments or a malformed input (said on
# stderr).
use strict;
use warnings;
no warnings 'portable'; # addresses are 64-bit
use Getopt::Long;
use JSON::PP;

my $GRANULE = 64 << 10;
my (@logs, $records, $summary);
my $tol_us = 100;
GetOptions('log=s' => \@logs, 'records=s' => \$records, 'summary=s' => \$summary,
	   'tolerance-us=i' => \$tol_us)
	&& @logs && defined $records && $tol_us >= 0 && !@ARGV
	or usage();
my $tol = $tol_us * 1000;

sub usage {
	print STDERR "usage: um-analyze.pl --log FILE [--log FILE ...] --records FILE "
		. "[--summary FILE] [--tolerance-us N]\n";
	exit 2;
}

sub bad {
	my ($file, $line, $why) = @_;
	print STDERR "um-analyze: $file:$line: $why\n";
	exit 2;
}

# ------------------------------------------------------------ the request log
my %move_call = ('prefetch-device' => 'device', 'prefetch-host' => 'host',
		 'discard-device' => 'device', 'discard-host' => 'host');
my %other_call = map { $_ => 1 } qw(memcpy-h2d memcpy-d2h);
my %why = map { $_ => 1 } qw(fetch prefetch evict write-back output dead host free);
my (@req, @windows, @chunks, @fresh, %open_window, %backends, %requested, %done);

for my $file (@logs) {
	open(my $f, '<', $file) or bad($file, 0, "cannot read: $!");
	my $n = 0;
	while (my $l = <$f>) {
		$n++;
		chomp $l;
		if ($l =~ /^# dao-cuda-request-log 1 id=(\d+) backend=(\S+) pid=(\d+) clock=monotonic switches=(\S+)$/) {
			$backends{"$3/$1"} = { backend => $2, switches => $4 };
			next;
		}
		if ($l =~ /^(\d+) (\d+) (h2d|d2h) done (\d+)$/) {
			push @{ $done{"$2 $3"} }, [$1, $4];
			next;
		}
		my ($t, $id, $engine, $call, $why, $addr, $bytes, $seq) =
			$l =~ /^(\d+) (\d+) (\S+) (\S+) (\S+) 0x([0-9a-f]+) (\d+)(?: (\d+))?$/
			or bad($file, $n, "not a request-log line: '$l'");
		$addr = hex $addr;
		$call =~ /^(chunk-\S+|host-(write|read)(-done)?)$/ || $move_call{$call} || $other_call{$call}
			or bad($file, $n, "unknown call '$call'");
		(defined $seq) == (exists $move_call{$call} || exists $other_call{$call})
			or bad($file, $n, "'$call' with" . (defined $seq ? '' : 'out') . ' a sequence number');
		if ($call =~ /^chunk-(\S+)$/) {
			push @chunks, [$addr, $addr + $bytes, $1];
			push @fresh, { t => $t, lo => $addr, hi => $addr + $bytes };
		} elsif ($call =~ /^host-(write|read)(-done)?$/) {
			my $key = "$id $1 $addr $bytes";
			if (!$2) {
				$open_window{$key} = $t;
			} else {
				defined(my $begin = delete $open_window{$key})
					or bad($file, $n, "$call without its start");
				push @windows, [$addr, $addr + $bytes, $begin, $t, $1];
			}
		} elsif ($move_call{$call} || $other_call{$call}) {
			$why{$why} or bad($file, $n, "unknown reason '$why'");
			$requested{$call}{$why}{count}++;
			$requested{$call}{$why}{bytes} += $bytes;
			push @req, { t => $t, call => $call, why => $why, to => $move_call{$call},
				     lo => $addr, hi => $addr + $bytes, key => "$id $engine",
				     seq => $seq }
				if $move_call{$call};
		} else {
			bad($file, $n, "unknown call '$call'");
		}
	}
	close $f;
}

# ------------------------------------------------------------ the records
my %kinds = map { $_ => 1 } qw(htod dtoh cpu-fault gpu-fault remote-map thrashing throttling dtod);
my (@rec, %records_head);
{
	open(my $f, '<', $records) or bad($records, 0, "cannot read: $!");
	my $n = 0;
	while (my $l = <$f>) {
		$n++;
		chomp $l;
		if ($n == 1) {
			$l =~ /^# dao-umtrace-records 1 clock=monotonic source=(\S+) dropped=(\d+)$/
				or bad($records, $n, "not a dao-umtrace-records 1 header");
			%records_head = (source => $1, dropped => $2 + 0);
			next;
		}
		my ($kind, $start, $end, $addr, $value, $cause) =
			$l =~ /^(\S+) (\d+) (\d+) 0x([0-9a-f]+) (\d+) (\S+)$/
			or bad($records, $n, "not a record: '$l'");
		$kinds{$kind} or bad($records, $n, "unknown kind '$kind'");
		push @rec, { kind => $kind, t => $start + 0, end => $end + 0, lo => hex $addr,
			     value => $value + 0, cause => $cause };
	}
	close $f;
	$n or bad($records, 0, "empty");
}

# When libdao first saw each request's work done (never: far in the future).
for my $r (@req) {
	my $d = $done{ $r->{key} } || [];
	my ($lo, $hi) = (0, scalar @$d);
	while ($lo < $hi) {
		my $mid = int(($lo + $hi) / 2);
		if ($d->[$mid][1] >= $r->{seq}) { $hi = $mid } else { $lo = $mid + 1 }
	}
	$r->{done} = $lo < @$d ? $d->[$lo][0] : 9**20;
}

sub granules {
	my ($lo, $hi) = @_;
	my @g;
	for (my $g = int($lo / $GRANULE); $g * $GRANULE < $hi; $g++) {
		my $a = $g * $GRANULE > $lo ? $g * $GRANULE : $lo;
		my $b = ($g + 1) * $GRANULE < $hi ? ($g + 1) * $GRANULE : $hi;
		push @g, [$g, $b - $a];
	}
	return @g;
}

sub libdao_memory {
	my ($a) = @_;
	for my $c (@chunks) {
		return 1 if $a >= $c->[0] && $a < $c->[1];
	}
	return 0;
}

# dao_write/dao_read windows by granule.
my %win_of;
for my $w (@windows) {
	push @{ $win_of{$_->[0]} }, $w for granules($w->[0], $w->[1]);
}
sub in_window {
	my ($a, $t) = @_;
	for my $w (@{ $win_of{int($a / $GRANULE)} || [] }) {
		return $w->[4] if $a >= $w->[0] && $a < $w->[1] && $t >= $w->[2] - $tol
			&& $t <= $w->[3] + $tol;
	}
	return undef;
}

# ------------------------------------------------------------ one timeline
# Requests and new chunks (memory a closed backend gave back may come
# again at the same address) enter at their time less the tolerance,
# records at their start; at equal times chunks, then requests.
my @events = ((map { [$_->{t} - $tol, -1, $_] } @fresh), (map { [$_->{t} - $tol, 0, $_] } @req),
	      (map { [$_->{t}, 1, $_] } @rec));
@events = sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @events;

# Per granule: the pending requests by direction; every request so far.
my (%pending, %history);
my (%asked, %unasked, %cpu, %gpu, %remote, %other, %throughput);
my ($within_tol, $other_cause_bytes) = (0, 0);
my %tally_zero = (count => 0, bytes => 0);

# What libdao last asked of granule g before time t (not within the
# tolerance after it: that is what a record's start cannot precede).
sub state_of {
	my ($g, $t) = @_;
	my $h = $history{$g} || [];
	my $i = $#$h;
	$i-- while $i >= 0 && $h->[$i]{t} > $t;
	return 'never-moved' if $i < 0;
	my $r = $h->[$i];
	return {
		'discard-host' => 'after-discard-to-host', 'prefetch-host' => 'after-prefetch-to-host',
		'discard-device' => 'left-on-device', 'prefetch-device' => 'left-on-device',
	}->{$r->{call}};
}

# Which kinds of call the pending requests issued by t are: discard,
# prefetch or either.
sub candidates {
	my ($q, $t) = @_;
	my %k;
	for my $p (@$q) {
		last if $p->{r}{t} > $t;
		$k{ $p->{r}{call} =~ /^discard/ ? 'discard' : 'prefetch' } = 1 if $p->{left} > 0;
	}
	return keys %k == 1 ? (keys %k)[0] : 'either';
}

sub add {
	my ($h, $bytes) = @_;
	$h->{count}++;
	$h->{bytes} += $bytes;
}

for my $e (@events) {
	my $x = $e->[2];
	if ($e->[1] < 0) {
		for my $gb (granules($x->{lo}, $x->{hi})) {
			delete $pending{ $gb->[0] };
			delete $history{ $gb->[0] };
		}
		next;
	}
	if ($e->[1] == 0) {
		for my $gb (granules($x->{lo}, $x->{hi})) {
			push @{ $pending{$gb->[0]}{ $x->{to} } }, { r => $x, left => $gb->[1] };
			push @{ $history{ $gb->[0] } }, $x;
		}
		next;
	}
	my $k = $x->{kind};
	if ($k eq 'htod' || $k eq 'dtoh') {
		my $to = $k eq 'htod' ? 'device' : 'host';
		my $away = $k eq 'htod' ? 'host' : 'device';
		$other_cause_bytes += $x->{value} if $x->{cause} ne 'user';
		$throughput{$k}{bytes} += $x->{value};
		push @{ $throughput{$k}{spans} }, [$x->{t}, $x->{end}];
		for my $gb (granules($x->{lo}, $x->{lo} + $x->{value})) {
			my ($g, $bytes) = @$gb;
			my $q = $pending{$g}{$to} ||= [];
			# Spent, or done before this began: no longer pending.
			@$q = grep { $_->{left} > 0 && $_->{r}{done} + $tol >= $x->{t} } @$q;
			my $p = $q->[0];
			if ($p && $p->{r}{t} <= $x->{t} + $tol) {
				add($other{ candidates($q, $x->{t} + $tol) } ||= {%tally_zero}, $bytes)
					if $x->{cause} ne 'user';
				$p->{left} -= $bytes;
				$within_tol++ if $p->{r}{t} > $x->{t};
				add($asked{$k}{ $p->{r}{call} }{ $x->{cause} } ||= {%tally_zero}, $bytes);
				# What libdao asked earlier the other way has run.
				my $o = $pending{$g}{$away} ||= [];
				shift @$o while @$o && $o->[0]{r}{t} < $p->{r}{t};
			} else {
				my $at = $g * $GRANULE > $x->{lo} ? $g * $GRANULE : $x->{lo};
				my $where = !libdao_memory($at) ? 'foreign'
					: in_window($at, $x->{t}) ? 'in-host-access'
					: state_of($g, $x->{t});
				add($unasked{$k}{ $x->{cause} }{total} ||= {%tally_zero}, $bytes);
				add($unasked{$k}{ $x->{cause} }{$where} ||= {%tally_zero}, $bytes);
				add($other{unasked} ||= {%tally_zero}, $bytes) if $x->{cause} ne 'user';
			}
		}
	} elsif ($k eq 'cpu-fault') {
		my $g = int($x->{lo} / $GRANULE);
		my $win = in_window($x->{lo}, $x->{t});
		my $where = !libdao_memory($x->{lo}) ? 'foreign'
			: $win ? "in-host-$win" : 'outside-host-access';
		$cpu{total}++;
		$cpu{$where}{total}++;
		$cpu{$where}{ state_of($g, $x->{t}) }++ unless $where eq 'foreign';
	} elsif ($k eq 'gpu-fault') {
		$gpu{total}++;
		$gpu{ libdao_memory($x->{lo}) ? state_of(int($x->{lo} / $GRANULE), $x->{t}) : 'foreign' }++;
	} elsif ($k eq 'remote-map') {
		add($remote{ $x->{cause} } ||= {%tally_zero}, $x->{value});
	} else {
		add($remote{$k} ||= {%tally_zero}, $x->{value});
	}
}

# Busy time of each direction: the union of its records' spans.
for my $k (keys %throughput) {
	my ($busy, $till) = (0, -1);
	for my $s (sort { $a->[0] <=> $b->[0] } @{ $throughput{$k}{spans} }) {
		my ($a, $b) = @$s;
		$a = $till if $a < $till;
		$busy += $b - $a if $b > $a;
		$till = $b if $b > $till;
	}
	delete $throughput{$k}{spans};
	$throughput{$k}{busy_s} = $busy / 1e9;
	$throughput{$k}{gb_per_s} = $busy ? $throughput{$k}{bytes} / $busy : undef;
}

# ------------------------------------------------------------ the readings
sub bytes_of { my ($h) = @_; return $h ? $h->{bytes} : 0 }
my $unasked_bytes = 0;
my $unasked_count = 0;
my %behind = (count => 0, bytes => 0);
my %driver = (count => 0, bytes => 0);
for my $k (keys %unasked) {
	for my $c (keys %{ $unasked{$k} }) {
		my $u = $unasked{$k}{$c};
		$unasked_bytes += $u->{total}{bytes};
		$unasked_count += $u->{total}{count};
		for my $where (keys %$u) {
			next if $where eq 'total' || $where eq 'foreign';
			my $to = $c eq 'coherence' ? \%behind : \%driver;
			$to->{count} += $u->{$where}{count};
			$to->{bytes} += $u->{$where}{bytes};
		}
	}
}
my $outside = $cpu{'outside-host-access'}{total} || 0;
my $in_access = ($cpu{'in-host-write'}{total} || 0) + ($cpu{'in-host-read'}{total} || 0);
my $on_device = ($cpu{'in-host-write'}{'left-on-device'} || 0)
	+ ($cpu{'in-host-read'}{'left-on-device'} || 0);
my $populating = $in_access - $on_device;
my $discard_other = bytes_of($other{discard});

my %readings = (
	'cpu-faults-populate-pages' => {
		supported => JSON::PP::true,
		says => 'the CPU faults are the host populating pages, inside dao_write/dao_read, '
			. 'that a discard left without any (or that were never touched)',
		evidence => { in_host_access => $in_access, populating => $populating,
			      outside_host_access => $outside, on_pages_left_on_device => $on_device },
	},
	'other-migrations-are-discards' => {
		says => "the migrations of another cause than the program's prefetch are libdao's own "
			. 'discards, reported under another cause',
		evidence => { other_cause_bytes => $other_cause_bytes, of_discards => $discard_other,
			      of_prefetches => bytes_of($other{prefetch}),
			      of_either => bytes_of($other{either}),
			      not_asked => bytes_of($other{unasked}) },
	},
	'host-touches-behind-libdao' => {
		says => "the host touches device-resident pages behind libdao's back",
		evidence => { cpu_faults_outside_host_access => $outside,
			      cpu_faults_on_pages_left_on_device => $on_device,
			      coherence_migrations_not_asked => \%behind },
	},
	'driver-migrates-on-its-own' => {
		says => "the driver migrates pages on its own (its prefetching, eviction, access counters)",
		evidence => { migrations_not_asked => \%driver, gpu_faults => $gpu{total} || 0 },
	},
);
$readings{'cpu-faults-populate-pages'}{supported} =
	$in_access > 0 && $populating == $in_access && !$outside ? JSON::PP::true : JSON::PP::false;
# Supported where no such byte is certainly a prefetch's or nobody's, and
# some are certainly a discard's; the no-discard run of the same job then
# decides the rest (um-experiments.sh).
$readings{'other-migrations-are-discards'}{supported} =
	$discard_other > 0 && !bytes_of($other{prefetch}) && !bytes_of($other{unasked})
	? JSON::PP::true : JSON::PP::false;
$readings{'host-touches-behind-libdao'}{supported} =
	$outside || $on_device || $behind{count} ? JSON::PP::true : JSON::PP::false;
$readings{'driver-migrates-on-its-own'}{supported} =
	$driver{count} || $gpu{total} ? JSON::PP::true : JSON::PP::false;

my $summary_json;
if (defined $summary) {
	open(my $f, '<', $summary) or bad($summary, 0, "cannot read: $!");
	local $/;
	$summary_json = eval { decode_json(<$f>) } or bad($summary, 0, "not JSON");
}

my %out = (
	tolerance_ns => $tol,
	granule_bytes => $GRANULE,
	log => { backends => [ map { { key => $_, %{ $backends{$_} } } } sort keys %backends ],
		 requests => \%requested, host_accesses => scalar @windows,
		 unfinished_host_accesses => scalar keys %open_window },
	records => { %records_head, count => scalar @rec },
	migrations_asked => \%asked,
	migrations_not_asked => \%unasked,
	matched_within_tolerance => $within_tol,
	cpu_faults => \%cpu,
	gpu_faults => \%gpu,
	remote_maps_and_other => \%remote,
	throughput => \%throughput,
	goal => { migrations_not_asked => $unasked_count, bytes_not_asked => $unasked_bytes,
		  cpu_faults_outside_host_access => $outside,
		  met => !$unasked_count && !$outside && !$on_device ? JSON::PP::true
			 : JSON::PP::false },
	readings => \%readings,
	defined $summary_json ? (collector => $summary_json) : (),
);
print JSON::PP->new->canonical->pretty->encode(\%out);
