#!/usr/bin/env bats
# tests/log.bats - perc log: the committed puts and deletes in commit
# order, a transaction's together, with resolved lines that a later
# --since continues from with no gap and no repeat

load helpers

setup() {
	perc_fresh_dir
	OUT="$BATS_TEST_TMPDIR/out"
}

# The log's lines without its resolved lines.
changes() {
	perc log "$@" | awk -F '\t' '$4 != "resolved"'
}

@test "log: puts and deletes in commit order, a delete of nothing too; no lock-only writes, rollbacks or notifications" {
	perc init --observe-weak agg --observe doc "$PERC_DIR"
	T0=$(perc ts)
	perc set r1 c1 v1
	perc set doc d1 x
	perc del r1 c1
	perc del nothing here
	T=$(perc begin)
	perc set -t "$T" r2 c2 gone
	perc get --lock -t "$T" r1 c1 > /dev/null || true
	perc abort -t "$T"
	T=$(perc begin)
	perc get --lock -t "$T" doc d1 > /dev/null
	perc notify -t "$T" w agg
	perc set -t "$T" z c after
	perc commit -t "$T" > /dev/null
	perc notify w agg
	run -0 changes --since "$T0"
	[ "${#lines[@]}" -eq 5 ]
	[[ ${lines[0]} == *$'\tr1\tc1\tput\tv1' ]]
	[[ ${lines[1]} == *$'\tdoc\td1\tput\tx' ]]
	[[ ${lines[2]} == *$'\tr1\tc1\tdel\t' ]]
	[[ ${lines[3]} == *$'\tnothing\there\tdel\t' ]]
	[[ ${lines[4]} == *$'\tz\tc\tput\tafter' ]]
	# Commit order: the timestamps rise.
	perc log --since "$T0" | awk -F '\t' '$1 <= prev { exit 1 } { prev = $1 }'
	# The last line is the resolved line, and only it.
	run -0 perc log --since "$T0"
	[[ ${lines[-1]} =~ ^[0-9]+$'\t\t\tresolved\t'$ ]]
	[ "$(perc log --since "$T0" | grep -c resolved)" -eq 1 ]
}

@test "log: a transaction's writes together under its commit timestamp, by row then column; two runs print the same bytes" {
	T0=$(perc ts)
	T=$(perc begin)
	perc set -t "$T" b y 2
	perc set -t "$T" a z 3
	perc set -t "$T" b x 1
	perc set -t "$T" a a 4
	C=$(perc commit -t "$T")
	perc set c c 5
	run -0 changes --since "$T0"
	assert_output "$(printf '%s\ta\ta\tput\t4\n%s\ta\tz\tput\t3\n%s\tb\tx\tput\t1\n%s\tb\ty\tput\t2' "$C" "$C" "$C" "$C")
$(perc log --since "$T0" | sed -n 5p)"
	R=$(perc log --since "$T0" | tail -n 1 | cut -f1)
	perc log --since "$T0" | head -n 5 > "$OUT.1"
	perc log --since "$T0" | head -n 5 > "$OUT.2"
	cmp "$OUT.1" "$OUT.2"
	[ "$(perc log --since "$T0" | sed -n 5p | cut -f1)" -le "$R" ]
}

@test "log: a load committed in many batches gives each cell once, in order, a transaction whole; two runs print the same bytes" {
	# More cells than one step commits (commit.c's ONCE_CELLS): the
	# two steps, whose secondaries go in groups of GROUP_CELLS, each
	# group with one change log entry for its cells (leveldb/log.c).
	T0=$(perc ts)
	perc set a c before
	C=$(awk 'BEGIN { for (i = 150000; i > 0; i--)
	    printf "r%06d\tc\tv%d\n", i, i }' | perc load)
	perc set z c after
	changes --since "$T0" > "$OUT.1"
	changes --since "$T0" > "$OUT.2"
	cmp "$OUT.1" "$OUT.2"
	[ "$(wc -l < "$OUT.1")" -eq 150002 ]
	sed -n '2,150001p' "$OUT.1" > "$OUT.load"
	# Each cell once, under the load's timestamp, by row, its value.
	awk -F '\t' -v c="$C" '$1 != c || $3 != "c" || $4 != "put" ||
	    $5 != "v" substr($2, 2) + 0 || $2 <= prev { exit 1 }
	    { prev = $2 }' "$OUT.load"
	[ "$(sed -n 1p "$OUT.1" | cut -f2-)" = "$(printf 'a\tc\tput\tbefore')" ]
	[ "$(sed -n 150002p "$OUT.1" | cut -f2-)" = "$(printf 'z\tc\tput\tafter')" ]
	# A filter inside the load's entries.
	run -0 changes --since "$T0" --prefix r1
	[ "${#lines[@]}" -eq 50001 ]
	[[ ${lines[0]} == "$C"$'\tr100000\tc\tput\tv100000' ]]
	[[ ${lines[-1]} == "$C"$'\tr150000\tc\tput\tv150000' ]]
	# Read on from the resolved timestamp just below the load: the
	# load whole, once.
	[ "$(changes --since $((C - 1)) | wc -l)" -eq 150001 ]
}

