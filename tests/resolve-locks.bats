#!/usr/bin/env bats
# tests/resolve-locks.bats - perc resolve-locks: cleaning up stuck locks
#
# PEERS scenarios 26-28, 30-33, 37-39.  Output lines are
# ROW<TAB>COLUMN<TAB>START_TS<TAB>ACTION.

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

# The fields joined by tabs.
tsv() {
	local IFS=$'\t'
	printf '%s' "$*"
}

# wedge FP: a transaction T writing a=new-a, b=new-b, c=new-c (column
# col) over old-a, old-b, old-c, stopped dead at failpoint FP.  Its
# primary is a, its first secondary b.
wedge() {
	perc set a col old-a
	perc set b col old-b
	perc set c col old-c
	T=$(perc begin)
	perc set -t "$T" a col new-a
	perc set -t "$T" b col new-b
	perc set -t "$T" c col new-c
	run -137 env PERC_FAILPOINT="$1" perc commit -t "$T"
	assert_output ''
}

# The values of a, b and c, '-' for none, 'exitN' for a failed get.
vals() {
	local r v rc out=
	for r in a b c; do
		rc=0
		v=$(PERC_LOCK_TIMEOUT=${VALS_TIMEOUT:-2} perc get "$r" col) || rc=$?
		case $rc in
		0) ;;
		1) v=- ;;
		*) v="exit$rc" ;;
		esac
		out="$out$v "
	done
	echo "${out% }"
}

# Every raw cell of rows a to e (and of $EXTRA_ROWS), lock ages left out.
dump() {
	local r
	for r in a b c d e $EXTRA_ROWS; do
		perc show "$r" | sed 's/ age=[0-9.]*s / /'
	done
}

# Lines of TSV for "ACTION ROW..." with start timestamp $T, column col.
expect() {
	local action=$1 r
	shift
	for r in "$@"; do
		tsv "$r" col "$T" "$action"
		echo
	done
}

# has_lock ROW STATE: the lock of T on (ROW, col) shows owner-state=STATE.
has_lock() {
	perc show "$1" col | grep -q "^col	lock	$T	.* owner-state=$2\$"
}

# committed_cell ROW: (ROW, col) has T's put write record.
committed_cell() {
	perc show "$1" col | grep -q "^col	write	[0-9]*	op=put start=$T\$"
}

# paused FP PAUSE [TTL]: like wedge, but the committer stays alive at FP
# for PAUSE seconds (scaled under valgrind) and then carries on.  Returns once it is there.
# PAUSED_PID is its pid; its stdout and stderr go to $BATS_TEST_TMPDIR/out
# and err.
paused() {
	local fp=$1 pause ttl=${3:-30}
	pause=$(scaled "$2")
	perc set a col old-a
	perc set b col old-b
	perc set c col old-c
	T=$(perc begin)
	perc set -t "$T" a col new-a
	perc set -t "$T" b col new-b
	perc set -t "$T" c col new-c
	PERC_LOCK_TTL=$ttl PERC_FAILPOINT="$fp:pause=$pause" perc commit -t "$T" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	PAUSED_PID=$!
	PAUSED_PIDS+=("$PAUSED_PID")
	# Each state below is reached only once the committer is at FP.
	case $fp in
	after-prewrite-primary) poll 100 has_lock a '[a-z]*' ;;
	after-prewrite) poll 100 has_lock c '[a-z]*' ;;
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

# The commit timestamp of T's write record on (ROW, col).
commit_ts_of() {
	perc show "$1" col | awk -F '\t' -v t="$T" \
	    '$2 == "write" && $4 == "op=put start=" t { print $3 }'
}

@test "a clean store: nothing printed, exit 0" {
	run -0 --separate-stderr perc resolve-locks
	assert_output ''
	[ -z "$stderr" ]
	perc set r c v
	run -0 --separate-stderr perc resolve-locks --all
	assert_output ''
	run -0 perc get r c
	assert_output v
}

