#!/usr/bin/env bats
# tests/shell.bats - perc shell: requests a line, answers framed

load helpers

setup() {
	perc_fresh_dir
	OUT=$BATS_TEST_TMPDIR/out
}

# shell REQUEST...: one perc shell run, the requests one a line, its
# answers in $OUT.
shell() {
	printf '%s\n' "$@" | perc shell > "$OUT"
}

# The bytes an escaped field stands for (\t, \n, \\ and \xhh only,
# which printf %b reads the same way), to standard output.
unescape() {
	printf '%b' "$1"
}

@test "a job through one shell: one line an answer, scan ended by ok COUNT" {
	perc set a c 1
	t=$(perc begin)
	shell "get -t $t a c" "get -t $t b c" "set -t $t b c 2" \
	    "scan -t $t" "commit -t $t" "ts" "get b c"
	# The commit timestamp, and then ts, from the oracle.
	sed -i -E '7,8s/^ok [0-9]+$/ok TS/' "$OUT"
	run cat "$OUT"
	assert_output - <<-EOF
	ok 1
	none
	ok
	cell a	c	1
	cell b	c	2
	ok 2
	ok TS
	ok TS
	ok 2
	EOF
}

@test "scan of nothing is ok 0 alone" {
	shell scan "scan --prefix x" "scan --column c"
	run cat "$OUT"
	assert_output $'ok 0\nok 0\nok 0'
	perc set a c 1
	shell "scan --prefix b" "scan --column d" "scan --at 1"
	run cat "$OUT"
	assert_output $'ok 0\nok 0\nok 0'
}

@test "scan -t shows the transaction's own buffered writes and hides its deletes" {
	perc set a c 1
	perc set b c 2
	perc set d c 4
	t=$(perc begin)
	perc set e c late      # committed after t started: not visible to t
	shell "set -t $t c c 3" "set -t $t b c changed" "del -t $t d c" \
	    "set -t $t a\\tb c tab" "scan -t $t" "scan -t $t --prefix b" \
	    "scan" "del -t $t a c" "scan -t $t --column c --prefix a"
	run cat "$OUT"
	assert_output - <<-EOF
	ok
	ok
	ok
	ok
	cell a	c	1
	cell a\\tb	c	tab
	cell b	c	changed
	cell c	c	3
	ok 4
	cell b	c	changed
	ok 1
	cell a	c	1
	cell b	c	2
	cell d	c	4
	cell e	c	late
	ok 4
	ok
	cell a\\tb	c	tab
	ok 1
	EOF
}

@test "scan --at: the snapshot at TS" {
	perc set a c 1
	perc set b c 1
	t1=$(perc ts)
	perc del a c
	perc set b c 2
	perc set d c 1
	t2=$(perc ts)
	shell "scan --at $t1" "scan --at $t2" "scan --at $t1 --prefix b --column c"
	run cat "$OUT"
	assert_output - <<-EOF
	cell a	c	1
	cell b	c	1
	ok 2
	cell b	c	2
	cell d	c	1
	ok 2
	cell b	c	1
	ok 1
	EOF
}

@test "--prefix and --column filter, P and C escaped words of any bytes" {
	perc set 'a b' c 1
	perc set 'a bc' 'c d' 2
	perc set ab c 3
	perc set -e 'x\x00y' 'c\x00' 4
	perc set -e 'x\x00z' 'c' 5
	perc set x c 6
	shell 'scan --prefix a\x20b' 'scan --column c\x20d' \
	    'scan --prefix x\x00' 'scan --column c\x00' \
	    'scan --column c --prefix a' 'scan --prefix x --column c'
	run cat "$OUT"
	assert_output - <<-EOF
	cell a b	c	1
	cell a bc	c d	2
	ok 2
	cell a bc	c d	2
	ok 1
	cell x\\x00y	c\\x00	4
	cell x\\x00z	c	5
	ok 2
	cell x\\x00y	c\\x00	4
	ok 1
	cell a b	c	1
	cell ab	c	3
	ok 2
	cell x	c	6
	cell x\\x00z	c	5
	ok 2
	EOF
}

