#!/usr/bin/env bats
# tests/observer.bats - observers as a whole: at most one committed run
# per notification with runners at once, no notification lost to a
# crash, and the paper's document clustering (examples/clustering.sh)

load helpers

setup() {
	perc_fresh_dir
	perc init --observe col "$PERC_DIR"
	T_DIR=$BATS_TEST_TMPDIR
	export T_DIR
	SPAWNED=()
	RUNNERS=()
	GROUPS_STARTED=()
	CLUSTERING="${PERC_SRC:-$BATS_TEST_DIRNAME/..}/examples/clustering.sh"
}

teardown() {
	local p
	for p in "${GROUPS_STARTED[@]}"; do
		kill -9 -- "-$p" 2> /dev/null || true
	done
	for p in "${RUNNERS[@]}" "${SPAWNED[@]}"; do
		kill -9 "$p" 2> /dev/null || true
	done
	for p in "${SPAWNED[@]}"; do
		wait "$p" 2> /dev/null || true
	done
	if declare -F kill_bg > /dev/null; then
		kill_bg
	fi
}

# Poll every 0.1 s, at most $1 times, until "$@" succeeds.
poll() {
	local n=$1 k
	shift
	for ((k = 0; k < n; k++)); do
		"$@" && return 0
		sleep 0.1
	done
	fail "gave up after $n polls waiting for: $*"
}

no_dirty() {
	[ -z "$(perc scan-notify)" ]
}

# perc set ARGS..., again while it exits 3.  An observer's commit locks
# the cell it acks; a write that meets that lock while its owner lives
# is a conflict at once (SPEC: exit 3, "a retry with a new transaction
# may succeed"), the contract on both stores.  The LevelDB store never
# shows a writer a live lock (a commit holds the store for its whole
# two phases); on a Redis store every process commits at once, so a
# writer beside running observers must retry, as any script would.
set_retrying() {
	local i rc
	for i in $(seq 100); do
		rc=0
		perc set "$@" 2> "$T_DIR/set.err" || rc=$?
		[ "$rc" -eq 3 ] || break
		sleep 0.05
	done
	[ "$rc" -eq 0 ] || fail "perc set $* exited $rc: $(cat "$T_DIR/set.err")"
}

# Start "perc run-observer ARGS..." in the background as runner NAME
# ($1): its exit status goes to $T_DIR/rc.NAME, its standard error to
# $T_DIR/err.NAME.  RUNNERS holds the pids to signal (timeout(1) passes
# a signal on to perc).
spawn_runner() {
	local name=$1
	shift
	(
		rc=0
		# --foreground: a plain timeout follows the signal it passes
		# on with SIGCONT, which can cancel the stop LeakSanitizer's
		# exit-time check waits for, hanging check-asan for good.
		timeout --foreground 300 perc run-observer "$@" \
		    2> "$T_DIR/err.$name" &
		echo $! > "$T_DIR/pid.$name"
		wait $! || rc=$?
		echo "$rc" > "$T_DIR/rc.$name"
	) 3>&- &
	SPAWNED+=($!)
	poll 50 test -s "$T_DIR/pid.$name"
	RUNNERS+=("$(cat "$T_DIR/pid.$name")")
}

# Wait for every spawned runner; each must have exited $1.
wait_runners() {
	local want=$1 p f
	for p in "${SPAWNED[@]}"; do
		wait "$p" || true
	done
	SPAWNED=()
	RUNNERS=()
	for f in "$T_DIR"/rc.*; do
		[ "$(cat "$f")" = "$want" ] ||
			fail "${f##*/} is $(cat "$f"), want $want: $(cat "${f/rc./err.}")"
	done
	rm -f "$T_DIR"/rc.* "$T_DIR"/err.* "$T_DIR"/pid.*
}

# The observer of the at-most-once tests: add one to ROW's cell n.
INCREMENT='n=$(perc get -t "$PERC_TXN" "$PERC_ROW" n || echo 0)
perc set -t "$PERC_TXN" "$PERC_ROW" n $((n + 1))'