@test "log: a directory whose change log an earlier perc wrote, one entry per cell, reads as it did, with entries of this perc after it" {
	# Made by the perc of format 4 before entries were per batch: init;
	# a transaction of b y 2, a z 3, b x 1, a a 4; del a z; a load of
	# l2 c w2 and l1 c w1.
	perc_leveldb_only
	base64 -d > "$BATS_TEST_TMPDIR/fx.tgz" <<'END'
H4sIAAAAAAAAA+2aS2/TQBDH1ylUbQWiPAQSIGGpErek3l0/0hOC0KqI0lah9O5snarCjSvX
pUm/ASfuPfAJkLjxuPUTwAVOHNoT1/YIF8ImsTepLWECXYfH/JTIyeyu/5sdz2Y8SbU+iWSj
cSzDaB858WP7NTaoRjRTJwQjDWvY1JFqSJ8ZZ2szsH1VRb7nBT/ql9b+l1KtT24Gnu8UXI89
lqTRcrCp6334n2BTQ6omaT7HAP8zr1ZdW5Wokep/asX8j6mhg/+zYELdcHymrtiBra6s+Q7j
m0FjrOr563ag6mODnh4gGR7/nm8zV+YXQFr84+T+TywC8Z8Fi9Pl0uzCEjFZ0aGGzfJUM2le
L2okP1UxKvmpKcIsUrRNVq0gtL97+L41an/36OmRsjdhPx/0/IHfg8d/UK/JvQf4hfzfsgzI
/7OA+3+VFZi3VZP36dLzfxrP/0wC+X8mMMYGPQVggIj8T6JGavwTPXn/B/GfCa38b6FcwlFO
N/P285lBzwnIjqj+JzMD7D//w7T1/Q/5n3yE/9tuMAqud/KVwJT9H+tWPP8jBtT/suHK2Q+z
IzlFCd+O86cyzmyk8MdQs6k64/hZU9GFLdex3WqOLrbLAe82eP+5zss9FHbqbQtNSjNEzV0W
rdGw7hFFUju98lTY0uV3kvI7fci3pCpIqffKY2FLke90OibfMf20fCjV6JUnwpYu30jKN/qQ
J58OX+V8pJwPL4chcTl01/7Gt9G7nTEHXfUDJVr7nrb42l/LXRCt0bDoePPjcu0FUi6FwsMt
4fPMxUhhYi3ONXPbuGvtzEdritU44kPmoiJV1Ku3kbkkfj7Staadj8TO908g9v/So3J5en5J
hkZ6/p+o/1KeLsD+nwEPbs/fm5l+uJRvOwJ+8PnfEPE/t1C6L0kjvf6XyP8tE0P8Z4Hwf2wj
OEmNVP+bJOZ/ii2o/2TC8tc3X67zHO2q6zxx3JVK4U4jcLbXNp2St75h+za/Nl6/vDgxwtOj
06NoaPjUoCcMnCji/1/MdeyaHI3U+KeJ+38Kv/9kQ7fsoxaJpTqMVqlGNdXQIBUEAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAD4k/kOkjdDTQBQAAA=
END
	tar xzf "$BATS_TEST_TMPDIR/fx.tgz" -C "$BATS_TEST_TMPDIR"
	export PERC_DIR=$BATS_TEST_TMPDIR/fx
	grep -qx 'format 4' "$PERC_DIR/config"
	T=$(perc begin)
	perc set -t "$T" n2 c x2
	perc set -t "$T" n1 c x1
	C=$(perc commit -t "$T")
	grep -qx 'format 5' "$PERC_DIR/config"
	run -0 changes --since 0
	assert_output "$(printf '%s\t%s\t%s\t%s\t%s\n' \
	    245856541261824 a a put 4 245856541261824 a z put 3 \
	    245856541261824 b x put 1 245856541261824 b y put 2 \
	    245856541270017 a z del '' \
	    245856541278208 l1 c put w1 245856541278208 l2 c put w2 \
	    "$C" n1 c put x1 "$C" n2 c put x2)"
	changes --since 0 > "$OUT.1"
	changes --since 0 > "$OUT.2"
	cmp "$OUT.1" "$OUT.2"
	# gc drops both kinds below its safe point.
	SP=$(perc gc --retain 0 | cut -f1)
	run -8 --separate-stderr perc log --since 0
	run -0 changes --since "$SP"
	assert_output ''
}