@test "any bytes in a cell come through the framing: one line, as scan prints it" {
	all=$BATS_TEST_TMPDIR/all
	# shellcheck disable=SC2059 # the format is the 256 bytes
	printf "$(printf '\\%03o' $(seq 0 255))" > "$all"
	# Lines that look like answers, inside a value.
	printf '\nok 1\nerr 2 x\ncell a\tb\tc\n' >> "$all"
	perc set -e 'r\tow\n\x00' 'c\\ol' < "$all"
	perc set 'ok 1' 'err 2' 'cell x'
	perc set ' sp ' c ' v '
	shell scan
	[ "$(wc -l < "$OUT")" -eq 4 ] || fail "$(cat "$OUT")"
	[ "$(tail -n 1 "$OUT")" = 'ok 3' ]
	perc scan > "$BATS_TEST_TMPDIR/scan"
	sed -n 's/^cell //p' "$OUT" | cmp - "$BATS_TEST_TMPDIR/scan"
	# Each field splits off at its tabs and stands for its bytes.
	line=$(sed -n 's/^cell r//p' "$OUT")
	row=r${line%%$'\t'*}
	line=${line#*$'\t'}
	col=${line%%$'\t'*}
	unescape "${line#*$'\t'}" | cmp - "$all"
	[ "$row" = 'r\tow\n\x00' ] && [ "$col" = 'c\\ol' ]
	# And goes back as a word, a space as \x20.
	shell "get $row $col" 'get \x20sp\x20 c' 'get ok\x201 err\x202'
	[ "$(head -n 1 "$OUT")" = "ok ${line#*$'\t'}" ]
	run sed -n '2,$p' "$OUT"
	assert_output $'ok  v \nok cell x'
}

@test "a scan of many batches streams every cell, in order" {
	n=1100
	t=$(perc begin)
	awk -v t="$t" -v n="$n" 'BEGIN {
	    for (i = 1; i <= n; i++) printf "set -t %s r%05d c v%d\n", t, i, i }' |
	    perc shell | grep -vc '^ok$' | grep -qx 0
	perc commit -t "$t" > /dev/null
	shell scan "scan --prefix r0110"
	[ "$(sed -n "$((n + 1))p" "$OUT")" = "ok $n" ]
	perc scan > "$BATS_TEST_TMPDIR/scan"
	head -n "$n" "$OUT" | sed 's/^cell //' | cmp - "$BATS_TEST_TMPDIR/scan"
	run sed -n "$((n + 2)),\$p" "$OUT"
	assert_output - <<-EOF
	cell r01100	c	v1100
	ok 1
	EOF
}

@test "scan with an unknown, finished or garbage handle is err 5, and the shell goes on" {
	t=$(perc begin)
	perc commit -t "$t" > /dev/null
	shell "scan -t 999999" "scan -t abc" "scan -t 12x" "scan -t $t" ts
	[ "$(wc -l < "$OUT")" -eq 5 ]
	run grep -c '^err 5 .*[a-z]' "$OUT"
	assert_output 4
	[[ $(tail -n 1 "$OUT") =~ ^ok\ [0-9]+$ ]]
}

@test "scan usage errors are err 2, whatever the handle" {
	t=$(perc begin)
	shell "scan extra" "scan -t $t --at 5" "scan -t 999999 --at 5" \
	    "scan --at x" "scan --at 0" "scan --at 5\\x00" "scan --bogus" \
	    "scan -e" "scan --lock" "scan --prefix" "scan --column" "scan -t" \
	    "scan --Prefix a" "scan --prefix\\x00 a" "scan -- -t $t" ts
	[ "$(wc -l < "$OUT")" -eq 16 ] || fail "$(cat "$OUT")"
	run grep -vc '^err 2 [a-z]' "$OUT"
	assert_output 1
	[[ $(tail -n 1 "$OUT") =~ ^ok\ [0-9]+$ ]]
}

@test "each request takes its own options only" {
	t=$(perc begin)
	shell "set --at 5 r c v" "set --lock -t $t r c v" "del --prefix r r c" \
	    "get --lock r c" "get --column c r c" "commit" "abort" \
	    "begin -t $t" "ts --at 5" "commit -t $t x" "frob" "-t $t"
	run grep -vc '^err 2 ' "$OUT"
	assert_output 0
	[ "$(wc -l < "$OUT")" -eq 12 ]
	# None of them wrote.
	shell "scan -t $t" "commit -t $t"
	run cat "$OUT"
	assert_output $'ok 0\nok'
}

