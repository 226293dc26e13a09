#!/usr/bin/env bats
# tests/gc.bats - perc gc: which versions go, the safe point, snapshot
# too old (exit 8), automatic gc, and gc among running transactions

load helpers

setup() {
	perc_fresh_dir
}

# commit_one ROW COL (VALUE | --del | --lock): one transaction, its
# commit timestamp on stdout.
commit_one() {
	local t
	t=$(perc begin)
	case $3 in
	--del) perc del -t "$t" "$1" "$2" ;;
	--lock) perc get -t "$t" --lock "$1" "$2" > /dev/null || true ;;
	*) perc set -t "$t" "$1" "$2" "$3" ;;
	esac
	perc commit -t "$t"
}

# The write records of cell (k, c) in perc show, one "OP" a line.
write_ops() {
	perc show k c | awk -F '\t' '$2 == "write" {
		sub(/^op=/, "", $4); sub(/ .*/, "", $4); print $4 }' | tr '\n' ' '
}

# check_reads SP: every snapshot recorded in AT[] at or above SP reads
# what WANT[] says; those below exit 8 naming SP.
check_reads() {
	local at_i
	for at_i in "${!AT[@]}"; do
		if [ "${AT[$at_i]}" -ge "$1" ]; then
			run --separate-stderr perc get --at "${AT[$at_i]}" k c
			if [ "${WANT[$at_i]}" = - ]; then
				[ "$status" -eq 1 ] ||
					fail "at ${AT[$at_i]} (sp $1): exit $status, '$output'"
			else
				[ "$status" -eq 0 ] && [ "$output" = "${WANT[$at_i]}" ] ||
					fail "at ${AT[$at_i]} (sp $1): exit $status, '$output', not ${WANT[$at_i]}"
			fi
		else
			run -8 --separate-stderr perc get --at "${AT[$at_i]}" k c
			assert_error_line "*safe point $1*"
		fi
	done
}

# gc_to PIN REMOVED: gc with the oldest open transaction PIN (or none:
# now) prints PIN as its safe point and REMOVED versions.
gc_to() {
	run -0 --separate-stderr perc gc --retain 0
	SP=${output%%$'\t'*}
	[ "${output#*$'\t'}" = "$2" ] ||
		fail "gc removed ${output#*$'\t'} versions, not $2"
	if [ -n "$1" ]; then
		[ "$SP" = "$1" ] || fail "safe point $SP, not the open $1"
	else
		[ "$SP" -gt "${AT[-1]}" ] || fail "safe point $SP below the last commit"
	fi
	check_reads "$SP"
}

@test "TiKV's scenario: put, put, delete, put, lock-only, rollback, put; gc between each" {
	AT=() WANT=()
	AT+=("$(commit_one k c v1)") WANT+=(v1); p1=$(perc begin)
	AT+=("$(commit_one k c v2)") WANT+=(v2); p2=$(perc begin)
	AT+=("$(commit_one k c --del)") WANT+=(-); p3=$(perc begin)
	AT+=("$(commit_one k c v4)") WANT+=(v4); p4=$(perc begin)
	AT+=("$(commit_one k c --lock)") WANT+=(v4); p5=$(perc begin)
	# A rollback record: a commit dead after its prewrite, cleaned.
	t=$(perc begin)
	perc set -t "$t" k c never
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t"
	run -0 perc resolve-locks
	assert_output --partial rolled-back
	AT+=("$(perc ts)") WANT+=(v4); p6=$(perc begin)
	AT+=("$(commit_one k c v7)") WANT+=(v7)
	[ "$(write_ops)" = "put rollback lock put delete put put " ]

	gc_to "$p1" 0
	[ "$(write_ops)" = "put rollback lock put delete put put " ]
	perc abort -t "$p1"
	gc_to "$p2" 1                   # v1 goes
	[ "$(write_ops)" = "put rollback lock put delete put " ]
	perc abort -t "$p2"
	gc_to "$p3" 2                   # the delete is the version: both go
	[ "$(write_ops)" = "put rollback lock put " ]
	perc abort -t "$p3"
	gc_to "$p4" 0
	perc abort -t "$p4"
	gc_to "$p5" 1                   # the lock-only record
	[ "$(write_ops)" = "put rollback put " ]
	perc abort -t "$p5"
	gc_to "$p6" 1                   # the rollback record
	[ "$(write_ops)" = "put put " ]
	perc abort -t "$p6"
	gc_to "" 1                      # v4, and its data
	[ "$(write_ops)" = "put " ]
	[ "$(perc show k c | grep -c '	data	')" -eq 1 ]
	run -0 perc get k c
	assert_output v7
}