@test "four runners on one notification: exactly one observer transaction commits" {
	for round in 1 2 3; do
		perc set r col "v$round"
		for name in a b c d; do
			if [ "$round" -eq 2 ]; then
				# a slow observer: the runs overlap
				spawn_runner "$name" --once --quiet col -- \
				    sh -c "sleep 0.3; $INCREMENT"
			else
				spawn_runner "$name" --once --quiet col -- \
				    sh -c "$INCREMENT"
			fi
		done
		wait_runners 0
		run -0 perc get r n
		assert_output "$round"
		run -0 perc scan-notify
		assert_output ''
	done
}

@test "thirty dirty cells, three runners of two workers each: every cell runs once" {
	t=$(perc begin)
	for k in $(seq 30); do
		perc set -t "$t" "row$k" col v
	done
	perc commit -t "$t"
	for name in a b c; do
		spawn_runner "$name" --once --quiet --workers 2 col -- \
		    sh -c "$INCREMENT"
	done
	wait_runners 0
	run -0 perc scan-notify
	assert_output ''
	perc scan --column n > "$T_DIR/n"
	[ "$(wc -l < "$T_DIR/n")" -eq 30 ]
	[ "$(cut -f3 "$T_DIR/n" | sort -u)" = 1 ]
}

@test "two long-running runners: a row runs at most once per write, and last sees the latest value" {
	obs='v=$(perc get -t "$PERC_TXN" "$PERC_ROW" col)
	     n=$(perc get -t "$PERC_TXN" "$PERC_ROW" n || echo 0)
	     perc set -t "$PERC_TXN" "$PERC_ROW" n $((n + 1))
	     perc set -t "$PERC_TXN" "$PERC_ROW" last "$v"'
	spawn_runner a --quiet col -- sh -c "$obs"
	spawn_runner b --quiet col -- sh -c "$obs"
	for k in $(seq 10); do
		set_retrying "row$((k % 4))" col "v$k"
	done
	poll 200 no_dirty
	# the runs of a row: at least one, at most one per write
	run -0 perc scan --column last
	assert_output $'row0\tlast\tv8\nrow1\tlast\tv9\nrow2\tlast\tv10\nrow3\tlast\tv7'
	writes=(2 3 3 2)
	for r in 0 1 2 3; do
		n=$(perc get "row$r" n)
		[ "$n" -ge 1 ] && [ "$n" -le "${writes[r]}" ] ||
			fail "row$r ran $n times for ${writes[r]} writes"
	done
	kill -TERM "${RUNNERS[@]}"
	wait_runners 0
	run -0 timeout 30 perc resolve-locks --all --dry-run
	assert_output ''
}

@test "a crash after the commit point loses no notification: both observed cells run" {
	t=$(perc begin)
	perc set -t "$t" a col 1
	perc set -t "$t" b col 2
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	run -0 timeout 30 perc resolve-locks
	assert_output --partial rolled-forward
	run -0 perc scan-notify
	assert_output $'a\tcol\nb\tcol'
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c '
	    v=$(perc get -t "$PERC_TXN" "$PERC_ROW" col)
	    echo "$PERC_ROW=$v" >> "$T_DIR/runs"'
	run -0 sort "$T_DIR/runs"
	assert_output $'a=1\nb=2'
	run -0 perc scan-notify
	assert_output ''
}

@test "a crash after the commit point: an observer run alone rolls forward and clears" {
	t=$(perc begin)
	perc set -t "$t" a col 1
	perc set -t "$t" b col 2
	perc set -t "$t" c col 3
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	run -0 timeout 30 perc run-observer --once --quiet col -- true
	run -0 perc scan-notify
	assert_output ''
	run -0 perc scan --column col
	assert_output $'a\tcol\t1\nb\tcol\t2\nc\tcol\t3'
}

