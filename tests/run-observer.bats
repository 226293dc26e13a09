#!/usr/bin/env bats
# tests/run-observer.bats - perc run-observer: one run of COMMAND per
# dirty cell, committed with its ack on exit 0, aborted otherwise

load helpers

setup() {
	perc_fresh_dir
	perc init --observe col "$PERC_DIR"
	T_DIR=$BATS_TEST_TMPDIR
	export T_DIR
	RUNNER_PIDS=()
}

teardown() {
	local p
	for p in "${RUNNER_PIDS[@]}"; do
		kill -9 "$p" 2> /dev/null || true
	done
	for p in "${RUNNER_PIDS[@]}"; do
		wait "$p" 2> /dev/null || true
	done
	if [ -s "$T_DIR/child.pid" ]; then
		kill -9 "$(cat "$T_DIR/child.pid")" 2> /dev/null || true
	fi
	if declare -F kill_bg > /dev/null; then
		kill_bg
	fi
}

# Poll every 0.1 s, at most $1 times, until "$@" succeeds.
poll() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	fail "gave up after $n polls waiting for: $*"
}

no_dirty() {
	[ -z "$(perc scan-notify)" ]
}

# Does file $1 have at least $2 lines?
has_lines() {
	[ -e "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]
}

# Start "perc run-observer ARGS..." in the background, its standard
# error in file $1; its pid in RUNNER_PID.
start_runner() {
	local err=$1
	shift
	perc run-observer "$@" 2> "$err" 3>&- &
	RUNNER_PID=$!
	RUNNER_PIDS+=("$RUNNER_PID")
}

# Send signal $1 to the runner and wait for it: it must exit 0 within
# 30 seconds (a watchdog kills it with -9 after that).
stop_runner() {
	local sig=$1 rc=0 dog
	kill -s "$sig" "$RUNNER_PID"
	(
		for k in $(seq 300); do sleep 0.1; done
		kill -9 "$RUNNER_PID" 2> /dev/null
	) 3>&- &
	dog=$!
	wait "$RUNNER_PID" || rc=$?
	kill "$dog" 2> /dev/null || true
	wait "$dog" 2> /dev/null || true
	[ "$rc" -eq 0 ] || fail "run-observer exited $rc after SIG$sig"
}

no_lock_left() {
	run -0 --separate-stderr timeout 30 perc resolve-locks --all --dry-run
	assert_output ''
}

# The observer of the environment tests: each variable into a file (an
# unset one makes sh fail, and so the run).
ENV_OBSERVER='printf %s "${PERC_DIR?unset}" > "$T_DIR/dir"
printf %s "${PERC_TXN?unset}" > "$T_DIR/txn"
printf %s "${PERC_ROW?unset}" > "$T_DIR/row"
printf %s "${PERC_COLUMN?unset}" > "$T_DIR/column"
printf %s "${PERC_ROW_ESCAPED?unset}" > "$T_DIR/row-escaped"
printf %s "${PERC_COLUMN_ESCAPED?unset}" > "$T_DIR/column-escaped"
perc get -t "$PERC_TXN" -e "$PERC_ROW_ESCAPED" "$PERC_COLUMN_ESCAPED" \
    > "$T_DIR/value"'

@test "the command sees PERC_DIR, PERC_TXN, PERC_ROW, PERC_COLUMN exactly, tab and newline included" {
	perc init --observe "$(printf 'c\tx')" "$PERC_DIR"
	perc set -e 'r\t1\nx\\' 'c\tx' 'v 1'
	run -0 timeout 30 perc run-observer --once --quiet "$(printf 'c\tx')" \
	    -- sh -c "$ENV_OBSERVER"
	assert_bytes 'r\t1\nx\\' "$T_DIR/row"
	assert_bytes 'c\tx' "$T_DIR/column"
	assert_bytes 'r\\t1\\nx\\\\' "$T_DIR/row-escaped"
	assert_bytes 'c\\tx' "$T_DIR/column-escaped"
	assert_bytes 'v 1' "$T_DIR/value"
	[ "$(cat "$T_DIR/dir")" = "$(cd "$PERC_DIR" && pwd -P)" ]
	txn=$(cat "$T_DIR/txn")
	[[ $txn =~ ^[0-9]+$ ]]
	# the observer's transaction is finished once the run is over
	run -5 --separate-stderr perc get -t "$txn" x y
}

@test "a row with a NUL byte reaches the command through PERC_ROW_ESCAPED" {
	printf 'a\0b\n' | perc set -e 'a\x00b\xff' col
	run -0 timeout 30 perc run-observer --once --quiet col \
	    -- sh -c "$ENV_OBSERVER"
	assert_bytes 'a\\x00b\\xff' "$T_DIR/row-escaped"
	assert_bytes 'col' "$T_DIR/column"
	assert_bytes 'col' "$T_DIR/column-escaped"
	assert_bytes 'a\0b\n' "$T_DIR/value"
	run -0 perc scan-notify
	assert_output ''
}

@test "an empty row reaches the command as empty variables" {
	perc set '' col v
	run -0 timeout 30 perc run-observer --once --quiet col \
	    -- sh -c "$ENV_OBSERVER"
	[ -e "$T_DIR/row" ] && [ ! -s "$T_DIR/row" ]
	[ -e "$T_DIR/row-escaped" ] && [ ! -s "$T_DIR/row-escaped" ]
	assert_bytes 'v' "$T_DIR/value"
}

@test "PERC_DIR is absolute when the directory was given relative with -d" {
	perc set r col v
	cd "$T_DIR"
	run -0 env -u PERC_DIR timeout 30 perc -d db run-observer --once \
	    --quiet col -- sh -c "$ENV_OBSERVER"
	[ "$(cat "$T_DIR/dir")" = "$(cd "$T_DIR/db" && pwd -P)" ]
	assert_bytes 'v' "$T_DIR/value"
}

@test "exit 0 commits the observer's writes with its ack and clears the cell" {
	perc set a col 1
	perc set b col 2
	run -0 --separate-stderr timeout 30 perc run-observer --once col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out "seen-$PERC_ROW"'
	# one line on standard error per run
	[ "${#stderr_lines[@]}" -eq 2 ]
	[[ ${stderr_lines[0]} == *commit* ]]
	[[ ${stderr_lines[1]} == *commit* ]]
	assert_output ''
	run -0 perc get a out
	assert_output seen-a
	run -0 perc get b out
	assert_output seen-b
	run -0 perc scan-notify
	assert_output ''
	run -0 perc show a col
	assert_line --regexp $'^col\tack\t[0-9]+\t'
	# a second pass finds nothing to run
	run -0 timeout 30 perc run-observer --once col -- \
	    sh -c 'echo ran >> "$T_DIR/runs"'
	[ ! -e "$T_DIR/runs" ]
	no_lock_left
}

@test "--quiet prints nothing on standard error" {
	perc set a col 1
	perc set b col 2
	run -0 --separate-stderr timeout 30 perc run-observer --once --quiet \
	    col -- true
	[ -z "$stderr" ]
	assert_output ''
}

@test "non-zero exit aborts the observer's writes and leaves the cell dirty, failures counted" {
	perc set r col v
	obs='perc set -t "$PERC_TXN" "$PERC_ROW" out x; exit 3'
	run -1 --separate-stderr timeout 30 perc run-observer --once col -- \
	    sh -c "$obs"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ ${stderr_lines[0]} == *3* ]]
	run -1 perc get r out
	run -0 perc scan-notify
	assert_output $'r\tcol'
	run -0 perc scan-notify --failures
	assert_output $'r\tcol\t1'
	no_lock_left
	run -1 --separate-stderr timeout 30 perc run-observer --once col -- \
	    sh -c "$obs"
	run -0 perc scan-notify --failures
	assert_output $'r\tcol\t2'
	run -1 perc get r out
	# a run that succeeds clears the cell and its failure count
	run -0 timeout 30 perc run-observer --once --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out ok'
	run -0 perc get r out
	assert_output ok
	run -0 perc scan-notify
	assert_output ''
	perc set r col w
	run -0 perc scan-notify --failures
	assert_output $'r\tcol\t0'
}

