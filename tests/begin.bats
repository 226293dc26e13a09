#!/usr/bin/env bats
# tests/begin.bats - perc begin: starting a transaction

load helpers

setup() {
	perc_fresh_dir
}

@test "begin prints a handle of shell-safe characters on one line" {
	run -0 --separate-stderr perc begin
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output =~ ^[0-9]+$ ]]
	perc begin > "$BATS_TEST_TMPDIR/out"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/out")" -eq 1 ]
}

@test "the handle is the start timestamp, from the oracle" {
	a=$(perc ts)
	t=$(perc begin)
	b=$(perc ts)
	[ "$a" -lt "$t" ]
	[ "$t" -lt "$b" ]
}

@test "handles are distinct and increasing" {
	prev=0
	for i in $(seq 10); do
		t=$(perc begin)
		[ "$t" -gt "$prev" ]
		prev=$t
	done
}

@test "the new transaction is usable by get, set, del, scan, commit" {
	t=$(perc begin)
	run -0 perc set -t "$t" r c v
	run -0 perc del -t "$t" r d
	run -0 perc get -t "$t" r c
	assert_output v
	run -0 perc scan -t "$t"
	assert_output "$(printf 'r\tc\tv')"
	run -0 perc commit -t "$t"
	[[ $output =~ ^[0-9]+$ ]]
}

@test "an open transaction blocks nobody" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c mine
	PERC_LOCK_TIMEOUT=1 run -0 timeout 10 perc get r c
	assert_output old
	PERC_LOCK_TIMEOUT=1 run -0 timeout 10 perc set r c theirs
	PERC_LOCK_TIMEOUT=1 run -0 timeout 10 perc scan
	assert_output "$(printf 'r\tc\ttheirs')"
}

@test "begin that cannot print its handle aborts the transaction: exit 7, one line" {
	for out in /dev/full closed; do
		if [ "$out" = closed ]; then
			run -7 --separate-stderr bash -c 'perc begin >&-'
		else
			run -7 --separate-stderr bash -c "perc begin > $out"
		fi
		assert_error_line '*cannot write the handle*aborted*'
		! compgen -G "$PERC_DIR/txn/[1-9]*" ||
			fail "$out: a journal stays: $(ls "$PERC_DIR/txn")"
	done
	# Nothing holds gc back: its safe point is a fresh timestamp.
	ts=$(perc ts)
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" -gt "$ts" ]
}

@test "begin takes no operand" {
	run -2 --separate-stderr perc begin now
	assert_usage_error
	run -2 --separate-stderr perc begin -t 1
	assert_usage_error
}

@test "begin outside a data directory exits 6 with one line" {
	assert_exit_6_outside begin
}

@test "begin waits for a locked oracle at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc_leveldb_only
	hold_flock "$PERC_DIR/oracle.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc begin
	assert_error_line
	assert_output ''
	release_flock
	run -0 perc begin
}
