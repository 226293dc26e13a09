#!/usr/bin/env bats
# tests/load.bats - perc load: writing the cells of scan's output

load helpers

setup() {
	perc_fresh_dir
}

# load_input TEXT: the printf(1) form of TEXT into $IN, for perc load.
load_input() {
	IN="$BATS_TEST_TMPDIR/in"
	printf "$1" > "$IN"
}

@test "scan | load copies every visible cell, whatever its bytes" {
	src=$PERC_DIR
	perc_fresh_dir copy
	dst=$PERC_DIR
	export PERC_DIR=$src
	for i in 0 9 10 13 32 92 127 128 255; do
		b=$(printf '\\%03o' "$i")
		printf "v$b\\000$b\n" | perc set -e "r\\x$(printf %02x "$i")" c
	done
	printf 'x\ty\nz\\\x80\xff\x00\x1f\x7f ~' | perc set "$(printf 'r\\ow')" "$(printf 'c\tol')"
	perc set '' '' ''
	perc set -- -dash -col -value
	perc set gone c v
	perc del gone c
	head -c 3000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	perc set big c < "$BATS_TEST_TMPDIR/big"
	perc scan > "$BATS_TEST_TMPDIR/a.tsv"
	run -0 --separate-stderr perc -d "$dst" load < "$BATS_TEST_TMPDIR/a.tsv"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ ^[1-9][0-9]*$ ]]
	perc -d "$dst" scan > "$BATS_TEST_TMPDIR/b.tsv"
	cmp "$BATS_TEST_TMPDIR/a.tsv" "$BATS_TEST_TMPDIR/b.tsv"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/b.tsv")" -eq 13 ]
	perc -d "$dst" get big c > "$BATS_TEST_TMPDIR/big.out"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/big.out"
	perc -d "$dst" get -e 'r\x00' c > "$BATS_TEST_TMPDIR/nul.out"
	assert_bytes 'v\000\000\000\n' "$BATS_TEST_TMPDIR/nul.out"
	perc -d "$dst" get -e 'r\xff' c > "$BATS_TEST_TMPDIR/ff.out"
	assert_bytes 'v\377\000\377\n' "$BATS_TEST_TMPDIR/ff.out"
	run -1 perc -d "$dst" get gone c
}

@test "load reads hex digits in either case, and a last line without newline" {
	load_input 'r\\xFF\tc\\x0a\tv\\xaB\\t\\\\\\n\nlast\tc\tno newline'
	run -0 --separate-stderr perc load < "$IN"
	[ "${#lines[@]}" -eq 1 ]
	perc get -e 'r\xff' 'c\n' > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'v\253\t\\\n' "$BATS_TEST_TMPDIR/out"
	run -0 perc get last c
	assert_output 'no newline'
}

@test "load writes over what is there and leaves the other cells alone" {
	perc set a c old
	perc set keep c kept
	load_input 'a\tc\tnew\nb\tc\tb\n'
	run -0 perc load < "$IN"
	run -0 perc scan
	assert_output "$(printf 'a\tc\tnew\nb\tc\tb\nkeep\tc\tkept')"
	# A point read too: a load keeps the cell's head (codec.h) current.
	run -0 perc get a c
	assert_output new
}

@test "--batch N commits every N lines: one rising timestamp each" {
	for i in 1 2 3 4 5 6 7; do printf 'r%s\tc\t%s\n' "$i" "$i"; done \
	    > "$BATS_TEST_TMPDIR/in"
	for n in 1 3 7 100; do
		run -0 --separate-stderr perc load --batch "$n" < "$BATS_TEST_TMPDIR/in"
		[ -z "$stderr" ]
		[ "${#lines[@]}" -eq $(((7 + n - 1) / n)) ] ||
			fail "--batch $n printed ${#lines[@]} timestamps"
		printf '%s\n' "${lines[@]}" | sort -c -n -u
	done
	run -0 perc load --batch=2 < "$BATS_TEST_TMPDIR/in"
	[ "${#lines[@]}" -eq 4 ]
	# each batch is a transaction of its own: r1-r3 at the first one
	perc load --batch 3 < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/ts"
	t1=$(sed -n 1p "$BATS_TEST_TMPDIR/ts")
	t2=$(sed -n 2p "$BATS_TEST_TMPDIR/ts")
	perc set r1 c changed
	run -0 perc scan --at "$t1"
	[ "${#lines[@]}" -eq 7 ]
	run -0 perc show r3 c
	[[ $output == *"write	$t1	"* ]]
	run -0 perc show r4 c
	[[ $output == *"write	$t2	"* ]]
}

