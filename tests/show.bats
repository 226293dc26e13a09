#!/usr/bin/env bats
# tests/show.bats - perc show: the raw cells of a row
#
# Line format: COLUMN<TAB>KIND<TAB>TS<TAB>DETAIL, grouped by column in
# byte order, within a column lock, write, data, ack, newest first within
# each kind; notify lines after all others.

load helpers

setup() {
	perc_fresh_dir
	SHOW_PIDS=()
}

teardown() {
	local p
	for p in "${SHOW_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	stop_servers
}

# put ROW COL VALUE: commit VALUE in a transaction of its own; START and
# COMMIT get its start and commit timestamps.
put() {
	START=$(perc begin)
	perc set -t "$START" -- "$1" "$2" "$3"
	COMMIT=$(perc commit -t "$START")
	[[ $COMMIT =~ ^[0-9]+$ ]]
}

# tsv FIELD...: the fields joined by tabs, as one line (no newline).
tsv() {
	local IFS=$'\t'
	printf '%s' "$*"
}

# One line of stderr, nothing on stdout: after run --separate-stderr.
usage_failed() {
	[ "${#stderr_lines[@]}" -eq 1 ] ||
		fail "expected one line on stderr, got: '$stderr'"
	assert_output ''
}

# dead_lock FP: a transaction writing a=new-a and b=new-b over old ones,
# stopped dead at failpoint FP.  T is its handle, OWNER its pid@host.
dead_lock() {
	perc set a c old-a
	perc set b c old-b
	T=$(perc begin)
	perc set -t "$T" a c new-a
	perc set -t "$T" b c new-b
	local rc=0 pid
	PERC_FAILPOINT=$1 perc commit -t "$T" 3>&- &
	pid=$!
	wait "$pid" || rc=$?
	[ "$rc" -eq 137 ] || fail "commit at $1 exited $rc, not 137"
	OWNER="$pid@$(uname -n)"
}

# The regular expression of a lock line, from its fixed parts.
lock_re() { # COLUMN START OP PROW PCOL OWNER TTL STATE
	printf '^%s\tlock\t%s\top=%s primary-row=%s primary-column=%s owner=%s age=[0-9]+(\\.[0-9]+)?s ttl=%s owner-state=%s$' \
	    "$@"
}

@test "a data cell: TS is the start timestamp, DETAIL bytes= and value=" {
	put r c hello
	run -0 --separate-stderr perc show r
	[ -z "$stderr" ]
	assert_output "$(tsv c write "$COMMIT" "op=put start=$START")
$(tsv c data "$START" "bytes=5 value=hello")"
}

@test "a data value is escaped, a space as \\x20, and bytes= counts raw bytes" {
	START=$(perc begin)
	printf 'a b\tc\nd\\e\0f\377' | perc set -t "$START" r c
	COMMIT=$(perc commit -t "$START")
	run -0 perc show r c
	assert_line --index 1 "$(tsv c data "$START" 'bytes=12 value=a\x20b\tc\nd\\e\x00f\xff')"
	[ "${#lines[@]}" -eq 2 ]
}

@test "an empty value: bytes=0 value=" {
	put r c ''
	run -0 perc show r c
	assert_line --index 1 "$(tsv c data "$START" 'bytes=0 value=')"
}

@test "a write record of a put, a delete, and a get --lock commit" {
	put r c v
	s1=$START c1=$COMMIT
	s2=$(perc begin)
	perc del -t "$s2" r c
	c2=$(perc commit -t "$s2")
	s3=$(perc begin)
	run -1 perc get -t "$s3" --lock r c
	c3=$(perc commit -t "$s3")
	[[ $c3 =~ ^[0-9]+$ ]]
	run -0 perc show r c
	assert_line --index 0 "$(tsv c write "$c3" "op=lock start=$s3")"
	assert_line --index 1 "$(tsv c write "$c2" "op=delete start=$s2")"
	assert_line --index 2 "$(tsv c write "$c1" "op=put start=$s1")"
	assert_line --index 3 "$(tsv c data "$s1" "bytes=1 value=v")"
	[ "${#lines[@]}" -eq 4 ]
}

