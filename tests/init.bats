#!/usr/bin/env bats
# tests/init.bats - perc init: creating a data directory

load helpers

setup() {
	export PERC_LOCK_TIMEOUT=2
	unset PERC_DIR PERC_FAILPOINT PERC_LOCK_TTL
	D="$BATS_TEST_TMPDIR/db"
}

@test "init creates a data directory that the other commands accept" {
	run -0 --separate-stderr perc init "$D"
	assert_output ''
	[ -z "$stderr" ]
	[ -d "$D" ]
	run -0 perc -d "$D" set r c v
	run -0 perc -d "$D" get r c
	assert_output v
}

@test "init creates missing parent directories" {
	run -0 perc init "$BATS_TEST_TMPDIR/x/y/z"
	run -0 perc -d "$BATS_TEST_TMPDIR/x/y/z" ts
}

@test "init makes an existing empty directory a data directory" {
	mkdir "$D"
	run -0 perc init "$D"
	run -0 perc -d "$D" set r c v
}

@test "a new data directory holds no cells" {
	perc init "$D"
	run -0 --separate-stderr perc -d "$D" scan
	assert_output ''
	run -1 perc -d "$D" get r c
}

@test "init without DIR uses -d, else PERC_DIR, else the current directory" {
	run -0 perc -d "$BATS_TEST_TMPDIR/by-d" init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-d" ts
	PERC_DIR="$BATS_TEST_TMPDIR/by-env" run -0 perc init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-env" ts
	mkdir "$BATS_TEST_TMPDIR/by-cwd"
	cd "$BATS_TEST_TMPDIR/by-cwd"
	run -0 perc init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-cwd" ts
}

@test "init DIR wins over -d and PERC_DIR" {
	PERC_DIR="$BATS_TEST_TMPDIR/env" run -0 perc -d "$BATS_TEST_TMPDIR/opt" \
	    init "$BATS_TEST_TMPDIR/arg"
	[ -d "$BATS_TEST_TMPDIR/arg" ]
	[ ! -e "$BATS_TEST_TMPDIR/env" ]
	[ ! -e "$BATS_TEST_TMPDIR/opt" ]
}

@test "init twice is fine and keeps the data" {
	perc init "$D"
	export PERC_DIR="$D"
	printf 'a\0b\n' | perc set r c
	perc set r2 c2 kept
	t=$(perc begin)
	perc set -t "$t" open col txn
	before=$(perc ts)
	run -0 --separate-stderr perc init "$D"
	assert_output ''
	[ -z "$stderr" ]
	perc get r c > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'a\0b\n' "$BATS_TEST_TMPDIR/out"
	run -0 perc get r2 c2
	assert_output kept
	# The oracle goes on from where it was, and open transactions live on.
	after=$(perc ts)
	[ "$after" -gt "$before" ]
	run -0 perc commit -t "$t"
	run -0 perc get open col
	assert_output txn
}

@test "init --observe on an existing data directory keeps the data" {
	perc init "$D"
	export PERC_DIR="$D"
	perc set r email ann@example.org
	perc set r other x
	run -0 --separate-stderr perc init --observe email "$D"
	assert_output ''
	[ -z "$stderr" ]
	run -0 perc scan
	assert_output "$(printf 'r\temail\tann@example.org\nr\tother\tx')"
	perc set r email bob@example.org
	run -0 perc get r email
	assert_output bob@example.org
}

@test "init --observe records the column in the config, without removing any" {
	run -0 perc init --observe email "$D"
	grep -q email "$D/config"
	run -0 perc init --observe avatar --observe bio "$D"
	grep -q email "$D/config"
	grep -q avatar "$D/config"
	grep -q bio "$D/config"
	# Naming a column again adds it once.
	run -0 perc init --observe email "$D"
	[ "$(grep -c email "$D/config")" -eq 1 ]
}

@test "init --observe takes a column of any bytes" {
	run -0 perc init --observe "$(printf 'odd\tcol\nformat 99')" "$D"
	run -0 perc -d "$D" set r c v
	run -0 perc -d "$D" get r c
	assert_output v
	run -0 perc init "$D"
}

@test "init refuses a non-empty directory that is not a data directory: exit 6" {
	mkdir "$D"
	echo precious > "$D/notes.txt"
	run -6 --separate-stderr perc init "$D"
	assert_error_line
	assert_output ''
	[ "$(ls -A "$D")" = notes.txt ]
	[ "$(cat "$D/notes.txt")" = precious ]
	run -6 --separate-stderr perc init --observe col "$D"
	assert_error_line
	[ "$(ls -A "$D")" = notes.txt ]
}

@test "a data directory of format 1 is read, and marked format 2 by its next command" {
	# Format 2 only adds cell heads to the LevelDB store, which a perc
	# of format 1 would take for damaged locks.
	perc_leveldb_only
	perc init "$D"
	perc -d "$D" set r c v
	sed -i 's/^format .*/format 1/' "$D/config"
	run -0 perc -d "$D" get r c
	assert_output v
	grep -qx 'format 2' "$D/config"
	sed -i 's/^format .*/format 1/' "$D/config"
	run -0 perc -d "$D" set r c w
	grep -qx 'format 2' "$D/config"
	run -0 perc -d "$D" get r c
	assert_output w
}

@test "init refuses a data directory of an unknown format: exit 6" {
	perc init "$D"
	perc -d "$D" set r c v
	sed -i 's/^format .*/format 999/' "$D/config"
	run -6 --separate-stderr perc init "$D"
	assert_error_line
	run -6 --separate-stderr perc -d "$D" get r c
	assert_error_line
	grep -q 'format 999' "$D/config"
}

@test "init usage errors: exit 2, one line" {
	run -2 --separate-stderr perc init "$D" "$D.2"
	assert_usage_error
	run -2 --separate-stderr perc init --observe
	assert_usage_error
	run -2 --separate-stderr perc init --bogus "$D"
	assert_usage_error
	[ ! -e "$D" ]
	[ ! -e "$D.2" ]
}

@test "init waits for a busy store at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc init "$D"
	hold_flock "$D/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc init --observe col "$D"
	assert_error_line
	run ! grep -q col "$D/config"
	release_flock
	run -0 perc init --observe col "$D"
	grep -q col "$D/config"
}