@test "after-prewrite: every lock rolled back, old values, rollback record on the primary (PEERS 26)" {
	wedge after-prewrite
	run -0 --separate-stderr timeout 20 perc resolve-locks
	[ -z "$stderr" ]
	assert_output "$(expect rolled-back a b c)"
	run -0 vals
	assert_output 'old-a old-b old-c'
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
	refute_line --partial new-a
	for r in b c; do
		run -0 perc show "$r" col
		refute_line --regexp $'\tlock\t'
		refute_line --partial "new-$r"
	done
	# Rolled back is finished: its journal went with it.
	run -5 perc commit -t "$T"
}

@test "after-prewrite-primary: only the primary is locked and rolled back (PEERS 27)" {
	wedge after-prewrite-primary
	run -0 perc show b col
	refute_line --regexp $'\t(lock|data)\t'"$T"$'\t'
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-back a)"
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
	run -0 vals
	assert_output 'old-a old-b old-c'
	# No secondary was ever written.
	for r in b c; do
		run -0 perc show "$r" col
		refute_line --partial "$T"
	done
}

@test "after-commit-primary: secondaries rolled forward at the primary's commit ts (PEERS 28)" {
	wedge after-commit-primary
	ct=$(commit_ts_of a)
	[[ $ct =~ ^[0-9]+$ ]] || fail "no commit record on the primary"
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-forward b c)"
	for r in b c; do
		run -0 perc show "$r" col
		assert_line --index 0 "$(tsv col write "$ct" "op=put start=$T")"
		refute_line --regexp $'\tlock\t'
	done
	run -0 vals
	assert_output 'new-a new-b new-c'
	run -0 perc get --at $((ct - 1)) c col
	assert_output old-c
}

@test "secondaries roll forward even once a newer write covers the primary (PEERS c5, c6)" {
	wedge after-commit-primary
	ct=$(commit_ts_of a)
	run -0 timeout 20 perc set a col later-a
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-forward b c)"
	[ "$(commit_ts_of b)" = "$ct" ]
	[ "$(commit_ts_of c)" = "$ct" ]
	run -0 vals
	assert_output 'later-a new-b new-c'
}

@test "after-commit-secondary: the remaining lock rolled forward (PEERS 30)" {
	wedge after-commit-secondary
	ct=$(commit_ts_of a)
	[ "$(commit_ts_of b)" = "$ct" ]
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-forward c)"
	[ "$(commit_ts_of c)" = "$ct" ]
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "resolve-locks is idempotent: a second run prints nothing and changes nothing" {
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 timeout 20 perc resolve-locks
		[ -n "$output" ] || fail "$fp: nothing resolved"
		before=$(dump)
		run -0 --separate-stderr timeout 20 perc resolve-locks
		assert_output ''
		[ -z "$stderr" ]
		run -0 timeout 20 perc resolve-locks --all
		assert_output ''
		[ "$(dump)" = "$before" ] || fail "$fp: a second run changed cells"
		run -0 timeout 20 perc scan
	done
}

@test "--dry-run changes nothing and prints what a real run then does (PEERS 39)" {
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		before=$(dump)
		run -0 --separate-stderr timeout 20 perc resolve-locks --dry-run
		[ -z "$stderr" ]
		dry=$output
		[ -n "$dry" ] || fail "$fp: the dry run met no lock"
		[ "$(dump)" = "$before" ] || fail "$fp: --dry-run changed cells"
		run -0 timeout 20 perc resolve-locks --dry-run --all
		assert_output "$dry"
		[ "$(dump)" = "$before" ] || fail "$fp: --dry-run --all changed cells"
		run -0 timeout 20 perc resolve-locks
		assert_output "$dry"
	done
}

@test "--dry-run leaves a crashed commit that can still be finished" {
	wedge after-prewrite
	run -0 perc resolve-locks --dry-run
	assert_output "$(expect rolled-back a b c)"
	run -0 perc commit -t "$T"
	[[ $output =~ ^[0-9]+$ ]]
	run -0 vals
	assert_output 'new-a new-b new-c'
	run -0 perc resolve-locks
	assert_output ''
}