@test "gc prints SAFE_POINT<TAB>VERSIONS_REMOVED; --dry-run removes nothing and says the same" {
	for i in 1 2 3; do perc set r c "v$i"; perc set r d "w$i"; done
	before=$(perc show r)
	run -0 --separate-stderr perc gc --dry-run --retain 0
	[[ $output =~ ^[1-9][0-9]*$'\t'4$ ]] || fail "dry run printed '$output'"
	[ -z "$stderr" ]
	[ "$(perc show r)" = "$before" ]
	run -0 perc gc --retain 0
	[[ $output =~ ^[1-9][0-9]*$'\t'4$ ]] || fail "gc printed '$output'"
	[ "$(perc show r | grep -c '	write	')" -eq 2 ]
	run -0 perc gc --retain 0
	[[ $output =~ $'\t'0$ ]]
	run -0 perc scan
	assert_output "$(printf 'r\tc\tv3\nr\td\tw3')"
}

@test "the default retention keeps the last 600 s: a fresh store loses nothing" {
	for i in 1 2 3; do perc set r c "v$i"; done
	run -0 perc gc
	[[ $output =~ $'\t'0$ ]] || fail "gc printed '$output'"
	[ "$(perc show r | grep -c '	write	')" -eq 3 ]
	# The safe point is 600 s of the clock back (perc(1) on timestamps).
	sp=${output%%$'\t'*}
	ms=$((sp / 4096 + 1735689600000))
	now=$(date +%s%3N)
	[ $((now - ms)) -ge 599000 ] && [ $((now - ms)) -le 610000 ] ||
		fail "safe point $sp is $((now - ms)) ms back"
}

@test "the safe point never moves back" {
	perc set r c v1
	run -0 perc gc --retain 0
	sp=${output%%$'\t'*}
	run -0 perc gc --retain 3600
	[ "${output%%$'\t'*}" = "$sp" ]
	t=$(perc begin)
	[ "$t" -gt "$sp" ]
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" = "$t" ]
}

@test "snapshot too old: get and scan --at below the safe point exit 8 naming it; at it they read" {
	a=$(commit_one r c v1)
	commit_one r c v2 > /dev/null
	run -0 perc gc --retain 0
	sp=${output%%$'\t'*}
	run -8 --separate-stderr perc get --at "$a" r c
	assert_error_line "*snapshot too old*$sp*"
	run -8 --separate-stderr perc scan --at "$a"
	assert_error_line "*snapshot too old*$sp*"
	run -0 perc get --at "$sp" r c
	assert_output v2
	run -0 perc scan --at "$sp"
	assert_output "$(printf 'r\tc\tv2')"
}

@test "an open transaction holds the safe point: it reads and commits after gc" {
	perc set r c v1
	t=$(perc begin)
	perc set r c v2
	perc set r c v3
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" = "$t" ]
	run -0 perc get -t "$t" r c
	assert_output v1
	perc set -t "$t" s c from-t
	run -0 perc commit -t "$t"
	run -0 perc get s c
	assert_output from-t
}

