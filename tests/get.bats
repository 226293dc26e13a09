#!/usr/bin/env bats
# tests/get.bats - perc get: reading one cell

load helpers

setup() {
	perc_fresh_dir
}

# Commit VALUE at (ROW, COL) in a transaction of its own; set START and
# COMMIT to its start and commit timestamps.
put() {
	put_with "" "$@"
}

# The same, with PERC_FAILPOINT=FAILPOINT (none when empty) at commit.
put_with() {
	START=$(perc begin)
	perc set -t "$START" "$2" "$3" "$4"
	COMMIT=$(env ${1:+PERC_FAILPOINT=$1} perc commit -t "$START")
}

@test "get prints a value with no byte added" {
	printf 'a\0b\n\n' | perc set r c
	perc get r c > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'a\0b\n\n' "$BATS_TEST_TMPDIR/out"
}

@test "get of a missing cell exits 1 and prints nothing" {
	run -1 --separate-stderr perc get r nope
	assert_output ''
	[ -z "$stderr" ]
	perc set r c v
	run -1 --separate-stderr perc get r nope
	run -1 --separate-stderr perc get nope c
	assert_output ''
}

@test "an empty value is a value: exit 0, nothing printed" {
	perc set r c ''
	perc get r c > "$BATS_TEST_TMPDIR/out"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "get of a deleted cell exits 1" {
	perc set r c v
	perc del r c
	run -1 --separate-stderr perc get r c
	assert_output ''
	[ -z "$stderr" ]
}

@test "ROW and COLUMN may be empty" {
	perc set '' '' both
	perc set '' c row
	perc set r '' column
	run -0 perc get '' ''
	assert_output both
	run -0 perc get '' c
	assert_output row
	run -0 perc get r ''
	assert_output column
}

@test "-e reads ROW and COLUMN in the escaped form" {
	perc set -e 'a\x00b' 'c\td' v
	run -0 perc get -e 'a\x00b' 'c\td'
	assert_output v
	run -0 perc get --escaped 'a\x00b' 'c\td'
	assert_output v
	run -1 perc get -e 'a\\b\n' 'c\x80\xff'
	perc set "$(printf 'a\\b\n.')" "$(printf 'c\x80\xff')" w
	run -0 perc get -e 'a\\b\n.' 'c\x80\xff'
	assert_output w
	# Without -e the same text names another cell.
	run -1 perc get 'a\x00b' 'c\td'
}

@test "-e: a bad escape is a usage error" {
	perc set r c v
	for bad in 'r\q' 'r\x0' 'r\' 'r\xzz' 'r\x'; do
		run -2 --separate-stderr perc get -e "$bad" c
		assert_usage_error
		run -2 --separate-stderr perc get -e r "$bad"
		assert_usage_error
	done
}

@test "get -t: read-your-writes inside the transaction" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c new
	run -0 perc get -t "$t" r c
	assert_output new
	run -0 perc get r c
	assert_output old
	perc del -t "$t" r c
	run -1 --separate-stderr perc get -t "$t" r c
	assert_output ''
	run -0 perc get r c
	assert_output old
	perc set -t "$t" r c again
	run -0 perc get -t "$t" r c
	assert_output again
}

@test "get -t returns buffered binary values byte for byte" {
	t=$(perc begin)
	printf '\0\n\\\t\xff\n' | perc set -t "$t" r c
	perc get -t "$t" r c > "$BATS_TEST_TMPDIR/out"
	assert_bytes '\0\n\\\t\xff\n' "$BATS_TEST_TMPDIR/out"
}

@test "get -t reads the snapshot at the start (PEERS 5: no read skew)" {
	perc set a c a1
	perc set b c b1
	t1=$(perc begin)
	run -0 perc get -t "$t1" a c
	assert_output a1
	t2=$(perc begin)
	perc set -t "$t2" a c a2
	perc set -t "$t2" b c b2
	perc commit -t "$t2" > /dev/null
	run -0 perc get -t "$t1" b c
	assert_output b1
	run -0 perc get -t "$t1" a c
	assert_output a1
	run -0 perc get b c
	assert_output b2
}

@test "get -t: a cell inserted after the start stays missing (PEERS 6)" {
	t1=$(perc begin)
	run -1 perc get -t "$t1" k c
	perc set k c inserted
	run -1 perc get -t "$t1" k c
	run -0 perc get k c
	assert_output inserted
}