@test "a live lock met midway ends the answer with err 4 after the cells before it" {
	perc set a col old-a
	perc set m col old-m
	perc set z col z
	t=$(perc begin)
	perc set -t "$t" m col new-m
	start_live_commit "$t" m col
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc shell <<-EOF
	scan
	scan --prefix z
	EOF
	assert_equal "${lines[0]}" $'cell a\tcol\told-a'
	[[ ${lines[1]} == 'err 4 '[a-z]* ]] || fail "${lines[1]}"
	assert_equal "${lines[2]}" $'cell z\tcol\tz'
	assert_equal "${lines[3]}" 'ok 1'
	[ "${#lines[@]}" -eq 4 ]
	kill_live_commit
}

@test "the whole job of perc-shell(1)'s example runs" {
	awk '/^\.Bd -literal/ { getline; if ($0 == "#!/bin/bash") f = 1 }
	    f && /^\.Ed/ { exit } f' "$PERC_SRC/man/perc-shell.1" |
	    sed 's/\\e/\\/g' > "$BATS_TEST_TMPDIR/job"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/job")" -gt 50 ]
	perc set bank reserve 10000
	perc set acct:ann balance 500
	perc set 'acct:bo b' balance 1000
	perc set "$(printf 'acct:c\ty')" balance 300
	perc set acct:ann email ann@example.org
	perc set other balance 700
	run -0 timeout 60 bash "$BATS_TEST_TMPDIR/job" 3>&-
	assert_output --regexp '^paid 18 to 3 accounts; committed at [0-9]+$'
	run -0 perc scan
	assert_output - <<-EOF
	acct:ann	balance	505
	acct:ann	email	ann@example.org
	acct:bo b	balance	1010
	acct:c\\ty	balance	303
	bank	reserve	9982
	other	balance	700
	EOF
	# Without the reserve, its get fails: exit 1, nothing written.
	perc del bank reserve
	run -1 timeout 60 bash "$BATS_TEST_TMPDIR/job" 3>&-
	run -0 perc get acct:ann balance
	assert_output 505
}

@test "a busy shell keeps no command from the store" {
	# A shell that always has the next request: each takes the store
	# and lets it go, as a command does.
	( while :; do echo "set k c v"; done ) 2> /dev/null |
	    perc shell > /dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll 100 perc get k c > /dev/null
	for i in $(seq 20); do
		PERC_LOCK_TIMEOUT=2 run perc get other c
		[ "$status" -eq 1 ] || [ "$status" -eq 0 ] ||
		    fail "a get beside the busy shell exited $status: $output"
		PERC_LOCK_TIMEOUT=2 run perc set other c "$i"
		[ "$status" -eq 0 ] ||
		    fail "a set beside the busy shell exited $status: $output"
	done
	run -0 perc get other c
	assert_output 20
}

@test "a transaction the shell began is the shell's: no journal, a handle unknown elsewhere, gone with the shell" {
	perc set k c old
	coproc SH { exec perc shell 2> "$BATS_TEST_TMPDIR/err"; }
	pid=$SH_PID
	BG_PIDS+=("$pid")
	ask begin
	assert_equal "$st" ok
	h=$res
	ask "set -t $h k c new"
	assert_equal "$st" ok
	[ ! -e "$PERC_DIR/txn/$h" ] || fail "a journal file for $h"
	run -5 perc get -t "$h" k c
	ask "get -t $h k c"
	assert_equal "$st $res" "ok new"
	ask begin
	h2=$res
	ask "set -t $h2 k2 c left-open"
	ask "commit -t $h"
	[[ $st == ok && $res =~ ^[0-9]+$ ]] || fail "commit: $st $res"
	ask "commit -t $h"
	[[ "$st $res" == "err 5 "* ]] || fail "a second commit: $st $res"
	# The end of input ends the shell, and discards what is open.
	exec {SH[1]}>&-
	poll 100 eval "! kill -0 $pid 2> /dev/null" || fail "the shell runs on"
	run -0 perc get k c
	assert_output new
	run -1 perc get k2 c
	run -0 ls -A "$PERC_DIR/txn"
	assert_output ''
}

