#!/usr/bin/env bats
# tests/del.bats - perc del: deleting one cell

load helpers

setup() {
	perc_fresh_dir
}

@test "del without -t commits at once and prints nothing" {
	perc set r c v
	perc set r d w
	run -0 --separate-stderr perc del r c
	assert_output ''
	[ -z "$stderr" ]
	run -1 perc get r c
	run -0 perc scan
	assert_output "$(printf 'r\td\tw')"
}

@test "older snapshots still see the deleted value" {
	perc set r c v
	mid=$(perc ts)
	perc del r c
	run -0 perc get --at "$mid" r c
	assert_output v
	run -0 perc scan --at "$mid"
	assert_output "$(printf 'r\tc\tv')"
}

@test "deleting a cell that has no value is not an error" {
	run -0 --separate-stderr perc del r c
	[ -z "$stderr" ]
	run -1 perc get r c
	perc set r c v
	perc del r c
	run -0 perc del r c
	run -1 perc get r c
}

@test "a deleted cell can be written again" {
	perc set r c one
	perc del r c
	perc set r c two
	run -0 perc get r c
	assert_output two
}

@test "del -t buffers the deletion; the transaction sees it at once" {
	perc set r c v
	t=$(perc begin)
	run -0 --separate-stderr perc del -t "$t" r c
	assert_output ''
	run -1 perc get -t "$t" r c
	run -0 perc get r c
	assert_output v
	perc commit -t "$t" > /dev/null
	run -1 perc get r c
}

@test "set then del in one transaction: the deletion wins (PEERS 17)" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c new
	perc del -t "$t" r c
	run -1 perc get -t "$t" r c
	perc commit -t "$t" > /dev/null
	run -1 perc get r c
}

@test "del -e: escaped ROW and COLUMN" {
	perc set -e 'a\x00b' 'c\td' v
	perc set -e 'a\x00c' 'c\td' w
	run -0 perc del -e 'a\x00b' 'c\td'
	run -1 perc get -e 'a\x00b' 'c\td'
	run -0 perc scan
	assert_output $'a\\x00c\tc\\td\tw'
	run -0 perc del --escaped 'a\x00c' 'c\td'
	run -0 perc scan
	assert_output ''
}

@test "del -e: a bad escape is a usage error" {
	perc set r c v
	for bad in 'r\q' 'r\x0' 'r\' 'r\xgg'; do
		run -2 --separate-stderr perc del -e "$bad" c
		assert_usage_error
	done
	run -0 perc get r c
	assert_output v
}

@test "ROW and COLUMN may be empty, or begin with '-' after --" {
	perc set '' '' v
	perc set -- -r -c w
	run -0 perc del '' ''
	run -1 perc get '' ''
	run -0 perc del -- -r -c
	run -1 perc get -- -r -c
}

@test "del usage errors: exit 2, one line" {
	perc set r c v
	for args in "" "r" "r c v" "--bogus r c" "-t"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc del $args
		assert_usage_error
	done
	run -0 perc get r c
	assert_output v
}

@test "del -t with an unknown, finished or garbage handle exits 5" {
	perc set r c v
	for h in 999999 abc '' 12x; do
		run -5 --separate-stderr perc del -t "$h" r c
		assert_error_line
	done
	t=$(perc begin)
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc del -t "$t" r c
	assert_error_line
	run -0 perc get r c
	assert_output v
}

@test "del outside a data directory exits 6 with one line" {
	assert_exit_6_outside del r c
}

@test "del without -t against a live lock: exit 3 at once, nothing written" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c locked
	perc set -t "$t" s c locked
	start_live_commit "$t" r c
	PERC_LOCK_TIMEOUT=10 run -3 --separate-stderr timeout 5 perc del r c
	assert_error_line
	kill_live_commit
	run -0 perc get r c
	assert_output old
}

@test "del without -t waits for a busy store, then exit 4, nothing written" {
	perc_leveldb_only
	perc set r c v
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc del r c
	assert_error_line
	release_flock
	run -0 perc get r c
	assert_output v
}

@test "del -t on a damaged journal exits 7" {
	t=$(perc begin)
	perc set -t "$t" r c v
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 --separate-stderr perc del -t "$t" r d
	assert_error_line
}
