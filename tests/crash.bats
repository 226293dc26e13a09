#!/usr/bin/env bats
# tests/crash.bats - commits that stop dead at a failpoint (cf. crash9.test)
#
# PEERS scenarios 16, 18-25, 29, 32, 34-36.  A transaction T writes a, b
# and c in column col; its primary is a (the first write in byte order),
# its first secondary b.

load helpers

setup() {
	perc_fresh_dir
	PAUSED_PIDS=()
}

teardown() {
	local p
	for p in "${PAUSED_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	stop_servers
}

FAILPOINTS="after-prewrite-primary after-prewrite after-commit-primary
	after-commit-secondary"

# The fields joined by tabs.
tsv() {
	local IFS=$'\t'
	printf '%s' "$*"
}

# olds: a=old-a, b=old-b, c=old-c, committed.
olds() {
	perc set a col old-a
	perc set b col old-b
	perc set c col old-c
}

# begin_t: T begins and writes a=new-a, b=new-b, c=new-c.
begin_t() {
	T=$(perc begin)
	perc set -t "$T" a col new-a
	perc set -t "$T" b col new-b
	perc set -t "$T" c col new-c
}

# wedge FP: olds, then T stopped dead at failpoint FP (exit 137).
wedge() {
	olds
	begin_t
	run -137 env PERC_FAILPOINT="$1" perc commit -t "$T"
	assert_output ''
}

# What a commit stopped at FP has done: "old" or "new" values.
fate() {
	case $1 in
	after-prewrite*) echo old ;;
	*) echo new ;;
	esac
}

# The values of a, b and c (the rows in $ROWS if set), '-' for none,
# 'exitN' for a failed get.
vals() {
	local r v rc out=
	for r in ${ROWS:-a b c}; do
		rc=0
		v=$(timeout 20 perc get "$r" col) || rc=$?
		case $rc in
		0) ;;
		1) v=- ;;
		*) v="exit$rc" ;;
		esac
		out="$out$v "
	done
	echo "${out% }"
}

# Every raw cell of rows a to e, lock ages left out.
dump() {
	local r
	for r in a b c d e; do
		perc show "$r" | sed 's/ age=[0-9.]*s / /'
	done
}

# locked_by TXN ROW [STATE]: (ROW, col) carries TXN's lock.
locked_by() {
	perc show "$2" col | grep -q "^col	lock	$1	.* owner-state=${3:-[a-z]*}\$"
}

# committed_cell ROW: (ROW, col) has T's put write record.
committed_cell() {
	perc show "$1" col | grep -q "^col	write	[0-9]*	op=put start=$T\$"
}

# The commit timestamp of T's write record on (ROW, col).
commit_ts_of() {
	perc show "$1" col | awk -F '\t' -v t="$T" \
	    '$2 == "write" && $4 ~ "^op=(put|delete|lock) start=" t "$" { print $3 }'
}

# start_paused FP PAUSE [TTL [LAST]]: T (already begun) commits in the
# background and stays alive at FP for PAUSE seconds (scaled under
# valgrind).  Its locks live TTL seconds (default 30, scaled too, so that
# a scaled pause never outlasts them).  Returns once it is there.  LAST
# (default c) is the last row T writes.  PAUSED_PID is its pid; stdout
# and stderr in $BATS_TEST_TMPDIR/out and err.
start_paused() {
	local fp=$1 pause ttl=${3:-$(scaled 30)} last=${4:-c}
	pause=$(scaled "$2")
	PERC_LOCK_TTL=$ttl PERC_FAILPOINT="$fp:pause=$pause" perc commit -t "$T" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	PAUSED_PID=$!
	PAUSED_PIDS+=("$PAUSED_PID")
	case $fp in
	after-prewrite-primary) poll 100 locked_by "$T" a ;;
	after-prewrite) poll 100 locked_by "$T" "$last" ;;
	after-commit-primary) poll 100 committed_cell a ;;
	after-commit-secondary) poll 100 committed_cell b ;;
	esac || fail "the committer never reached $fp"
	kill -0 "$PAUSED_PID" || fail "the committer at $fp exited early"
}