@test "a shell that opened a directory of format 1 marks it 5 without losing a column observed since" {
	perc_leveldb_only
	perc set r c v
	sed -i 's/^format .*/format 1/' "$PERC_DIR/config"
	coproc SH { exec perc shell 2> "$BATS_TEST_TMPDIR/err"; }
	BG_PIDS+=("$SH_PID")
	# The shell has read the config (a begin does not take the store).
	ask begin
	assert_equal "$st" ok
	run -0 perc init --observe c "$PERC_DIR"
	ask "set r c w"
	assert_equal "$st" ok
	grep -qx 'format 5' "$PERC_DIR/config"
	grep -qx 'observe c' "$PERC_DIR/config"
	run -0 perc scan-notify
	assert_output --partial r
}

@test "gc keeps what a transaction open in a shell can read, and moves on once it ends" {
	perc set k c v1
	coproc SH { exec perc shell 2> "$BATS_TEST_TMPDIR/err"; }
	BG_PIDS+=("$SH_PID")
	ask begin
	h=$res
	perc set k c v2
	perc set k c v3
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" -le "$h" ] ||
	    fail "safe point ${output%%$'\t'*} above the open $h"
	ask "get -t $h k c"
	assert_equal "$st $res" "ok v1"
	ask "abort -t $h"
	assert_equal "$st" ok
	run -0 perc gc --retain 0
	[ "${output%%$'\t'*}" -gt "$h" ] ||
	    fail "safe point ${output%%$'\t'*} held back by a finished $h"
}

@test "a shell killed in the middle of a commit leaves a dead owner's locks, cleaned at once" {
	perc set a col old-a
	perc set b col old-b
	coproc SH { PERC_FAILPOINT=after-prewrite:pause=30 exec perc shell \
	    2> "$BATS_TEST_TMPDIR/err"; }
	BG_PIDS+=("$SH_PID")
	ask begin
	h=$res
	ask "set -t $h a col new-a"
	ask "set -t $h b col new-b"
	echo "commit -t $h" >&"${SH[1]}"
	# Paused with its locks written: its owner lives, readers wait.
	wait_for_live_lock a col "$SH_PID"
	kill -9 "$SH_PID"
	{ wait "$SH_PID"; } 2> /dev/null || true
	PERC_LOCK_TIMEOUT=1 run -0 perc get a col
	assert_output old-a
	PERC_LOCK_TIMEOUT=1 run -0 perc get b col
	assert_output old-b
}

@test "a raw NUL byte makes the request err 2, never a shorter word, and writes nothing" {
	printf 'set k c ab\0cd\nset k\0x c v\nget -t 1\0 k c\nts\n' |
	    perc shell > "$OUT"
	run grep -c '^err 2 .*NUL' "$OUT"
	assert_output 3
	[[ $(tail -n 1 "$OUT") =~ ^ok\ [0-9]+$ ]]
	run -1 perc get k c
	run -0 perc scan
	assert_output ''
	# Written as \x00, it is a byte like any other.
	shell 'set k c ab\x00cd' 'get k c'
	run cat "$OUT"
	assert_output $'ok\nok ab\\x00cd'
}

@test "-- ends the options, so a ROW or COLUMN may begin with '-'" {
	t=$(perc begin)
	shell 'set -- -t c v' 'set -- --lock -c w' 'get -- -t c' \
	    "set -t $t -- -x c new" "get -t $t -- -x c" "commit -t $t" \
	    'scan -- x' 'get -- -t'
	sed -i -E '6s/^ok [0-9]+$/ok TS/' "$OUT"
	run sed -n '1,6p' "$OUT"
	assert_output $'ok\nok\nok v\nok\nok new\nok TS'
	run sed -n '7,$p' "$OUT"
	assert_line --index 0 --regexp "^err 2 word 3, 'x': "
	assert_line --index 1 --regexp '^err 2 get needs more operands'
	run -0 perc get -- -t c
	assert_output v
	run -0 perc get -- --lock -c
	assert_output w
	run -0 perc get -- -x c
	assert_output new
}

