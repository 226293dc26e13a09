#!/usr/bin/env bats
# tests/ts.bats - perc ts: fresh timestamps from the oracle

load helpers

setup() {
	perc_fresh_dir
}

@test "ts prints one unsigned decimal timestamp, 0 never issued" {
	run -0 --separate-stderr perc ts
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output =~ ^[1-9][0-9]*$ ]]
}

@test "ts output ends in one newline" {
	perc ts > "$BATS_TEST_TMPDIR/out"
	[ "$(tail -c 1 "$BATS_TEST_TMPDIR/out" | od -An -c | tr -d ' ')" = '\n' ]
	[ "$(wc -l < "$BATS_TEST_TMPDIR/out")" -eq 1 ]
}

@test "timestamps are strictly increasing across calls" {
	prev=0
	for i in $(seq 20); do
		now=$(perc ts)
		[ "$now" -gt "$prev" ] || fail "ts gave $now after $prev"
		prev=$now
	done
}

@test "ts -n 5 prints 5 consecutive timestamps in increasing order" {
	before=$(perc ts)
	run -0 --separate-stderr perc ts -n 5
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" -gt "$before" ]
	for i in 1 2 3 4; do
		[ "${lines[$i]}" -eq $((lines[i - 1] + 1)) ]
	done
	after=$(perc ts)
	[ "$after" -gt "${lines[4]}" ]
}

@test "ts -n 1 is the default, and a large count works" {
	run -0 perc ts -n 1
	[ "${#lines[@]}" -eq 1 ]
	perc ts -n 10000 > "$BATS_TEST_TMPDIR/out"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/out")" -eq 10000 ]
	[ "$(sort -un "$BATS_TEST_TMPDIR/out" | wc -l)" -eq 10000 ]
	sort -nc "$BATS_TEST_TMPDIR/out"
}

@test "ts -n takes a positive decimal integer: else exit 2, one line" {
	for n in 0 x -1 1x '' ' 1' +1 0x10 99999999999999999999999; do
		run -2 --separate-stderr perc ts -n "$n"
		assert_usage_error
	done
}

@test "ts takes no operand" {
	run -2 --separate-stderr perc ts 5
	assert_usage_error
	run -2 --separate-stderr perc ts --bogus
	assert_usage_error
}

@test "timestamps, handles and commit timestamps come from one oracle" {
	a=$(perc ts)
	t=$(perc begin)
	b=$(perc ts)
	perc set -t "$t" r c v
	c=$(perc commit -t "$t")
	d=$(perc ts)
	[ "$a" -lt "$t" ]
	[ "$t" -lt "$b" ]
	[ "$b" -lt "$c" ]
	[ "$c" -lt "$d" ]
}

@test "timestamps never go backwards after a process is killed mid-allocation" {
	perc ts -n 100000000 > "$BATS_TEST_TMPDIR/out" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	for i in $(seq 600); do
		[ "$(wc -l < "$BATS_TEST_TMPDIR/out")" -gt 1000 ] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	max=$(sort -n "$BATS_TEST_TMPDIR/out" | tail -n 1)
	[ "$max" -gt 1000 ]
	next=$(perc ts)
	[ "$next" -gt "$max" ]
}

@test "ts outside a data directory exits 6 with one line" {
	assert_exit_6_outside ts
	assert_exit_6_outside ts -n 3
}

@test "ts waits for a locked oracle at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc_leveldb_only
	before=$(perc ts)
	hold_flock "$PERC_DIR/oracle.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc ts
	assert_error_line
	assert_output ''
	release_flock
	run -0 perc ts
	[ "$output" -gt "$before" ]
}

@test "ts waits for the oracle while another process holds it" {
	hold_flock "$PERC_DIR/oracle.lock"
	(sleep 0.5; kill "$FLOCK_PID") 3>&- &
	BG_PIDS+=($!)
	PERC_LOCK_TIMEOUT=10 run -0 timeout 20 perc ts
	[[ $output =~ ^[1-9][0-9]*$ ]]
}

@test "a timestamp carries the wall clock in its high bits, as perc(1) says" {
	before=$(date +%s%3N)
	ts=$(perc ts)
	after=$(date +%s%3N)
	ms=$((ts / 4096 + 1735689600000))
	# The oracle may run ahead of the clock (never behind it); the
	# Redis oracle reads its master's clock, the same machine's here.
	[ "$ms" -ge $((before - 1000)) ] || fail "ts $ts says $ms, before $before"
	[ "$ms" -le $((after + 5000)) ] || fail "ts $ts says $ms, after $after"
}