@test "empty input: nothing printed, nothing written, exit 0" {
	run -0 --separate-stderr perc load < /dev/null
	assert_output ''
	[ -z "$stderr" ]
	run -0 --separate-stderr perc load --batch 5 < /dev/null
	assert_output ''
	run -0 perc scan
	assert_output ''
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
}

@test "a cell given twice in one transaction keeps its last value" {
	load_input 'k\tc\tfirst\nx\tc\t1\nk\tc\tsecond\nk\tc\tlast\n'
	run -0 perc load < "$IN"
	[ "${#lines[@]}" -eq 1 ]
	run -0 perc get k c
	assert_output last
	run -0 perc show k c
	[ "$(grep -c '	write	' <<<"$output")" -eq 1 ]
	# across batches too, each its own version
	run -0 perc load --batch 2 < "$IN"
	[ "${#lines[@]}" -eq 2 ]
	run -0 perc get k c
	assert_output last
}

@test "a malformed line: exit 2 naming it, nothing of its transaction written" {
	load_input 'r1\tc\t1\nr2\tc\t2\nr3\tc\t3\nr4\tc\t4\nr5\tc\t5\n'
	sed -i '4s/.*/r4\tonly two/' "$IN"
	run -2 --separate-stderr perc load --batch 2 < "$IN"
	assert_error_line '*line 4*'
	[ "${#lines[@]}" -eq 1 ]
	ts=${lines[0]}
	run -0 perc scan
	assert_output "$(printf 'r1\tc\t1\nr2\tc\t2')"
	run -1 perc get r3 c
	# without --batch, nothing at all
	perc_fresh_dir other
	run -2 --separate-stderr perc load < "$IN"
	assert_error_line '*line 4*'
	assert_output ''
	run -0 perc scan
	assert_output ''
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
	[ -n "$ts" ]
}

@test "a line of the wrong number of fields is malformed" {
	for bad in 'a\tb' 'a\tb\tc\td' '' 'abc' 'a\tb\tc\t'; do
		load_input "ok\tc\tv\n$bad\nok2\tc\tv\n"
		run -2 --separate-stderr perc load < "$IN"
		assert_error_line '*line 2*'
		assert_output ''
	done
	run -0 perc scan
	assert_output ''
}

@test "bad escapes are malformed; a raw byte outside 0x20-0x7e is taken as it is" {
	for bad in 'r\\q' 'r\\x4' 'r\\xzz' 'r\\x' 'r\\' 'r\\0' 'r\\T' 'r\\N' 'r\\ '; do
		for field in 1 2 3; do
			case $field in
			1) line="$bad\tc\tv" ;;
			2) line="r\t$bad\tv" ;;
			3) line="r\tc\t$bad" ;;
			esac
			load_input "fine\tc\tv\n$line\n"
			run -2 --separate-stderr perc load < "$IN"
			assert_error_line '*line 2*'
			assert_output ''
		done
	done
	run -0 perc scan
	assert_output ''
	load_input 'r\303\251\tc\r\tv\000w\n'
	run -0 perc load < "$IN"
	perc get "$(printf 'r\303\251')" "$(printf 'c\r')" > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'v\000w' "$BATS_TEST_TMPDIR/out"
}