@test "get --at: visibility by commit timestamp, inclusive (PEERS 1)" {
	before=$(perc ts)
	put k c v1; s1=$START c1=$COMMIT
	put k c v2; s2=$START c2=$COMMIT
	mid=$(perc ts)
	put k c v3; s3=$START c3=$COMMIT
	run -1 perc get --at "$before" k c
	run -1 perc get --at "$s1" k c
	run -1 perc get --at $((c1 - 1)) k c
	for ts in "$c1" "$s2" $((c2 - 1)); do
		run -0 perc get --at "$ts" k c
		assert_output v1
	done
	for ts in "$c2" "$mid" "$s3" $((c3 - 1)); do
		run -0 perc get --at "$ts" k c
		assert_output v2
	done
	run -0 perc get --at "$c3" k c
	assert_output v3
	run -0 perc get --at "$(perc ts)" k c
	assert_output v3
	run -0 perc get k c
	assert_output v3
}

@test "get --at a timestamp not yet handed out is exit 2: a snapshot never changes once read" {
	perc set k c v1
	newest=$(perc ts)
	future=$((newest * 2))
	run -2 --separate-stderr perc get --at "$future" k c
	assert_usage_error
	assert_error_line "*$future*not been handed out*"
	run -2 --separate-stderr perc get --at "$future" k c k c
	assert_usage_error
	# Just past the newest: the read takes a timestamp first, at or
	# above it, so the commits to come all land above it.
	run -0 perc get --at $((newest + 1)) k c
	assert_output v1
	perc set k c v2
	run -0 perc get --at $((newest + 1)) k c
	assert_output v1
	run -2 --separate-stderr perc get --at "$future" k c
	assert_usage_error
	run -0 perc get --at "$(perc ts)" k c
	assert_output v2
}

@test "get --at 0 is a usage error that says why" {
	perc set k c v
	run -2 --separate-stderr perc get --at 0 k c
	assert_usage_error
	assert_error_line "*--at takes a timestamp*'0'*"
}

@test "get --at: a delete hides the value from its commit on (PEERS 2)" {
	put k c old; c1=$COMMIT
	t=$(perc begin)
	perc del -t "$t" k c
	cd=$(perc commit -t "$t")
	run -0 perc get --at $((cd - 1)) k c
	assert_output old
	run -1 perc get --at "$cd" k c
	run -1 perc get --at "$(perc ts)" k c
	put k c again; c3=$COMMIT
	run -0 perc get --at "$c3" k c
	assert_output again
	run -1 perc get --at $((c3 - 1)) k c
	run -0 perc get --at "$c1" k c
	assert_output old
}

@test "rolled-back writes and lock-only writes are skipped (PEERS 3)" {
	put k c v1; c1=$COMMIT
	# A lock-only write committed on top.
	t=$(perc begin)
	run -0 perc get -t "$t" --lock k c
	assert_output v1
	cl=$(perc commit -t "$t")
	[[ $cl =~ ^[0-9]+$ ]]
	run -0 perc get --at "$cl" k c
	assert_output v1
	run -0 perc get k c
	assert_output v1
	# A prewrite that died and was rolled back.
	t=$(perc begin)
	perc set -t "$t" k c dead
	perc set -t "$t" k2 c dead
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t"
	run -0 perc get k c
	assert_output v1
	run -0 perc get --at "$(perc ts)" k c
	assert_output v1
	run -1 perc get k2 c
	# And on a cell that never had a value.
	t=$(perc begin)
	run -1 perc get -t "$t" --lock none c
	perc commit -t "$t" > /dev/null
	run -1 perc get none c
}

@test "values around the length a cell's head holds read back whole, newest and older" {
	# The LevelDB store reads a cell's newest value from the cell's head,
	# which holds values of up to 255 bytes (perc(1) STORES); older
	# snapshots and longer values are read from the write records.
	local n v prev=none fp
	for n in 255 256 0 254 3000 1 255; do
		v=$(head -c "$n" /dev/zero | tr '\0' "$((n % 7))")
		# Both ways a commit goes: one step, and two (an armed failpoint
		# that a commit of one cell never reaches makes it take two).
		fp=
		[ $((n % 2)) -eq 1 ] || fp=after-commit-secondary
		put_with "$fp" k c "$v"
		run -0 perc get k c
		[ "$output" = "$v" ]
		if [ "$prev" != none ]; then
			run -0 perc get --at $((COMMIT - 1)) k c
			[ "$output" = "$prev" ]
		fi
		prev=$v
	done
	perc del k c
	run -1 perc get k c
	run -0 perc get --at "$COMMIT" k c
	[ "$output" = "$v" ]
}