@test "log: --prefix and --column filter; binary rows and values are escaped as scan escapes them" {
	T0=$(perc ts)
	perc set user1 name ann
	perc set user1 mail a@x
	perc set item1 name box
	printf 'v\tal\nue\\' | perc set -e 'us\x00er\x09' name
	run -0 changes --since "$T0" --prefix user
	[ "${#lines[@]}" -eq 2 ]
	run -0 changes --since "$T0" --column name
	[ "${#lines[@]}" -eq 3 ]
	run -0 changes --since "$T0" --prefix user --column mail
	[[ $output == *$'\tuser1\tmail\tput\ta@x' ]]
	changes --since "$T0" --prefix us | tail -n 1 | cut -f2- > "$OUT"
	perc scan --prefix us | grep '^us\\x00' > "$OUT.scan"
	[ "$(cut -f1 "$OUT")" = "$(cut -f1 "$OUT.scan")" ]
	[ "$(cut -f4 "$OUT")" = "$(cut -f3 "$OUT.scan")" ]
	[ "$(cut -f4 "$OUT")" = 'v\tal\nue\\' ]
}

@test "log: --since a resolved timestamp continues with no gap and no repeat" {
	T0=$(perc ts)
	perc set a c 1
	perc set b c 2
	R=$(perc log --since "$T0" | tail -n 1 | cut -f1)
	perc set c c 3
	perc del a c
	run -0 changes --since "$R"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == *$'\tc\tc\tput\t3' ]]
	[[ ${lines[1]} == *$'\ta\tc\tdel\t' ]]
	# The two runs together are the one run from T0.
	{ changes --since "$T0" | head -n 2; changes --since "$R"; } > "$OUT.1"
	changes --since "$T0" > "$OUT.2"
	cmp "$OUT.1" "$OUT.2"
}

@test "log: a live lock holds the resolved timestamp below its start, and log does not wait for it" {
	T0=$(perc ts)
	perc set a c 1
	T=$(perc begin)
	perc set -t "$T" b c 2
	start_live_commit "$T" b c
	run -0 perc log --since "$T0"
	R=$(printf '%s\n' "$output" | tail -n 1 | cut -f1)
	[ "$R" -lt "$T" ]
	[[ $output != *$'\tb\tc\t'* ]]
	kill_live_commit
	# Its owner is gone: the next log cleans the lock, as a reader would
	# (rolled back: the commit never reached its commit point).
	run -0 perc log --since "$R"
	[[ $output != *$'\tb\tc\t'* ]]
	R2=$(printf '%s\n' "$output" | tail -n 1 | cut -f1)
	[ "$R2" -gt "$T" ]
	run -0 perc status
	assert_line "$(printf 'locks\t0')"
}

# bulk_input: 5,000 lines for perc load, more than one group of a bulk
# commit's prewrites (lib/commit.c); under PERC_FAILPOINT a load always
# takes the two steps.  On LevelDB its secondaries' locks have no entry
# of their own in the lock index: the transaction's marker stands for
# them (codec.h's REGION_LOCKS).
bulk_input() {
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "r%05d\tc\tv%d\n", i, i }' \
	    > "$BATS_TEST_TMPDIR/in"
}

# has_locks N: perc status counts N locks.
has_locks() {
	[ "$(perc status | awk -F '\t' '$1 == "locks" { print $2 }')" = "$1" ]
}

