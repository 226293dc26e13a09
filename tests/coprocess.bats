#!/usr/bin/env bats
# tests/coprocess.bats - perc run-observer --coprocess: one COMMAND per
# runner serves cell after cell in perc shell's request language

load helpers

setup() {
	perc_fresh_dir
	perc init --observe doc "$PERC_DIR"
	T_DIR=$BATS_TEST_TMPDIR
	export T_DIR
	RUNNER_PIDS=()
	EXAMPLES=$PERC_SRC/examples
}

teardown() {
	local p
	for p in "${RUNNER_PIDS[@]}"; do
		kill -9 "$p" 2> /dev/null || true
	done
	for p in "${RUNNER_PIDS[@]}"; do
		wait "$p" 2> /dev/null || true
	done
	# a COMMAND left by a test that failed midway
	if [ -s "$T_DIR/pids" ]; then
		while read -r p; do
			kill -9 "$p" 2> /dev/null || true
		done < "$T_DIR/pids"
	fi
	kill_bg
}

no_dirty() {
	[ -z "$(perc scan-notify)" ]
}

# Does file $1 have at least $2 lines?
has_lines() {
	[ -e "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]
}

no_lock_left() {
	run -0 --separate-stderr timeout 30 perc resolve-locks --all --dry-run
	assert_output ''
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

# observer NAME BODY: an executable bash COMMAND in $T_DIR/NAME.  It
# notes its pid in $T_DIR/pids when it starts, every line it reads in
# $T_DIR/in, and defines ask REQUEST (its answer in $answer, also
# noted in $T_DIR/in) for BODY, which runs once per "run TXN ROW COL"
# line with $txn, $row and $col set.
observer() {
	{
		printf '#!/bin/bash\necho $$ >> "$T_DIR/pids"\n'
		printf 'ask() { printf "%%s\\n" "$*"; IFS= read -r answer ||'
		printf ' exit 0; printf "%%s\\n" "$answer" >> "$T_DIR/in"; }\n'
		printf 'while IFS= read -r line; do\n'
		printf '  printf "%%s\\n" "$line" >> "$T_DIR/in"\n'
		printf '  read -r verb txn row col <<< "$line"\n'
		printf '%s\n' "$2"
		printf 'done\n'
	} > "$T_DIR/$1"
	chmod +x "$T_DIR/$1"
}

# The number of times a COMMAND was started.
starts() {
	[ -e "$T_DIR/pids" ] && wc -l < "$T_DIR/pids" || echo 0
}

@test "the bash example serves many cells: every value right, nothing left dirty" {
	local k
	{
		for k in $(seq 120); do
			printf 'r%03d\tdoc\t%s\n' "$k" "$(printf 'x%.0s' $(seq "$k"))"
		done
		printf 'a b\tdoc\ttab\\there\n'
		printf '\tdoc\tnew\\nline \\\\ \\x00!\n'
	} | perc load > /dev/null
	run -0 --separate-stderr timeout 60 perc run-observer --once --quiet \
	    --coprocess doc -- "$EXAMPLES/observer-coprocess.sh"
	assert_output ''
	[ -z "$stderr" ]
	run -0 perc scan-notify
	assert_output ''
	run -0 perc scan --column len
	[ "${#lines[@]}" -eq 122 ]
	for k in 7 99 120; do
		run -0 perc get "$(printf 'r%03d' "$k")" len
		assert_output "$k"
	done
	run -0 perc get 'a b' len
	assert_output 8
	run -0 perc get '' len
	assert_output 13
	no_lock_left
}

@test "the run line carries TXN, and ROW and COLUMN as words: \\x20 for a space, \\e for nothing" {
	perc set 'a b' doc v
	perc set '' doc v
	observer obs 'ask done 0'
	run -0 timeout 30 perc run-observer --once --quiet --coprocess doc -- \
	    "$T_DIR/obs"
	run -0 grep -c '^run [0-9]* a\\x20b doc$' "$T_DIR/in"
	run -0 grep -c '^run [0-9]* \\e doc$' "$T_DIR/in"
	# one COMMAND served both cells
	[ "$(starts)" -eq 1 ]
}

@test "the python example serves many cells" {
	command -v python3 > /dev/null || skip "python3 is not installed"
	local k
	for k in $(seq 40); do
		printf 'r%02d\tdoc\t%s\n' "$k" "$(printf 'y%.0s' $(seq "$k"))"
	done | perc load > /dev/null
	printf 'odd row\tdoc\ta\\tb\\x00\\\\\n' | perc load > /dev/null
	run -0 --separate-stderr timeout 60 perc run-observer --once --quiet \
	    --coprocess doc -- "$EXAMPLES/observer_coprocess.py"
	run -0 perc scan-notify
	assert_output ''
	run -0 perc get r33 len
	assert_output 33
	run -0 perc get 'odd row' len
	assert_output 5
	[ "$(perc scan --column len | wc -l)" -eq 41 ]
}

@test "done 0 answers ok TS and commits; done 1 answers ok, aborts, and counts a failure" {
	perc set good doc v
	perc set bad doc v
	observer obs '
	  ask set -t "$txn" "$row" out written
	  if [ "$row" = bad ]; then ask done 1; else ask done 0; fi'
	run -1 --separate-stderr timeout 30 perc run-observer --once \
	    --coprocess doc -- "$T_DIR/obs"
	run -0 perc get good out
	assert_output written
	run -1 perc get bad out
	run -0 perc scan-notify --failures
	assert_output $'bad\tdoc\t1'
	# the answers: ok to each set, ok TS to the commit, ok to the abort
	[ "$(grep -c '^ok [0-9][0-9]*$' "$T_DIR/in")" -eq 1 ]
	[ "$(grep -c '^ok$' "$T_DIR/in")" -eq 3 ]
	[ "$(starts)" -eq 1 ]
	no_lock_left
}

@test "--once exits 0 when every run committed, and the report names the commit" {
	perc set a doc v
	observer obs 'ask done 0'
	run -0 --separate-stderr timeout 30 perc run-observer --once \
	    --coprocess doc -- "$T_DIR/obs"
	assert_output ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ ${stderr_lines[0]} == "perc: observer on 'a' 'doc' committed at "* ]]
}

