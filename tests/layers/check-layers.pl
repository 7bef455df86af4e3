#!/usr/bin/perl
# check-layers.pl ROOT LAYERS [PUBLIC_INCLUDE_DIR [MAP]] - TAP: the calls
# and includes of the C files under ROOT run down the layers named in
# LAYERS, no files call or include each other in a circle, and MAP (a
# written map of the layers: libdao/src/core/core.h, the CUDA runtime
# model's tests/cudamodel/runtime/api/model.h) names every file where it
# lies and no file that is not there.
#
# LAYERS lists the folders of ROOT from the top layer to the bottom one,
# one line per layer; folders on one line are siblings, which may not reach
# into each other. A file may include and call files of its own folder and
# of folders below it. Includes of PUBLIC_INCLUDE_DIR (dao.h ...) are free.
#
# Calls come from universal-ctags: the global functions each file defines;
# a file calls a function when its name is followed by '(' outside comments
# and strings and not after '.' or '->' (those are ops-table calls). Files
# are modules by name without the extension (record.c and record.h are one),
# so a circle through a header counts as one. In headers only the bodies of
# inline functions are read for calls (prototypes are not calls).
use strict;
use warnings;
use File::Find;

my ($root, $layers_file, $pubdir, $map_file) = @ARGV;
die "usage: $0 ROOT LAYERS [PUBLIC_INCLUDE_DIR [MAP]]\n" unless $root && $layers_file;
$root =~ s{/+$}{};

my (%rank, %line_of, @layer_lines);
open my $lf, '<', $layers_file or die "$layers_file: $!\n";
my $r = 0;
while (<$lf>) {
	s/#.*//;
	my @f = split;
	next unless @f;
	$r++;
	for (@f) { $rank{$_} = $r; }
	push @layer_lines, "@f";
}
close $lf;

my @files;
find({ no_chdir => 1, wanted => sub { push @files, $File::Find::name if /\.[ch]$/ && -f } }, $root);
@files = sort map { substr($_, length($root) + 1) } @files;

my $n = 0;
my $failed = 0;
sub ok { my ($cond, $name, @diag) = @_; $n++;
	print(($cond ? "ok" : "not ok") . " $n - $name\n");
	print "# $_\n" for @diag;
	$failed = 1 unless $cond; }