@test "bad --batch values and operands are usage errors" {
	load_input 'r\tc\tv\n'
	for args in "--batch 0" "--batch -1" "--batch x" "--batch 2x" \
	    "--batch=" "--batch +3" "--batch 18446744073709551616" "--batch" \
	    "extra" "-t 1"; do
		run -2 --separate-stderr perc load $args < "$IN"
		assert_error_line 'perc: *usage: perc load *'
		assert_output ''
	done
	run -0 perc scan
	assert_output ''
	run -0 --separate-stderr perc load --help
	assert_line --index 0 'usage: perc load [--batch N]'
}

@test "load outside a data directory: exit 6, nothing created" {
	load_input 'r\tc\tv\n'
	assert_exit_6_outside load < "$IN"
	assert_exit_6_outside load --batch 1 < "$IN"
}

@test "a live lock in the way: exit 3, the batches before it stay" {
	perc set a c old
	t1=$(perc begin)
	perc set -t "$t1" a c t1
	perc set -t "$t1" b c t1
	start_live_commit "$t1" a c
	load_input 'x\tc\t1\ny\tc\t2\nz\tc\t3\na\tc\tmine\n'
	run -3 --separate-stderr perc load --batch 2 < "$IN"
	assert_error_line '*lines 3-4*'
	[ "${#lines[@]}" -eq 1 ]
	kill_live_commit
	run -0 perc scan
	assert_output "$(printf 'a\tc\told\nx\tc\t1\ny\tc\t2')"
	run -0 perc resolve-locks
	[ -z "$(ls -A "$PERC_DIR/txn" | grep -v "^$t1\$")" ]
}

@test "a load killed at a failpoint leaves whole transactions: resolve-locks rolls back or forward" {
	for i in $(seq 20); do printf 'r%02d\tc\tv%s\n' "$i" "$i"; done \
	    > "$BATS_TEST_TMPDIR/in"
	perc set r05 c old
	run -137 env PERC_FAILPOINT=after-prewrite perc load < "$BATS_TEST_TMPDIR/in"
	run -0 perc resolve-locks
	[ "$(grep -c 'rolled-back$' <<<"$output")" -eq 20 ]
	run -0 perc scan
	assert_output "$(printf 'r05\tc\told')"
	run -137 env PERC_FAILPOINT=after-commit-primary perc load < "$BATS_TEST_TMPDIR/in"
	run -0 perc resolve-locks
	[ "$(grep -c 'rolled-forward$' <<<"$output")" -eq 19 ]
	perc scan > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
	run -0 perc resolve-locks
	assert_output ''
}

# interrupt_load SIG STATUS: a load of 60,000 lines in batches of 6,000,
# sent SIG as soon as a batch after the first is committing (its
# journal is in txn/ and a timestamp was printed): it finishes that
# batch, prints its timestamp, says where to start again, leaves no
# journal, and ends with STATUS.
interrupt_load() {
	local sig=$1 want=$2 pid n rc=0
	awk 'BEGIN { for (i = 1; i <= 60000; i++)
	    printf "r%07d\tc\tv%d\n", i, i }' > "$BATS_TEST_TMPDIR/in"
	# A shell without job control starts a background job with SIGINT
	# ignored, which perc leaves so (nohup's SIGHUP too): env undoes it.
	env --default-signal="$sig" perc load --batch 6000 \
	    < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/out" \
	    2> "$BATS_TEST_TMPDIR/err" &
	pid=$!
	BG_PIDS+=("$pid")
	until [ -s "$BATS_TEST_TMPDIR/out" ] &&
	    compgen -G "$PERC_DIR/txn/[1-9]*" > /dev/null; do
		kill -0 "$pid" 2> /dev/null ||
			fail "the load ended before its second batch was seen"
	done
	kill -s "$sig" "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, not $want"
	n=$(wc -l < "$BATS_TEST_TMPDIR/out")
	[ "$n" -ge 2 ] || fail "SIG$sig: $n timestamps printed"
	[ "$(perc scan | wc -l)" -eq $((n * 6000)) ] ||
		fail "SIG$sig: $n timestamps, $(perc scan | wc -l) cells"
	run cat "$BATS_TEST_TMPDIR/err"
	[ "${#lines[@]}" -eq 1 ] || fail "SIG$sig: stderr '$output'"
	assert_output "perc: interrupted: $n batches committed (timestamps printed), lines 1-$((n * 6000)); the rest was not loaded; load again from line $((n * 6000 + 1))"
	! compgen -G "$PERC_DIR/txn/[1-9]*" ||
		fail "SIG$sig left a journal: $(ls "$PERC_DIR/txn")"
	# Starting again where it says loads the rest.
	tail -n +$((n * 6000 + 1)) "$BATS_TEST_TMPDIR/in" |
	    perc load --batch 20000 > /dev/null
	perc scan > "$BATS_TEST_TMPDIR/all"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/all"
}