@test "LevelDB: the runner lets the store go while COMMAND works, and a process of COMMAND's gets it" {
	perc_leveldb_only
	perc set a doc v
	perc set b doc w
	# Between two requests COMMAND works for a while (the sleep): the
	# runner has let the store go, so flock -n takes it where processes
	# open it themselves (with the server, the server holds it); and a
	# perc of COMMAND's own gets in.
	observer obs '
	  ask get -t "$txn" "$row" doc
	  sleep 0.2
	  if flock -n "$PERC_DIR/store.lock" true; then s=free; else s=held; fi
	  echo "$s $(timeout 10 perc get "$row" doc)" >> "$T_DIR/seen"
	  ask set -t "$txn" "$row" out "${answer#ok }"
	  ask done 0'
	run -0 --separate-stderr timeout 60 perc run-observer --once \
	    --quiet --coprocess doc -- "$T_DIR/obs"
	s=held
	[ "${PERC_SERVE:-1}" != 0 ] || s=free
	run -0 sort "$T_DIR/seen"
	assert_output "$s v"$'\n'"$s w"
	run -0 perc scan --column out
	assert_output $'a\tout\tv\nb\tout\tw'
	no_lock_left
}

@test "a refused request gets perc shell's err answer and the cell goes on" {
	perc set r doc v
	observer obs '
	  ask get -t "$txn" "$row"
	  ask commit -t "$txn"
	  ask abort -t "$txn"
	  ask done
	  ask done 256
	  ask get -t 12345 "$row" doc
	  ask get -t "$txn" "$row" doc
	  ask set -t "$txn" "$row" out "${answer// /\\x20}"
	  ask done 0'
	run -0 --separate-stderr timeout 30 perc run-observer --once --quiet \
	    --coprocess doc -- "$T_DIR/obs"
	run -0 grep -c '^err 2 ' "$T_DIR/in"
	assert_output 5
	run -0 grep -c '^err 5 ' "$T_DIR/in"
	assert_output 1
	run -0 perc get r out
	assert_output 'ok v'
	run -0 perc scan-notify
	assert_output ''
}

@test "a COMMAND that dies mid-cell fails that cell only; it is started again and later runs commit" {
	perc set bad doc v
	observer obs '
	  if [ "$row" = bad ] && [ ! -e "$T_DIR/died" ]; then
	    : > "$T_DIR/died"; exit 3
	  fi
	  ask set -t "$txn" "$row" out ok
	  ask done 0'
	start_runner "$T_DIR/err" --coprocess doc -- "$T_DIR/obs"
	poll 100 test -e "$T_DIR/died"
	perc set later doc v
	poll 100 perc get later out
	# the failed cell runs again after its backoff, and commits
	poll 100 perc get bad out
	poll 100 no_dirty
	stop_runner TERM
	[ "$(starts)" -eq 2 ]
	run -0 grep -c "'bad' 'doc' exited with status 3 before saying done; failure 1" \
	    "$T_DIR/err"
	no_lock_left
}

@test "the transactions a COMMAND began and left open go when it dies" {
	perc set a doc v
	observer obs '
	  if [ ! -e "$T_DIR/died" ]; then
	    ask begin
	    ask set -t "${answer#ok }" x y z
	    : > "$T_DIR/died"; exit 3
	  fi
	  ask done 0'
	start_runner "$T_DIR/err" --quiet --coprocess doc -- "$T_DIR/obs"
	poll 100 test -e "$T_DIR/died"
	poll 100 no_dirty
	run -0 perc status
	assert_line $'oldest_open_start\tnone'
	stop_runner TERM
}