@test "get --lock of a cell with a value commits a lock-only write record" {
	put r c v
	s=$(perc begin)
	run -0 perc get -t "$s" --lock r c
	assert_output v
	ct=$(perc commit -t "$s")
	run -0 perc show r c
	assert_line --index 0 "$(tsv c write "$ct" "op=lock start=$s")"
	# A lock-only write changes no value.
	run -0 perc get r c
	assert_output v
}

@test "a rollback record: write at TS=start_ts, op=rollback start=TS" {
	dead_lock after-prewrite
	perc resolve-locks > /dev/null
	run -0 perc show a c
	assert_line --index 0 "$(tsv c write "$T" "op=rollback start=$T")"
	# The data of the rolled-back transaction is gone.
	refute_line --partial 'value=new-a'
	run -0 perc show b c
	refute_line --regexp $'\tlock\t'
	refute_line --partial 'value=new-b'
}

@test "a dead owner's lock: every DETAIL key, owner pid@host, owner-state=dead" {
	dead_lock after-prewrite
	run -0 perc show a c
	[[ ${lines[0]} =~ $(lock_re c "$T" put a c "$OWNER" '30(\.0+)?s' dead) ]] ||
		fail "primary lock line: '${lines[0]}'"
	assert_line --index 2 "$(tsv c data "$T" 'bytes=5 value=new-a')"
	# A secondary names the primary.
	run -0 perc show b c
	[[ ${lines[0]} =~ $(lock_re c "$T" put a c "$OWNER" '30(\.0+)?s' dead) ]] ||
		fail "secondary lock line: '${lines[0]}'"
}

@test "a lock of a delete says op=delete, of get --lock op=lock" {
	perc set a c v
	perc set b c v
	T=$(perc begin)
	perc del -t "$T" a c
	run -0 perc get -t "$T" --lock b c
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$T"
	run -0 perc show a c
	[[ ${lines[0]} =~ ^c$'\t'lock$'\t'$T$'\t'op=delete\ primary-row=a\ primary-column=c\  ]] ||
		fail "got '${lines[0]}'"
	run -0 perc show b c
	[[ ${lines[0]} =~ ^c$'\t'lock$'\t'$T$'\t'op=lock\ primary-row=a\ primary-column=c\  ]] ||
		fail "got '${lines[0]}'"
}

@test "primary-row and primary-column are escaped, a space as \\x20" {
	T=$(perc begin)
	perc set -t "$T" 'p q' $'c\tx' 1
	perc set -t "$T" z z 2
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$T"
	run -0 perc show z z
	[[ ${lines[0]} == *' primary-row=p\x20q primary-column=c\tx '* ]] ||
		fail "got '${lines[0]}'"
}

@test "a live owner's lock: owner-state=alive, with its pid; ttl from PERC_LOCK_TTL" {
	perc set a c old
	T=$(perc begin)
	perc set -t "$T" a c new
	PERC_LOCK_TTL=25.5 PERC_FAILPOINT=after-prewrite:pause=20 \
	    perc commit -t "$T" > /dev/null 3>&- &
	pid=$!
	SHOW_PIDS+=("$pid")
	re=$(lock_re c "$T" put a c "$pid@$(uname -n)" '25\.50*s' alive)
	for i in $(seq 100); do
		line=$(perc show a c | head -n 1)
		[[ $line =~ $re ]] && break
		kill -0 "$pid" || fail "the committer exited early"
		sleep 0.1
	done
	[[ $line =~ $re ]] || fail "no live lock line: '$line'"
}