# reap: end the committer's pause (SIGCONT does) and wait (bounded) for
# it; its status in RC.
reap() {
	kill -CONT "$PAUSED_PID" 2> /dev/null || true
	poll "$(scaled 300)" eval '! kill -0 "$PAUSED_PID" 2>/dev/null' ||
		fail "the paused committer still runs after $(scaled 30) s"
	RC=0
	wait "$PAUSED_PID" || RC=$?
}

@test "after-commit-primary: the next reader rolls the secondary forward" {
	wedge after-commit-primary
	run -0 timeout 20 perc get b col
	assert_output new-b
}

@test "after-prewrite: the next reader rolls both writes back" {
	wedge after-prewrite
	run -0 timeout 20 perc get b col
	assert_output old-b
	run -0 timeout 20 perc get a col
	assert_output old-a
}

@test "every failpoint leaves a store that resolve-locks can clean" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 timeout 30 perc resolve-locks --all
		[ -n "$output" ] || fail "$fp: no lock left behind"
		run -0 timeout 30 perc resolve-locks --all
		assert_output ''
		PERC_LOCK_TIMEOUT=0.5 run -0 timeout 30 perc scan
		f=$(fate "$fp")
		assert_output "$(printf 'a\tcol\t%s-a\nb\tcol\t%s-b\nc\tcol\t%s-c' "$f" "$f" "$f")"
	done
}

@test "after each failpoint readers see all or nothing, whichever cell they read first" {
	for fp in $FAILPOINTS; do
		for first in a b c; do
			perc_fresh_dir "db-$fp-$first"
			wedge "$fp"
			f=$(fate "$fp")
			run -0 timeout 20 perc get "$first" col
			assert_output "$f-$first"
			run -0 vals
			assert_output "$f-a $f-b $f-c"
		done
	done
}

@test "after each failpoint a scan sees all or nothing; a second scan agrees" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		f=$(fate "$fp")
		want=$(printf 'a\tcol\t%s-a\nb\tcol\t%s-b\nc\tcol\t%s-c' "$f" "$f" "$f")
		run -0 timeout 20 perc scan --column col
		assert_output "$want"
		run -0 timeout 20 perc scan
		assert_output "$want"
		run -0 perc resolve-locks
		assert_output ''
	done
}

@test "a snapshot older than a crashed transaction sees the old values" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		olds
		before=$(perc ts)
		begin_t
		run -137 env PERC_FAILPOINT="$fp" perc commit -t "$T"
		for r in a b c; do
			run -0 timeout 20 perc get --at "$before" "$r" col
			assert_output "old-$r"
		done
		run -0 timeout 20 perc scan --at "$before"
		assert_output "$(printf 'a\tcol\told-a\nb\tcol\told-b\nc\tcol\told-c')"
	done
}

@test "a snapshot older than a live owner's locks reads at once, whatever the failpoint (PEERS 4)" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		olds
		before=$(perc ts)
		begin_t
		start_paused "$fp" 600
		for r in a b c; do
			PERC_LOCK_TIMEOUT=20 run -0 timeout 5 perc get --at "$before" "$r" col
			assert_output "old-$r"
		done
		kill -0 "$PAUSED_PID" || fail "$fp: the owner exited before the check"
		kill -9 "$PAUSED_PID"
		wait "$PAUSED_PID" 2>/dev/null || true
	done
}

@test "past the commit point every secondary commits at the primary's commit ts (PEERS 28, 29)" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		ct=$(commit_ts_of a)
		[[ $ct =~ ^[0-9]+$ ]] || fail "$fp: no write record on the primary"
		for r in a b c; do
			run -0 timeout 20 perc get --at $((ct - 1)) "$r" col
			assert_output "old-$r"
			run -0 timeout 20 perc get --at "$ct" "$r" col
			assert_output "new-$r"
		done
		[ "$(commit_ts_of b)" = "$ct" ]
		[ "$(commit_ts_of c)" = "$ct" ]
	done
}

