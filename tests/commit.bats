#!/usr/bin/env bats
# tests/commit.bats - perc commit: Percolator's two-phase commit

load helpers

setup() {
	perc_fresh_dir
}

@test "commit prints the commit timestamp; the writes are visible from it" {
	perc set a c old
	t=$(perc begin)
	perc set -t "$t" a c new
	perc set -t "$t" b c new-b
	run -0 --separate-stderr perc commit -t "$t"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output =~ ^[0-9]+$ ]]
	ct=$output
	[ "$ct" -gt "$t" ]
	run -0 perc get --at "$ct" a c
	assert_output new
	run -0 perc get --at "$ct" b c
	assert_output new-b
	run -0 perc get --at $((ct - 1)) a c
	assert_output old
	run -1 perc get --at $((ct - 1)) b c
	[ "$(perc ts)" -gt "$ct" ]
}

# How many lock records for primary row acct-0001 the store's log holds:
# a lock names its owner's host, then the primary row after its length.
locks_in_log() {
	local host
	host=$(printf %s "$(hostname)" | od -An -tx1 | tr -d ' \n' |
	    sed 's/../\\x&/g')
	cat "$PERC_DIR"/store/*.log |
	    LC_ALL=C grep -caP "$host\\x00\\x00\\x00\\x09acct-0001" || true
}

@test "a small commit takes one step: no lock is ever written, and it reads back" {
	perc_leveldb_only
	# The log of a store that was never compacted keeps every record.
	perc set seed c 0
	t=$(perc begin)
	perc set -t "$t" acct-0001 c 1
	perc set -t "$t" acct-0002 c 2
	perc commit -t "$t" > /dev/null
	[ "$(locks_in_log)" -eq 0 ]
	run -0 perc scan
	assert_output "$(printf 'acct-0001\tc\t1\nacct-0002\tc\t2\nseed\tc\t0')"
	# Under a failpoint it takes the two steps, whose locks the log shows.
	t=$(perc begin)
	perc set -t "$t" acct-0001 c 3
	perc set -t "$t" acct-0002 c 4
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	[ "$(locks_in_log)" -ge 1 ]
	run -0 perc scan
	assert_output "$(printf 'acct-0001\tc\t3\nacct-0002\tc\t4\nseed\tc\t0')"
}

@test "a committed transaction is finished: its handle then exits 5" {
	t=$(perc begin)
	perc set -t "$t" r c v
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc commit -t "$t"
	assert_error_line
	assert_output ''
	run -5 --separate-stderr perc abort -t "$t"
	assert_error_line
	[ ! -e "$PERC_DIR/txn/$t" ]
}

@test "commit with no writes prints nothing and exits 0" {
	perc set r c v
	t=$(perc begin)
	run -0 perc get -t "$t" r c
	run -0 --separate-stderr perc commit -t "$t"
	assert_output ''
	[ -z "$stderr" ]
	run -5 perc commit -t "$t"
}

@test "commit of a transaction whose only write is get --lock prints a timestamp" {
	perc set r c v
	t=$(perc begin)
	run -0 perc get -t "$t" --lock r c
	assert_output v
	run -0 --separate-stderr perc commit -t "$t"
	[[ $output =~ ^[0-9]+$ ]]
	[ "$output" -gt "$t" ]
	run -0 perc get r c
	assert_output v
	run -0 perc scan
	assert_output $'r\tc\tv'
	run -5 perc commit -t "$t"
}

@test "write-write conflict: the first commit wins, the second exits 3 (PEERS 10)" {
	perc set r c base
	t1=$(perc begin)
	t2=$(perc begin)
	run -0 perc get -t "$t1" r c
	run -0 perc get -t "$t2" r c
	perc set -t "$t1" r c one
	perc set -t "$t2" r c two
	perc set -t "$t2" s c two
	run -0 perc commit -t "$t1"
	[[ $output =~ ^[0-9]+$ ]]
	run -3 --separate-stderr perc commit -t "$t2"
	assert_error_line
	assert_output ''
	run -0 perc get r c
	assert_output one
	run -1 perc get s c
	# The loser is finished.
	run -5 --separate-stderr perc commit -t "$t2"
	assert_error_line
	run -5 --separate-stderr perc get -t "$t2" r c
	assert_error_line
	run -5 --separate-stderr perc abort -t "$t2"
	assert_error_line
}

@test "a write committed after my start is a conflict, even if I never read it (PEERS 11)" {
	t1=$(perc begin)
	run -1 perc get -t "$t1" a c
	t2=$(perc begin)
	perc set -t "$t2" a c x
	perc set -t "$t2" b c x
	perc commit -t "$t2" > /dev/null
	perc set -t "$t1" b c mine
	run -3 --separate-stderr perc commit -t "$t1"
	assert_error_line
	run -0 perc get b c
	assert_output x
}

@test "overlapping write sets: the later commit exits 3 (PEERS 12)" {
	t1=$(perc begin)
	t2=$(perc begin)
	perc set -t "$t1" k1 c t1
	perc set -t "$t1" k2 c t1
	perc set -t "$t2" k2 c t2
	run -0 perc commit -t "$t1"
	run -3 --separate-stderr perc commit -t "$t2"
	assert_error_line
	run -0 perc get k2 c
	assert_output t1
}

@test "a write committed before my start is no conflict (PEERS 14)" {
	perc set k c early
	t=$(perc begin)
	perc set -t "$t" k c later
	run -0 perc commit -t "$t"
	run -0 perc get k c
	assert_output later
}

@test "disjoint writes both commit, and a later reader sees both (PEERS 7)" {
	t1=$(perc begin)
	t2=$(perc begin)
	perc set -t "$t1" a c 1
	perc set -t "$t2" b c 2
	run -0 perc commit -t "$t2"
	run -0 perc commit -t "$t1"
	run -0 perc scan
	assert_output $'a\tc\t1\nb\tc\t2'
}

@test "write skew is allowed without --lock (PEERS 13)" {
	perc set x oncall yes
	perc set y oncall yes
	t1=$(perc begin)
	t2=$(perc begin)
	run -0 perc get -t "$t1" y oncall
	run -0 perc get -t "$t2" x oncall
	perc set -t "$t1" x oncall no
	perc set -t "$t2" y oncall no
	run -0 perc commit -t "$t1"
	run -0 perc commit -t "$t2"
	run -0 perc scan
	assert_output $'x\toncall\tno\ny\toncall\tno'
}

@test "write skew is prevented with get --lock: the second commit exits 3" {
	perc set x oncall yes
	perc set y oncall yes
	t1=$(perc begin)
	t2=$(perc begin)
	run -0 perc get -t "$t1" --lock y oncall
	assert_output yes
	run -0 perc get -t "$t2" --lock x oncall
	assert_output yes
	perc set -t "$t1" x oncall no
	perc set -t "$t2" y oncall no
	run -0 perc commit -t "$t1"
	run -3 --separate-stderr perc commit -t "$t2"
	assert_error_line
	run -0 perc scan
	assert_output $'x\toncall\tno\ny\toncall\tyes'
}

@test "get --lock on a missing cell prevents a phantom" {
	t1=$(perc begin)
	run -1 --separate-stderr perc get -t "$t1" --lock seat 7
	assert_output ''
	perc set -t "$t1" booking 7 ann
	t2=$(perc begin)
	perc set -t "$t2" seat 7 bob
	run -0 perc commit -t "$t2"
	run -3 --separate-stderr perc commit -t "$t1"
	assert_error_line
	run -1 perc get booking 7
}

@test "get --lock: the locked cell conflicts with a writer that commits first" {
	perc set r c v
	t1=$(perc begin)
	run -0 perc get -t "$t1" --lock r c
	perc set r c changed
	run -3 --separate-stderr perc commit -t "$t1"
	assert_error_line
}

@test "get --lock: a lock-only commit conflicts with a writer that began before it" {
	# On a cell with a value, so that the LevelDB store's one-step commit
	# may skip the write records when the cell's head says nothing was
	# written since its start: the lock-only write must say so.
	perc set r c v
	t1=$(perc begin)
	perc set -t "$t1" r c mine
	t2=$(perc begin)
	run -0 perc get -t "$t2" --lock r c
	run -0 perc commit -t "$t2"
	run -3 --separate-stderr perc commit -t "$t1"
	assert_error_line
	run -0 perc get r c
	assert_output v
}

@test "commit meets a live lock: exit 3 at once, no wait (PEERS 15)" {
	perc set a col old
	t1=$(perc begin)
	perc set -t "$t1" a col t1
	perc set -t "$t1" b col t1
	t2=$(perc begin)
	perc set -t "$t2" a col t2
	start_live_commit "$t1" a col
	# t2 is newer than the lock; it must not wait out PERC_LOCK_TIMEOUT.
	PERC_LOCK_TIMEOUT=10 run -3 --separate-stderr timeout 5 perc commit -t "$t2"
	assert_error_line
	run -5 perc commit -t "$t2"
	kill_live_commit
	run -0 perc get a col
	assert_output old
}

@test "commit cleans a lock whose owner is gone and goes on (PEERS 16)" {
	stuck_commit after-prewrite
	t2=$(perc begin)
	perc set -t "$t2" a col blind
	perc set -t "$t2" b col blind
	run -0 timeout 20 perc commit -t "$t2"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 abc
	assert_output 'blind blind old-c'
}

# big_txn: a transaction writing a, b and c (col big) and m0000 to
# m2999 (col v): the handle in T2.
big_txn() {
	T2=$(perc begin)
	perc set -t "$T2" a col big b col big c col big
	awk 'BEGIN { for (i = 0; i < 3000; i++) printf "m%04d\nv\nbig\n", i }' |
	    tr '\n' '\0' | xargs -0 -n 1500 perc set -t "$T2"
}

@test "a big commit cleans dead locks among its cells, sent many at a time" {
	# On Redis the cells after the primary go 1,024 to a pipeline: b
	# and c, locked by a dead transaction, are taken again alone.
	stuck_commit after-prewrite
	big_txn
	run -0 timeout 60 perc commit -t "$T2"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 abc
	assert_output 'big big big'
	[ "$(perc scan --prefix m | grep -c $'\tbig$')" -eq 3000 ]
	run -0 perc resolve-locks --all --dry-run
	assert_output ''
}

@test "a big commit that meets a live lock among its cells: exit 3, none of it" {
	perc set m1500 v old
	t1=$(perc begin)
	perc set -t "$t1" m1500 v t1
	big_txn
	# Alive however slow the machine: paused, and within its TTL, for
	# longer than the big commit's timeout.
	PERC_LOCK_TTL=300 start_live_commit "$t1" m1500 v after-prewrite 300
	run -3 --separate-stderr timeout 60 perc commit -t "$T2"
	assert_error_line
	kill_live_commit
	run -0 perc get m1500 v
	assert_output old
	[ "$(perc scan --prefix m | wc -l)" -eq 1 ]
	run -1 perc get a col
	# The big one rolled its locks back; the get of m1500 the dead one's.
	run -0 perc resolve-locks --all --dry-run
	assert_output ''
}

@test "the same transaction writing one cell twice leaves the last write (PEERS 17)" {
	t=$(perc begin)
	perc set -t "$t" r c 1
	perc set -t "$t" r c 2
	perc del -t "$t" r d
	perc set -t "$t" r d 3
	perc commit -t "$t" > /dev/null
	run -0 perc scan
	assert_output $'r\tc\t2\nr\td\t3'
}

@test "a commit is all or nothing for every reader" {
	t=$(perc begin)
	for i in $(seq 20); do
		perc set -t "$t" "row$i" c "v$i"
	done
	before=$(perc ts)
	ct=$(perc commit -t "$t")
	run -0 perc scan --at "$before"
	assert_output ''
	[ "$(perc scan --at "$ct" | wc -l)" -eq 20 ]
}

@test "failpoint after-prewrite: exit 137, readers see the old values" {
	stuck_commit after-prewrite
	run -0 abc
	assert_output 'old-a old-b old-c'
	# A reader rolled it back: its own commit now exits 3, then 5.
	run -3 --separate-stderr perc commit -t "$T"
	assert_error_line
	run -5 perc commit -t "$T"
	run -0 abc
	assert_output 'old-a old-b old-c'
}

@test "failpoint after-prewrite: with no reader in between, commit again finishes it" {
	stuck_commit after-prewrite
	run -0 perc commit -t "$T"
	[[ $output =~ ^[0-9]+$ ]]
	ct=$output
	run -0 abc
	assert_output 'new-a new-b new-c'
	run -0 perc get --at $((ct - 1)) a col
	assert_output old-a
	run -5 perc commit -t "$T"
}

@test "failpoint after-prewrite-primary: readers see the old values (PEERS 27)" {
	stuck_commit after-prewrite-primary
	run -0 abc
	assert_output 'old-a old-b old-c'
	run -3 --separate-stderr perc commit -t "$T"
	assert_error_line
	run -0 abc
	assert_output 'old-a old-b old-c'
}

@test "failpoint after-commit-primary: readers see the new values (PEERS 28)" {
	stuck_commit after-commit-primary
	run -0 abc
	assert_output 'new-a new-b new-c'
}

@test "failpoint after-commit-secondary: readers see the new values (PEERS 30)" {
	stuck_commit after-commit-secondary
	run -0 abc
	assert_output 'new-a new-b new-c'
}

@test "after a failpoint, a scan sees all of the writes or none" {
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		stuck_commit "$fp"
		run -0 timeout 20 perc scan --column col
		case $fp in
		after-prewrite*) want='old' ;;
		*) want='new' ;;
		esac
		assert_output "$(printf "a\tcol\t$want-a\nb\tcol\t$want-b\nc\tcol\t$want-c")"
	done
}

@test "a crashed commit past its commit point, run again, prints its commit timestamp" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		stuck_commit "$fp"
		run -0 --separate-stderr perc commit -t "$T"
		[ -z "$stderr" ]
		[[ $output =~ ^[0-9]+$ ]]
		ct=$output
		[ "$ct" -gt "$T" ]
		# It is the commit timestamp the crashed run took: the new
		# values start exactly there.
		run -0 perc get --at "$ct" c col
		assert_output new-c
		run -0 perc get --at $((ct - 1)) c col
		assert_output old-c
		run -0 abc
		assert_output 'new-a new-b new-c'
		run -5 perc commit -t "$T"
	done
}

@test "a crashed commit, run again after a reader rolled it forward, still succeeds" {
	stuck_commit after-commit-primary
	run -0 abc
	assert_output 'new-a new-b new-c'
	run -0 perc commit -t "$T"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 perc get --at $((output - 1)) a col
	assert_output old-a
}

@test "an owner rolled back after its TTL ran out cannot commit: exit 3 (PEERS 32)" {
	perc set a col old-a
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	# TTL and pause leave time, on a loaded machine, to see the lock
	# live and then to read while the owner still sleeps.
	PERC_LOCK_TTL=$(scaled 5) \
	    PERC_FAILPOINT=after-prewrite:pause=$(scaled 10) \
	    perc commit -t "$t" > /dev/null 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	wait_for_live_lock a col "$pid"
	PERC_LOCK_TIMEOUT=$(scaled 10) run -0 timeout "$(scaled 20)" perc get a col
	assert_output old-a
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 3 ] || fail "the slow committer exited $rc"
	mapfile -t stderr_lines < "$BATS_TEST_TMPDIR/err"
	assert_error_line
	run -0 perc get a col
	assert_output old-a
	run -1 perc get b col
	run -5 perc commit -t "$t"
}

@test "a live, slow committer within its TTL is waited for, and commits" {
	perc set a col old-a
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	start_live_commit "$t" a col after-prewrite 600
	# A snapshot the paused owner's commit timestamp must come after.
	at=$(perc ts)
	PERC_LOCK_TIMEOUT=$(scaled 60) perc get --at "$at" a col \
	    > "$BATS_TEST_TMPDIR/read.out" 2>&1 3>&- &
	reader=$!
	BG_PIDS+=("$reader")
	# The reader waits for the owner (it sleeps between looks) instead
	# of cleaning its lock; then the owner goes on.  Where the kernel
	# does not say what a process sleeps in, the owner goes on at once,
	# and the answer below still holds.
	for _ in $(seq 300); do
		[ "$(cat "/proc/$reader/wchan" 2> /dev/null)" != \
		    hrtimer_nanosleep ] || break
		grep -q . "/proc/$reader/wchan" 2> /dev/null || break
		kill -0 "$reader" 2> /dev/null || break
		sleep 0.1
	done
	kill -CONT "$COMMIT_PID"
	wait "$reader" || fail "the reader exited $?: $(cat "$BATS_TEST_TMPDIR/read.out")"
	run cat "$BATS_TEST_TMPDIR/read.out"
	assert_output old-a
	rc=0
	wait "$COMMIT_PID" || rc=$?
	[ "$rc" -eq 0 ] || fail "the slow committer exited $rc"
	ct=$(cat "$BATS_TEST_TMPDIR/live-commit.out")
	[[ $ct =~ ^[0-9]+$ ]]
	run -0 perc get a col
	assert_output new-a
	run -0 perc get --at "$ct" b col
	assert_output new-b
}

@test "commit waits for a busy store, then exit 4: nothing written, still open" {
	perc_leveldb_only
	t=$(perc begin)
	perc set -t "$t" r c v
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc commit -t "$t"
	assert_error_line
	assert_output ''
	release_flock
	run -1 perc get r c
	run -0 perc get -t "$t" r c
	assert_output v
	run -0 perc commit -t "$t"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 perc get r c
	assert_output v
}

@test "commit usage errors: exit 2, one line" {
	t=$(perc begin)
	perc set -t "$t" r c v
	for args in "" "-t" "-t $t extra" "$t" "--bogus -t $t"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc commit $args
		assert_usage_error
	done
	run -1 perc get r c
	run -0 perc commit -t "$t"
}

@test "commit of an unknown or garbage handle exits 5" {
	for h in 999999 abc '' 12x 0 -5 ../config; do
		run -5 --separate-stderr perc commit -t "$h"
		assert_error_line
		assert_output ''
	done
	run -0 perc ts
}

@test "commit outside a data directory exits 6 with one line" {
	assert_exit_6_outside commit -t 1
}

@test "commit of a damaged journal exits 7 naming the file; abort discards it" {
	perc set r c old
	t=$(perc begin)
	perc set -t "$t" r c new
	perc set -t "$t" s c new
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 --separate-stderr perc commit -t "$t"
	assert_error_line "*txn/$t*"
	run -0 perc get r c
	assert_output old
	run -0 perc abort -t "$t"
	run -5 perc commit -t "$t"
	run -0 perc get r c
	assert_output old
}

@test "a journal damaged in the middle is refused, not half committed" {
	t=$(perc begin)
	perc set -t "$t" a c one
	perc set -t "$t" b c two
	j="$PERC_DIR/txn/$t"
	size=$(stat -c %s "$j")
	printf 'X' | dd of="$j" bs=1 seek=$((size - 2)) conv=notrunc 2>/dev/null
	run -7 --separate-stderr perc commit -t "$t"
	assert_error_line
	run -0 perc scan
	assert_output ''
}

# Run "$@" expecting exit 3; note in $BAD what its stderr line lacks.
conflict_says() {
	local what=$1 msg
	shift
	run -3 --separate-stderr "$@"
	msg=${stderr_lines[0]#perc:}
	msg=${msg#"${msg%%[![:space:]]*}"}
	if [ "${#stderr_lines[@]}" -ne 1 ] || [ "${#msg}" -lt 8 ]; then
		BAD="$BAD
  $what: '$stderr'"
	fi
}

@test "every conflict (exit 3) prints one line that says what went wrong" {
	BAD=
	# A write-write conflict.
	t1=$(perc begin)
	t2=$(perc begin)
	perc set -t "$t1" ww c 1
	perc set -t "$t2" ww c 2
	perc commit -t "$t1" > /dev/null
	conflict_says "write-write conflict at commit" perc commit -t "$t2"
	# A get --lock cell written by another transaction.
	t1=$(perc begin)
	perc get -t "$t1" --lock ww c > /dev/null
	perc set ww c 3
	conflict_says "lock-only conflict at commit" perc commit -t "$t1"
	# A transaction rolled back by a reader.
	stuck_commit after-prewrite
	abc > /dev/null
	conflict_says "commit of a rolled-back transaction" perc commit -t "$T"
	# A live lock met by a commit, and by set and del on their own.
	t=$(perc begin)
	perc set -t "$t" a col locked
	perc set -t "$t" b col locked
	t2=$(perc begin)
	perc set -t "$t2" a col mine
	start_live_commit "$t" a col
	conflict_says "commit meeting a live lock" perc commit -t "$t2"
	conflict_says "set meeting a live lock" perc set a col mine
	conflict_says "del meeting a live lock" perc del a col
	kill_live_commit
	[ -z "$BAD" ] || fail "conflict messages that say nothing:$BAD"
}