@test "a command that cannot be run is a failed run" {
	perc set r col v
	run -1 --separate-stderr timeout 30 perc run-observer --once col -- \
	    "$T_DIR/no-such-command"
	run -0 perc scan-notify --failures
	assert_output $'r\tcol\t1'
}

@test "--once exits 1 when any run failed, and still runs the other cells" {
	for r in a b c d; do
		perc set "$r" col v
	done
	run -1 timeout 30 perc run-observer --once --quiet col -- sh -c '
	    echo "$PERC_ROW" >> "$T_DIR/runs"
	    perc set -t "$PERC_TXN" "$PERC_ROW" out x
	    [ "$PERC_ROW" != c ]'
	[ "$(sort "$T_DIR/runs" | tr '\n' ' ')" = "a b c d " ]
	run -0 perc scan-notify
	assert_output $'c\tcol'
	run -0 perc scan --column out
	assert_output $'a\tout\tx\nb\tout\tx\nd\tout\tx'
}

@test "an observer that writes nothing still clears its notification" {
	perc set r col v
	run -0 timeout 30 perc run-observer --once --quiet col -- true
	run -0 perc scan-notify
	assert_output ''
	run -0 perc show r col
	assert_line --regexp $'^col\tack\t'
	run -0 timeout 30 perc run-observer --once col -- \
	    sh -c 'echo ran >> "$T_DIR/runs"'
	[ ! -e "$T_DIR/runs" ]
}