# journals: the journals in txn/, by name, on one line.
journals() {
	ls "$PERC_DIR/txn" | grep -x '[1-9][0-9]*' | tr '\n' ' ' || true
}

@test "the journal of a crashed commit that resolve-locks finished goes; its handle then exits 5" {
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		[ -f "$PERC_DIR/txn/$T" ]
		run -0 timeout 20 perc resolve-locks
		[ -z "$(journals)" ] || fail "$fp: journals left: $(journals)"
		run -5 --separate-stderr perc abort -t "$T"
		assert_error_line "*$T*"
		run -5 perc commit -t "$T"
	done
}

@test "resolve-locks removes the journal of a crash that readers already settled" {
	for fp in after-prewrite after-commit-primary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		run -0 vals             # the reader settles every lock
		run -0 --separate-stderr timeout 20 perc resolve-locks
		assert_output ''
		[ -z "$(journals)" ] || fail "$fp: journals left: $(journals)"
	done
}

@test "resolve-locks removes the journal of a crash that gc settled and collected" {
	wedge after-prewrite
	perc set a col newer         # gc keeps a's newest version only
	run -0 perc gc --retain 0
	run -0 perc show a col
	refute_line --partial "start=$T"
	[ -f "$PERC_DIR/txn/$T" ]
	run -0 timeout 20 perc resolve-locks
	assert_output ''
	[ -z "$(journals)" ] || fail "journals left: $(journals)"
	run -5 perc commit -t "$T"
}

@test "resolve-locks keeps the journals of open transactions and of live commits" {
	perc set d col old-d
	open=$(perc begin)
	perc set -t "$open" d col from-open
	paused after-prewrite 30
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect alive a b c)"
	[ -f "$PERC_DIR/txn/$open" ] && [ -f "$PERC_DIR/txn/$T" ]
	reap
	[ "$RC" -eq 0 ]
	run -0 perc resolve-locks
	assert_output ''
	[ "$(journals)" = "$open " ]
	run -0 perc commit -t "$open"
	run -0 perc get d col
	assert_output from-open
}

@test "a live owner's locks are printed alive and left alone; it then commits (PEERS 31, 39)" {
	paused after-prewrite 60
	before=$(dump)
	run -0 --separate-stderr timeout 20 perc resolve-locks
	[ -z "$stderr" ]
	assert_output "$(expect alive a b c)"
	run -0 timeout 20 perc resolve-locks --dry-run
	assert_output "$(expect alive a b c)"
	[ "$(dump)" = "$before" ] || fail "resolve-locks touched a live lock"
	kill -0 "$PAUSED_PID" || fail "the committer exited before the check"
	reap
	[ "$RC" -eq 0 ] || fail "the live committer exited $RC: $(cat "$BATS_TEST_TMPDIR/err")"
	[[ $(cat "$BATS_TEST_TMPDIR/out") =~ ^[0-9]+$ ]]
	run -0 vals
	assert_output 'new-a new-b new-c'
	run -0 perc resolve-locks
	assert_output ''
}

@test "a live owner at after-prewrite-primary: alive, and a reader times out (PEERS 31)" {
	paused after-prewrite-primary 60
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect alive a)"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr timeout 20 perc get a col
	assert_output ''
	kill -0 "$PAUSED_PID" || fail "the committer exited before the check"
	reap
	[ "$RC" -eq 0 ]
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "--all rolls a live owner back; its commit then exits 3, nothing half applied" {
	paused after-prewrite 60
	run -0 --separate-stderr timeout 20 perc resolve-locks --all
	[ -z "$stderr" ]
	assert_output "$(expect rolled-back a b c)"
	kill -0 "$PAUSED_PID" || fail "the committer exited before --all ran"
	reap
	[ "$RC" -eq 3 ] || fail "the rolled-back owner's commit exited $RC"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/err")" -eq 1 ]
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
	run -0 vals
	assert_output 'old-a old-b old-c'
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
	run -0 perc resolve-locks --all
	assert_output ''
	run -5 perc commit -t "$T"
}