@test "SIGINT during load --batch: the batch in flight commits and prints, one line says where to start again" {
	skip_under_valgrind "60,000 lines"
	interrupt_load INT 130
}

@test "SIGTERM and SIGHUP during load --batch end it as SIGINT does" {
	skip_under_valgrind "60,000 lines"
	perc_fresh_dir term
	interrupt_load TERM 143
	perc_fresh_dir hup
	interrupt_load HUP 129
}

@test "SIGINT while load waits for more input ends it at once: exit 130, one line" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	env --default-signal=INT perc load --batch 2 < "$BATS_TEST_TMPDIR/fifo" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" &
	pid=$!
	BG_PIDS+=("$pid")
	exec 5> "$BATS_TEST_TMPDIR/fifo"
	printf 'a\tc\t1\nb\tc\t2\nc\tc\t3\n' >&5
	poll 100 test -s "$BATS_TEST_TMPDIR/out"
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	exec 5>&-
	[ "$rc" -eq 130 ]
	run cat "$BATS_TEST_TMPDIR/err"
	assert_output "perc: interrupted: 1 batch committed (timestamp printed), lines 1-2; the rest was not loaded; load again from line 3"
	run -0 perc scan
	assert_output "$(printf 'a\tc\t1\nb\tc\t2')"
}

@test "a load into an observed column notifies its observers" {
	perc init --observe seen "$PERC_DIR"
	load_input 'a\tseen\t1\nb\tother\t2\nc\tseen\t3\n'
	run -0 perc load < "$IN"
	run -0 perc scan-notify
	assert_output "$(printf 'a\tseen\nc\tseen')"
}

@test "a load longer than its locks' TTL keeps them alive (heartbeat), and lets readers in meanwhile" {
	skip_under_valgrind "readers must get in within timeouts that a load under memcheck, minutes long, outlasts"
	# Some 2 s of commit on either store: 4 TTLs of 0.5 s.
	n=300000
	[ "$PERC_TEST_STORE" = redis ] && n=30000
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "row%07d\tcol\tvalue %d\n", i, i }' > "$BATS_TEST_TMPDIR/in"
	row=row0000001  # locked from the first prewrites on
	start=$(date +%s%N)
	PERC_LOCK_TTL=0.5 perc load < "$BATS_TEST_TMPDIR/in" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	met=0
	while kill -0 "$pid" 2> /dev/null; do
		# A reader gets the store between the load's batches.  Past
		# the TTL, a lock whose primary's wall time were not renewed
		# would look expired, and the reader would roll it back.
		# The handoff's bound is the large-commit test's; here a
		# loaded machine may delay a reader past a short timeout.
		PERC_LOCK_TIMEOUT=30 run perc get "$row" col
		case $status in
		0 | 1) ;;
		*) fail "a reader exited $status: $output" ;;
		esac
		[[ $(perc show "$row") != *$'\tlock\t'* ]] || met=1
	done
	wait "$pid" || fail "perc load exited $?: $(cat "$BATS_TEST_TMPDIR/err")"
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$took" -gt 1000 ] || skip "the load took $took ms, under 2 TTLs"
	[ "$met" -eq 1 ] || fail "no reader met the load's live locks in $took ms"
	[ "$(perc scan | wc -l)" -eq "$n" ]
}

# Does process $1 hold the store (the flock on store.lock)?
holds_store() {
	local ino
	ino=$(stat -c %i "$PERC_DIR/store.lock") || return 1
	awk -v pid="$1" -v ino="$ino" '$2 == "FLOCK" && $5 == pid &&
	    $6 ~ (":" ino "$") { found = 1 } END { exit !found }' /proc/locks
}