@test "several writes before a run collapse into one run that sees the latest value" {
	perc set r col v1
	perc set r col v2
	t=$(perc begin)
	perc set -t "$t" r col v3
	perc set -t "$t" s other x
	perc commit -t "$t"
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c '
	    perc get -t "$PERC_TXN" "$PERC_ROW" col >> "$T_DIR/runs"
	    echo >> "$T_DIR/runs"'
	assert_bytes 'v3\n' "$T_DIR/runs"
	run -0 perc scan-notify
	assert_output ''
}

@test "a chain: the observer of a writes b, the observer of b writes c" {
	perc init --observe a --observe b --observe c "$PERC_DIR"
	perc set r a x
	run -0 timeout 30 perc run-observer --once --quiet a -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" a)
	    perc set -t "$PERC_TXN" "$PERC_ROW" b "$v-b"'
	run -0 perc scan-notify
	assert_output $'r\tb'
	run -0 timeout 30 perc run-observer --once --quiet b -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" b)
	    perc set -t "$PERC_TXN" "$PERC_ROW" c "$v-c"'
	run -0 perc get r c
	assert_output x-b-c
	run -0 perc scan-notify
	assert_output $'r\tc'
}

@test "a chain runs to completion with a runner per column at once" {
	perc init --observe a --observe b "$PERC_DIR"
	start_runner "$T_DIR/err-a" --quiet a -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" a)
	    perc set -t "$PERC_TXN" "$PERC_ROW" b "$v-b"'
	pid_a=$RUNNER_PID
	start_runner "$T_DIR/err-b" --quiet b -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" b)
	    perc set -t "$PERC_TXN" "$PERC_ROW" c "$v-c"'
	for k in 1 2 3 4 5; do
		perc set "r$k" a "x$k"
	done
	poll 150 no_dirty
	for k in 1 2 3 4 5; do
		run -0 perc get "r$k" c
		assert_output "x$k-b-c"
	done
	stop_runner TERM
	RUNNER_PID=$pid_a
	stop_runner TERM
	no_lock_left
}