@test "--all at after-prewrite-primary: the owner writes no secondary afterwards" {
	paused after-prewrite-primary 60
	run -0 timeout 20 perc resolve-locks --all
	assert_output "$(expect rolled-back a)"
	kill -0 "$PAUSED_PID" || fail "the committer exited before --all ran"
	reap
	[ "$RC" -eq 3 ] || fail "the rolled-back owner's commit exited $RC"
	# No lock and no data of T is left on its secondaries (a rollback
	# record there is fine).
	run -0 perc resolve-locks --all
	assert_output ''
	for r in b c; do
		run -0 perc show "$r" col
		refute_line --regexp $'\t(lock|data)\t'"$T"$'\t'
		refute_line --regexp "op=(put|delete|lock) start=$T\$"
	done
	PERC_LOCK_TIMEOUT=1 run -0 vals
	assert_output 'old-a old-b old-c'
}

@test "--all past the commit point rolls forward; the owner still commits at the same ts" {
	paused after-commit-primary 60
	ct=$(commit_ts_of a)
	run -0 timeout 20 perc resolve-locks --all
	assert_output "$(expect rolled-forward b c)"
	reap
	[ "$RC" -eq 0 ] || fail "the owner exited $RC: $(cat "$BATS_TEST_TMPDIR/err")"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "$ct" ]
	[ "$(commit_ts_of b)" = "$ct" ]
	[ "$(commit_ts_of c)" = "$ct" ]
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "--dry-run --all on a live owner changes nothing; the owner commits" {
	paused after-prewrite 60
	before=$(dump)
	run -0 timeout 20 perc resolve-locks --dry-run --all
	assert_output "$(expect rolled-back a b c)"
	[ "$(dump)" = "$before" ]
	reap
	[ "$RC" -eq 0 ]
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "a live owner past its TTL is rolled back; its commit exits 3 (PEERS 31, 32, 38)" {
	paused after-prewrite 60 1
	poll 100 has_lock a expired || fail "the lock never expired: $(perc show a col)"
	kill -0 "$PAUSED_PID" || fail "the committer exited before the lock expired"
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-back a b c)"
	# Lock and data are gone, a rollback record stands on the primary.
	run -0 perc show a col
	assert_line --index 0 "$(tsv col write "$T" "op=rollback start=$T")"
	refute_line --partial new-a
	reap
	[ "$RC" -eq 3 ] || fail "the expired owner's commit exited $RC"
	run -0 vals
	assert_output 'old-a old-b old-c'
}

@test "a lock within its TTL is unchanged; rolled back is no action (PEERS 38)" {
	paused after-prewrite 60 60
	before=$(dump)
	run -0 perc resolve-locks
	assert_output "$(expect alive a b c)"
	[ "$(dump)" = "$before" ]
	reap
	[ "$RC" -eq 0 ]
	wedge after-prewrite
	run -0 perc resolve-locks
	assert_output "$(expect rolled-back a b c)"
	before=$(dump)
	run -0 perc resolve-locks
	assert_output ''
	[ "$(dump)" = "$before" ]
}

@test "an expired secondary of a committed primary is rolled forward, not back (PEERS 33)" {
	paused after-commit-primary 60 0.5
	ct=$(commit_ts_of a)
	poll 100 has_lock c expired || fail "the lock never expired"
	kill -0 "$PAUSED_PID" || fail "the committer exited before the lock expired"
	run -0 timeout 20 perc resolve-locks
	assert_output "$(expect rolled-forward b c)"
	[ "$(commit_ts_of b)" = "$ct" ]
	[ "$(commit_ts_of c)" = "$ct" ]
	reap
	[ "$RC" -eq 0 ] || fail "the owner exited $RC: $(cat "$BATS_TEST_TMPDIR/err")"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "$ct" ]
	run -0 vals
	assert_output 'new-a new-b new-c'
}

