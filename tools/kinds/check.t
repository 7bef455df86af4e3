#!/usr/bin/perl
# check.t - TAP: every list of libdao's backends or policies in the tree that
# can neither ask libdao at run time (the tools: kinds.h) nor be written from
# its tables at build time (the Slurm plugin: dao_kind_names.h) names exactly
# the rows of those tables, as dao-kind-names (KIND_NAMES) lists them: the
# Fortran module's constants and every place of the documentation that
# enumerates them. A list missing a name, or naming one libdao has not,
# fails; so does a list this test no longer finds (moved or reworded: update
# the pattern here with it).
use strict;
use warnings;

my $bin = $ENV{KIND_NAMES} or die "KIND_NAMES: the dao-kind-names to ask\n";
my (%value, %names);    # {backend|policy}{name} = value; names in order
open my $k, '-|', $bin, 'list' or die "$bin: $!\n";
while (<$k>) {
	my ($of, $v, $name) = split;
	$value{$of}{$name} = $v;
	push @{ $names{$of} }, $name;
}
close $k or die "$bin list failed\n";

my $n = 0;
my $failed = 0;
sub ok {
	my ($cond, $name, @diag) = @_;
	$n++;
	print(($cond ? "ok" : "not ok") . " $n - $name\n");
	print "# $_\n" for @diag;
	$failed = 1 unless $cond;
}

sub slurp {
	my ($f) = @_;
	open my $fh, '<', $f or die "$f: $!\n";
	local $/;
	return scalar <$fh>;
}

# Compare a list found in the tree with the names it should hold.
sub same {
	my ($what, $got, @want) = @_;
	unless (defined $got) {
		ok(0, "$what: found", "the list is not where this test looks: update tools/kinds/check.t");
		return;
	}
	my %g = map { $_ => 1 } @$got;
	my %w = map { $_ => 1 } @want;
	my @missing = grep { !$g{$_} } @want;
	my @extra = grep { !$w{$_} } @$got;
	ok(!@missing && !@extra && @$got == keys %g, "$what: " . join(', ', @want),
	   (@missing ? "missing: @missing" : ()), (@extra ? "not libdao's: @extra" : ()),
	   (@$got != keys %g ? "named twice: @$got" : ()));
}

# The backticked words of a text.
sub ticked { my ($s) = @_; return [ $s =~ /`([^`]+)`/g ]; }
# The first match of re in file f, as the words of a list separated by sep.
sub words {
	my ($f, $re, $sep) = @_;
	my ($s) = slurp($f) =~ $re or return undef;
	$s =~ s/\\-/-/g;    # troff
	$s =~ s/\[ ?,\.\.\.\]//g;    # "a[,...]": several of them, separated by commas
	return [ grep { length } map { s/^\s+|\s+$//gr =~ s/^"|"$//gr } split $sep, $s ];
}
sub cell {
	my ($f, $re) = @_;
	my ($s) = slurp($f) =~ $re or return undef;
	return ticked($s);
}

# The first cells (backticked) of the rows of the table under the header row re.
sub first_cells {
	my ($f, $header) = @_;
	my ($rows) = slurp($f) =~ /^$header\n\|[-| ]+\|\n((?:\|.*\n)+)/m or return undef;
	return [ $rows =~ /^\| `([^`]+)`/mg ];
}

my @backends = @{ $names{backend} };
my @opened = grep { $_ ne 'auto' } @backends;    # what --backend of the tools takes
my @policies = @{ $names{policy} };

# The Fortran module: DAO_BACKEND_<NAME> and DAO_POLICY_<NAME> = value, and DEFAULT = 0.
my $f90 = slurp('libdao/fortran/dao.f90');
for my $of (qw(backend policy)) {
	my $p = 'DAO_' . uc($of);
	my @got = map { "$_->[0] = $_->[1]" } map { [ /^(\w+?)\s*=\s*(\d+)$/ ] }
		$f90 =~ /\b(${p}_\w+\s*=\s*\d+)/g;
	my @want = ("${p}_DEFAULT = 0",
		    map { "${p}_" . uc(s/-/_/gr) . " = $value{$of}{$_}" } @{ $names{$of} });
	same("libdao/fortran/dao.f90: the ${p}_* constants", @got ? \@got : undef, @want);
}

my $libdao = 'Documentation/libdao.md';
same("$libdao: DAO_BACKEND's values",
     cell($libdao, qr/^\| `DAO_BACKEND` \| `backend` \| ([^|]*) \|/m), @backends);
same("$libdao: DAO_POLICY's values",
     cell($libdao, qr/^\| `DAO_POLICY` \| `policy` \| ([^|]*) \|/m), @policies);

my $slurm = 'Documentation/slurm.md';
same("$slurm: --dao-policy", cell($slurm, qr/^\| `--dao-policy=POLICY` \|[^|]*\| ([^|]*) \|/m),
     @policies);
same("$slurm: --dao-backend",
     cell($slurm, qr/^\| `--dao-backend=BACKEND` \|[^|]*\| ([^|]*) \|/m), @backends);

my $chol = 'Documentation/cholesky.md';
same("$chol: --policy", cell($chol, qr/^\| `--policy P` \| (.*?) \(default/m), @policies);
same("$chol: --backend", cell($chol, qr/^\| `--backend B` \| (.*?) \(default/m), @opened);
my $chol1 = 'Documentation/dao-cholesky.1';
same("$chol1: --backend", words($chol1, qr/^\.BR \\-\\-backend " " (.*)$/m, qr/\|/),
     @opened, 'uvm');
same("$chol1: --policy", words($chol1, qr/^\.BR \\-\\-policy " " (.*)$/m, qr/\|/), @policies);

my $sim1 = 'Documentation/daosim.1';
same("$sim1: synopsis, --policy",
     words($sim1, qr/^\.RB \[ \\-\\-policy " " (.*) \]$/m, qr/\|/), @policies, 'all');
same("$sim1: options, --policy", words($sim1, qr/^\.BR \\-\\-policy " " (.*)$/m, qr/\|/),
     @policies, 'all');
my $sim = 'Documentation/daosim.md';
same("$sim: usage, --policy", words($sim, qr/^daosim .*\[--policy ((?:[^][]|\[[^]]*\])*)\]/m, qr/\|/),
     @policies, 'all');
same("$sim: JSON, policy", words($sim, qr/^\s*"policy": (.*),$/m, qr/\|/), @policies);

my $design = 'Documentation/design.md';
same("$design: the policies' eviction keys",
     first_cells($design, qr/\| policy \| key \(largest evicted first\) \|/), @policies);

my $cuda = 'Documentation/cuda.md';
same("$cuda: DAO_BACKEND's values",
     cell($cuda, qr/^`DAO_BACKEND` \(or `dao_config\.backend`\): (.*?)\.(?:\s|$)/ms), @backends);
my $bench = 'Documentation/benchmarks.md';
same("$bench: dao-bench copy --backend",
     cell($bench, qr/`--backend` is (.*?) \(without it/s), @opened);

print "1..$n\n";
exit $failed;