@test "an observer that writes its own column runs again, until it stops writing" {
	perc set r col 0
	for pass in $(seq 10); do
		timeout 30 perc run-observer --once --quiet col -- sh -c '
		    n=$(perc get -t "$PERC_TXN" "$PERC_ROW" col)
		    [ "$n" -ge 3 ] ||
			perc set -t "$PERC_TXN" "$PERC_ROW" col $((n + 1))'
		no_dirty && break
	done
	run -0 perc get r col
	assert_output 3
	run -0 perc scan-notify
	assert_output ''
	[ "$pass" -eq 4 ]
}

@test "a write committed while the observer runs is kept for the next run" {
	perc set r doc old
	obs='perc get -t "$PERC_TXN" "$PERC_ROW" doc >> "$T_DIR/seen"
	     echo >> "$T_DIR/seen"
	     if [ ! -e "$T_DIR/first" ]; then
		: > "$T_DIR/first"
		perc set "$PERC_ROW" doc new
	     fi'
	perc init --observe doc "$PERC_DIR"
	perc set r doc old
	run -0 timeout 30 perc run-observer --once --quiet doc -- sh -c "$obs"
	assert_bytes 'old\n' "$T_DIR/seen"
	run -0 perc scan-notify
	assert_output $'r\tdoc'
	run -0 timeout 30 perc run-observer --once --quiet doc -- sh -c "$obs"
	assert_bytes 'old\nnew\n' "$T_DIR/seen"
	run -0 perc scan-notify
	assert_output ''
}

@test "a killed runner loses no notification" {
	perc set r col v
	start_runner "$T_DIR/err" --once col -- sh -c '
	    echo $$ > "$T_DIR/child.tmp"
	    mv "$T_DIR/child.tmp" "$T_DIR/child.pid"
	    exec sleep 30'
	poll 100 test -s "$T_DIR/child.pid"
	kill -9 "$RUNNER_PID"
	kill -9 "$(cat "$T_DIR/child.pid")"
	{ wait "$RUNNER_PID"; } 2> /dev/null || true
	run -0 perc scan-notify
	assert_output $'r\tcol'
	run -0 timeout 30 perc resolve-locks
	run -0 timeout 30 perc run-observer --once --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out done'
	run -0 perc get r out
	assert_output done
	run -0 perc scan-notify
	assert_output ''
	no_lock_left
}

@test "long-running: processes cells as they come, exits 0 on SIGTERM, leaves no lock" {
	start_runner "$T_DIR/err" --quiet col -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" col)
	    perc set -t "$PERC_TXN" "$PERC_ROW" seen "$v"'
	for k in 1 2 3; do
		perc set "r$k" col "v$k"
	done
	poll 100 no_dirty
	perc set r4 col v4
	perc set r1 col w1
	poll 100 no_dirty
	run -0 perc scan --column seen
	assert_output $'r1\tseen\tw1\nr2\tseen\tv2\nr3\tseen\tv3\nr4\tseen\tv4'
	kill -0 "$RUNNER_PID"
	stop_runner TERM
	[ ! -s "$T_DIR/err" ]
	no_lock_left
}

@test "long-running without --quiet: one line on standard error per run; SIGINT ends it" {
	start_runner "$T_DIR/err" col -- sh -c '
	    perc set -t "$PERC_TXN" "$PERC_ROW" seen 1'
	for k in 1 2 3; do
		perc set "r$k" col v
	done
	poll 100 no_dirty
	poll 50 has_lines "$T_DIR/err" 3
	stop_runner INT
	[ "$(wc -l < "$T_DIR/err")" -eq 3 ]
	[ "$(grep -c commit "$T_DIR/err")" -eq 3 ]
	no_lock_left
}

@test "SIGTERM during a run: the run finishes or aborts, exit 0, no lock left" {
	perc set r col v
	start_runner "$T_DIR/err" --quiet col -- sh -c '
	    : > "$T_DIR/started"
	    sleep 1
	    perc set -t "$PERC_TXN" "$PERC_ROW" out x'
	poll 100 test -e "$T_DIR/started"
	stop_runner TERM
	no_lock_left
	if perc get r out > /dev/null; then
		run -0 perc scan-notify
		assert_output ''
	else
		run -0 perc scan-notify
		assert_output $'r\tcol'
	fi
}

