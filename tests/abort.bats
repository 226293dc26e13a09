#!/usr/bin/env bats
# tests/abort.bats - perc abort: discarding a transaction

load helpers

setup() {
	perc_fresh_dir
}

@test "abort discards the buffered writes and prints nothing" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c new
	perc set -t "$t" s c new
	perc del -t "$t" q c
	run -0 --separate-stderr perc abort -t "$t"
	assert_output ''
	[ -z "$stderr" ]
	run -0 perc scan
	assert_output $'r\tc\told'
	[ ! -e "$PERC_DIR/txn/$t" ]
}

@test "an aborted handle is finished: every command with it exits 5" {
	t=$(perc begin)
	perc set -t "$t" r c v
	perc abort -t "$t"
	for args in "get -t $t r c" "set -t $t r c v" "del -t $t r c" \
	    "scan -t $t" "commit -t $t" "abort -t $t"; do
		# shellcheck disable=SC2086
		run -5 --separate-stderr perc $args
		assert_error_line
		assert_output ''
	done
	run -1 perc get r c
}

@test "abort of a transaction with no writes" {
	t=$(perc begin)
	run -0 perc abort -t "$t"
	run -5 perc abort -t "$t"
}

@test "abort blocks nobody afterwards: the cells can be written" {
	t=$(perc begin)
	perc set -t "$t" r c mine
	perc abort -t "$t"
	run -0 perc set r c theirs
	run -0 perc get r c
	assert_output theirs
}

@test "abort after a commit stopped at after-prewrite rolls its locks back" {
	stuck_commit after-prewrite
	run -0 --separate-stderr timeout 20 perc abort -t "$T"
	[ -z "$stderr" ]
	PERC_LOCK_TIMEOUT=1 run -0 abc
	assert_output 'old-a old-b old-c'
	run -5 perc commit -t "$T"
	run -0 perc set a col next
	run -0 perc get a col
	assert_output next
}

@test "abort after a commit stopped at after-prewrite-primary rolls it back (PEERS 25)" {
	stuck_commit after-prewrite-primary
	run -0 timeout 20 perc abort -t "$T"
	PERC_LOCK_TIMEOUT=1 run -0 abc
	assert_output 'old-a old-b old-c'
	run -5 perc abort -t "$T"
}

@test "abort after the commit point rolls forward: the transaction stays committed" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		stuck_commit "$fp"
		# Committed is finished (SPEC): exit 5, saying so.
		run -5 --separate-stderr timeout 20 perc abort -t "$T"
		assert_error_line '*already committed*'
		[ ! -e "$PERC_DIR/txn/$T" ]
		PERC_LOCK_TIMEOUT=1 run -0 abc
		assert_output 'new-a new-b new-c'
		run -5 perc commit -t "$T"
		run -5 perc abort -t "$T"
	done
}

@test "abort of a crashed commit that a reader rolled back: exit 5, no journal left" {
	stuck_commit after-prewrite
	PERC_LOCK_TIMEOUT=1 run -0 abc
	assert_output 'old-a old-b old-c'
	[ -f "$PERC_DIR/txn/$T" ]
	run -5 --separate-stderr timeout 20 perc abort -t "$T"
	assert_error_line '*rolled back*'
	[ ! -e "$PERC_DIR/txn/$T" ]
	run -5 perc abort -t "$T"
}

@test "abort usage errors: exit 2, one line" {
	t=$(perc begin)
	perc set -t "$t" r c v
	for args in "" "-t" "$t" "-t $t extra" "--bogus -t $t"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc abort $args
		assert_usage_error
	done
	run -0 perc get -t "$t" r c
	assert_output v
}

@test "abort of an unknown or garbage handle exits 5" {
	for h in 999999 abc '' 12x 0 ../config; do
		run -5 --separate-stderr perc abort -t "$h"
		assert_error_line
	done
	[ -f "$PERC_DIR/config" ]
}

@test "abort outside a data directory exits 6 with one line" {
	assert_exit_6_outside abort -t 1
}

@test "abort discards a transaction whose journal is damaged" {
	t=$(perc begin)
	perc set -t "$t" r c v
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 perc commit -t "$t"
	run -0 --separate-stderr perc abort -t "$t"
	[ -z "$stderr" ]
	run -5 perc commit -t "$t"
	run -1 perc get r c
}

@test "abort after a crash waits for a busy store, then exit 4, still open" {
	perc_leveldb_only
	stuck_commit after-prewrite
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc abort -t "$T"
	assert_error_line
	release_flock
	run -0 timeout 20 perc abort -t "$T"
	run -0 abc
	assert_output 'old-a old-b old-c'
	run -5 perc abort -t "$T"
}