@test "a notification of a transaction rolled back after a crash does not stay dirty" {
	perc set a col old
	t=$(perc begin)
	perc set -t "$t" a col 1
	perc set -t "$t" b col 2
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t"
	run -0 timeout 30 perc resolve-locks
	run -0 timeout 30 perc run-observer --once --quiet col -- true
	run -0 perc scan-notify
	assert_output ''
	run -0 perc get a col
	assert_output old
	run -0 timeout 30 perc run-observer --once col -- \
	    sh -c 'echo ran >> "$T_DIR/runs"'
	[ ! -e "$T_DIR/runs" ]
}

# The observer of the gc tests: ROW=VALUE its snapshot reads, or
# ROW=(none: STATUS) when get finds no value, a line in $T_DIR/runs.
RECORD='v=$(perc get -t "$PERC_TXN" "$PERC_ROW" col) || v="(none: $?)"
echo "$PERC_ROW=$v" >> "$T_DIR/runs"'

@test "gc before the observers run: every dirty cell runs once, a deletion too, and ends clean" {
	perc set two col v1
	perc set two col v2
	perc set gone col v1
	perc del gone col
	run -0 timeout 30 perc gc --retain 0
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c "$RECORD"
	run -0 sort "$T_DIR/runs"
	assert_output $'gone=(none: 1)\ntwo=v2'
	run -0 perc scan-notify
	assert_output ''
	run -1 perc get gone col
	rm "$T_DIR/runs"
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c "$RECORD"
	[ ! -e "$T_DIR/runs" ]
}

@test "gc removed a put and a delete still to be observed; a new write: one run, nothing left dirty" {
	perc set a col v1
	perc del a col
	run -0 timeout 30 perc gc --retain 0
	perc set a col v2
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c "$RECORD"
	run -0 cat "$T_DIR/runs"
	assert_output 'a=v2'
	run -0 perc scan-notify
	assert_output ''
}

@test "a notification of a transaction rolled back, then gc: it runs once and the cell is clean" {
	t=$(perc begin)
	perc set -t "$t" a col 1
	perc set -t "$t" b col 2
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$t"
	run -0 timeout 30 perc gc --retain 0
	run -0 perc scan-notify
	assert_output $'a\tcol\nb\tcol'
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c "$RECORD"
	run -0 sort "$T_DIR/runs"
	assert_output $'a=(none: 1)\nb=(none: 1)'
	run -0 perc scan-notify
	assert_output ''
	rm "$T_DIR/runs"
	run -0 timeout 30 perc run-observer --once --quiet col -- sh -c "$RECORD"
	[ ! -e "$T_DIR/runs" ]
}

@test "a runner dying in its own commit before the commit point: the cell runs again" {
	perc set r col v
	run -137 env PERC_FAILPOINT=after-prewrite perc run-observer --once \
	    --quiet col -- sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out x'
	run -0 timeout 30 perc resolve-locks
	run -1 perc get r out
	run -0 perc scan-notify
	assert_output $'r\tcol'
	run -0 timeout 30 perc run-observer --once --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out y'
	run -0 perc get r out
	assert_output y
	run -0 perc scan-notify
	assert_output ''
}

@test "a runner dying in its own commit after the commit point: the run counts, no second run" {
	perc set r col v
	run -137 env PERC_FAILPOINT=after-commit-primary perc run-observer \
	    --once --quiet col -- \
	    sh -c 'perc set -t "$PERC_TXN" "$PERC_ROW" out x'
	run -0 timeout 30 perc resolve-locks
	run -0 perc get r out
	assert_output x
	run -0 perc scan-notify
	assert_output ''
	run -0 timeout 30 perc run-observer --once col -- \
	    sh -c 'echo ran >> "$T_DIR/runs"'
	[ ! -e "$T_DIR/runs" ]
}