@test "a word written with an escape is never an option" {
	shell 'set \x2dt c v' 'set \x2d\x2dlock \x2dt --x' \
	    'get \x2dt c' 'get \x2d\x2dlock \x2dt'
	run cat "$OUT"
	assert_output $'ok\nok\nok v\nok --x'
	t=$(perc begin)
	shell "set -t $t \\x2dt c w" "get -t $t \\x2dt c" "commit -t $t" \
	    'get \x2dt c'
	sed -i -E '3s/^ok [0-9]+$/ok TS/' "$OUT"
	run cat "$OUT"
	assert_output $'ok\nok w\nok TS\nok w'
	run -0 perc get -- --lock -t
	assert_output --x
	run -0 perc scan
	assert_output "$(printf -- '--lock\t-t\t--x\n-t\tc\tw')"
}

@test "an option after an operand is err 2 naming it; a VALUE may begin with '-'" {
	t=$(perc begin)
	shell "get k c -t $t" "set k -t $t v" "del k c --at 5" "set k c v -t $t" \
	    'set k c -5' 'get k c' "set -t $t k c --lock" "get -t $t k c"
	run sed -n '1,4p' "$OUT"
	assert_line --index 0 --regexp "^err 2 word 4, '-t': an option after"
	assert_line --index 1 --regexp "^err 2 word 3, '-t': an option after"
	assert_line --index 2 --regexp "^err 2 word 4, '--at': an option after"
	assert_line --index 3 --regexp "^err 2 word 5, '-t': an option after"
	run sed -n '5,$p' "$OUT"
	assert_output $'ok\nok -5\nok\nok --lock'
}

@test "\\e is the empty word: an empty ROW, COLUMN and VALUE can be written and read" {
	shell 'set \e \e \e' 'get \e \e' 'set \e c x' 'set r \e y' 'get r \e' \
	    'scan --prefix \e --column \e' 'del \e \e' 'get \e \e'
	run cat "$OUT"
	assert_output $'ok\nok \nok\nok\nok y\ncell \t\t\ncell r\t\ty\nok 2\nok\nnone'
	run -0 perc scan
	assert_output "$(printf '\tc\tx\nr\t\ty')"
	run -0 perc get r ''
	assert_output y
}

@test "\\e stands for nothing inside a word: err 2 naming it; ESC is \\x1b" {
	shell 'set a\eb c v' 'set k \e\e v' 'set k c x\e' 'set k c \x1b' \
	    'get k c' 'set k c \\e' 'get k c'
	run sed -n '1,3p' "$OUT"
	assert_line --index 0 --regexp "^err 2 word 2, 'a\\\\eb': "
	assert_line --index 1 --regexp "^err 2 word 3, '\\\\e\\\\e': "
	assert_line --index 2 --regexp "^err 2 word 4, 'x\\\\e': "
	run sed -n '4,$p' "$OUT"
	assert_output $'ok\nok \\x1b\nok\nok \\\\e'
	run -0 perc scan
	assert_output "$(printf 'k\tc\t\\\\e')"
}

@test "a usage error says which word was wrong" {
	shell 'frob a' 'get --bogus a b' 'get a b c' 'get --at x a b' 'set a\q b c'
	run cat "$OUT"
	assert_line --index 0 --regexp "^err 2 word 1, 'frob': "
	assert_line --index 1 --regexp "^err 2 word 2, '--bogus': "
	assert_line --index 2 --regexp "^err 2 word 4, 'c': "
	assert_line --index 3 --regexp "^err 2 word 3, 'x': "
	assert_line --index 4 --regexp "^err 2 word 2, 'a\\\\q': "
}

@test "get and scan --at a timestamp not yet handed out are err 2" {
	perc set k c v1
	future=$(($(perc ts) * 2))
	shell "get --at $future k c" "scan --at $future" 'set k c v2' \
	    "get --at $future k c" "scan --at $future"
	run cat "$OUT"
	assert_line --index 0 --regexp '^err 2 .*not been handed out'
	assert_line --index 1 --regexp '^err 2 .*not been handed out'
	assert_line --index 2 ok
	assert_line --index 3 --regexp '^err 2 .*not been handed out'
	assert_line --index 4 --regexp '^err 2 .*not been handed out'
	[ "$(wc -l < "$OUT")" -eq 5 ]
}