@test "a reader rolls back a dead owner; the owner's re-commit exits 3, changing nothing (PEERS 19, 32)" {
	for fp in after-prewrite-primary after-prewrite; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 timeout 20 perc get a col
		assert_output old-a
		# The reader left a rollback record on the primary.
		run -0 perc show a col
		assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
		before=$(dump)
		run -3 --separate-stderr timeout 20 perc commit -t "$T"
		[ "${#stderr_lines[@]}" -eq 1 ]
		assert_output ''
		[ "$(dump)" = "$before" ] || fail "$fp: the failed re-commit wrote"
		run -5 perc commit -t "$T"
		run -0 vals
		assert_output 'old-a old-b old-c'
		run -0 perc resolve-locks
		assert_output ''
	done
}

@test "a reader of a secondary rolls the owner back too; re-commit exits 3 (PEERS 19, 23)" {
	wedge after-prewrite
	run -0 timeout 20 perc get c col
	assert_output old-c
	run -3 timeout 20 perc commit -t "$T"
	run -0 vals
	assert_output 'old-a old-b old-c'
	run -0 perc resolve-locks --all
	assert_output ''
}

@test "re-commit after a crash before the commit point, nobody in between, finishes it (PEERS 23)" {
	for fp in after-prewrite-primary after-prewrite; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 --separate-stderr timeout 20 perc commit -t "$T"
		[ -z "$stderr" ]
		[[ $output =~ ^[0-9]+$ ]]
		ct=$output
		[ "$ct" -gt "$T" ]
		[ "$(commit_ts_of a)" = "$ct" ]
		[ "$(commit_ts_of b)" = "$ct" ]
		[ "$(commit_ts_of c)" = "$ct" ]
		run -0 vals
		assert_output 'new-a new-b new-c'
		run -0 perc resolve-locks --all
		assert_output ''
		run -5 perc commit -t "$T"
	done
}

@test "re-commit past the commit point prints the commit ts the primary has (PEERS 18, 29)" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		ct=$(commit_ts_of a)
		[[ $ct =~ ^[0-9]+$ ]]
		sa=$(perc show a col)
		run -0 --separate-stderr timeout 20 perc commit -t "$T"
		[ -z "$stderr" ]
		assert_output "$ct"
		# The primary is as it was: no second write record.
		[ "$(perc show a col)" = "$sa" ]
		[ "$(commit_ts_of b)" = "$ct" ]
		[ "$(commit_ts_of c)" = "$ct" ]
		[ "$(perc show b col | grep -c "start=$T\$")" -eq 1 ]
		run -0 vals
		assert_output 'new-a new-b new-c'
		run -5 perc commit -t "$T"
	done
}

@test "re-commit after a reader rolled it forward prints the same ts, changes nothing (PEERS 18)" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		ct=$(commit_ts_of a)
		run -0 vals
		assert_output 'new-a new-b new-c'
		before=$(dump)
		run -0 timeout 20 perc commit -t "$T"
		assert_output "$ct"
		[ "$(dump)" = "$before" ] || fail "$fp: re-commit of a committed txn wrote"
	done
}

@test "re-commit past the commit point after a newer write to the primary still prints its ts (PEERS 18, c5)" {
	# The primary's own commit record is found by start ts, under the
	# newer write record of another transaction (PEERS (c) 5).
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		ct=$(commit_ts_of a)
		run -0 timeout 20 perc set a col later-a
		run -0 --separate-stderr timeout 20 perc commit -t "$T"
		[ -z "$stderr" ] || fail "$fp: re-commit said: $stderr"
		assert_output "$ct"
		# The re-commit finished the secondaries itself.
		[ "$(commit_ts_of c)" = "$ct" ]
		run -0 perc resolve-locks --dry-run
		assert_output ''
		run -0 vals
		assert_output 'later-a new-b new-c'
		run -5 perc commit -t "$T"
	done
}

@test "a crash past the commit point counts as committed for everyone (PEERS 29)" {
	olds
	# t0 began before T and writes c, which T wrote too.
	t0=$(perc begin)
	perc set -t "$t0" c col t0
	begin_t
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$T"
	ct=$(commit_ts_of a)
	# A later transaction reads T's values and builds on them.
	t2=$(perc begin)
	run -0 timeout 20 perc get -t "$t2" b col
	assert_output new-b
	perc set -t "$t2" b col after-new-b
	run -0 timeout 20 perc commit -t "$t2"
	# t0 conflicts with T's committed write on c.
	run -3 --separate-stderr timeout 20 perc commit -t "$t0"
	[ "${#stderr_lines[@]}" -eq 1 ]
	# Aborting T now cannot undo it: it is finished (exit 5).
	run -5 timeout 20 perc abort -t "$T"
	run -0 perc get --at "$ct" a col
	assert_output new-a
	run -0 vals
	assert_output 'new-a after-new-b new-c'
}

