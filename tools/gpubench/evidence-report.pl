#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# evidence-report.pl - `make gpu-evidence-report DIR=...`: what one run of
# gpu-evidence.sh wrote (DIR/evidence.jsonl, tests.tap, traces.tar, the
# optional steps' files) becomes a dated section of Documentation/cuda.md,
# and the raw records a JSON file beside it (Documentation/gpu-evidence/).
#
# Here, on the build machine, daosim replays each libdao row's trace on a
# device file made of the rates that run measured (pinned copies each way,
# dgemm on the table's tiles, device-to-device copies for the memory
# bandwidth), at the row's budget, policy and lookahead, and its modeled
# time goes beside the measured one with the error. The goals of issue 23
# (deliverable 6) are each marked met, missed or not measured, with the
# figure.
#
# A report only adds: the section goes at the end of cuda.md's "GPU
# evidence" section, and a run already reported (its start time and host,
# kept in a comment above its section, or its JSON file) is refused with
# status 1, changing nothing.
#
# Usage: evidence-report.pl --dir DIR [--cuda-md FILE] [--json-dir DIR]
#                           [--daosim BIN]
use strict;
use warnings;
use File::Temp qw(tempdir);
use Getopt::Long;
use JSON::PP;
use List::Util qw(uniq);
use POSIX qw(strftime);

my ($dir, $md, $json_dir, $daosim) =
	(undef, 'Documentation/cuda.md', 'Documentation/gpu-evidence', 'build/bin/daosim');
GetOptions('dir=s' => \$dir, 'cuda-md=s' => \$md, 'json-dir=s' => \$json_dir,
	   'daosim=s' => \$daosim) && defined $dir && !@ARGV
	or do {
	print STDERR "usage: evidence-report.pl --dir DIR [--cuda-md FILE] [--json-dir DIR] [--daosim BIN]\n";
	exit 2;
};

my $json = JSON::PP->new->canonical;
my $SECTION = '## GPU evidence (the prepared call)';
# The goals of issue 23, deliverable 6.
my %GOAL = (explicit_2x => 1.10, explicit_4x => 1.25, managed => 1.2, prefetch => 1.3,
	    daosim => 0.15);

# A refusal: the reason, status 1, nothing written.
sub fail {
	print STDERR "evidence-report: $_[0]\n";
	exit 1;
}

sub slurp {
	my ($f) = @_;
	open(my $h, '<', $f) or return undef;
	local $/;
	my $s = <$h>;
	return $s;
}