@test "a dead owner's lock is rolled forward however old it is (PEERS 33)" {
	wedge after-commit-primary
	ct=$(commit_ts_of a)
	# Whatever TTL the resolver assumes, a committed primary wins.
	PERC_LOCK_TTL=0.001 run -0 timeout 20 perc resolve-locks --older-than 0
	assert_output "$(expect rolled-forward b c)"
	[ "$(commit_ts_of c)" = "$ct" ]
}

@test "only the dead transaction's locks are resolved, not a live one's (PEERS 37)" {
	# T1, dead, on a and b; T2, alive, on d and e.
	perc set a col old-a
	t1=$(perc begin)
	perc set -t "$t1" a col t1
	perc set -t "$t1" b col t1
	t2=$(perc begin)
	perc set -t "$t2" d col t2
	perc set -t "$t2" e col t2
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t1"
	PERC_FAILPOINT=after-prewrite:pause=$(scaled 60) perc commit -t "$t2" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	PAUSED_PID=$!
	PAUSED_PIDS+=("$PAUSED_PID")
	T=$t2
	poll 100 eval 'perc show e col | grep -q "^col	lock	$t2	"' ||
		fail "T2 never locked e"
	run -0 timeout 20 perc resolve-locks
	assert_output "$(T=$t1 expect rolled-back a b; T=$t2 expect alive d e)"
	run -0 perc show d col
	assert_line --index 0 --regexp "^col	lock	$t2	.*owner-state=alive\$"
	kill -0 "$PAUSED_PID" || fail "T2 exited before the check"
	reap
	[ "$RC" -eq 0 ]
	run -0 perc get d col
	assert_output t2
	run -0 perc get a col
	assert_output old-a
	run -1 perc get b col
}

@test "locks a reader already resolved cause no error (PEERS 37)" {
	for fp in after-prewrite after-commit-primary; do
		perc_fresh_dir "db-$fp"
		wedge "$fp"
		# A reader of b resolves at least b's lock.
		run -0 timeout 20 perc get b col
		run -0 --separate-stderr timeout 20 perc resolve-locks
		[ -z "$stderr" ]
		case $fp in
		after-prewrite) act=rolled-back all="a b c" want='old-a old-b old-c' ;;
		*) act=rolled-forward all="b c" want='new-a new-b new-c' ;;
		esac
		# Whatever is left is resolved the same way, b no longer.
		while IFS=$'\t' read -r r col ts a; do
			[ "$col" = col ] && [ "$ts" = "$T" ] && [ "$a" = "$act" ] ||
				fail "$fp: unexpected line '$r $col $ts $a'"
			[[ " $all " == *" $r "* && $r != b ]] ||
				fail "$fp: unexpected row '$r'"
		done <<< "$output"
		run -0 perc resolve-locks
		assert_output ''
		run -0 vals
		assert_output "$want"
	done
}

@test "several stuck transactions at once, each resolved by its own primary" {
	EXTRA_ROWS="p1 q1 p2 q2 p3 q3 p4 q4"
	# (Not "i": bats 1.8's run with flags clobbers a global i.)
	n=0
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		n=$((n + 1))
		perc set "p$n" col old
		perc set "q$n" col old
		t[n]=$(perc begin)
		perc set -t "${t[n]}" "p$n" col new
		perc set -t "${t[n]}" "q$n" col new
		run -137 env PERC_FAILPOINT="$fp" perc commit -t "${t[n]}"
	done
	run -0 timeout 20 perc resolve-locks
	assert_output "$(tsv p1 col "${t[1]}" rolled-back)
$(tsv p2 col "${t[2]}" rolled-back)
$(tsv q2 col "${t[2]}" rolled-back)
$(tsv q3 col "${t[3]}" rolled-forward)"
	run -0 perc scan --column col
	assert_output "$(printf 'p1\tcol\told\np2\tcol\told\np3\tcol\tnew\np4\tcol\tnew
q1\tcol\told\nq2\tcol\told\nq3\tcol\tnew\nq4\tcol\tnew')"
}