@test "long-running --workers N: SIGTERM ends the runner and all its workers, exit 0" {
	start_runner "$T_DIR/err" --quiet --workers 3 col -- sh -c '
	    perc set -t "$PERC_TXN" "$PERC_ROW" seen 1'
	for k in $(seq 6); do
		perc set "r$k" col v
	done
	poll 100 no_dirty
	workers=$(ps -o pid= --ppid "$RUNNER_PID")
	[ "$(echo "$workers" | wc -w)" -eq 3 ]
	stop_runner TERM
	for w in $workers; do
		! kill -0 "$w" 2> /dev/null || fail "worker $w outlived its runner"
	done
	[ "$(perc scan --column seen | wc -l)" -eq 6 ]
	no_lock_left
}

@test "an idle runner sleeps until a commit wakes it, its fallback poll 1000 s away; SIGTERM ends the sleep" {
	PERC_OBSERVER_POLL=1000 start_runner "$T_DIR/err" --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" seen "$PERC_ROW"'
	perc set r1 col v
	poll 100 no_dirty
	poll 100 asleep_in_poll "$RUNNER_PID"
	# Only the wake can end that sleep before 1000 s.
	perc set r2 col v
	poll 100 no_dirty
	run -0 perc get r2 seen
	assert_output r2
	poll 100 asleep_in_poll "$RUNNER_PID"
	stop_runner TERM
	[ ! -s "$T_DIR/err" ]
}

@test "idle --workers 2: each worker sleeps until woken, every cell runs; SIGINT ends them, exit 0" {
	PERC_OBSERVER_POLL=1000 start_runner "$T_DIR/err" --quiet --workers 2 \
	    col -- sh -c 'echo "$PERC_ROW" >> "$T_DIR/runs"
	    perc set -t "$PERC_TXN" "$PERC_ROW" seen 1'
	poll 100 workers_asleep_in_poll "$RUNNER_PID" 2
	for k in 1 2 3 4; do
		perc set "r$k" col v
	done
	poll 100 no_dirty
	[ "$(sort "$T_DIR/runs" | uniq | wc -l)" -eq 4 ]
	poll 100 workers_asleep_in_poll "$RUNNER_PID" 2
	stop_runner INT
	no_lock_left
}

@test "PERC_OBSERVER_POLL that is not a number is a usage error" {
	run -2 --separate-stderr env PERC_OBSERVER_POLL=soon \
	    perc run-observer --once col -- true
	assert_error_line '*PERC_OBSERVER_POLL*'
}

@test "an observer whose commit loses a write-write conflict leaves the cell dirty, and it runs again" {
	perc set r col v
	# the observer writes shared x, and so does a rival that commits
	# first, after the observer's transaction began
	# (exit status not checked: a lost conflict is neither a commit nor
	# a failed COMMAND)
	run timeout 30 perc run-observer --once --quiet col -- sh -c '
	    perc set -t "$PERC_TXN" shared x mine
	    perc set shared x rival'
	run -0 perc get shared x
	assert_output rival
	run -0 perc scan-notify
	assert_output $'r\tcol'
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c '
	    perc set -t "$PERC_TXN" shared x mine'
	run -0 perc get shared x
	assert_output mine
	run -0 perc scan-notify
	assert_output ''
}

@test "a failing observer is retried with a growing backoff, not spun" {
	start_runner "$T_DIR/err" --quiet col -- sh -c '
	    date +%s%N >> "$T_DIR/runs"
	    exit 1'
	perc set r col v
	# retried: four runs come (the backoffs add up to 1.4 s; the bound
	# is for a loaded machine)
	poll 600 has_lines "$T_DIR/runs" 4
	stop_runner TERM
	n=$(wc -l < "$T_DIR/runs")
	run -0 perc scan-notify --failures
	assert_output "r	col	$n"
	# not spun: after failure K the next run waits its backoff of
	# 200 ms doubled K - 1 times, however fast or slow the machine
	mapfile -t at < "$T_DIR/runs"
	for k in 1 2 3; do
		gap=$(((at[k] - at[k - 1]) / 1000000))
		[ "$gap" -ge $((200 << (k - 1))) ] ||
			fail "run $((k + 1)) came $gap ms after run $k"
	done
	no_lock_left
}