@test "the rollback record of the oldest open transaction, which set gc's bound, stays while it is open" {
	perc set a col old-a
	t=$(perc begin)
	perc set -t "$t" a col new-a
	PERC_LOCK_TTL=1 PERC_FAILPOINT=after-prewrite:pause=60 perc commit -t "$t" \
	    > /dev/null 2>&1 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	poll 200 eval 'perc show a col | grep -q $'"'"'^col\tlock\t'"'" ||
	    fail "the commit never prewrote"
	# Its lock outlives its TTL: a reader rolls it back, at the start
	# of t, whose owner lives on, paused, its journal the oldest open.
	run -0 timeout 20 perc get a col
	assert_output old-a
	perc show a col | grep -q $'\twrite\t'"$t"$'\top=rollback' ||
	    fail "no rollback record at $t: $(perc show a col)"
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" = "$t" ] || fail "gc's safe point: '$output', not $t"
	perc show a col | grep -q $'\twrite\t'"$t"$'\top=rollback' ||
	    fail "gc removed the rollback record at its bound: $(perc show a col)"
}

@test "gc resolves a dead owner's locks below the safe point first" {
	perc set a col old-a
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	perc set c col c1
	perc set c col c2
	run -0 perc gc --retain 0
	[[ $output =~ $'\t'2$ ]] || fail "gc printed '$output'"
	run -0 perc resolve-locks --dry-run
	assert_output ''
	run -0 perc get b col
	assert_output new-b
	run -0 perc get a col
	assert_output new-a
}

@test "a transaction gc could not see: its read and commit exit 8, writing nothing" {
	t=$(perc begin)
	perc set -t "$t" s c never
	perc set -t "$t" u c never
	# A journal hidden from gc stands for one (on Redis, the store
	# hears that the directory has nothing open when the sets end).
	mv "$PERC_DIR/txn/$t" "$BATS_TEST_TMPDIR/journal"
	perc set r c v1
	perc set r c v2
	run -0 perc gc --retain 0
	mv "$BATS_TEST_TMPDIR/journal" "$PERC_DIR/txn/$t"
	[ "${output%%$'\t'*}" -gt "$t" ]
	run -8 --separate-stderr perc commit -t "$t"
	assert_error_line "*snapshot too old*"
	run -5 perc commit -t "$t"          # finished
	t2=$(perc begin)
	perc set -t "$t2" s c never
	mv "$PERC_DIR/txn/$t2" "$BATS_TEST_TMPDIR/journal"
	run -0 perc gc --retain 0
	mv "$BATS_TEST_TMPDIR/journal" "$PERC_DIR/txn/$t2"
	run -8 --separate-stderr perc get -t "$t2" r c
	assert_error_line "*snapshot too old*"
	run -5 perc get -t "$t2" r c
	run -0 perc get r c
	assert_output v2
	run -1 perc get s c
	run -1 perc get u c
	run -0 perc resolve-locks --dry-run
	assert_output ''
}

# gc_passes TS: a gc with PERC_TXN_MAX_AGE=1 takes a safe point above TS.
gc_passes() {
	local out
	out=$(PERC_TXN_MAX_AGE=1 perc gc --retain 0) &&
	    [ "${out%%$'\t'*}" -gt "$1" ]
}

@test "PERC_TXN_MAX_AGE: an older open transaction no longer holds gc back, and then exits 8" {
	perc set r c v1
	t=$(perc begin)
	perc set -t "$t" s c from-t
	t2=$(perc begin)
	perc set r c v2
	perc set r c v3
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" = "$t" ]
	# Once they are a second old, a max age of 1 s passes them.
	poll 100 gc_passes "$t2" || fail "gc never passed $t2"
	run -8 --separate-stderr perc commit -t "$t"
	assert_error_line "*snapshot too old*"
	run -5 perc commit -t "$t"
	run -8 --separate-stderr perc get -t "$t2" r c
	assert_error_line "*snapshot too old*"
	run -1 perc get s c
	run -0 perc get r c
	assert_output v3
	# One younger than the max age still holds it back.
	t3=$(perc begin)
	perc set r c v4
	run -0 env PERC_TXN_MAX_AGE=3600 perc gc --retain 0
	[ "${output%%$'\t'*}" = "$t3" ]
	run -0 perc get -t "$t3" r c
	assert_output v3
}

@test "a bad PERC_TXN_MAX_AGE is a usage error naming it" {
	for v in abc -1 1x ' '; do
		for args in "gc" "gc --dry-run" "begin"; do
			# shellcheck disable=SC2086
			PERC_TXN_MAX_AGE=$v run -2 --separate-stderr perc $args
			assert_error_line "*PERC_TXN_MAX_AGE*"
		done
	done
	PERC_TXN_MAX_AGE=0.5 run -0 perc gc
}