@test "a COMMAND that hangs is killed after PERC_LOCK_TTL and the cell aborted" {
	perc set r doc v
	observer obs '
	  ask set -t "$txn" "$row" out x
	  exec sleep 600'
	PERC_LOCK_TTL=1 run -1 --separate-stderr timeout 30 perc run-observer \
	    --once --coprocess doc -- "$T_DIR/obs"
	assert_error_line "*'r' 'doc' did not say done within 1 s (PERC_LOCK_TTL), and was killed; failure 1*"
	run -1 perc get r out
	run -0 perc scan-notify
	assert_output $'r\tdoc'
	! kill -0 "$(cat "$T_DIR/pids")" 2> /dev/null
	no_lock_left
}

@test "a COMMAND that writes garbage fails the cell and is started again" {
	perc set a doc v
	perc set b doc v
	observer obs '
	  if [ ! -e "$T_DIR/said" ]; then
	    : > "$T_DIR/said"; echo "hello there"; read -r x
	  fi
	  ask done 0'
	run -1 --separate-stderr timeout 30 perc run-observer --once --quiet \
	    --coprocess doc -- "$T_DIR/obs"
	# quiet: the failure is in the exit status and in scan-notify
	[ -z "$stderr" ]
	[ "$(perc scan-notify | wc -l)" -eq 1 ]
	[ "$(starts)" -eq 2 ]
	run -0 --separate-stderr timeout 30 perc run-observer --once \
	    --coprocess doc -- "$T_DIR/obs"
	run -0 perc scan-notify
	assert_output ''
	rm "$T_DIR/said"
	perc set c doc v
	run -1 --separate-stderr timeout 30 perc run-observer --once \
	    --coprocess doc -- "$T_DIR/obs"
	assert_error_line "*'c' 'doc' wrote 'hello there', neither a request nor done, and was stopped; failure 1*"
}

@test "a COMMAND that never reads its input is killed after PERC_LOCK_TTL" {
	perc set r doc v
	# reads nothing, writes nothing
	PERC_LOCK_TTL=1 run -1 --separate-stderr timeout 30 perc run-observer \
	    --once --coprocess doc -- sleep 600
	assert_error_line "*did not say done within 1 s*"
	# writes requests without end and never reads an answer: the
	# answers fill the pipe, and the runner still keeps to the bound
	PERC_LOCK_TTL=1 run -1 --separate-stderr timeout 30 perc run-observer \
	    --once --coprocess doc -- yes 'get r doc'
	assert_error_line "*did not say done within 1 s*"
	run -0 perc scan-notify --failures
	assert_output $'r\tdoc\t2'
	no_lock_left
}

@test "a COMMAND that cannot be run fails each cell with one line" {
	perc set r doc v
	run -1 --separate-stderr timeout 30 perc run-observer --once \
	    --coprocess doc -- "$T_DIR/no-such-command"
	assert_error_line "*'r' 'doc' could not be run: '*no-such-command': No such file or directory; failure 1*"
}