@test "--older-than only considers locks written more than SECONDS ago" {
	t1=$(perc begin)
	perc set -t "$t1" a col t1
	perc set -t "$t1" b col t1
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t1"
	# Wait (bounded) until t1's locks are more than 2 s old.
	old_enough() {
		perc show a col | head -n 1 |
		    sed -n 's/.* age=\([0-9.]*\)s .*/\1/p' |
		    awk '{ exit !($1 > 2.1) }'
	}
	poll 100 old_enough || fail "the age of t1's lock never passed 2 s"
	t2=$(perc begin)
	perc set -t "$t2" d col t2
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t2"
	run -0 --separate-stderr timeout 20 perc resolve-locks --older-than 2
	[ -z "$stderr" ]
	assert_output "$(T=$t1 expect rolled-back a b)"
	# t2's lock is untouched; it is younger than 2 s even now.
	age=$(perc show d col | head -n 1 | sed -n 's/.* age=\([0-9.]*\)s .*/\1/p')
	[ -n "$age" ] || fail "t2's lock is gone"
	awk -v a="$age" 'BEGIN { exit !(a < 2) }' ||
		skip "this machine took 2 s between two commands"
	run -0 timeout 20 perc resolve-locks --older-than 1000 --dry-run
	assert_output ''
	run -0 timeout 20 perc resolve-locks --older-than 0.000
	assert_output "$(T=$t2 expect rolled-back d)"
}

@test "--older-than also filters what --dry-run and --all print" {
	paused after-prewrite 60
	run -0 timeout 20 perc resolve-locks --all --older-than 100
	assert_output ''
	run -0 timeout 20 perc resolve-locks --older-than 100 --dry-run
	assert_output ''
	run -0 timeout 20 perc resolve-locks --older-than 0 --dry-run
	assert_output "$(expect alive a b c)"
	reap
	[ "$RC" -eq 0 ]
}

@test "rows and columns are printed escaped" {
	t=$(perc begin)
	printf 'v' | perc set -t "$t" -e 'p\tq\x00' 'c\x20d'
	perc set -t "$t" -e 'r\n' 'c\\' x
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t"
	run -0 perc resolve-locks
	assert_output "$(tsv 'p\tq\x00' 'c d' "$t" rolled-back)
$(tsv 'r\n' 'c\\' "$t" rolled-back)"
}

@test "resolve-locks -h prints the usage on standard output, exit 0" {
	run -0 --separate-stderr perc resolve-locks -h
	[[ $output == "usage: perc resolve-locks "* ]]
	[ -z "$stderr" ]
}

@test "usage errors: exit 2, one line, nothing resolved" {
	wedge after-prewrite
	for args in "extra" "--bogus" "-x" "--older-than" "--older-than abc" \
	    "--older-than -1" "--older-than 1x" "--dry-run extra"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc resolve-locks $args
		[ "${#stderr_lines[@]}" -eq 1 ] ||
			fail "'$args': stderr '$stderr'"
		assert_output ''
	done
	run -0 perc resolve-locks --dry-run
	assert_output "$(expect rolled-back a b c)"
}

@test "resolve-locks outside a data directory exits 6 with one line" {
	mkdir "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/foreign"
	echo precious > "$BATS_TEST_TMPDIR/foreign/notes"
	for d in missing empty foreign; do
		PERC_DIR="$BATS_TEST_TMPDIR/$d" run -6 --separate-stderr perc resolve-locks
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == *"not a perc data directory"* ]]
		assert_output ''
	done
	[ ! -e "$BATS_TEST_TMPDIR/missing" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/empty")" ]
	[ "$(ls -A "$BATS_TEST_TMPDIR/foreign")" = notes ]
}