@test "gc usage: bad --retain, operands, outside a data directory" {
	for args in "--retain -1" "--retain x" "--retain" "extra" "--bogus"; do
		run -2 --separate-stderr perc gc $args
		assert_usage_error
	done
	run -6 --separate-stderr perc -d "$BATS_TEST_TMPDIR" gc
	[ "${#stderr_lines[@]}" -eq 1 ]
}

@test "automatic gc: after PERC_GC_AUTO commits a detached perc gc removes old versions" {
	export PERC_GC_AUTO=5 PERC_GC_RETAIN=0
	for i in 1 2 3 4; do perc set r c "v$i"; done
	[ "$(perc show r | grep -c '	write	')" -eq 4 ]
	perc set r c v5                 # the fifth commit notices
	poll "$(scaled 100)" eval '[ "$(perc show r | grep -c "	write	")" -eq 1 ]' ||
		fail "no gc ran: $(perc show r)"
	run -0 perc get r c
	assert_output v5
	PERC_GC_AUTO=0 perc set r c v6
	PERC_GC_AUTO=0 perc set r c v7
	[ "$(perc show r | grep -c '	write	')" -eq 3 ]
}

@test "transfers, transactional readers and a gc loop at once: every snapshot sums right" {
	for a in 1 2 3 4; do perc set "acct$a" bal 100; done
	stop=$BATS_TEST_TMPDIR/stop
	( while [ ! -e "$stop" ]; do
		perc gc --retain 0 > /dev/null 2>> "$BATS_TEST_TMPDIR/gc.err" ||
			echo "gc exit $?" >> "$BATS_TEST_TMPDIR/bad"
	done ) 3>&- &
	gcpid=$!
	BG_PIDS+=("$gcpid")
	for w in 1 2; do
		( for i in $(seq 15); do
			from=$(( (i + w) % 4 + 1 )) to=$(( (i + 2 * w) % 4 + 1 ))
			[ "$from" = "$to" ] && continue
			for try in 1 2 3 4 5 6 7 8; do
				t=$(perc begin) || continue
				f=$(perc get -t "$t" "acct$from" bal) &&
				g=$(perc get -t "$t" "acct$to" bal) &&
				perc set -t "$t" "acct$from" bal $((f - 1)) &&
				perc set -t "$t" "acct$to" bal $((g + 1)) &&
				perc commit -t "$t" > /dev/null 2>&1 && break
				rc=$?
				perc abort -t "$t" 2> /dev/null || true
				if [ "$rc" -eq 8 ]; then
					echo "transfer exit 8" >> "$BATS_TEST_TMPDIR/bad"
				fi
			done
		done; true ) 3>&- &
		pids+=($!)
	done
	( for i in $(seq 25); do
		t=$(perc begin) || continue
		sum=0
		for a in 1 2 3 4; do
			v=$(perc get -t "$t" "acct$a" bal) ||
				{ echo "reader exit $? on acct$a" >> "$BATS_TEST_TMPDIR/bad"; continue 2; }
			sum=$((sum + v))
		done
		perc abort -t "$t"
		[ "$sum" -eq 400 ] || echo "sum $sum at $t" >> "$BATS_TEST_TMPDIR/bad"
	done; true ) 3>&- &
	pids+=($!)
	BG_PIDS+=("${pids[@]}")
	for p in "${pids[@]}"; do wait "$p"; done
	touch "$stop"
	wait "$gcpid"
	# A reader may time out on a live lock (exit 4); nothing else.
	! grep -v "exit 4" "$BATS_TEST_TMPDIR/bad" 2> /dev/null || fail "see above"
	sum=0
	for a in 1 2 3 4; do sum=$((sum + $(perc get "acct$a" bal))); done
	[ "$sum" -eq 400 ]
	run -0 perc gc --retain 0
	for a in 1 2 3 4; do
		[ "$(perc show "acct$a" | grep -c '	write	')" -eq 1 ]
	done
}