@test "at-most-once with several runners and --workers 2 at once: each notification commits one run" {
	local k pids=() p
	for k in $(seq 60); do
		printf 'r%02d\tdoc\tv\n' "$k"
	done | perc load > /dev/null
	# each run adds one to the row's counter n, and notes its answer
	observer obs '
	  ask get -t "$txn" "$row" n
	  n=${answer#ok }; [ "$n" = none ] && n=0
	  ask set -t "$txn" "$row" n $((n + 1))
	  ask done 0
	  printf "%s %s\n" "$row" "$answer" >> "$T_DIR/done"'
	for k in 1 2; do
		perc run-observer --once --quiet --coprocess doc -- \
		    "$T_DIR/obs" 3>&- &
		pids+=($!)
	done
	perc run-observer --once --quiet --workers 2 --coprocess doc -- \
	    "$T_DIR/obs" 3>&- &
	pids+=($!)
	RUNNER_PIDS+=("${pids[@]}")
	for p in "${pids[@]}"; do
		timeout 60 tail --pid="$p" -f /dev/null
		wait "$p" || true
	done
	# a --once pass may leave a cell to a runner that took it
	run -0 timeout 60 perc run-observer --once --quiet --coprocess doc -- \
	    "$T_DIR/obs"
	run -0 perc scan-notify
	assert_output ''
	[ "$(perc scan --column n | cut -f3 | sort | uniq -c | tr -s ' ')" = \
	    " 60 1" ]
	# one "ok TS" per row, each a different commit
	[ "$(grep -c ' ok [0-9]*$' "$T_DIR/done")" -eq 60 ]
	[ "$(grep ' ok [0-9]*$' "$T_DIR/done" | cut -d ' ' -f 1 | sort -u |
	    wc -l)" -eq 60 ]
	[ "$(grep ' ok [0-9]*$' "$T_DIR/done" | cut -d ' ' -f 3 | sort -u |
	    wc -l)" -eq 60 ]
	no_lock_left
}

@test "--workers 2 --coprocess: a COMMAND that hangs fails its cell alone; the other serves every other cell meanwhile" {
	local k
	for k in $(seq 30); do
		printf 'r%02d\tdoc\tv\n' "$k"
	done | perc load > /dev/null
	observer obs '
	  [ "$row" = r07 ] && exec sleep 600
	  ask set -t "$txn" "$row" out "$row"
	  ask done 0'
	PERC_LOCK_TTL=3 run -1 --separate-stderr timeout 60 perc run-observer \
	    --once --workers 2 --coprocess doc -- "$T_DIR/obs"
	[ "$(grep -c "'r07' 'doc' did not say done within 3 s" <<< "$stderr")" \
	    -eq 1 ]
	# each other cell committed (or, on a store whose runners are
	# processes, was taken by the other one, or lost a conflict to it
	# and ran again)
	odd=$(grep -v -e ' committed at ' -e ' was taken by another runner$' \
	    -e ' lost a conflict; the cell stays dirty and runs again$' \
	    -e "'r07' 'doc' did not say done" <<< "$stderr") || true
	[ -z "$odd" ] || fail "the runner also said: $odd"
	[ "$(perc scan --column out | wc -l)" -eq 29 ]
	run -0 perc scan-notify
	assert_output $'r07\tdoc'
	no_lock_left
}

@test "SIGTERM: the runner closes COMMAND's input, waits for it, exits 0" {
	observer obs '
	  ask set -t "$txn" "$row" out "$row"
	  ask done 0'
	echo 'echo bye >> "$T_DIR/bye"' >> "$T_DIR/obs"
	start_runner "$T_DIR/err" --quiet --workers 2 --coprocess doc -- \
	    "$T_DIR/obs"
	for k in 1 2 3 4; do
		perc set "r$k" doc v
	done
	poll 100 no_dirty
	stop_runner TERM
	[ "$(perc scan --column out | wc -l)" -eq 4 ]
	# every COMMAND started read the end of its input and exited
	[ "$(wc -l < "$T_DIR/bye")" -eq "$(starts)" ]
	while read -r p; do
		! kill -0 "$p" 2> /dev/null || fail "COMMAND $p outlived the runner"
	done < "$T_DIR/pids"
	[ ! -s "$T_DIR/err" ]
	no_lock_left
}

@test "SIGTERM: a COMMAND that stays after the end of its input is killed within PERC_LOCK_TTL" {
	perc set r doc v
	observer obs '
	  ask done 0'
	echo 'exec sleep 600' >> "$T_DIR/obs"
	PERC_LOCK_TTL=1 start_runner "$T_DIR/err" --quiet --coprocess doc -- \
	    "$T_DIR/obs"
	poll 100 no_dirty
	stop_runner TERM
	! kill -0 "$(cat "$T_DIR/pids")" 2> /dev/null
}

# The runners of --workers 2 --coprocess (runner $1), asleep in poll: 2
# worker processes, each driving a COMMAND of its own, on every store.
coprocess_runners_asleep() {
	local workers
	workers=$(ps -o pid=,comm= --ppid "$1" | awk '$2 == "perc" { print $1 }')
	workers_asleep_in_poll "$1" "$(ps -o pid= --ppid "$1" | wc -l)" &&
	    [ "$(echo "$workers" | wc -w)" -eq 2 ]
}

@test "idle --coprocess --workers 2: asleep until a commit wakes them, fallback poll 1000 s away; SIGTERM ends them" {
	PERC_OBSERVER_POLL=1000 start_runner "$T_DIR/err" --quiet --workers 2 \
	    --coprocess doc -- "$EXAMPLES/observer-coprocess.sh"
	perc set d1 doc abc
	poll 100 no_dirty
	poll 100 coprocess_runners_asleep "$RUNNER_PID"
	perc set d2 doc abcd
	perc set d3 doc abcde
	poll 100 no_dirty
	run -0 perc scan --column len
	assert_output $'d1\tlen\t3\nd2\tlen\t4\nd3\tlen\t5'
	poll 100 coprocess_runners_asleep "$RUNNER_PID"
	stop_runner TERM
	no_lock_left
}

@test "--coprocess in the usage" {
	run -2 --separate-stderr perc run-observer --bogus
	run -0 perc run-observer -h
	assert_output --partial '--coprocess'
}
