#!/usr/bin/env bats
# tests/shell-people.bats - perc shell for people: on a terminal (a
# pseudo-terminal that script(1) gives it), or with -i.

load helpers

setup() {
	command -v script > /dev/null || skip "script(1) is not installed"
	perc_fresh_dir
	export PERC_HISTFILE=$BATS_TEST_TMPDIR/history
	OUT=$BATS_TEST_TMPDIR/out
}

# on_terminal LINE...: perc shell on a pseudo-terminal, the lines typed
# one after the other, what the terminal showed in $OUT (carriage
# returns dropped), bounded.
on_terminal() {
	printf '%s\n' "$@" |
	    timeout 30 script -qec "perc shell" /dev/null 2>&1 |
	    tr -d '\r' > "$OUT"
}

@test "on a terminal: a prompt that names the open transaction, words quoted as the shell does, the commit's timestamp" {
	on_terminal 'begin' 'set "row one" c '\''two words'\' \
	    'get "row one" c' 'commit' 'scan' 'quit'
	t=$(grep -m 1 -E '^[0-9]+$' "$OUT")
	[ -n "$t" ] || fail "begin printed no handle: $(cat "$OUT")"
	grep -q "^perc $t> get \"row one\" c\$" "$OUT" ||
	    fail "no prompt naming $t: $(cat "$OUT")"
	grep -qx 'two words' "$OUT" || fail "get did not read its own write: $(cat "$OUT")"
	grep -qx $'row one\tc\ttwo words' "$OUT" || fail "scan: $(cat "$OUT")"
	run -0 perc get 'row one' c
	assert_output 'two words'
	run -0 perc status
	assert_line $'open_transactions\t0'
}

@test "on a terminal: help lists the requests, help REQUEST is the command's -h, a typo gets a did-you-mean" {
	on_terminal 'help' 'help scan' 'comit' 'init' 'quit'
	grep -q '^  scan-notify  *list dirty observed cells$' "$OUT" ||
	    fail "help: $(cat "$OUT")"
	! grep -q '^  init ' "$OUT" || fail "help lists init: $(cat "$OUT")"
	perc scan -h > "$BATS_TEST_TMPDIR/usage"
	grep -qxF "$(head -n 1 "$BATS_TEST_TMPDIR/usage")" "$OUT" ||
	    fail "help scan is not scan -h: $(cat "$OUT")"
	grep -q "^perc: 'comit' is not a request; did you mean 'commit'?" "$OUT" ||
	    fail "no did-you-mean: $(cat "$OUT")"
	grep -q "^perc: 'init' is not a request of the shell" "$OUT" ||
	    fail "init: $(cat "$OUT")"
}

@test "on a terminal: an unterminated quote is one error and the shell goes on; a value that is not printable is shown escaped" {
	printf 'a\x01\xff' | perc set b c
	on_terminal "set x c 'open" 'get b c' 'quit'
	grep -q "^perc: a quote (') is not closed" "$OUT" || fail "$(cat "$OUT")"
	grep -qxF 'a\x01\xff' "$OUT" || fail "get: $(cat "$OUT")"
	run -1 perc get x c
}

@test "on a terminal in a UTF-8 locale: UTF-8 typed reads whole, and printable UTF-8 is shown as it is" {
	locale -a 2> /dev/null | grep -qix 'c.utf-\?8' ||
	    skip "no C.UTF-8 locale here"
	perc set 'café' name 'Zoë 😀'
	printf 'a\x01' | perc set b c
	LC_ALL=C.UTF-8 on_terminal 'get café name' 'scan' 'get b c' 'quit'
	grep -qx 'Zoë 😀' "$OUT" || fail "get café: $(cat "$OUT")"
	grep -qx $'café\tname\tZoë 😀' "$OUT" || fail "scan: $(cat "$OUT")"
	grep -qxF 'a\x01' "$OUT" || fail "get b: $(cat "$OUT")"
	# In the C locale, the escaped form, as before.
	LC_ALL=C on_terminal 'scan' 'quit'
	grep -qxF 'caf\xc3\xa9	name	Zo\xc3\xab \xf0\x9f\x98\x80' "$OUT" ||
	    fail "C locale: $(cat "$OUT")"
}

@test "on a terminal: a transaction still open at the end is aborted, with a warning; the history is kept in PERC_HISTFILE" {
	on_terminal 'begin' 'set a c 1'
	grep -q '^perc: transaction [0-9]* is still open: aborting it$' "$OUT" ||
	    fail "no warning: $(cat "$OUT")"
	run -1 perc get a c
	run -0 perc status
	assert_line $'open_transactions\t0'
	grep -q 'set\\040a\\040c\\0401' "$PERC_HISTFILE" ||
	    fail "history: $(cat "$PERC_HISTFILE")"
}

@test "a terminal closed in the middle of a transaction: it is aborted, nothing committed" {
	mkfifo "$BATS_TEST_TMPDIR/in"
	timeout 60 script -qec "perc shell" /dev/null < "$BATS_TEST_TMPDIR/in" \
	    > "$OUT" 2>&1 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	exec 4> "$BATS_TEST_TMPDIR/in"
	printf 'begin\nset a c 1\n' >&4
	poll 100 eval '[ "$(perc status | grep open_transactions)" = "open_transactions	1" ]' ||
	    fail "no transaction began: $(cat "$OUT")"
	# The terminal goes, as when its window closes: the process that
	# holds the pseudo-terminal's master dies.
	kill -9 "$pid"
	exec 4>&-
	poll 100 eval '[ "$(perc status | grep open_transactions)" = "open_transactions	0" ]' ||
	    fail "the open transaction outlived its terminal: $(perc status)"
	run -1 perc get a c
}

@test "-i: the same for people on a pipe, prompts on standard output; a line of 10 MB is one request" {
	head -c 10000000 /dev/zero | tr '\0' v > "$BATS_TEST_TMPDIR/big"
	{ echo 'begin'; printf 'set big c %s\n' "$(cat "$BATS_TEST_TMPDIR/big")";
	  echo 'commit'; echo 'quit'; } | perc shell -i > "$OUT"
	grep -q '^perc> [0-9]*$' "$OUT" || fail "$(head -c 300 "$OUT")"
	run -0 perc get big c
	[ "${#output}" -eq 10000000 ]
}

@test "not on a terminal and without -i: the machine protocol, as before" {
	run -0 bash -c 'echo "ts" | perc shell'
	[[ $output =~ ^ok\ [0-9]+$ ]] || fail "$output"
}