@test "a lock past its TTL while its owner lives: owner-state=expired" {
	perc set a c old
	T=$(perc begin)
	perc set -t "$T" a c new
	PERC_LOCK_TTL=0.5 PERC_FAILPOINT=after-prewrite:pause=20 \
	    perc commit -t "$T" > /dev/null 3>&- &
	pid=$!
	SHOW_PIDS+=("$pid")
	re=$(lock_re c "$T" put a c "$pid@$(uname -n)" '0\.50*s' expired)
	for i in $(seq 100); do
		line=$(perc show a c | head -n 1)
		[[ $line =~ $re ]] && break
		kill -0 "$pid" || fail "the committer exited early"
		sleep 0.1
	done
	[[ $line =~ $re ]] || fail "no expired lock line: '$line'"
}

@test "the age of a lock grows" {
	dead_lock after-prewrite
	a1=$(perc show a c | head -n 1 | sed 's/.* age=\([0-9.]*\)s .*/\1/')
	sleep 0.3
	a2=$(perc show a c | head -n 1 | sed 's/.* age=\([0-9.]*\)s .*/\1/')
	awk -v a="$a1" -v b="$a2" 'BEGIN { exit !(b - a >= 0.25) }' ||
		fail "age went from $a1 to $a2"
}

@test "show only looks: it does not clean a dead lock" {
	dead_lock after-prewrite
	run -0 perc show a c
	[[ ${lines[0]} == *$'\tlock\t'*owner-state=dead ]]
	run -0 perc show a c
	[[ ${lines[0]} == *$'\tlock\t'*owner-state=dead ]]
	run -0 perc show b c
	[[ ${lines[0]} == *$'\tlock\t'*owner-state=dead ]]
	# Still there for resolve-locks to find.
	run -0 perc resolve-locks --dry-run
	assert_output "$(tsv a c "$T" rolled-back)
$(tsv b c "$T" rolled-back)"
}

@test "show does not wait for a live lock" {
	T=$(perc begin)
	perc set -t "$T" a c new
	PERC_FAILPOINT=after-prewrite:pause=20 perc commit -t "$T" > /dev/null 3>&- &
	SHOW_PIDS+=("$!")
	for i in $(seq 100); do
		perc show a c | grep -q owner-state=alive && break
		sleep 0.1
	done
	# Within 5 s, far less than the 10 s it would wait for a lock.
	PERC_LOCK_TIMEOUT=10 run -0 timeout 5 perc show a c
	[[ ${lines[0]} == *owner-state=alive ]]
}

@test "within a column: lock, then write, then data, each newest first" {
	put a c v1
	s1=$START c1=$COMMIT
	put a c v2
	s2=$START c2=$COMMIT
	T=$(perc begin)
	perc set -t "$T" a c v3
	run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$T"
	run -0 perc show a c
	[ "${#lines[@]}" -eq 6 ]
	[[ ${lines[0]} == "c"$'\t'"lock"$'\t'"$T"$'\t'* ]]
	assert_line --index 1 "$(tsv c write "$c2" "op=put start=$s2")"
	assert_line --index 2 "$(tsv c write "$c1" "op=put start=$s1")"
	assert_line --index 3 "$(tsv c data "$T" 'bytes=2 value=v3')"
	assert_line --index 4 "$(tsv c data "$s2" 'bytes=2 value=v2')"
	assert_line --index 5 "$(tsv c data "$s1" 'bytes=2 value=v1')"
}

@test "columns come in byte order, whatever the order of the writes" {
	for c in zz b a '' 'a b' $'\x01' $'\xff' B; do
		perc set -- r "$c" v
	done
	run -0 perc show r
	cut -f 1 <<< "$output" | uniq > "$BATS_TEST_TMPDIR/cols"
	assert_bytes '\n\\x01\nB\na\na b\nb\nzz\n\\xff\n' "$BATS_TEST_TMPDIR/cols"
}

@test "show ROW COLUMN prints that column only" {
	put r a 1
	put r b 2
	sb=$START cb=$COMMIT
	put r bb 3
	put s b 4
	run -0 perc show r b
	assert_output "$(tsv b write "$cb" "op=put start=$sb")
$(tsv b data "$sb" 'bytes=1 value=2')"
	run -0 perc show r nope
	assert_output ''
}