@test "get --at: bad timestamps are usage errors" {
	for ts in x 0 -1 1x '' 18446744073709551616; do
		run -2 --separate-stderr perc get --at "$ts" r c
		assert_usage_error
	done
}

@test "get usage errors: operands, -t with --at, --lock without -t" {
	t=$(perc begin)
	for args in "r" "" "r c d" "-t $t --at 5 r c" "--lock r c" \
	    "--at 5 --lock r c" "--bogus r c"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc get $args
		assert_usage_error
	done
}

@test "get -t with an unknown, finished or garbage handle exits 5" {
	t=$(perc begin)
	for h in 999999 abc '' 12x "$t$t" -1 "$t "; do
		run -5 --separate-stderr perc get -t "$h" r c
		assert_error_line
		assert_output ''
	done
	perc set -t "$t" r c v
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc get -t "$t" r c
	assert_error_line
	t=$(perc begin)
	perc abort -t "$t"
	run -5 --separate-stderr perc get -t "$t" r c
	assert_error_line
	t=$(perc begin)
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc get -t "$t" r c
	assert_error_line
}

@test "get outside a data directory exits 6 with one line" {
	assert_exit_6_outside get r c
	assert_exit_6_outside get --at 5 r c
}

@test "get waits for a live lock below its snapshot, then exit 4 (PEERS 4)" {
	perc set a col old-a
	perc set b col old-b
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	start_live_commit "$t" a col
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 perc get a col
	assert_error_line
	assert_output ''
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 perc get b col
	assert_error_line
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 \
	    perc get --at "$(perc ts)" a col
	assert_error_line
	# A snapshot below the lock's start does not wait.
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get --at $((t - 1)) a col
	assert_output old-a
	kill_live_commit
}

@test "get does not wait for a lock above its snapshot" {
	perc set a col old-a
	perc set b col old-b
	early=$(perc begin)
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	start_live_commit "$t" a col
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get -t "$early" a col
	assert_output old-a
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get -t "$early" b col
	assert_output old-b
}

@test "a reader cleans up a lock whose owner is gone and reads the old value" {
	perc set a col old-a
	perc set b col old-b
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	start_live_commit "$t" a col
	PERC_LOCK_TIMEOUT=1 run -4 perc get a col
	kill_live_commit
	PERC_LOCK_TIMEOUT=2 run -0 timeout 20 perc get a col
	assert_output old-a
	PERC_LOCK_TIMEOUT=2 run -0 timeout 20 perc get b col
	assert_output old-b
	# It was rolled back: the owner cannot commit it any more.
	run -3 --separate-stderr perc commit -t "$t"
	assert_error_line
}

@test "a reader rolls forward a lock whose primary committed" {
	perc set a col old-a
	perc set b col old-b
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	for r in a b; do
		PERC_LOCK_TIMEOUT=2 run -0 timeout 20 perc get "$r" col
		assert_output "new-$r"
	done
}

@test "a live lock whose TTL has run out is cleaned by a reader" {
	perc set a col old-a
	perc set b col old-b
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	# TTL and pause leave time, on a loaded machine, to see the lock
	# live and then to read while the owner still sleeps.
	PERC_LOCK_TTL=$(scaled 5) \
	    PERC_FAILPOINT=after-prewrite:pause=$(scaled 10) \
	    perc commit -t "$t" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	wait_for_live_lock a col "$pid"
	PERC_LOCK_TIMEOUT=$(scaled 10) run -0 timeout "$(scaled 20)" perc get a col
	assert_output old-a
	kill -0 "$pid"        # the owner was still alive
	PERC_LOCK_TIMEOUT=$(scaled 10) run -0 timeout "$(scaled 20)" perc get b col
	assert_output old-b
	# The slow owner, rolled back, cannot commit when it wakes up.
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 3 ] || fail "the rolled-back owner's commit exited $rc"
	run -0 perc get a col
	assert_output old-a
}

@test "get waits for a busy store at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc_leveldb_only
	perc set r c v
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc get r c
	assert_error_line
	assert_output ''
	release_flock
	run -0 perc get r c
	assert_output v
}

@test "get -t on a damaged journal exits 7 naming the file" {
	t=$(perc begin)
	perc set -t "$t" r c v
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 --separate-stderr perc get -t "$t" r c
	assert_error_line "*$t*"
	assert_output ''
}