@test "log: a bulk load killed after its prewrites or its commit point is found whole: resolve-locks and log clean every lock" {
	bulk_input
	run -137 env PERC_FAILPOINT=after-prewrite perc load < "$BATS_TEST_TMPDIR/in"
	has_locks 5000
	run -0 perc resolve-locks
	[ "$(grep -c 'rolled-back$' <<<"$output")" -eq 5000 ]
	has_locks 0
	T0=$(perc ts)
	run -137 env PERC_FAILPOINT=after-commit-primary perc load < "$BATS_TEST_TMPDIR/in"
	has_locks 4999
	run -0 changes --since "$T0"
	[ "${#lines[@]}" -eq 5000 ]
	has_locks 0
	run -0 perc resolve-locks
	assert_output ''
}

# acked N: has the load in the background printed N commit timestamps?
acked() {
	[ "$(wc -l < "$OUT.acks")" -ge "$1" ]
}

@test "log: a load in big one-step batches, killed by kill -9 as it commits, is in the feed just as scan finds it" {
	# Batches of more than 1 MB write their change log entries ahead
	# of their commit, apart (leveldb.h's LOG_OP_APART): those of a
	# batch the kill cut short stand for nothing.
	awk 'BEGIN { v = sprintf("%064d", 0); for (i = 0; i < 100000; i++)
	    printf "r%06d\tc\t%s%d\n", i, v, i }' > "$BATS_TEST_TMPDIR/in"
	T0=$(perc ts)
	perc load --batch 16000 < "$BATS_TEST_TMPDIR/in" > "$OUT.acks" \
	    2> /dev/null 3>&- &
	BG_PIDS+=("$!")
	poll 600 acked 2 || fail "the load committed no two batches"
	kill -9 "$!"
	wait "$!" || true
	changes --since "$T0" | cut -f 2,3,5 > "$OUT.log"
	perc scan > "$OUT.scan"
	cmp "$OUT.log" "$OUT.scan"
	[ "$(wc -l < "$OUT.scan")" -ge 32000 ]
	[ "$(changes --since "$T0" | cut -f 1 | uniq | wc -l)" -eq \
	    $(($(wc -l < "$OUT.scan") / 16000)) ]
}

# paused_load FAILPOINT LOCKS: a bulk load, live, paused at FAILPOINT
# once it holds LOCKS locks.
paused_load() {
	PERC_FAILPOINT="$1:pause=300" perc load < "$BATS_TEST_TMPDIR/in" \
	    > /dev/null 2>&1 3>&- &
	BG_PIDS+=("$!")
	poll 600 has_locks "$2" || fail "no load paused at $1"
}

@test "log: a live bulk load paused after its prewrites holds the resolved timestamp below its start; past its commit point, log finishes it whole" {
	bulk_input
	T0=$(perc ts)
	paused_load after-prewrite 5000
	S=$(perc status --transactions | cut -f2)
	run -0 perc log --since "$T0"
	[ "${#lines[@]}" -eq 1 ] || fail "log printed ${#lines[@]} lines"
	R=$(cut -f1 <<<"$output")
	[ "$R" -lt "$S" ]
	kill -9 "${BG_PIDS[0]}"
	kill_bg
	run -0 perc resolve-locks
	has_locks 0
	# Past the commit point its secondaries are anyone's to roll
	# forward: the log finds them all, though their owner lives.
	T0=$(perc ts)
	paused_load after-commit-primary 4999
	run -0 changes --since "$T0"
	[ "${#lines[@]}" -eq 5000 ] || fail "log printed ${#lines[@]} changes"
	has_locks 0
}

@test "log: a commit that died past its commit point appears whole once resolved" {
	for fp in after-commit-primary after-commit-secondary; do
		T0=$(perc ts)
		stuck_commit "$fp"
		run -0 changes --since "$T0"
		# a, b, c at their old values, then the three new ones together.
		[ "${#lines[@]}" -eq 6 ]
		C=$(printf '%s\n' "${lines[3]}" | cut -f1)
		[ "$(printf '%s\n' "${lines[@]:3}" | cut -f1 | sort -u)" = "$C" ]
		[[ ${lines[3]} == *$'\ta\tcol\tput\tnew-a' ]]
		[[ ${lines[4]} == *$'\tb\tcol\tput\tnew-b' ]]
		[[ ${lines[5]} == *$'\tc\tcol\tput\tnew-c' ]]
	done
}