@test "--workers N runs every dirty cell once" {
	for k in $(seq 12); do
		perc set "r$k" col v
	done
	run -0 timeout 60 perc run-observer --once --quiet --workers 3 col -- \
	    sh -c 'n=$(perc get -t "$PERC_TXN" "$PERC_ROW" n || echo 0)
		   perc set -t "$PERC_TXN" "$PERC_ROW" n $((n + 1))'
	run -0 perc scan-notify
	assert_output ''
	[ "$(perc scan --column n | cut -f3 | sort | uniq -c | tr -s ' ')" = \
	    " 12 1" ]
}

# out_is V: r's column out reads V.  fewer_outs N: the store holds
# fewer than N versions of it.
out_is() {
	[ "$(perc get r out 2> /dev/null)" = "$1" ]
}
fewer_outs() {
	[ "$(perc show r | awk -F '\t' '$1 == "out" && $2 == "write"' |
	    wc -l)" -lt "$1" ]
}

@test "a long-running observer starts the automatic gc its own commits make due" {
	# Only the runner's commits count towards gc: the sets under it
	# never start one.
	PERC_GC_AUTO=3 PERC_GC_RETAIN=0 start_runner "$T_DIR/err" --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out "$(perc get -t "$PERC_TXN" "$PERC_ROW" col)"'
	for i in 1 2 3 4 5 6; do
		PERC_GC_AUTO=0 perc set r col "v$i"
		poll "$(scaled 300)" out_is "v$i"
	done
	# Six runs, six versions of out, unless a gc the runner started
	# removed those no snapshot can read; the runner still runs.
	poll "$(scaled 300)" fewer_outs 6
	kill -0 "$RUNNER_PID"
	run -0 perc get r out
	assert_output v6
	stop_runner TERM
}

@test "usage errors exit 2 with one line, even outside a data directory" {
	PERC_DIR="$T_DIR/missing"
	for args in "col true" "col" "-- true" "col --" "--once col true" \
	    "--workers 0 col -- true" "--workers -1 col -- true" \
	    "--workers x col -- true" "--workers col -- true" \
	    "--bogus col -- true" ""; do
		# shellcheck disable=SC2086 # split on purpose
		run -2 --separate-stderr perc run-observer $args
		[ "${#stderr_lines[@]}" -eq 1 ] ||
			fail "'$args': ${#stderr_lines[@]} lines on stderr"
		assert_output ''
	done
	[ ! -e "$T_DIR/missing" ]
}

@test "a column that is not observed: exit 2 naming the observed ones, with --once and without" {
	perc init --observe 'other col' "$PERC_DIR"
	perc set r x v
	for args in "--once x" "x" "--workers 2 x"; do
		# shellcheck disable=SC2086 # split on purpose
		run -2 --separate-stderr timeout 30 perc run-observer $args -- \
		    sh -c 'echo ran >> "$T_DIR/runs"'
		assert_error_line "perc: column 'x' is not observed; observed: col, other col (*perc init --observe*"
		assert_output ''
	done
	[ ! -e "$T_DIR/runs" ]
	perc init "$T_DIR/plain" > /dev/null
	run -2 --separate-stderr timeout 30 perc -d "$T_DIR/plain" \
	    run-observer col -- true
	assert_error_line "*column 'col' is not observed; observed: none*"
}

@test "run-observer outside a data directory exits 6 with one line" {
	PERC_DIR="$T_DIR/missing"
	run -6 --separate-stderr perc run-observer --once col -- true
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"not a perc data directory"* ]]
	[ ! -e "$T_DIR/missing" ]
}