@test "a column that is a prefix of another is not mixed with it" {
	put r ab 1
	put r a 2
	sa=$START ca=$COMMIT
	run -0 perc show r a
	assert_output "$(tsv a write "$ca" "op=put start=$sa")
$(tsv a data "$sa" 'bytes=1 value=2')"
}

@test "a row that is a prefix of another is not mixed with it" {
	put ab c 1
	put a c 2
	run -0 perc show a
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 1 --partial 'value=2'
	run -0 perc show ab
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 1 --partial 'value=1'
}

@test "a row with no cells prints nothing, exit 0" {
	run -0 --separate-stderr perc show nope
	assert_output ''
	[ -z "$stderr" ]
	put r c v
	run -0 --separate-stderr perc show nope
	assert_output ''
	run -0 --separate-stderr perc show nope c
	assert_output ''
}

@test "the empty row and the empty column can be shown" {
	put '' '' v
	run -0 perc show ''
	assert_output "$(tsv '' write "$COMMIT" "op=put start=$START")
$(tsv '' data "$START" 'bytes=1 value=v')"
	run -0 perc show '' ''
	assert_output "$(tsv '' write "$COMMIT" "op=put start=$START")
$(tsv '' data "$START" 'bytes=1 value=v')"
}

@test "buffered writes of an open transaction are not shown" {
	t=$(perc begin)
	perc set -t "$t" r c v
	run -0 perc show r
	assert_output ''
}

@test "a binary column is escaped; -e addresses binary ROW and COLUMN" {
	# row: a TAB b NL c \ d 0x01 0xff NUL e; column: c NUL l
	START=$(perc begin)
	perc set -t "$START" -e 'a\tb\nc\\d\x01\xff\x00e' 'c\x00l' v
	COMMIT=$(perc commit -t "$START")
	run -0 perc show -e 'a\tb\nc\\d\x01\xff\x00e'
	assert_output "$(tsv 'c\x00l' write "$COMMIT" "op=put start=$START")
$(tsv 'c\x00l' data "$START" 'bytes=1 value=v')"
	run -0 perc show --escaped 'a\tb\nc\\d\x01\xff\x00e' 'c\x00l'
	[ "${#lines[@]}" -eq 2 ]
	# A NUL ends no argument: the row cut at the NUL has no cells.
	run -0 perc show -e 'a\tb\nc\\d\x01\xff'
	assert_output ''
	run -0 perc show -e 'a\tb\nc\\d\x01\xff\x00e' 'c'
	assert_output ''
}

@test "without -e a backslash in ROW is a plain byte" {
	put 'a\x41' c 1
	put aA c 2
	run -0 perc show 'a\x41'
	assert_line --index 1 --partial 'value=1'
	run -0 perc show -e 'a\x41'
	assert_line --index 1 --partial 'value=2'
	run -0 perc show -e 'a\\x41'
	assert_line --index 1 --partial 'value=1'
}

@test "a column with a tab, a newline and a backslash is escaped in COLUMN" {
	put r $'x\ty\nz\\' v
	run -0 perc show r
	[[ ${lines[0]} == 'x\ty\nz\\'$'\t'write$'\t'* ]] || fail "got '${lines[0]}'"
	run -0 perc show -e r 'x\ty\nz\\'
	[ "${#lines[@]}" -eq 2 ]
}

@test "a row scan prints can be passed back to show -e" {
	printf 'r\001\n' > "$BATS_TEST_TMPDIR/row"
	perc set -- "$(printf 'r\001')" c v
	row=$(perc scan | cut -f 1)
	[ "$row" = 'r\x01' ]
	run -0 perc show -e "$row"
	[ "${#lines[@]}" -eq 2 ]
}

@test "-- ends the options: a ROW may begin with -" {
	put -r -c v
	run -0 perc show -- -r
	assert_line --index 1 "$(tsv -c data "$START" 'bytes=1 value=v')"
	run -0 perc show -- -r -c
	[ "${#lines[@]}" -eq 2 ]
}

