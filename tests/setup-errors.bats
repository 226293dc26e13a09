#!/usr/bin/env bats
# tests/setup-errors.bats - what a user meets when the setup is wrong:
# a variable of the environment that is not a number, a directory that
# is read-only, a forgotten -d
#
# perc(1): every error is one line that says what went wrong and what
# to do; a usage error (a bad value of a variable included) exits 2.

load helpers

setup() {
	perc_fresh_dir
}

teardown() {
	undo_read_only
	stop_servers
}

@test "a numeric PERC_ variable that is not a number exits 2 naming it, before any work" {
	perc set a col old
	for var in PERC_LOCK_TIMEOUT PERC_LOCK_TTL PERC_GC_AUTO \
	    PERC_GC_RETAIN; do
		for bad in abc 1o -1 inf ' 5'; do
			run -2 --separate-stderr env "$var=$bad" perc set a col new
			assert_error_line "perc: $var=*"
			assert_output ''
			run -2 --separate-stderr env "$var=$bad" perc get a col
			assert_error_line "perc: $var=*"
		done
		# A number, fractions allowed, and empty (the default) pass.
		run -0 env "$var=7.5" perc get a col
		assert_output old
		run -0 env "$var=" perc get a col
	done
	# Nothing was written by the refused commands.
	run -0 perc get a col
	assert_output old
	# init refuses too, and creates nothing.
	run -2 --separate-stderr env PERC_LOCK_TIMEOUT=ten perc init \
	    "$BATS_TEST_TMPDIR/new"
	assert_error_line "perc: PERC_LOCK_TIMEOUT=*"
	[ ! -e "$BATS_TEST_TMPDIR/new" ]
}

@test "a read-only data directory: set, del, begin, ts and load say that it is read-only" {
	perc set a col v
	read_only_view "$PERC_DIR"
	cmds=("set a col x" "del a col" "begin")
	# The oracle of a Redis store is in the store: ts needs no file.
	[ "$PERC_TEST_STORE" = redis ] || cmds+=("ts")
	for args in "${cmds[@]}"; do
		run -7 --separate-stderr perc $args
		assert_error_line "*is read-only*"
		assert_output ''
	done
	run -7 --separate-stderr perc load <<< $'a\tcol\ty'
	assert_error_line "*is read-only*"
	run -0 perc get a col
	assert_output v
}

@test "a forgotten -d names -d and PERC_DIR; -d FILE says it is a file" {
	unset PERC_DIR
	cd "$BATS_TEST_TMPDIR"
	run -6 --separate-stderr perc get a col
	assert_error_line "*-d DIR or PERC_DIR*perc init*"
	run -6 --separate-stderr perc -d "$BATS_TEST_TMPDIR/none" ts
	assert_error_line "*'$BATS_TEST_TMPDIR/none'*-d DIR or PERC_DIR*"
	touch "$BATS_TEST_TMPDIR/file"
	run -6 --separate-stderr perc -d "$BATS_TEST_TMPDIR/file" ts
	assert_error_line "*'$BATS_TEST_TMPDIR/file' is a file*-d DIR or PERC_DIR"
	PERC_DIR="$BATS_TEST_TMPDIR/file" run -6 --separate-stderr perc scan
	assert_error_line "*is a file*"
}

@test "a handle used with another data directory suggests checking -d" {
	t=$(perc begin)
	other=$PERC_DIR
	perc_fresh_dir other
	run -5 --separate-stderr perc set -t "$t" a col v
	assert_error_line "*'$t'*check -d and PERC_DIR*"
	run -0 perc -d "$other" set -t "$t" a col v
	run -0 perc -d "$other" commit -t "$t"
}