@test "a blind writer overrides a dead owner's locks and commits (PEERS 16)" {
	wedge after-prewrite
	t2=$(perc begin)
	perc set -t "$t2" a col blind-a
	perc set -t "$t2" b col blind-b
	run -0 --separate-stderr timeout 20 perc commit -t "$t2"
	[ -z "$stderr" ]
	[[ $output =~ ^[0-9]+$ ]]
	# T's lock on c, untouched by t2, is rolled back through the primary.
	run -0 vals
	assert_output 'blind-a blind-b old-c'
	run -3 timeout 20 perc commit -t "$T"
	run -0 perc resolve-locks --all
	assert_output ''
	# T's cells are gone: no data of T anywhere.
	for r in a b c; do
		run -0 perc show "$r" col
		refute_line --regexp $'\t(lock|data)\t'"$T"$'\t'
	done
}

@test "a blind writer that began before the dead owner overrides it too (PEERS 16)" {
	olds
	t2=$(perc begin)
	perc set -t "$t2" b col blind-b
	begin_t
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$T"
	run -0 timeout 20 perc commit -t "$t2"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 vals
	assert_output 'old-a blind-b old-c'
	run -3 timeout 20 perc commit -t "$T"
}

@test "a blind writer after a crash past the commit point keeps T's commit below it" {
	wedge after-commit-primary
	ct=$(commit_ts_of a)
	t2=$(perc begin)
	perc set -t "$t2" b col blind-b
	perc set -t "$t2" c col blind-c
	run -0 timeout 20 perc commit -t "$t2"
	ct2=$output
	[ "$ct2" -gt "$ct" ]
	run -0 perc get --at "$ct" b col
	assert_output new-b
	run -0 perc get --at "$ct" c col
	assert_output new-c
	run -0 vals
	assert_output 'new-a blind-b blind-c'
}

