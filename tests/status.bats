#!/usr/bin/env bats
# tests/status.bats - perc status: the state of a data directory, and
# its open transactions with whether their process still lives
#
# SPEC: "print the state of the data directory, KEY<TAB>VALUE a line:
# at least store, open_transactions, oldest_open_start, locks,
# safe_point, observed (COLUMN<TAB>strong|weak<TAB>DIRTY_CELLS);
# --transactions prints one line per open transaction instead,
# HANDLE<TAB>START_TS<TAB>AGE_SECONDS<TAB>alive|gone<TAB>WRITES (gone:
# its process ended without finishing it)".

load helpers

setup() {
	perc_fresh_dir
}

# value KEY: the VALUE of status's line KEY (the first, for observed).
value() {
	perc status | awk -F '\t' -v k="$1" '$1 == k { sub(/^[^\t]*\t/, ""); print; exit }'
}

store_line() {
	if [ "$PERC_TEST_STORE" = redis ]; then
		echo "store	$PERC_TEST_REDIS_URL/$(perc_test_table "$PERC_DIR")"
	else
		echo "store	leveldb"
	fi
}

@test "status of a new directory: every key, nothing open, no lock" {
	local server=
	run -0 perc status
	# a LevelDB directory's: the server that served the status, which
	# is still there (PERC_SERVE_IDLE), or none with PERC_SERVE=0
	[ "$PERC_TEST_STORE" = redis ] ||
		server="server	$(perc serve --status 2> /dev/null || echo none)
"
	assert_output "$(store_line)
open_transactions	0
oldest_open_start	none
${server}locks	0
safe_point	0
log_hold	none"
	run -0 perc status --transactions
	assert_output ''
	run -2 --separate-stderr perc status extra
	run -0 perc status -h
	assert_output --partial 'usage: perc status'
}

@test "status --transactions: alive while the shell that began it runs, gone once it ended; writes counted" {
	alive=$(perc begin)
	perc set -t "$alive" a col 1
	perc set -t "$alive" b col 2
	perc set -t "$alive" a col 3           # a cell once, however often
	# A script that began a transaction and ended without finishing it.
	gone=$(bash -c 'perc begin; true')
	perc set -t "$gone" c col 1
	done=$(perc begin)
	perc set -t "$done" d col 1
	perc commit -t "$done" > /dev/null
	run -0 perc status --transactions
	[ "${#lines[@]}" -eq 2 ]
	IFS=$'\t' read -r h s age state writes <<< "${lines[0]}"
	[ "$h" = "$alive" ] && [ "$s" = "$alive" ] && [ "$state" = alive ] &&
	    [ "$writes" = 2 ]
	[[ $age =~ ^[0-9]+$ ]] && [ "$age" -lt 600 ]
	IFS=$'\t' read -r h s age state writes <<< "${lines[1]}"
	[ "$h" = "$gone" ] && [ "$state" = gone ] && [ "$writes" = 1 ]
	run -0 value open_transactions
	assert_output 2
	run -0 value oldest_open_start
	assert_output "$alive"
	perc abort -t "$alive"
	perc abort -t "$gone"
	run -0 perc status --transactions
	assert_output ''
	run -0 value oldest_open_start
	assert_output none
}

@test "status counts the locks of a commit cut short, whose transaction is gone" {
	t=$(perc begin)
	for r in a b c; do perc set -t "$t" "$r" col v; done
	PERC_FAILPOINT=after-prewrite run -137 perc commit -t "$t"
	run -0 value locks
	assert_output 3
	run -0 perc status --transactions
	assert_output --regexp "^$t	$t	[0-9]+	gone	3\$"
	perc resolve-locks > /dev/null
	run -0 value locks
	assert_output 0
}

@test "status: dirty cells per observed column, and gc's safe point" {
	perc init --observe doc --observe idx "$PERC_DIR"
	perc set a doc 1
	perc set b doc 1
	perc set c idx 1
	perc set d other 1
	run -0 perc status
	assert_line "observed	doc	strong	2"
	assert_line "observed	idx	strong	1"
	perc run-observer --once doc -- true
	run -0 perc status
	assert_line "observed	doc	strong	0"
	assert_line "observed	idx	strong	1"
	sp=$(perc gc --retain 0 | cut -f 1)
	run -0 value safe_point
	assert_output "$sp"
}
