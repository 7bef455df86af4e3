# SPDX-License-Identifier: MIT
# counters.sh - the CUDA runtime model's counters as its DAO_CUDAMODEL_STATS=1
# line on stderr gives them; sourced by the model's shell tests, not run.
#   counters FILE       one "name value" line per counter (refused_calls ...)
#   counter FILE NAME   one counter's value, or "missing"

counters() {
	perl -ne 'if (/^cudamodel: card/) { s/;/,/g; while (/(\d+) ([a-z ]+?)(?=,|$)/g) {
		my ($v, $k) = ($1, $2); $k =~ s/ /_/g; print "$k $v\n" } }' "$1"
}

counter() {
	counters "$1" | awk -v k="$2" '$1 == k { print $2; found = 1 } END { if (!found) print "missing" }'
}