@test "notify cells of an observed column come after all others" {
	perc init --observe obs "$PERC_DIR"
	perc set r a 1
	perc set r obs 2
	perc set r zz 3
	run -0 perc show r
	[ "${#lines[@]}" -eq 7 ]
	[[ ${lines[6]} =~ ^obs$'\t'notify$'\t'[0-9]+$'\t'-$ ]] ||
		fail "last line: '${lines[6]}'"
	[[ ${lines[5]} == zz$'\t'data$'\t'* ]] || fail "line 5: '${lines[5]}'"
	run -0 perc show r obs
	[[ ${lines[2]} =~ ^obs$'\t'notify$'\t'[0-9]+$'\t'-$ ]]
	run -0 perc show r zz
	refute_line --partial notify
}

@test "an observer's ack: KIND ack among the writes by TS, DETAIL op=ack start=TS" {
	perc init --observe obs "$PERC_DIR"
	put r obs v1
	s1=$START c1=$COMMIT
	run -0 timeout 30 perc run-observer --once obs -- true 3>&-
	put r obs v2
	s2=$START c2=$COMMIT
	run -1 timeout 30 perc run-observer --once obs -- false 3>&-
	run -0 perc show r obs
	[ "${#lines[@]}" -eq 7 ] || fail "got: $output"
	assert_line --index 0 "$(tsv obs write "$c2" "op=put start=$s2")"
	[[ ${lines[1]} =~ ^obs$'\t'ack$'\t'([0-9]+)$'\t'op=ack\ start=([0-9]+)$ ]] ||
		fail "ack line: '${lines[1]}'"
	ack_ts=${BASH_REMATCH[1]} ack_start=${BASH_REMATCH[2]}
	[ "$ack_start" -gt "$c1" ] && [ "$ack_ts" -gt "$ack_start" ] &&
	    [ "$ack_ts" -lt "$s2" ] || fail "ack at $ack_ts start $ack_start"
	assert_line --index 2 "$(tsv obs write "$c1" "op=put start=$s1")"
	assert_line --index 3 "$(tsv obs data "$s2" 'bytes=2 value=v2')"
	assert_line --index 4 "$(tsv obs data "$s1" 'bytes=2 value=v1')"
	# Still dirty after the failed run: a notify, then the failure count.
	[[ ${lines[5]} =~ ^obs$'\t'notify$'\t'[0-9]+$'\t'-$ ]] ||
		fail "notify line: '${lines[5]}'"
	assert_line --index 6 "$(tsv obs notify 0 failures=1)"
}

@test "show -h prints the usage on standard output, exit 0" {
	run -0 --separate-stderr perc show -h
	[[ $output == "usage: perc show "* ]]
	[ -z "$stderr" ]
}

@test "usage errors: exit 2, one line on stderr, nothing on stdout" {
	run -2 --separate-stderr perc show
	usage_failed
	run -2 --separate-stderr perc show r c extra
	usage_failed
	run -2 --separate-stderr perc show --bogus r
	usage_failed
	run -2 --separate-stderr perc show -x r
	usage_failed
	run -2 --separate-stderr perc show -e 'a\q'
	usage_failed
	run -2 --separate-stderr perc show -e 'a\x4'
	usage_failed
	run -2 --separate-stderr perc show -e r 'c\'
	usage_failed
}

@test "show outside a data directory exits 6 with one line and creates nothing" {
	mkdir "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/foreign"
	echo precious > "$BATS_TEST_TMPDIR/foreign/notes"
	for d in missing empty foreign; do
		PERC_DIR="$BATS_TEST_TMPDIR/$d" run -6 --separate-stderr perc show r
		usage_failed
		[[ $stderr == *"not a perc data directory"* ]]
		run -6 --separate-stderr perc -d "$BATS_TEST_TMPDIR/$d" show r c
		usage_failed
	done
	[ ! -e "$BATS_TEST_TMPDIR/missing" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/empty")" ]
	[ "$(ls -A "$BATS_TEST_TMPDIR/foreign")" = notes ]
}