@test "commit on a cell a live owner locked: exit 3 at once, the lock untouched (PEERS 20, 24)" {
	olds
	begin_t
	start_paused after-prewrite 600
	before=$(dump)
	t2=$(perc begin)
	perc set -t "$t2" b col t2
	PERC_LOCK_TIMEOUT=10 run -3 --separate-stderr timeout 5 perc commit -t "$t2"
	[ "${#stderr_lines[@]}" -eq 1 ]
	# T's locks and data are as they were.
	dump | grep -v "	write	$t2	op=rollback start=$t2\$" > "$BATS_TEST_TMPDIR/after"
	[ "$(cat "$BATS_TEST_TMPDIR/after")" = "$before" ] ||
		fail "the failed commit touched the live owner's cells"
	run -5 perc commit -t "$t2"
	kill -0 "$PAUSED_PID" || fail "the owner exited before the check"
	reap
	[ "$RC" -eq 0 ] || fail "the live owner exited $RC"
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "abort, then abort again: exit 5, nothing changes (PEERS 21)" {
	wedge after-prewrite
	run -0 timeout 20 perc abort -t "$T"
	before=$(dump)
	run -5 --separate-stderr perc abort -t "$T"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$(dump)" = "$before" ]
}

@test "abort of a transaction past its commit point changes no value (PEERS 21)" {
	for fp in after-commit-primary after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		ct=$(commit_ts_of a)
		run -5 timeout 20 perc abort -t "$T"     # finished
		[ "$(commit_ts_of a)" = "$ct" ]
		run -0 vals
		assert_output 'new-a new-b new-c'
		[ "$(commit_ts_of c)" = "$ct" ]
	done
}

@test "abort after a partial commit removes all its locks; the handle is then exit 5 (PEERS 25)" {
	for fp in after-prewrite-primary after-prewrite; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 --separate-stderr timeout 20 perc abort -t "$T"
		[ -z "$stderr" ]
		run -0 perc resolve-locks --all --dry-run
		assert_output ''
		for r in a b c; do
			run -0 perc show "$r" col
			refute_line --regexp $'\tlock\t'
			refute_line --regexp $'\tdata\t'"$T"$'\t'
		done
		PERC_LOCK_TIMEOUT=0.5 run -0 vals
		assert_output 'old-a old-b old-c'
		run -5 perc commit -t "$T"
		run -5 perc abort -t "$T"
		run -5 perc get -t "$T" a col
		run -5 perc set -t "$T" a col x
		run -5 perc del -t "$T" a col
		run -0 vals
		assert_output 'old-a old-b old-c'
	done
}

@test "a live owner makes a reader exit 4; once it finishes the reader sees its values" {
	olds
	begin_t
	start_paused after-prewrite 600
	for r in a c; do
		PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 perc get "$r" col
		[ "${#stderr_lines[@]}" -eq 1 ]
		assert_output ''
	done
	PERC_LOCK_TIMEOUT=1 run -4 timeout 20 perc scan
	kill -0 "$PAUSED_PID" || fail "the owner exited before the readers timed out"
	reap
	[ "$RC" -eq 0 ] || fail "the owner exited $RC"
	ct=$(cat "$BATS_TEST_TMPDIR/out")
	[ "$(commit_ts_of a)" = "$ct" ]
	PERC_LOCK_TIMEOUT=1 run -0 vals
	assert_output 'new-a new-b new-c'
	run -0 perc scan --column col
	assert_output "$(printf 'a\tcol\tnew-a\nb\tcol\tnew-b\nc\tcol\tnew-c')"
}

@test "a reader that waits for a live owner returns once the owner commits" {
	olds
	begin_t
	start_paused after-prewrite 6 # then it goes on by itself
	# Snapshot taken before the commit timestamp: the old value, after
	# the wait, never the new one and never a timeout.
	PERC_LOCK_TIMEOUT=$(scaled 20) run -0 timeout "$(scaled 30)" perc get b col
	assert_output old-b
	reap
	[ "$RC" -eq 0 ]
	run -0 perc get b col
	assert_output new-b
}

@test "kill -9 of a live owner at each failpoint: readers clean up at once, all or nothing" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		olds
		begin_t
		start_paused "$fp" 600
		kill -9 "$PAUSED_PID"
		wait "$PAUSED_PID" 2>/dev/null || true
		f=$(fate "$fp")
		PERC_LOCK_TIMEOUT=1 run -0 vals
		assert_output "$f-a $f-b $f-c"
		run -0 perc resolve-locks
		assert_output ''
	done
}

@test "an owner whose expired lock a reader rolled back cannot commit; other commits stay (PEERS 32)" {
	olds
	begin_t
	start_paused after-prewrite 600 0.5
	# Meanwhile another transaction commits on other cells.
	run -0 perc set d col other
	poll 100 locked_by "$T" a expired || fail "the lock never expired"
	kill -0 "$PAUSED_PID" || fail "the owner exited before its lock expired"
	run -0 timeout 20 perc get a col
	assert_output old-a
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
	reap
	[ "$RC" -eq 3 ] || fail "the rolled-back owner exited $RC"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/err")" -eq 1 ]
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
	PERC_LOCK_TIMEOUT=1 run -0 vals
	assert_output 'old-a old-b old-c'
	run -0 perc get d col
	assert_output other
	run -0 perc resolve-locks --all
	assert_output ''
}

@test "a commit that conflicts on a secondary rolls itself back, the primary marked (PEERS 34)" {
	olds
	# T2 holds a live lock on b.
	T2=$(perc begin)
	perc set -t "$T2" b col t2
	T=$T2
	start_paused after-prewrite 600 "$(scaled 30)" b
	t1=$(perc begin)
	perc set -t "$t1" a col t1
	perc set -t "$t1" b col t1
	perc set -t "$t1" c col t1
	PERC_LOCK_TIMEOUT=10 run -3 --separate-stderr timeout 5 perc commit -t "$t1"
	[ "${#stderr_lines[@]}" -eq 1 ]
	# t1's primary a: a rollback record, no lock, no data of t1.
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$t1" "op=rollback start=$t1")"
	refute_line --regexp $'\t(lock|data)\t'"$t1"$'\t'
	run -0 perc show c col
	refute_line --regexp $'\t(lock|data)\t'"$t1"$'\t'
	# T2's lock on b is untouched.
	locked_by "$T2" b alive
	kill -0 "$PAUSED_PID" || fail "T2 exited before the check"
	reap
	[ "$RC" -eq 0 ]
	run -0 vals
	assert_output 'old-a t2 old-c'
}

