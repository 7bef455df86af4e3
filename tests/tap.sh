# SPDX-License-Identifier: MIT
# tap.sh - TAP helpers for the shell test scripts; sourced, not run.
#   ok STATUS DESCRIPTION     one check: passes when STATUS is 0
#   json_ok FILE EXPR [FILE2] status of a Perl expression over the decoded
#                             JSON of FILE as $j (and of FILE2 as $k)
#   json FILE EXPR [FILE2]    the same, printed as 1 or 0
#   tap_done                  print the plan and exit with the result

n_test=0
failed=0

ok() {
	n_test=$((n_test + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n_test - $2"
	else
		echo "not ok $n_test - $2"
		failed=1
	fi
}

json_ok() {
	perl -MJSON::PP -e '
		sub slurp { local $/; open(my $f, "<", $_[0]) or die "$_[0]: $!"; decode_json(<$f>) }
		my $j = slurp($ARGV[0]); my $k = $ARGV[2] ? slurp($ARGV[2]) : undef;
		my $v = eval $ARGV[1]; die $@ if $@; exit($v ? 0 : 1);' "$1" "$2" "${3:-}" 2>/dev/null
}

json() {
	if json_ok "$@"; then echo 1; else echo 0; fi
}

tap_done() {
	echo "1..$n_test"
	exit $failed
}