# ------------------------------------------------------------ the records --
my $text = slurp("$dir/evidence.jsonl") // fail("no $dir/evidence.jsonl");
my (@records, $unreadable);
for my $line (split /\n/, $text) {
	next unless $line =~ /\S/;
	my $r = eval { $json->decode($line) };
	if ($r) { push @records, $r } else { $unreadable++ }
}
my (%first, %rows, @steps);
for my $r (@records) {
	$first{$r->{step}} //= $r;
	push @steps, $r;
	$rows{"$1 $2 $3"} = $r if $r->{step} eq 'row' && $r->{name} =~ /^row (\d+)x (\S+) (\S+)$/;
}
my $start = $first{start} or fail("$dir/evidence.jsonl has no start record");
# A call limited by DAO_EVIDENCE_STEPS (a second call on the same card that
# reruns what failed): the kinds of step it left out are left out here too.
my %left_out;
for my $kind (uniq(map { $_->{step} } @steps)) {
	my @r = grep { $_->{step} eq $kind } @steps;
	$left_out{$kind} = 1 unless grep { !($_->{status} eq 'skipped' &&
		($_->{reason} // '') =~ /^not in DAO_EVIDENCE_STEPS/) } @r;
}
sub selected { !$left_out{$_[0]} }
my $setup = $first{setup}{result} // {};
my $info = ok_result('info');
my $bw = ok_result('bandwidth');
my $rates = ok_result('rates');
my $gpu = $info ? $info->{gpu} : undef;
# The optional steps' files, read once: the tables and replays below and
# the raw records. torch.json also names the card, as PyTorch does,
# without the info step.
my $torch_text = slurp("$dir/torch.json");
my $um_text = slurp("$dir/um-experiments.json");
my $torch_json = eval { $json->decode($torch_text // '') };
my $torch_card = ref $torch_json eq 'HASH' ? $torch_json->{device_name} : undef;
my $card = $gpu ? $gpu->{gpu} : $torch_card // 'unknown card';
my ($date, $hhmm) = $start->{result}{date} =~ /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/
	or fail("the start record has no date");
(my $slug = lc $card) =~ s/[^a-z0-9]+/-/g;
$slug =~ s/^-+|-+$//g;
(my $stamp = "${date}T${hhmm}Z") =~ s/://;
my $run_id = "$start->{result}{epoch} $start->{result}{host}";
my $json_name = "$stamp-$slug.json";

sub ok_result {
	my ($step) = @_;
	my $r = $first{$step};
	return $r && $r->{status} eq 'ok' ? $r->{result} : undef;
}

# Refuse before anything is written.
my $doc = slurp($md) // fail("cannot read $md");
fail("the run of $date $hhmm UTC ($run_id) is already in $md; a report never rewrites an " .
	'older one') if index($doc, "<!-- gpu-evidence run $run_id -->") >= 0;
fail("$json_dir/$json_name exists already") if -e "$json_dir/$json_name";

# ------------------------------------------------------ daosim, calibrated --
my $tmp = tempdir(CLEANUP => 1);

sub write_file {
	my ($path, $text) = @_;
	open(my $h, '>', $path) or fail("$path: $!");
	print $h $text;
	close $h or fail("$path: $!");
}

# The rate a trace's kernels run at together: their flops over the time
# they take at the rates step's measured rate of each (dpotrf, dtrsm,
# dsyrk, dgemm by name; any other at dgemm's). daosim models one rate per
# device, and on a card where dpotrf runs at a sixteenth of dgemm's rate
# dgemm's alone makes it 20-37% fast (the H200 call of 2026-11-27): this
# flop-weighted harmonic mean gives each row the compute time its own
# kernels take.
sub trace_tflops {
	my ($trace) = @_;
	my ($flops, $seconds) = (0, 0);
	open(my $f, '<', $trace) or return undef;
	while (my $line = <$f>) {
		next unless $line =~ /^k (\S+) (\d+) /;
		my $rate = $rates->{"${1}_flops_per_s"} || $rates->{dgemm_flops_per_s};
		$flops += $2;
		$seconds += $2 / $rate;
	}
	close $f;
	return $seconds > 0 ? $flops / $seconds / 1e12 : undef;
}

# The managed backend's copies are the driver's migrations: its rates are
# those um-experiments' probe measured in the same call (the median of its
# prefetch-to-device and of its prefetch-to-host steps), not the copy
# engine's. undef when the call has no probe.
sub managed_rates {
	my $u = eval { $json->decode($um_text // '') };
	return undef unless ref $u eq 'HASH' && ref $u->{probe} eq 'HASH' && ref $u->{probe}{steps} eq 'ARRAY';
	my %by;
	push @{$by{$_->{name}}}, $_->{gb_per_s} for grep { $_->{name} && $_->{gb_per_s} } @{$u->{probe}{steps}};
	my $median = sub {
		my @v = sort { $a <=> $b } @{$_[0] // []};
		return @v ? $v[$#v / 2] * 1e9 : undef;
	};
	my ($h2d, $d2h) = ($median->($by{'prefetch-to-device'}), $median->($by{'prefetch-to-host'}));
	return $h2d && $d2h ? { h2d => $h2d, d2h => $d2h } : undef;
}

# A trace's device file: the call's ($base_device), with the trace's own
# tflops and, for a managed run, the migration rates.
my ($base_device, $row_devices) = (undef, 0);
sub row_device {
	my ($trace, $um) = @_;
	my $text = $base_device;
	my $tf = trace_tflops($trace);
	$text =~ s/^tflops .*$/sprintf("tflops     %.6g   # this trace's kernels at their measured rates", $tf)/me
		if $tf;
	if ($um) {
		$text =~ s/^h2d_gbps .*$/sprintf("h2d_gbps   %.6g   # managed: prefetch to the device", $um->{h2d} \/ 1e9)/me;
		$text =~ s/^d2h_gbps .*$/sprintf("d2h_gbps   %.6g   # managed: prefetch to the host", $um->{d2h} \/ 1e9)/me;
	}
	my $path = "$tmp/device." . ++$row_devices;
	write_file($path, $text);
	return $path;
}

# daosim on one trace: the run's policy record from its JSON, or undef and
# the error daosim printed.
sub replay {
	my ($trace, $device, $budget, $policy, $lookahead) = @_;
	my $out = `"$daosim" --json --device "$device" --time-bound-limit 0 --budget $budget --policy $policy --lookahead $lookahead "$trace" 2>"$tmp/sim.err"`;
	my $s = $? == 0 ? eval { $json->decode($out) } : undef;
	return $s->{traces}[0]{policies}[0] if $s;
	(my $err = slurp("$tmp/sim.err") // '') =~ s/\s+/ /g;
	return (undef, $err);
}

my ($device_file, %modeled, $sim_note, $um);
if ($bw && $rates && $gpu) {
	(my $name = "measured-$slug") =~ s/^(.{31}).*/$1/;
	$device_file = join('',
		"# $card, measured by gpu-evidence.sh on $date\n",
		"name       $name\n",
		sprintf("h2d_gbps   %.6g\n", $bw->{h2d_bytes_per_s} / 1e9),
		sprintf("d2h_gbps   %.6g\n", $bw->{d2h_bytes_per_s} / 1e9),
		sprintf("tflops     %.6g   # dgemm on tiles of %d\n", $rates->{dgemm_flops_per_s} / 1e12,
			$rates->{tile}),
		sprintf("mem_gbps   %.6g   # 2 x device-to-device copy rate (read and write)\n",
			2 * $bw->{d2d_bytes_per_s} / 1e9),
		sprintf("memory_gib %.6g\n", $gpu->{total_bytes} / 2**30),
		sprintf("# not modeled: both directions at once, %.6g GB/s measured\n",
			$bw->{bidir_bytes_per_s} / 1e9));
	$base_device = $device_file;
	mkdir "$tmp/traces";
	system('tar', '-C', "$tmp/traces", '-xf', "$dir/traces.tar") if -s "$dir/traces.tar";
	$um = managed_rates();
	$device_file .= "# each row: tflops from its own trace's kernels at their measured rates\n";
	$device_file .= sprintf("# managed rows: h2d_gbps %.6g, d2h_gbps %.6g (um-experiments' prefetches)\n",
		$um->{h2d} / 1e9, $um->{d2h} / 1e9) if $um;
	for my $key (sort keys %rows) {
		my $r = $rows{$key}{result};
		next unless $rows{$key}{status} eq 'ok' && $r && $r->{trace} && $r->{cholesky};
		my $c = $r->{cholesky};
		next unless -s "$tmp/traces/$r->{trace}";
		my $trace = "$tmp/traces/$r->{trace}";
		my ($p, $err) = replay($trace, row_device($trace, $key =~ /cuda-managed/ ? $um : undef),
			$c->{budget_bytes}, $c->{policy}, $c->{lookahead});
		if ($p) {
			$modeled{$key} = $p->{modeled_ns} / 1e9;
		} else {
			$sim_note .= "daosim failed on $key: $err\n";
		}
	}
} else {
	$sim_note = 'no predictions: the bandwidth, rates or info step did not succeed';
}

# The PyTorch device's run (torch-evidence.sh, issue 24): one row per run
# of gpt.py, plain PyTorch in memory first; nothing when it did not run.
sub torch_table {
	my ($text, $t) = @_;
	return () unless defined $text && $text =~ /\S/;
	return ('**torch.json** does not parse.', '') unless ref $t eq 'HASH';
	my @out = ('**The PyTorch device** (torch-evidence.sh: ' . ($t->{status} // 'ok') .
		(defined $t->{reason} && $t->{reason} ne '' ? ": $t->{reason}" : '') . ').', '');
	return @out unless $t->{runs};
	my $c = $t->{config} // {};
	push @out, sprintf('GPT-style transformer (torch.nn, random weights): %s layers, width %s, ' .
		'vocabulary %s, batch %s x %s tokens; PyTorch %s, CUDA %s, %s; budget %s bytes ' .
		'(the in-memory peak / %s); deterministic mode; step time the median of the steps ' .
		'after the first; built in %s s.', map { $_ // '?' } $c->{layers}, $c->{width}, $c->{vocab},
		$c->{batch}, $c->{seq}, $t->{torch}, $t->{cuda}, $t->{device_name}, $t->{budget_bytes},
		$t->{ratio}, $t->{build_s}), '',
		'| run | step s | tokens/s | vs in-memory | peak device GiB | h2d GiB | d2h GiB | losses = in-memory |',
		'|---|---|---|---|---|---|---|---|';
	my ($mem, $ref_losses);
	for my $r (@{$t->{runs}}) {
		($mem, $ref_losses) = ($r->{step_s}, $r->{losses}) if !defined $mem && $r->{name} eq 'memory';
		my $what = $r->{skipped} ? "skipped: $r->{skipped}" : $r->{error} ? "failed: $r->{error}" : undef;
		if ($what) {
			$what =~ s/\|/\\|/g;
			push @out, "| $r->{name} | $what |||||||";
			next;
		}
		push @out, sprintf('| %s | %s | %s | %s | %s | %s | %s | %s |', $r->{name}, fmt('%.3f', $r->{step_s}),
			fmt('%.0f', $r->{tokens_per_s}), $mem && $r->{step_s} ? sprintf('%.2fx', $r->{step_s} / $mem) : 'n/a',
			fmt('%.2f', defined $r->{peak_device_bytes} ? $r->{peak_device_bytes} / 2**30 : undef),
			fmt('%.2f', defined $r->{h2d_bytes} ? $r->{h2d_bytes} / 2**30 : undef),
			fmt('%.2f', defined $r->{d2h_bytes} ? $r->{d2h_bytes} / 2**30 : undef),
			$r->{name} eq 'memory' ? 'reference' : $r->{equal_to_memory} ? 'yes' :
				'**no**' . loss_gap($r->{losses}, $ref_losses));
	}
	# The goals of issue 24 (deliverable 4), for each dao run that ran.
	my ($soc) = grep { $_->{name} eq 'save_on_cpu' && $_->{step_s} } @{$t->{runs}};
	my @goals;
	for my $r (grep { $_->{name} =~ /^dao / && $_->{step_s} } @{$t->{runs}}) {
		push @goals, sprintf('- %s within 1.3x of the in-memory step: %s', $r->{name},
			!$mem ? 'not measured' : sprintf('%s (%.2fx)',
				$r->{step_s} <= 1.3 * $mem ? '**met**' : '**missed**', $r->{step_s} / $mem));
		push @goals, sprintf('- %s faster than save_on_cpu: %s', $r->{name},
			!$soc ? 'not measured' : sprintf('%s (%.3f s against %.3f s, peaks %.2f and %.2f GiB)',
				$r->{step_s} < $soc->{step_s} ? '**met**' : '**missed**', $r->{step_s}, $soc->{step_s},
				($r->{peak_device_bytes} // 0) / 2**30, ($soc->{peak_device_bytes} // 0) / 2**30));
	}
	push @out, '', '**Goals of issue 24** (deliverable 4):', '', @goals if @goals;
	return (@out, '', torch_replays($t));
}

# daosim's replay of each dao run's trace (traces.tar, torch-BACKEND.trace)
# on this run's device file as a row's (row_device: its kernels' rates, a
# managed run at the migration rates), at the run's budget, policy and lookahead,
# against the run's measured steps: every step, the first's warm-up and the
# model's copy to the device included, as the trace has them.
sub torch_replays {
	my ($t) = @_;
	my @runs = grep { $_->{trace} && $_->{step_times} } @{$t->{runs}};
	return () unless @runs;
	return ('daosim did not replay the PyTorch runs\' traces: no device file (the bandwidth, ' .
		'rates or info step did not run in this call).', '') unless $device_file;
	my @out = ('**daosim on the PyTorch runs** (their traces replayed on the device file below at ' .
		'the run\'s budget, policy and lookahead; all steps, the warm-up and the model\'s copy ' .
		'to the device included):', '', '| run | steps | measured s | daosim s | error | h2d GiB ' .
		'measured / daosim | d2h GiB measured / daosim |', '|---|---|---|---|---|---|---|');
	for my $r (@runs) {
		my $trace = "$tmp/traces/$r->{trace}";
		my $measured = 0;
		$measured += $_ for @{$r->{step_times}};
		unless (-s $trace) {
			push @out, "| $r->{name} | $r->{trace} is not in traces.tar ||||||";
			next;
		}
		my ($p, $err) = replay($trace, row_device($trace, $r->{name} =~ /cuda-managed/ ? $um : undef),
			$r->{budget_bytes}, $r->{policy} // 'dao', $r->{lookahead} // 64);
		unless ($p) {
			push @out, "| $r->{name} | daosim failed: $err ||||||";
			next;
		}
		my $sim = $p->{modeled_ns} / 1e9;
		push @out, sprintf('| %s | %d | %.3f | %.3f | %+.1f%% | %.2f / %.2f | %.2f / %.2f |', $r->{name},
			scalar @{$r->{step_times}}, $measured, $sim, 100 * ($sim - $measured) / $measured,
			$r->{h2d_bytes} / 2**30, ($p->{h2d_bytes} // 0) / 2**30, $r->{d2h_bytes} / 2**30,
			($p->{d2h_bytes} // 0) / 2**30);
	}
	return (@out, '');
}

# How far a loss curve is from the reference: the largest relative
# difference of a step's loss (a CUDA kernel without a deterministic
# version, under warn_only, makes no two runs equal bit for bit).
sub loss_gap {
	my ($l, $ref) = @_;
	return '' unless ref $l eq 'ARRAY' && ref $ref eq 'ARRAY' && @$l == @$ref && @$l;
	my $gap = 0;
	for my $i (0 .. $#$l) {
		my $d = abs($l->[$i] - $ref->[$i]) / (abs($ref->[$i]) || 1);
		$gap = $d if $d > $gap;
	}
	return sprintf(' (largest relative difference %.1e)', $gap);
}

# ------------------------------------------------------------- the tables --
sub fmt { my ($f, $v) = @_; defined $v ? sprintf($f, $v) : 'n/a' }

sub why {
	my ($r) = @_;
	return 'not reached' unless $r;
	my $why = $r->{reason} // '';
	$why .= ': ' . ($r->{result}{stderr} =~ s/\s+/ /gr) if $r->{status} eq 'failed' &&
		$r->{result} && $r->{result}{stderr};
	$why =~ s/\|/\\|/g;
	return "$r->{status}" . ($why ne '' ? ": $why" : '');
}

my $deadline = $first{deadline};
my @expected = @{$setup->{rows} // []};
push @expected, grep { my $k = $_; !grep { $_ eq $k } @expected } sort keys %rows;
my %seconds_of; # "ratio backend variant" -> seconds, for the goals
my @table;
push @table, '| ratio | n | backend | run | seconds | in-memory s | vs in-memory | Gflop/s | ' .
	'h2d GiB | d2h GiB | stalls | stall s | factor = in-memory | residual | daosim s | ' .
	'daosim error |', '|' . ('---|' x 16);
for my $key (@expected) {
	my ($ratio, $backend, $variant) = split / /, $key;
	my $r = $rows{$key};
	my $c = $r && $r->{status} eq 'ok' && $r->{result} ? $r->{result}{cholesky} : undef;
	unless ($c) {
		my $note = $r ? why($r)
			: 'not reached: ' . ($deadline ? $deadline->{reason} : 'the call ended first');
		push @table, "| ${ratio}x | | $backend | $variant | $note ||||||||||||";
		next;
	}
	$seconds_of{$key} = $c->{seconds};
	my $base_key = $backend eq 'uvm' ? "$ratio cuda-managed in-memory" : "$ratio $backend in-memory";
	my $base = $rows{$base_key} && $rows{$base_key}{status} eq 'ok' ?
		$rows{$base_key}{result}{cholesky} : undef;
	my $same = !$base ? 'n/a' : $c->{factor_hash} eq $base->{factor_hash} ? 'yes' : '**DIFFERENT**';
	my $sim = $modeled{$key};
	push @table, join(' | ', '', "${ratio}x", $c->{n}, $backend, $variant,
		fmt('%.4f', $c->{seconds}), $base ? fmt('%.4f', $base->{seconds}) : 'n/a',
		$base ? fmt('%.3f', $c->{seconds} / $base->{seconds}) : 'n/a', fmt('%.0f', $c->{gflops}),
		defined $c->{h2d_bytes} ? fmt('%.2f', $c->{h2d_bytes} / 2**30) : 'unknown',
		defined $c->{d2h_bytes} ? fmt('%.2f', $c->{d2h_bytes} / 2**30) : 'unknown',
		$c->{stalls} // 'unknown', defined $c->{stall_ns} ? fmt('%.4f', $c->{stall_ns} / 1e9) : 'unknown',
		$same, sprintf('%.2e %s', $c->{residual} // 'nan', $c->{passed} ? 'passed' : '**FAILED**'),
		fmt('%.4f', $sim), defined $sim && $c->{seconds} > 0 ?
			sprintf('%+.1f%%', 100 * ($sim - $c->{seconds}) / $c->{seconds}) : 'n/a') =~ s/^ //r . ' |';
}

# The goals, each from the rows it needs.
sub ratio_of {
	my ($a, $b) = @_;
	return defined $seconds_of{$a} && defined $seconds_of{$b} && $seconds_of{$b} > 0 ?
		$seconds_of{$a} / $seconds_of{$b} : undef;
}
sub missing_of { join(', ', map { "$_ (" . why($rows{$_}) . ')' } grep { !defined $seconds_of{$_} } @_) }
sub goal {
	my ($what, $value, $ok, $fmt, @needs) = @_;
	return "- $what: not measured, missing " . missing_of(@needs) unless defined $value;
	return sprintf("- $what: **%s** ($fmt)", $ok ? 'met' : 'missed', $value);
}
my @goals;
for my $g ([2, 'explicit_2x'], [4, 'explicit_4x']) {
	my ($r, $k) = @$g;
	my $v = ratio_of("$r cuda-explicit dao", "$r cuda-explicit in-memory");
	push @goals, goal(sprintf("at ${r}x, cuda-explicit dao within %.2fx of in-memory", $GOAL{$k}), $v,
		defined $v && $v <= $GOAL{$k}, '%.3fx', "$r cuda-explicit dao", "$r cuda-explicit in-memory");
}
for my $r (2, 4) {
	my $v = ratio_of("$r cuda-managed dao", "$r cuda-explicit dao");
	push @goals, goal(sprintf("at ${r}x, cuda-managed within %.2fx of cuda-explicit (dao)", $GOAL{managed}), $v,
		defined $v && $v <= $GOAL{managed}, '%.3fx', "$r cuda-managed dao", "$r cuda-explicit dao");
}
for my $b ('cuda-explicit', 'cuda-managed') {
	my $v = ratio_of("4 $b lookahead1", "4 $b dao");
	push @goals, goal(sprintf("at 4x on $b, dao at least %.2fx faster than no prefetch ", $GOAL{prefetch}) .
		'(lookahead 1)', $v, defined $v && $v >= $GOAL{prefetch}, '%.3fx',
		"4 $b lookahead1", "4 $b dao");
}
{
	my ($worst, $worst_key, $n) = (undef, undef, 0);
	for my $k (keys %modeled) {
		next unless defined $seconds_of{$k} && $seconds_of{$k} > 0;
		my $e = abs($modeled{$k} - $seconds_of{$k}) / $seconds_of{$k};
		($worst, $worst_key) = ($e, $k) if !defined $worst || $e > $worst;
		$n++;
	}
	push @goals, defined $worst ?
		sprintf("- daosim's calibrated prediction within %d%% of every measured libdao row: " .
			"**%s** (worst %.1f%%, %s; %d rows)", 100 * $GOAL{daosim},
			$worst <= $GOAL{daosim} ? 'met' : 'missed', 100 * $worst, $worst_key, $n) :
		"- daosim's calibrated prediction within 15% of every measured libdao row: not " .
		'measured (' . ($sim_note // 'no libdao row ran') . ')';
}

# CUPTI's counters of the managed runs, as the collector gave them.
my @um;
for my $key (@expected) {
	my $r = $rows{$key};
	next unless $r && $r->{result} && defined $r->{result}{umtrace};
	my $u = $r->{result}{umtrace};
	my $v = ref $u eq 'HASH' && exists $u->{available} && !$u->{available} ?
		'not available: ' . ($u->{reason} // 'no reason given') : '`' . $json->encode($u) . '`';
	push @um, "| ${\ ($key =~ s/^(\d+) /$1x /r)} | $v |";
}

# dao-bench copy, both backends.
my @copy;
for my $b ('cuda-explicit', 'cuda-managed') {
	my $r = $first{copy} ? (grep { $_->{step} eq 'copy' && $_->{name} eq "copy $b" } @steps)[0] : undef;
	if (!$r || $r->{status} ne 'ok') {
		push @copy, "| $b | " . why($r) . ' ||||';
		next;
	}
	for my $p (@{$r->{result}{runs}}) {
		push @copy, sprintf('| %s | %s | %.3f | %.1f | %.1f | %.2f |', $b, $p->{pattern},
			$p->{seconds} // 0, ($p->{gbps} // 0), ($p->{memcpy_gbps} // 0), $p->{ratio} // 0);
	}
}

# The GPU tests.
my @tests;
for my $r (grep { $_->{step} eq 'test' } @steps) {
	my $t = $r->{result};
	push @tests, $t ? sprintf('| %s | %s | %s | %d | %d | %d | %s |', $t->{test},
		$r->{status}, $t->{planned} // 'none', $t->{ok}, $t->{not_ok}, $t->{todo},
		$t->{skipped} // '') : "| ${\ ($r->{name} =~ s/^test //r)} | " . why($r) . ' ||||||';
}

# Every step, for the time plan.
my @plan;
for my $r (@steps) {
	next if $r->{step} eq 'start' || !selected($r->{step});
	push @plan, sprintf('| %s | %s | %s | %s | %s |', $r->{name}, $r->{status},
		defined $r->{seconds} ? sprintf('%.1f', $r->{seconds}) : '', $r->{cap_s} // '',
		$r->{t} // '');
}

# -------------------------------------------------------------- the text --
my $end = $first{end};
my @s;
push @s, "<!-- gpu-evidence run $run_id -->", "### Run of $date $hhmm UTC on $card", '';
push @s, 'From one run of `gpu-evidence.sh` (' .
	(($setup->{manifest} // '') =~ s/^# gpu-bundle: (.+)$/bundle made $1/r || 'bundle unknown') .
	"; size $start->{result}{size}), reported on " . strftime('%Y-%m-%d', gmtime) .
	" by `make gpu-evidence-report`. Raw records: [gpu-evidence/$json_name](gpu-evidence/$json_name)." .
	($unreadable ? " $unreadable unreadable line(s) of evidence.jsonl were left out." : ''), '';
my @ran = grep { selected($_) } qw(info bandwidth rates row copy test um-experiments torch);
push @s, 'A partial call: only its steps ' . join(', ', @ran) . ' ran (`DAO_EVIDENCE_STEPS`); ' .
	'the parts of the others are left out of this section.', '' if %left_out;
if (!selected('info')) {
	push @s, "**Machine.** $card" . ($gpu ? '' : ' (as PyTorch names it)') .
		'; the info step was not among this call\'s steps.', '';
} elsif ($info) {
	my $h = $info->{host};
	push @s, sprintf('**Machine.** %s (compute capability %s), %s; CUDA driver API %s, ' .
		'runtime %s; %.1f GiB, %.1f GiB free at the start. Host: %d CPUs (%s), %.0f GiB, ' .
		'%s, kernel %s. CUDA libraries from `%s`, CUPTI %s.', $card,
		$gpu->{compute_capability}, $info->{nvidia_driver} // 'NVIDIA driver unknown',
		$gpu->{cuda_driver}, $gpu->{cuda_runtime}, $gpu->{total_bytes} / 2**30,
		$gpu->{free_bytes} / 2**30, $h->{cpus}, $h->{cpu} || 'unknown', $h->{mem_total_kib} / 2**20,
		$h->{os} || 'unknown OS', $h->{kernel}, $setup->{cuda_libdir} // '?',
		$setup->{cupti_dir} ? "from `$setup->{cupti_dir}`" : 'not found'), '';
} else {
	push @s, '**Machine.** unknown: the info step ' . why($first{info}) . '.', '';
}
push @s, sprintf('The call took %d s of its %d s%s.', $end ? $end->{t} : 0,
	$start->{result}{deadline_s}, $deadline ? " and was stopped at its deadline ($deadline->{reason})" : ''), '';
push @s, '**Copies and kernel rates** (dao-gpubw, dao-gpurate).', '', '| measure | figure |', '|---|---|'
	if selected('bandwidth') || selected('rates');
if (selected('bandwidth') && $bw) {
	push @s, sprintf('| pinned host-to-device | %.1f GB/s |', $bw->{h2d_bytes_per_s} / 1e9),
		sprintf('| pinned device-to-host | %.1f GB/s |', $bw->{d2h_bytes_per_s} / 1e9),
		sprintf('| both at once | %.1f GB/s |', $bw->{bidir_bytes_per_s} / 1e9),
		sprintf('| device to device | %.1f GB/s copied |', $bw->{d2d_bytes_per_s} / 1e9);
} elsif (selected('bandwidth')) {
	push @s, '| copies | ' . why($first{bandwidth}) . ' |';
}
if (selected('rates') && $rates) {
	push @s, map { sprintf("| $_, tile %d | %.2f Tflop/s (%.3f ms) |", $rates->{tile},
		$rates->{"${_}_flops_per_s"} / 1e12, 1e3 * $rates->{"${_}_seconds"}) } qw(dpotrf dtrsm dsyrk dgemm);
} elsif (selected('rates')) {
	push @s, '| tile kernels | ' . why($first{rates}) . ' |';
}
push @s, '' if selected('bandwidth') || selected('rates');
push @s, '**The Cholesky table.** ' . sprintf('Tiles of %s, base budget %s bytes: ', $setup->{tile} // '?',
	$setup->{base_budget_bytes} // '?') .
	'at ratio r the device budget is the matrix bytes / r (at 1x the in-memory run is the dao ' .
	'run). Seconds from the first launch to ' .
	'the end of `dao_sync` (`--warm-up`: one-time costs outside); "vs in-memory" against the ' .
	'in-memory run (budget = matrix) of the same matrix and backend (plain UVM against ' .
	'cuda-managed\'s); "factor = in-memory": the factor hashes are equal; residual: ' .
	'`--check sample`, bound 30 n eps; daosim: its modeled time on the device file below at ' .
	'the row\'s budget, policy and lookahead, error = (daosim - measured) / measured.', '', @table, ''
	if selected('row');
push @s, '**Goals of issue 23** (deliverable 6):', '', @goals, '' if selected('row');
push @s, 'daosim\'s device file, from this run\'s rates:', '', '```', split(/\n/, $device_file), '```', ''
	if $device_file;
push @s, "daosim: $sim_note", '' if $sim_note && $device_file;
push @s, '**CUPTI unified-memory counters** (managed runs, the whole process, warm-up included):', '',
	'| row | counters |', '|---|---|', (@um ? @um : '| none | no managed row ran |'), '' if selected('row');
push @s, '**dao-bench copy** (write-back and fetch through libdao against memcpy):', '',
	'| backend | pattern | seconds | GB/s | memcpy GB/s | ratio |', '|---|---|---|---|---|---|',
	(@copy ? @copy : '| none | not run |||||'), '' if selected('copy');
push @s, '**GPU tests** (tests/gpu, both CUDA backends each; TAP in the raw records):', '',
	'| test | status | planned | ok | not ok | todo | skipped |', '|---|---|---|---|---|---|---|',
	(@tests ? @tests : '| none | not reached ||||||'), '' if selected('test');
for my $opt (['um-experiments', 'um-experiments.json'], ['torch', 'torch.json']) {
	my $r = $first{$opt->[0]};
	next unless selected($opt->[0]);
	push @s, "**$opt->[0]**: " . ($r ? why($r) : 'not reached') .
		(-s "$dir/$opt->[1]" ? " ($opt->[1] kept in the raw records)" : '') . '.', '';
}
push @s, torch_table($torch_text, $torch_json);
push @s, '**Steps** (name, status, seconds, cap, seconds since the start):', '',
	'| step | status | seconds | cap | at |', '|---|---|---|---|---|', @plan, '';

# ------------------------------------------------------------- writing --
# At the end of the GPU evidence section: before the next "## " heading.
my $section = join("\n", @s);
my $pos = index($doc, "\n$SECTION\n");
$doc =~ s/\n*\z/\n\n$SECTION\n/ if $pos < 0;
$pos = index($doc, "\n$SECTION\n");
my $next = index($doc, "\n## ", $pos + 1);
$next = length($doc) if $next < 0;
(my $before = substr($doc, 0, $next)) =~ s/\n*\z//;
$doc = "$before\n\n$section" . (substr($doc, $next) =~ s/^\n*/\n/r);
my %raw = (run => $start->{result}, records => \@records, device_file => $device_file,
	   daosim_seconds => \%modeled, tests_tap => slurp("$dir/tests.tap"),
	   um_experiments => $um_text, torch => $torch_text,
	   nvidia_smi => slurp("$dir/nvidia-smi.txt"));
mkdir $json_dir unless -d $json_dir;
write_file("$json_dir/$json_name", JSON::PP->new->canonical->pretty->encode(\%raw));
write_file("$md.tmp", $doc);
rename("$md.tmp", $md) or fail("$md: $!");
print "evidence-report: added \"Run of $date $hhmm UTC on $card\" to $md, raw records in " .
	"$json_dir/$json_name\n";
