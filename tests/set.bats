#!/usr/bin/env bats
# tests/set.bats - perc set: writing one cell

load helpers

setup() {
	perc_fresh_dir
}

@test "set without -t commits at once and prints nothing" {
	run -0 --separate-stderr perc set r c v
	assert_output ''
	[ -z "$stderr" ]
	run -0 perc get r c
	assert_output v
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
}

@test "set replaces the value, and older snapshots keep the old one" {
	perc set r c one
	mid=$(perc ts)
	perc set r c two
	run -0 perc get r c
	assert_output two
	run -0 perc get --at "$mid" r c
	assert_output one
}

@test "VALUE omitted: set reads standard input byte for byte" {
	printf 'a\0b\n\n' | perc set r nul
	perc get r nul > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'a\0b\n\n' "$BATS_TEST_TMPDIR/out"
	printf 'no newline' | perc set r nonl
	perc get r nonl > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'no newline' "$BATS_TEST_TMPDIR/out"
	printf '\n\n\n' | perc set r nls
	perc get r nls > "$BATS_TEST_TMPDIR/out"
	assert_bytes '\n\n\n' "$BATS_TEST_TMPDIR/out"
	printf '\0' | perc set r zero
	perc get r zero > "$BATS_TEST_TMPDIR/out"
	assert_bytes '\0' "$BATS_TEST_TMPDIR/out"
}

@test "set reads all 256 byte values from standard input" {
	for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done \
	    > "$BATS_TEST_TMPDIR/all"
	[ "$(wc -c < "$BATS_TEST_TMPDIR/all")" -eq 256 ]
	perc set r c < "$BATS_TEST_TMPDIR/all"
	perc get r c > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/all" "$BATS_TEST_TMPDIR/out"
}

@test "a 5 MiB binary value goes in and out unchanged" {
	head -c 5242880 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	perc set r big < "$BATS_TEST_TMPDIR/big"
	perc get r big > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/out"
	t=$(perc begin)
	perc set -t "$t" r big2 < "$BATS_TEST_TMPDIR/big"
	perc get -t "$t" r big2 > "$BATS_TEST_TMPDIR/out2"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/out2"
	perc commit -t "$t" > /dev/null
	perc get r big2 > "$BATS_TEST_TMPDIR/out3"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/out3"
}

@test "an empty VALUE, from the argument or from empty input, is a value" {
	perc set r arg ''
	perc set r stdin < /dev/null
	for c in arg stdin; do
		perc get r "$c" > "$BATS_TEST_TMPDIR/out"
		[ ! -s "$BATS_TEST_TMPDIR/out" ]
	done
	run -0 perc scan
	assert_output "$(printf 'r\targ\t\nr\tstdin\t')"
}

@test "ROW and COLUMN may be empty" {
	run -0 perc set '' '' v
	run -0 perc scan
	assert_output "$(printf '\t\tv')"
}

@test "the VALUE argument is taken as it is, even with -e" {
	perc set r c 'a\tb\x00'
	run -0 perc get r c
	assert_output 'a\tb\x00'
	perc set -e r d 'a\tb\x00'
	run -0 perc get r d
	assert_output 'a\tb\x00'
}

@test "set -e: escaped ROW and COLUMN" {
	perc set -e 'a\x00b' 'c\td' v
	run -0 perc scan
	assert_output $'a\\x00b\tc\\td\tv'
	run -0 perc get -e 'a\x00b' 'c\td'
	assert_output v
	perc set --escaped 'x\\y\n' 'z\xff' w
	run -0 perc get -e 'x\\y\n' 'z\xff'
	assert_output w
	run -0 perc scan --prefix x
	assert_output $'x\\\\y\\n\tz\\xff\tw'
}

@test "set -e: a bad escape is a usage error and writes nothing" {
	for bad in 'r\q' 'r\x0' 'r\' 'r\xgg' 'r\x'; do
		run -2 --separate-stderr perc set -e "$bad" c v
		assert_usage_error
		run -2 --separate-stderr perc set -e r "$bad" v
		assert_usage_error
	done
	run -0 perc scan
	assert_output ''
}

@test "set -t buffers the write until commit" {
	t=$(perc begin)
	run -0 --separate-stderr perc set -t "$t" r c v
	assert_output ''
	[ -z "$stderr" ]
	run -1 perc get r c
	run -0 perc get -t "$t" r c
	assert_output v
	perc commit -t "$t" > /dev/null
	run -0 perc get r c
	assert_output v
}

@test "set -t: a later write to the same cell replaces it (PEERS 17)" {
	t=$(perc begin)
	perc set -t "$t" r c one
	perc set -t "$t" r c two
	run -0 perc get -t "$t" r c
	assert_output two
	perc commit -t "$t" > /dev/null
	run -0 perc get r c
	assert_output two
	t=$(perc begin)
	perc del -t "$t" r c
	perc set -t "$t" r c three
	perc commit -t "$t" > /dev/null
	run -0 perc get r c
	assert_output three
}

@test "a ROW that begins with '-' needs --, a VALUE does not" {
	run -0 perc set -- -r -c -v
	run -0 perc get -- -r -c
	assert_output -v
	run -0 perc set r c -v
	run -0 perc get r c
	assert_output -v
}

@test "set usage errors: exit 2, one line, nothing written" {
	for args in "" "r" "r c v extra" "--bogus r c v" "-t" "-x r c v"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc set $args
		assert_usage_error
	done
	run -0 perc scan
	assert_output ''
}

@test "set -t with an unknown, finished or garbage handle exits 5" {
	for h in 999999 abc '' 12x; do
		run -5 --separate-stderr perc set -t "$h" r c v
		assert_error_line
	done
	t=$(perc begin)
	perc set -t "$t" r c v
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc set -t "$t" r c w
	assert_error_line
	t=$(perc begin)
	perc abort -t "$t"
	run -5 --separate-stderr perc set -t "$t" r c w
	assert_error_line
	run -0 perc get r c
	assert_output v
}

@test "set outside a data directory exits 6 with one line" {
	assert_exit_6_outside set r c v
	assert_exit_6_outside set -t 1 r c v
}

@test "set without -t against a live lock: exit 3 at once, nothing written" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c locked
	perc set -t "$t" s c locked
	start_live_commit "$t" r c
	PERC_LOCK_TIMEOUT=10 run -3 --separate-stderr timeout 5 perc set r c mine
	assert_error_line
	kill_live_commit
	run -0 perc get r c
	assert_output old
}

@test "set without -t waits for a busy store, then exit 4, nothing written" {
	perc_leveldb_only
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc set r c v
	assert_error_line
	release_flock
	run -1 perc get r c
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
}

@test "set without -t cleans a dead lock and commits (PEERS 16)" {
	stuck_commit after-prewrite
	run -0 timeout 20 perc set a col blind
	run -0 perc get a col
	assert_output blind
	run -0 perc get b col
	assert_output old-b
}

@test "set -t on a damaged journal exits 7" {
	t=$(perc begin)
	perc set -t "$t" r c v
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 --separate-stderr perc set -t "$t" r d w
	assert_error_line
}