@test "clustering: five documents, two with the same text" {
	dir="$T_DIR/docs"
	run -0 "$CLUSTERING" "$dir"
	"$CLUSTERING" "$dir" load http://c/ 'same text'
	"$CLUSTERING" "$dir" load http://a/ 'other text'
	"$CLUSTERING" "$dir" load http://b/ 'same text'
	"$CLUSTERING" "$dir" load http://d/ 'same text'
	printf 'x\0y\tz\\\n' | "$CLUSTERING" "$dir" load http://e/
	run -0 env PERC_DIR="$dir" perc scan-notify
	[ "${#lines[@]}" -eq 5 ]
	run -0 timeout 300 "$CLUSTERING" "$dir" run 240
	export PERC_DIR=$dir
	same=$(printf 'same text' | sha1sum | cut -d' ' -f1)
	other=$(printf 'other text' | sha1sum | cut -d' ' -f1)
	binary=$(printf 'x\0y\tz\\\n' | sha1sum | cut -d' ' -f1)
	run -0 perc get "hash:$same" canonical
	assert_output http://b/
	run -0 perc get "hash:$other" canonical
	assert_output http://a/
	run -0 perc get "hash:$binary" canonical
	assert_output http://e/
	run -0 perc get http://d/ hash
	assert_output "$same"
	run -0 perc get stats canonical-count
	assert_output 3
	run -0 perc scan-notify
	assert_output ''
	run -0 "$CLUSTERING" "$dir" verify
	assert_output '5 documents, 3 distinct: clustering verified'
	# verify can fail: a wrong canonical document, then a wrong count
	perc set "hash:$same" canonical http://c/
	run -0 timeout 300 "$CLUSTERING" "$dir" run 240
	run -1 "$CLUSTERING" "$dir" verify
	perc set "hash:$same" canonical http://b/
	run -0 timeout 300 "$CLUSTERING" "$dir" run 240
	run -0 "$CLUSTERING" "$dir" verify
	perc set stats canonical-count 4
	run -1 --separate-stderr "$CLUSTERING" "$dir" verify
	[[ $stderr == *"canonical-count is 4, want 3"* ]]
}

# Load 15 documents from loader $1; 8 distinct texts in all, some with
# a newline, a tab or a backslash.
load_docs() {
	local l=$1 d text
	for d in $(seq 15); do
		printf -v text 'text %d\n\tof the web\\\n' $(((l * 5 + d) % 8))
		"$CLUSTERING" "$T_DIR/docs" load "http://site$l.example/$d" \
		    "$text" || return
	done
}

@test "clustering: three loaders and two runners per column at once, then verify" {
	dir="$T_DIR/docs"
	"$CLUSTERING" "$dir"
	# each server leads a process group of its own, with its runners,
	# for teardown to kill if need be
	for s in 1 2; do
		setsid "$CLUSTERING" "$dir" serve 2> "$T_DIR/serve.$s" 3>&- &
		SPAWNED+=($!)
		GROUPS_STARTED+=($!)
	done
	servers=("${SPAWNED[@]}")
	for l in 1 2 3; do
		load_docs "$l" 3>&- &
		SPAWNED+=($!)
	done
	for p in "${SPAWNED[@]:2}"; do
		wait "$p" || fail "a loader failed"
	done
	SPAWNED=("${servers[@]}")
	PERC_DIR=$dir poll 1200 no_dirty
	for p in "${servers[@]}"; do
		kill -TERM "$p"
	done
	# the servers end within 30 s, and exit 0
	(
		for k in $(seq 300); do sleep 0.1; done
		for p in "${servers[@]}"; do
			kill -9 -- "-$p" 2> /dev/null
		done
	) 3>&- &
	dog=$!
	for p in "${servers[@]}"; do
		wait "$p" || fail "serve exited $?: $(cat "$T_DIR"/serve.*)"
	done
	kill "$dog" 2> /dev/null || true
	SPAWNED=()
	GROUPS_STARTED=()
	run -0 timeout 300 "$CLUSTERING" "$dir" run 240
	run -0 "$CLUSTERING" "$dir" verify
	assert_output '45 documents, 8 distinct: clustering verified'
	PERC_DIR=$dir run -0 timeout 30 perc resolve-locks --all --dry-run
	assert_output ''
}
