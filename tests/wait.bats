#!/usr/bin/env bats
# tests/wait.bats - perc wait: until no observed cell is dirty and no
# commit or observer run that could make one is in flight

load helpers

setup() {
	perc_fresh_dir
	perc init --observe a --observe b --observe c "$PERC_DIR"
	T_DIR=$BATS_TEST_TMPDIR
	export T_DIR
}

# A runner in the background: the observer of column $1 copies the
# cell's value, with "+$2" added, into column $2 of the same row.
chain_runner() {
	perc run-observer --quiet "$1" -- sh -c "
	    v=\$(perc get -t \"\$PERC_TXN\" \"\$PERC_ROW\" $1)
	    perc set -t \"\$PERC_TXN\" \"\$PERC_ROW\" $2 \"\$v+$2\"" 3>&- &
	BG_PIDS+=("$!")
}

@test "wait returns 0 once a chain of three observers is done: the last one's write is there" {
	chain_runner a b
	chain_runner b c
	chain_runner c out
	for k in 1 2 3; do
		perc set "r$k" a "x$k"
	done
	run -0 --separate-stderr perc wait
	assert_output ''
	for k in 1 2 3; do
		run -0 perc get "r$k" out
		assert_output "x$k+b+c+out"
	done
	run -0 perc scan-notify
	assert_output ''
}

@test "wait with nothing dirty returns 0 at once, also with no observed column" {
	run -0 perc wait
	perc_fresh_dir plain
	run -0 perc wait
}

@test "--timeout: exit 4 naming how many cells are still dirty" {
	perc set r1 a x
	perc set r2 b x
	perc set r3 c x
	run -4 --separate-stderr perc wait --timeout 0.3
	assert_error_line '*3 cells are still dirty*'
	run -4 --separate-stderr perc wait --timeout 0
	assert_error_line '*3 cells are still dirty*'
}

@test "wait on a terminal shows the dirty cells it waits for; not elsewhere" {
	command -v script > /dev/null || skip "script(1) is not installed"
	perc set r1 a x
	perc set r2 b x
	perc set r3 c x
	# No runner: the cells stay dirty, and each look (every 0.3 s)
	# shows it once the first second has gone by.
	export PERC_OBSERVER_POLL=0.3
	run -4 script -qec "perc wait --timeout 4" /dev/null < /dev/null
	[[ $output == *"perc wait: 3 dirty cells left, 0 runners seen"* ]] ||
		fail "no progress line: '$output'"
	# None done for 3 s, and no runner there: start one.
	[[ $output == *"3 dirty cells left, 0 runners seen, none done for 3 s: start perc run-observer on their columns"* ]] ||
		fail "no hint: '$output'"
	run -4 --separate-stderr perc wait --timeout 2
	assert_error_line '*3 cells are still dirty*'
}

@test "wait on a terminal counts the runners of its columns on this machine, and only while they live" {
	command -v script > /dev/null || skip "script(1) is not installed"
	perc set r1 a x
	perc set r2 b x
	export PERC_OBSERVER_POLL=0.3
	# Two runners of a, held in their observers until $T_DIR/go.
	for i in 1 2; do
		perc run-observer --quiet a -- sh -c '
		    : > "$T_DIR/started.$$"
		    for i in $(seq 600); do
			[ -e "$T_DIR/go" ] && exit 1
			sleep 0.05
		    done; exit 1' 3>&- &
		BG_PIDS+=($!)
	done
	poll 100 sh -c 'ls "$1" | grep -q started' sh "$T_DIR" ||
	    fail "no observer started"
	run -4 script -qec "perc wait --timeout 2 --column a" /dev/null \
	    < /dev/null
	[[ $output == *"dirty cells left, 2 runners seen"* ]] ||
		fail "no runners counted: '$output'"
	# b has none of its own.
	run -4 script -qec "perc wait --timeout 2 --column b" /dev/null \
	    < /dev/null
	[[ $output == *"dirty cells left, 0 runners seen"* ]] ||
		fail "b's runners miscounted: '$output'"
	: > "$T_DIR/go"
	kill_bg
	run -4 script -qec "perc wait --timeout 2 --column a" /dev/null \
	    < /dev/null
	[[ $output == *"dirty cells left, 0 runners seen"* ]] ||
		fail "runners gone are still counted: '$output'"
}

@test "an observer run that has not committed yet keeps wait from returning" {
	# (Bounded: a test that fails midway must not leave it waiting.)
	perc run-observer --quiet a -- sh -c '
	    : > "$T_DIR/started"
	    for i in $(seq 600); do
		[ -e "$T_DIR/go" ] && break
		sleep 0.05
	    done
	    perc set -t "$PERC_TXN" "$PERC_ROW" b done' 3>&- &
	BG_PIDS+=("$!")
	perc set r a x
	poll 100 test -e "$T_DIR/started"
	run -4 --separate-stderr perc wait --timeout 0.5
	assert_error_line '*1 cell is still dirty*'
	# Its write to b, an observed column, is dirty in turn: no runner
	# of b, so wait on a alone.
	: > "$T_DIR/go"
	run -0 perc wait --column a
	run -0 perc get r b
	assert_output done
	run -4 --separate-stderr perc wait --timeout 0.2
	assert_error_line '*1 cell is still dirty*'
}

@test "a commit stuck in flight, its owner alive, keeps wait from returning; once it is gone, wait ends" {
	chain_runner a out
	T=$(perc begin)
	perc set -t "$T" r a x
	perc set -t "$T" r other y
	start_live_commit "$T" r a after-prewrite
	run -4 --separate-stderr perc wait --timeout 0.5
	assert_error_line '*1 cell is still dirty*'
	kill_live_commit
	run -0 perc wait
	run -0 perc scan-notify
	assert_output ''
}

@test "--column: only the dirty cells of the columns named" {
	perc set r1 a x
	run -0 perc wait --column b
	run -0 perc wait --column b --column c
	run -4 --separate-stderr perc wait --column a --timeout 0.1
	assert_error_line '*1 cell is still dirty*'
	run -4 --separate-stderr perc wait --column c --column a --timeout 0.1
	assert_error_line '*1 cell is still dirty*'
}

@test "--column of a column that is not observed: exit 2 naming the observed ones" {
	run -2 --separate-stderr perc wait --column nope
	assert_error_line "*'nope' is not observed; observed: a, b, c*"
	run -2 --separate-stderr perc wait --column a --column nope
	assert_error_line "*'nope' is not observed*"
}

@test "usage errors exit 2 with one line" {
	run -2 --separate-stderr perc wait --timeout soon
	assert_error_line '*--timeout*'
	run -2 --separate-stderr perc wait extra
	assert_error_line "*unexpected argument 'extra'*"
	run -2 --separate-stderr perc wait --bogus
	assert_error_line
}

@test "weak notifications are dirty cells too: wait until their observer has run" {
	perc init --observe-weak agg "$PERC_DIR"
	perc notify r agg
	perc notify r agg
	run -4 --separate-stderr perc wait --timeout 0.2
	assert_error_line '*1 cell is still dirty*'
	run -4 --separate-stderr perc wait --column agg --timeout 0.2
	assert_error_line '*1 cell is still dirty*'
	perc run-observer --quiet agg -- sh -c '
	    perc set -t "$PERC_TXN" "$PERC_ROW" count 2' 3>&- &
	BG_PIDS+=("$!")
	run -0 perc wait --column agg
	run -0 perc get r count
	assert_output 2
}