@test "log: --since below gc's safe point exits 8 naming it, before printing anything; above the newest timestamp exits 2" {
	T0=$(perc ts)
	perc set a c 1
	perc set a c 2
	PERC_LOG_HOLD=0 perc log --since "$T0" > /dev/null
	SP=$(perc gc --retain 0 | cut -f1)
	[ "$SP" -gt "$T0" ]
	run -8 --separate-stderr perc log --since "$T0"
	assert_output ''
	assert_error_line "*safe point $SP*"
	run -0 perc log --since "$SP"
	run -2 --separate-stderr perc log --since $(( $(perc ts) + 1000000 ))
	assert_output ''
}

@test "log: a run that fails leaves no hold on gc, and gc then moves the safe point" {
	perc set a c 1
	perc set a c 2
	SP=$(perc gc --retain 0 | cut -f1)
	[ "$SP" -gt 1 ]
	run -8 --separate-stderr perc log --since 1
	assert_error_line "*safe point $SP*"
	run -0 perc status
	assert_line "$(printf 'log_hold\tnone')"
	[ -z "$(ls -A "$PERC_DIR/holds" 2> /dev/null)" ]
	perc set a c 3
	SP2=$(perc gc --retain 0 | cut -f1)
	[ "$SP2" -gt "$SP" ]
}

@test "log: a run holds gc at its resolved timestamp for PERC_LOG_HOLD seconds, which status shows" {
	T0=$(perc ts)
	perc set a c 1
	R=$(perc log --since "$T0" | tail -n 1 | cut -f1)
	run -0 perc status
	assert_line --regexp "^log_hold	$R	[0-9]+$"
	perc set a c 2
	SP=$(perc gc --retain 0 | cut -f1)
	[ "$SP" -le "$R" ]
	run -0 changes --since "$R"
	[[ $output == *$'\ta\tc\tput\t2' ]]
	# A hold past its time holds nothing.
	rm -rf "$PERC_DIR/holds"
	PERC_LOG_HOLD=0 perc log > /dev/null
	run -0 perc status
	assert_line "$(printf 'log_hold\tnone')"
}

@test "log --since opens the LevelDB store once: the check against gc, the walk of the locks and the first batch under one hold" {
	perc_leveldb_only
	command -v strace > /dev/null || skip "strace is not installed"
	[ -z "${PERC_TEST_VALGRIND:-}" ] || skip "strace under valgrind"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	T0=$(perc ts)
	perc set a c 1
	perc set b c 2
	# Each open of LevelDB takes the lock file in its directory.
	run -0 strace -f -qq -o "$OUT.trace" -e trace=openat \
	    perc log --since "$T0"
	[ "${#lines[@]}" -eq 3 ]
	run -0 grep -c '/store/LOCK"' "$OUT.trace"
	assert_output 1
}

@test "log --follow: prints a later commit, and ends with exit 0 after a resolved line on SIGTERM and on a closed output" {
	perc log --follow > "$OUT" 2> "$OUT.err" &
	PID=$!
	BG_PIDS+=("$PID")
	poll 100 grep -q resolved "$OUT"
	perc set later c v
	poll 100 grep -q $'\tlater\tc\tput\tv$' "$OUT"
	kill -TERM "$PID"
	# Not through run: its subshell cannot wait for this shell's child.
	rc=0
	wait "$PID" || rc=$?
	[ "$rc" -eq 0 ] || fail "log --follow exited $rc on SIGTERM"
	[[ $(tail -n 1 "$OUT") =~ ^[0-9]+$'\t\t\tresolved\t'$ ]]
	# The resolved timestamps never go down.
	grep resolved "$OUT" | cut -f1 | sort -c -n
	run -0 timeout 30 bash -c 'perc log --follow | head -n 1; exit ${PIPESTATUS[0]}'
	[[ $output =~ ^[0-9]+$'\t\t\tresolved\t'$ ]]
}