@test "a load kept from the store past its TTL by a stopped reader keeps its locks: it is waiting, not gone" {
	perc_leveldb_only
	skip_under_valgrind "a reader must take the store in one of the load's pauses"
	n=300000
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "row%07d\tcol\tvalue %d\n", i, i }' > "$BATS_TEST_TMPDIR/in"
	PERC_LOCK_TTL=0.5 perc load < "$BATS_TEST_TMPDIR/in" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	for i in $(seq 3000); do
		holds_store "$pid" && break
		kill -0 "$pid" 2> /dev/null || fail "the load ended early: $(cat "$BATS_TEST_TMPDIR/err")"
		sleep 0.01
	done
	# A reader that takes the store in one of the load's pauses, and is
	# stopped there for 4 of the load's TTLs; the load waits meanwhile,
	# and its primary's wall time ages past the TTL.  Stopped first,
	# then seen to hold the store: a reader seen holding it first may
	# have let go, even ended, by the time it is stopped.
	# A reader holds it for a moment only: one reader after another,
	# while the load lasts, until one is caught holding it.
	stopped=0
	while [ "$stopped" -eq 0 ] && kill -0 "$pid" 2> /dev/null; do
		PERC_LOCK_TIMEOUT=30 perc get row0000001 col > /dev/null \
		    2> "$BATS_TEST_TMPDIR/rerr" 3>&- &
		reader=$!
		BG_PIDS+=("$reader")
		for i in $(seq 3000); do
			if holds_store "$reader" &&
			    kill -STOP "$reader" 2> /dev/null; then
				holds_store "$reader" && { stopped=1; break; }
				# (one that has ended, not yet reaped, takes
				# the STOP)
				kill -CONT "$reader" 2> /dev/null || break
			fi
			kill -0 "$reader" 2> /dev/null || break
			sleep 0.01
		done
	done
	[ "$stopped" -eq 1 ] || skip "the reader never met the load (it took the store before or after it)"
	sleep 2         # the fault: the store held, by a stopped process
	kill -CONT "$reader"
	rc=0
	wait "$reader" || rc=$?
	[ "$rc" -le 1 ] || fail "the reader exited $rc: $(cat "$BATS_TEST_TMPDIR/rerr")"
	wait "$pid" || fail "perc load exited $?: $(cat "$BATS_TEST_TMPDIR/err")"
	[ "$(perc scan | wc -l)" -eq "$n" ]
}