@test "a secondary whose committed primary is now locked by a live B rolls forward (PEERS 35)" {
	wedge after-commit-primary
	ct=$(commit_ts_of a)
	tA=$T
	# B, alive, locks a (A's primary) afresh.
	T=$(perc begin)
	tB=$T
	perc set -t "$tB" a col B
	start_paused after-prewrite 600 "$(scaled 30)" a
	# A reader of b must not wait for B: A committed at ct.
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get b col
	assert_output new-b
	T=$tA
	[ "$(commit_ts_of b)" = "$ct" ]
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get c col
	assert_output new-c
	[ "$(commit_ts_of c)" = "$ct" ]
	locked_by "$tB" a alive || fail "B's lock was touched"
	kill -0 "$PAUSED_PID" || fail "B exited before the check"
	reap
	[ "$RC" -eq 0 ]
	run -0 vals
	assert_output 'B new-b new-c'
}

@test "a secondary whose rolled-back primary is now locked by a live B rolls back (PEERS 36)" {
	wedge after-prewrite
	tA=$T
	# B, alive, cleans A's dead lock on a and locks a itself.
	T=$(perc begin)
	tB=$T
	perc set -t "$tB" a col B
	start_paused after-prewrite 600 "$(scaled 30)" a
	locked_by "$tA" b dead || fail "A's lock on b should still be there"
	# A reader of b must judge A by A's start ts, not by B's lock.
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get b col
	assert_output old-b
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc get c col
	assert_output old-c
	locked_by "$tB" a alive || fail "B's lock was touched"
	run -0 perc resolve-locks
	assert_output "$(tsv a col "$tB" alive)"
	kill -0 "$PAUSED_PID" || fail "B exited before the check"
	reap
	[ "$RC" -eq 0 ]
	run -0 vals
	assert_output 'B old-b old-c'
	# resolve-locks found A rolled back, finished: its journal went.
	run -5 perc commit -t "$tA"
}

@test "a crash with a delete and a get --lock cell: all or nothing" {
	for fp in $FAILPOINTS; do
		perc_fresh_dir "db-$fp"
		olds
		T=$(perc begin)
		perc del -t "$T" a col
		perc set -t "$T" b col new-b
		run -0 perc get -t "$T" --lock c col
		run -137 env PERC_FAILPOINT="$fp" perc commit -t "$T"
		case $(fate "$fp") in
		old) want='old-a old-b old-c' act=rolled-back ;;
		new) want='- new-b old-c' act=rolled-forward ;;
		esac
		run -0 vals
		assert_output "$want"
		# Readers may pass the lock-only lock on c, which changes no
		# value; resolve-locks settles it by the primary.
		run -0 perc resolve-locks
		[ -z "$output" ] || assert_output "$(tsv c col "$T" "$act")"
		run -0 perc resolve-locks
		assert_output ''
		run -0 vals
		assert_output "$want"
		if [ "$act" = rolled-forward ]; then
			ct=$(commit_ts_of a)
			[[ $ct =~ ^[0-9]+$ ]]
			[ "$(commit_ts_of b)" = "$ct" ]
			[ "$(commit_ts_of c)" = "$ct" ]
		fi
	done
}

@test "the data of a rolled-back transaction is visible at no snapshot" {
	wedge after-prewrite
	run -0 perc resolve-locks
	later=$(perc ts)
	for r in a b c; do
		run -0 perc get --at "$later" "$r" col
		assert_output "old-$r"
		run -0 perc get --at "$T" "$r" col
		assert_output "old-$r"
	done
	run -0 perc scan --at "$later"
	refute_output --partial new-
}