@test "log --follow: a commit wakes it, asleep in poll(2) between rounds, with a fallback poll of 600 s" {
	PERC_LOG_POLL=600 perc log --follow > "$OUT" 2> "$OUT.err" &
	PID=$!
	BG_PIDS+=("$PID")
	poll 100 grep -q resolved "$OUT"
	# Asleep waiting for a wakeup, not napping between two looks.
	poll 100 asleep_in_poll "$PID"
	perc set woken c v
	poll 100 grep -q $'\twoken\tc\tput\tv$' "$OUT"
	poll 100 asleep_in_poll "$PID"
	T=$(perc begin)
	perc set -t "$T" again c w
	perc commit -t "$T" > /dev/null
	poll 100 grep -q $'\tagain\tc\tput\tw$' "$OUT"
	kill -TERM "$PID"
	rc=0
	wait "$PID" || rc=$?
	[ "$rc" -eq 0 ] || fail "log --follow exited $rc on SIGTERM"
	[ ! -s "$OUT.err" ]
}

@test "log --follow: a live lock that holds the feed back for PERC_LOG_STUCK seconds is named on stderr, cell, transaction and time" {
	T0=$(perc ts)
	perc set a c 1
	T=$(perc begin)
	perc set -t "$T" stuck col 2
	start_live_commit "$T" stuck col
	PERC_LOG_STUCK=0.5 PERC_LOG_POLL=0.2 perc log --follow --since "$T0" \
	    > "$OUT" 2> "$OUT.err" &
	PID=$!
	BG_PIDS+=("$PID")
	poll 100 grep -q 'live lock' "$OUT.err"
	run -0 head -n 1 "$OUT.err"
	assert_output --regexp "^perc log: a live lock on row stuck column col of transaction $T has held the feed at [0-9]+ for [0-9]+ s; "
	R=$(grep resolved "$OUT" | tail -n 1 | cut -f1)
	[ "$R" -lt "$T" ]
	grep -q $'\ta\tc\tput\t1$' "$OUT"
	kill_live_commit
	kill -TERM "$PID"
	wait "$PID" || true
}

# Replay perc log's lines into data directory $1 through perc shell:
# set and del, each word in the shell's escaped form.
replay() {
	awk -F '\t' '
	function word(s) { if (s == "") return "\\e"; gsub(/ /, "\\x20", s); return s }
	$4 == "put" { print "set " word($2) " " word($3) " " word($5) }
	$4 == "del" { print "del " word($2) " " word($3) }' |
	    perc -d "$1" shell | { ! grep '^err'; }
}

@test "log: a copy made by ts, scan --at and load, then kept by replaying log --since, ends byte-identical after a bank workload with crashes" {
	for i in 0 1 2 3 4; do perc set "acct$i" bal 100; done
	perc set 'odd row' 'a col' $'x\ty'
	COPY="$BATS_TEST_TMPDIR/copy"
	perc_fresh_dir copy
	SRC="$BATS_TEST_TMPDIR/db"
	export PERC_DIR="$SRC"
	T0=$(perc ts)
	# The bank: transfers, some dying at every step of their commit.
	n=0
	for fp in '' after-prewrite-primary after-prewrite '' \
	    after-commit-primary after-commit-secondary '' kill; do
		n=$((n + 1))
		from="acct$((n % 5))" to="acct$(((n + 2) % 5))"
		T=$(perc begin)
		a=$(perc get -t "$T" "$from" bal)
		b=$(perc get -t "$T" "$to" bal)
		perc set -t "$T" "$from" bal $((a - n))
		perc set -t "$T" "$to" bal $((b + n))
		case $fp in
		'') perc commit -t "$T" > /dev/null ;;
		kill)
			start_live_commit "$T" "$from" bal after-prewrite
			kill_live_commit ;;
		*) env PERC_FAILPOINT="$fp" perc commit -t "$T" > /dev/null ||
			true ;;
		esac
		[ $n -eq 4 ] && perc del 'odd row' 'a col'
	done
	perc scan --at "$T0" | perc -d "$COPY" load > /dev/null
	perc log --since "$T0" | replay "$COPY"
	# Nothing is left locked once a reader has passed.
	perc scan > "$OUT.src"
	perc -d "$COPY" scan > "$OUT.copy"
	cmp "$OUT.src" "$OUT.copy"
	# The books balance.
	[ "$(cut -f3 "$OUT.src" | grep -E '^[0-9]+$' | paste -sd+ | bc)" -eq 500 ]
}