@test "readers and writers beside a large commit never wait for it, and see all of it or none" {
	skip_under_valgrind "PERC_LOCK_TIMEOUT=2 is the point, and a perc run under memcheck takes about a second"
	# 400,000 cells on either store (some 4 s of commit on LevelDB,
	# 30 s on a loopback cluster).  The commit stops after its
	# prewrites (a live, slow committer) until this loop has had two
	# rounds against all of its locks.
	n=400000
	seeded=(big0000001 "$(printf 'big%07d' $((n / 2)))" \
	    "$(printf 'big%07d' $((n - 1)))")
	for r in "${seeded[@]}"; do perc set "$r" v old; done
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "big%07d\tv\tnew\n", i }' > "$BATS_TEST_TMPDIR/in"
	PERC_FAILPOINT=after-prewrite:pause=300 perc load \
	    < "$BATS_TEST_TMPDIR/in" > "$BATS_TEST_TMPDIR/out" \
	    2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	export PERC_LOCK_TIMEOUT=2
	k=0 pushed=0 stopped=0
	while kill -0 "$pid" 2> /dev/null; do
		k=$((k + 1))
		locked=0
		[[ $(perc show "${seeded[2]}") != *$'\tlock\t'* ]] || locked=1
		# A snapshot: the three seeded rows all old or all new.
		t=$(perc begin)
		seen=
		for r in "${seeded[@]}"; do
			run perc get -t "$t" "$r" v
			[ "$status" -eq 0 ] || fail "get -t of $r exited $status: $output"
			seen+=" $output"
		done
		[ "$seen" = " old old old" ] || [ "$seen" = " new new new" ] ||
		    fail "snapshot $t saw$seen"
		perc abort -t "$t"
		# One-cell reads and writes, on its rows and on others.
		run perc get big0000002 v
		[ "$status" -eq 0 ] || [ "$status" -eq 1 ] ||
		    fail "get of its row exited $status: $output"
		run perc set "other$k" v "$k"
		[ "$status" -eq 0 ] || fail "set of another row exited $status: $output"
		t=$(perc begin)
		perc set -t "$t" "other$k" w "$k"
		perc set -t "$t" "else$k" w "$k"
		run perc commit -t "$t"
		[ "$status" -eq 0 ] || fail "a small commit exited $status: $output"
		if [ "$locked" -eq 1 ]; then
			# Writers conflict as ever: on a locked row, at once.
			run perc set big0000003 v mine
			[ "$status" -eq 0 ] || [ "$status" -eq 3 ] ||
			    fail "set of its locked row exited $status: $output"
			# Every lock is on: the commit has stopped.
			[ "$seen" = " old old old" ] && pushed=$((pushed + 1))
		fi
		if [ "$pushed" -ge 2 ] && [ "$stopped" -eq 0 ]; then
			stopped=1
			kill -CONT "$pid"
		fi
	done
	wait "$pid" || fail "perc load exited $?: $(cat "$BATS_TEST_TMPDIR/err")"
	[ "$pushed" -ge 2 ] || fail "no snapshot read past the commit's locks in $k rounds"
	[ "$(perc scan --prefix big | wc -l)" -eq "$n" ]
	run -0 perc get "${seeded[2]}" v
	assert_output new
}

@test "a transaction of few cells but many bytes is large too: readers read past it" {
	skip_under_valgrind "PERC_LOCK_TIMEOUT=1 is the point, and a perc run under memcheck takes about a second"
	perc set fat1 v old
	head -c 1048576 /dev/zero | tr '\0' x > "$BATS_TEST_TMPDIR/mib"
	t=$(perc begin)
	for i in 1 2 3 4 5; do
		perc set -t "$t" "fat$i" v < "$BATS_TEST_TMPDIR/mib"
	done
	# Five cells, 5 MiB: it stops after its prewrites, alive.
	PERC_FAILPOINT=after-prewrite:pause=300 perc commit -t "$t" \
	    > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 300); do
		[[ $(perc show fat5) != *$'\tlock\t'* ]] || break
		sleep 0.1
	done
	[[ $(perc show fat5) == *$'\tlock\t'* ]] || fail "no lock on fat5: $(cat "$BATS_TEST_TMPDIR/err")"
	# A reader does not wait for it: the older version, at once.
	PERC_LOCK_TIMEOUT=1 run -0 --separate-stderr perc get fat1 v
	assert_output old
	PERC_LOCK_TIMEOUT=1 run -1 --separate-stderr perc get fat2 v
	kill -CONT "$pid"
	wait "$pid" || fail "the commit exited $?: $(cat "$BATS_TEST_TMPDIR/err")"
	# It committed above the reads' snapshots: all of it, now.
	perc get fat1 v | cmp - "$BATS_TEST_TMPDIR/mib"
	perc get fat5 v | cmp - "$BATS_TEST_TMPDIR/mib"
}