sub layer_of { my ($f) = @_; return (split m{/}, $f)[0]; }
sub module_of { my ($f) = @_; (my $m = $f) =~ s/\.[ch]$//; return $m; }

# Every file lies in a folder LAYERS names.
my @stray = grep { !defined $rank{layer_of($_)} || !m{/} } @files;
ok(!@stray, "every file of $root lies in a layer folder (" . scalar(@files) . " files)",
   map { "not in a layer: $_" } @stray);

# Global functions and where they are defined (ctags).
my %def;
{
	open my $ct, '-|', 'ctags', '-x', '--languages=C', '--kinds-C=f', '--extras=-F',
		'--_xformat=%N %F', map { "$root/$_" } grep { /\.c$/ } @files
		or die "ctags: $!\n";
	while (<$ct>) {
		my ($name, $file) = split;
		$file = substr($file, length($root) + 1);
		push @{ $def{$name} }, $file;
	}
	close $ct or die "ctags failed\n";
}
ok(scalar(keys %def) > 0, "ctags found the global functions (" . scalar(keys %def) . ")");

sub strip { my ($s) = @_;
	$s =~ s{/\*.*?\*/}{ }gs;
	$s =~ s{//[^\n]*}{ }g;
	$s =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
	$s =~ s{'(?:\\.|[^'\\\n])*'}{''}g;
	return $s; }

my (@bad, %edge);
for my $f (@files) {
	open my $fh, '<', "$root/$f" or die "$f: $!\n";
	local $/;
	my $src = <$fh>;
	close $fh;
	my $from = layer_of($f);
	my @targets;
	while ($src =~ /^\s*#\s*include\s*"([^"]+)"/mg) {
		my $inc = $1;
		if (-f "$root/$inc") {
			push @targets, [$inc, "includes"];
		} elsif ($pubdir && -f "$pubdir/$inc") {
			next;
		} else {
			push @bad, "$f includes \"$inc\", which is neither under $root nor public";
		}
	}
	my $code = strip($src);
	# A header's prototypes declare; only its inline functions' bodies
	# (inside braces) call.
	if ($f =~ /\.h$/) {
		my ($depth, $body) = (0, '');
		for my $ch (split //, $code) {
			$depth-- if $ch eq '}';
			$body .= $depth > 0 ? $ch : ($ch eq "\n" ? "\n" : ' ');
			$depth++ if $ch eq '{';
		}
		$code = $body;
	}
	while ($code =~ /(?<![.>\w])([A-Za-z_]\w*)\s*\(/g) {
		my $name = $1;
		next unless $def{$name};
		next if grep { $_ eq $f } @{ $def{$name} };
		push @targets, [$_, "calls $name in"] for @{ $def{$name} };
	}
	for my $t (@targets) {
		my ($to, $how) = @$t;
		my $tl = layer_of($to);
		next unless defined $rank{$from} && defined $rank{$tl};
		if ($tl ne $from && $rank{$tl} <= $rank{$from}) {
			my $dir = $rank{$tl} < $rank{$from} ? "up" : "sideways";
			push @bad, "$f $how $to: $dir from $from/ to $tl/";
		}
		my ($a, $b) = (module_of($f), module_of($to));
		$edge{$a}{$b} = "$f $how $to" if $a ne $b;
	}
}
my %seen_bad;
@bad = grep { !$seen_bad{$_}++ } @bad;
ok(!@bad, "every include and call runs down the layers (" . join(' > ', @layer_lines) . ")", @bad);

# Circles between modules: Tarjan's strongly connected components.
my ($index, @stack, %idx, %low, %on, @sccs) = (0);
my %nodes = map { $_ => 1 } (keys %edge, map { keys %$_ } values %edge);
sub visit { my ($v) = @_;
	$idx{$v} = $low{$v} = $index++;
	push @stack, $v; $on{$v} = 1;
	for my $w (sort keys %{ $edge{$v} || {} }) {
		if (!defined $idx{$w}) { visit($w); $low{$v} = $low{$w} if $low{$w} < $low{$v}; }
		elsif ($on{$w}) { $low{$v} = $idx{$w} if $idx{$w} < $low{$v}; }
	}
	if ($low{$v} == $idx{$v}) {
		my @c; my $w;
		do { $w = pop @stack; $on{$w} = 0; push @c, $w; } while ($w ne $v);
		push @sccs, [sort @c] if @c > 1;
	} }
visit($_) for grep { !defined $idx{$_} } sort keys %nodes;
my @circ;
for my $c (@sccs) {
	my %in = map { $_ => 1 } @$c;
	push @circ, "circle: " . join(' <-> ', @$c);
	for my $a (@$c) { for my $b (sort keys %{ $edge{$a} }) {
		push @circ, "  $edge{$a}{$b}" if $in{$b}; } }
}
ok(!@sccs, "no files call or include each other in a circle", @circ);
# The written map: a section per layer, begun by the layer's folder name
# ("api/") at the start of a line (after a comment's " * "), naming the
# files of that folder (a subfolder's as "cuda/x.c"); public headers may be
# named anywhere. A file and its header are one module: naming either names
# both.
if ($map_file) {
	open my $mf, '<', $map_file or die "$map_file: $!\n";
	my ($layer, %named, @ghosts);
	while (my $line = <$mf>) {
		$line =~ s{^\s*(?:/?\*+/?)?}{};
		$layer = $1 if $line =~ s{^\s*(\w+)/(?=\s)}{} && defined $rank{$1};
		next unless defined $layer;
		while ($line =~ m{([\w/]+\.[ch])\b}g) {
			my $path = "$layer/$1";
			next if !-f "$root/$path" && $pubdir && -f "$pubdir/$1"; # public headers
			if (-f "$root/$path") { $named{ module_of($path) } = 1; }
			else { push @ghosts, "the map names $path, which is not in $root"; }
		}
	}
	close $mf;
	my %seen;
	my @unnamed = map { "not in the map: $_" }
		grep { !$named{ module_of($_) } && !$seen{ module_of($_) }++ } @files;
	ok(!@unnamed && !@ghosts, "the map $map_file names every file where it lies, and only those",
	   @unnamed, @ghosts);
}
print "1..$n\n";
exit $failed;