@test "a reader in a big commit's pause replays its log and writes no table files" {
	perc_leveldb_only
	# 6,000 cells, 1.3 MB: a bulk load (over 1 MiB, perc(1)), whose
	# prewrites leave a log of some 2 MB (under the 4 MB of a bulk
	# writer's memtable, and of the log that the load makes a table
	# when it is back from its pause), which its pause keeps.
	awk 'BEGIN { for (i = 0; i < 6000; i++)
	    printf "row%07d\tcol\tvalue %0200d\n", i, i }' > "$BATS_TEST_TMPDIR/in"
	PERC_FAILPOINT=after-prewrite:pause=300 perc load \
	    < "$BATS_TEST_TMPDIR/in" > /dev/null 2> "$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	last_locked() { [[ $(perc show row0005999) == *$'\tlock\t'* ]]; }
	poll 300 last_locked || fail "the load's prewrites never finished"
	log=$(stat -c %s "$PERC_DIR"/store/*.log)
	[ "$log" -gt 1000000 ] || fail "the paused load left a log of $log bytes"
	tables=$(find "$PERC_DIR/store" -name '*.ldb' | wc -l)
	run -1 perc get other col
	run -0 perc scan --prefix other
	now=$(find "$PERC_DIR/store" -name '*.ldb' | wc -l)
	[ "$now" -eq "$tables" ] ||
	    fail "readers turned the log into tables: $tables table files, then $now"
	kill -CONT "$pid"
	wait "$pid" || fail "perc load exited $?: $(cat "$BATS_TEST_TMPDIR/err")"
	perc scan > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
}

@test "small tables of keys loaded in order are merged once they outnumber the store's MB" {
	[ "$PERC_TEST_STORE" = leveldb ] || skip "LevelDB's table files"
	# Each batch's memtable becomes a table of some KB, which LevelDB
	# puts in its deepest level, beside the others, and never merges.
	awk 'BEGIN { for (i = 0; i < 200000; i++)
	    printf "row%09d\tcol\tvalue %d, a value of some forty bytes\n", i, i }' \
	    > "$BATS_TEST_TMPDIR/in"
	perc load --batch 1000 < "$BATS_TEST_TMPDIR/in" > /dev/null
	kb=$(du -sk "$PERC_DIR/store" | cut -f 1)
	tables=$(ls "$PERC_DIR/store" | grep -c '\.ldb$')
	[ "$tables" -le $((64 + 2 * kb / 1024)) ] ||
	    fail "$tables table files in $kb KB"
	perc scan > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
}

@test "loads in small batches or large leave few table files and an empty log" {
	[ "$PERC_TEST_STORE" = leveldb ] || skip "LevelDB's table files"
	awk 'BEGIN { for (i = 0; i < 20000; i++)
	    printf "row%09d\tcol\tvalue %d, a value of some forty bytes\n", i, i }' \
	    > "$BATS_TEST_TMPDIR/in"
	perc load --batch 100 < "$BATS_TEST_TMPDIR/in" > /dev/null
	perc serve --stop       # its files as the server leaves them
	[ "$(ls "$PERC_DIR/store" | grep -c '\.ldb$')" -le 70 ]
	perc_fresh_dir big
	perc load --batch 20000 < "$BATS_TEST_TMPDIR/in" > /dev/null
	perc serve --stop
	[ "$(ls "$PERC_DIR/store" | grep -c '\.ldb$')" -le 4 ]
	[ "$(stat -c %s "$PERC_DIR"/store/*.log)" -eq 0 ]
	perc scan > "$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/in" "$BATS_TEST_TMPDIR/out"
}

@test "load's progress line, on a terminal, ends with what was committed" {
	command -v script > /dev/null || skip "script(1) is not installed"
	# Progress shows after a second of work: a bigger load until it does.
	for n in 100000 400000 1600000 6400000; do
		awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
		    printf "r%08d\tc\tv\n", i }' > "$BATS_TEST_TMPDIR/in"
		run -0 script -qec "perc load --batch 50000 \
		    < '$BATS_TEST_TMPDIR/in' > '$BATS_TEST_TMPDIR/ts'" /dev/null \
		    < /dev/null
		[[ $output != *"perc load:"* ]] || break
	done
	[[ $output == *"perc load:"* ]] || fail "no progress line: '$output'"
	batches=$(wc -l < "$BATS_TEST_TMPDIR/ts")
	# The last of the redrawn line: what was committed, then done.
	last=$(tr '\r' '\n' <<<"$output" | grep 'perc load:' | tail -n 1)
	[[ $last == "perc load: $n lines committed in $batches transactions, done."* ]] ||
		fail "last progress line: '$last'"
}
