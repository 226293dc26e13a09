#!/usr/bin/env bats
# tests/redis.bats - what only the Redis Cluster store has: a table
# shared by several data directories, servers' settings, failover, a
# restart of every node, a cluster that stays down.  The suite as a
# whole runs on this store too (make check, PERC_TEST_STORE=redis);
# these tests need a cluster of their own to break, started in
# $BATS_TEST_TMPDIR/c, or share one started once (setup_file).

load helpers

CLUSTER="$BATS_TEST_DIRNAME/cluster"

setup_file() {
	command -v redis-server > /dev/null || return 0
	"$CLUSTER" start "$BATS_FILE_TMPDIR/c" > "$BATS_FILE_TMPDIR/url"
}

teardown_file() {
	"$CLUSTER" stop "$BATS_FILE_TMPDIR/c"
}

setup() {
	command -v redis-server > /dev/null ||
		skip "redis-server is not installed (Debian: redis-server)"
	URL=$(cat "$BATS_FILE_TMPDIR/url")
	export PERC_LOCK_TIMEOUT=10 FAIL="$BATS_TEST_TMPDIR/failures"
	unset PERC_DIR PERC_FAILPOINT PERC_LOCK_TTL
	: > "$FAIL"
}

teardown() {
	kill_bg
	# A node a test stopped (SIGSTOP) could not stop at a TERM.
	[ -z "${STOPPED:-}" ] || kill -CONT "$STOPPED" 2> /dev/null || true
	if [ -d "$BATS_TEST_TMPDIR/c" ]; then
		"$CLUSTER" stop "$BATS_TEST_TMPDIR/c"
	fi
	if [ -s "$BATS_TEST_TMPDIR/lone/pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/lone/pid")" 2> /dev/null || true
	fi
}

# lone_server [OPTION...]: one redis-server, not a cluster, on a free
# port of its own (LONE_PORT), its data in $BATS_TEST_TMPDIR/lone, with
# these options too.
lone_server() {
	local d=$BATS_TEST_TMPDIR/lone try
	mkdir -p "$d"
	for try in $(seq 20); do
		LONE_PORT=$((30000 + RANDOM % 2700))
		redis-server --port "$LONE_PORT" --bind 127.0.0.1 --dir "$d" \
		    --appendonly yes --appendfsync always --save '' \
		    --daemonize yes --pidfile "$d/pid" --logfile "$d/log" \
		    "$@" ||
			continue
		# Ours once it answers from our directory; a taken port
		# makes it exit instead.
		for _ in $(seq 50); do
			if [ "$(rcli "$LONE_PORT" config get dir 2> /dev/null |
			    tail -n 1)" = "$d" ]; then
				# redis-server syncs no directory it makes:
				# as tests/cluster does, and perc(1) asks.
				sync "$d" "$d"/appendonlydir 2> /dev/null
				return 0
			fi
			sleep 0.1
		done
	done
	fail "could not start a lone redis-server"
}

# own_cluster: a cluster for this test alone, to break; sets URL.
own_cluster() {
	URL=$("$CLUSTER" start "$BATS_TEST_TMPDIR/c")
}

# rcli PORT ARGS...: redis-cli on node PORT, bounded.
rcli() {
	local p=$1
	shift
	timeout 10 redis-cli -h 127.0.0.1 -p "$p" "$@"
}

# A table name no other test uses.
table() {
	perc_test_table "$BATS_TEST_TMPDIR/$1"
}

# lease TABLE ROW TS CMD [ARGS...]: CMD on the lease of transaction TS
# of TABLE, whose primary is in row ROW, through the first seed.
lease() {
	local key="perc:{$1:$(bucket "$2")}:lease:$3" port=${URL#redis://*:}
	shift 3
	rcli "${port%%,*}" -c "$1" "$key" "${@:2}"
}

# leases TABLE: the names of every lease of TABLE, on every master.
leases() {
	local m
	for m in $("$CLUSTER" masters "$BATS_FILE_TMPDIR/c"); do
		rcli "${m##*:}" --scan --pattern "perc:{$1:*}:lease:*"
	done
}

@test "init --store keeps the cells in the cluster and only config and journals in DIR" {
	run -0 perc init --store "$URL/$(table t)" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	grep -qx "store $URL/$(table t)" "$PERC_DIR/config"
	[ ! -e "$PERC_DIR/store" ] && [ ! -e "$PERC_DIR/oracle" ]
	run -0 perc set r c v
	run -0 perc get r c
	assert_output v
	# init again joins, whatever it is given to add.
	run -0 perc init --store "$URL/$(table t)" --observe c "$PERC_DIR"
	run -0 perc get r c
	assert_output v
}

@test "two data directories on one table see each other's commits" {
	t=$(table shared)
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/a"
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/b"
	run -0 perc -d "$BATS_TEST_TMPDIR/a" set r c from-a
	run -0 perc -d "$BATS_TEST_TMPDIR/b" get r c
	assert_output from-a
	tb=$(perc -d "$BATS_TEST_TMPDIR/b" begin)
	perc -d "$BATS_TEST_TMPDIR/b" set -t "$tb" r c from-b
	perc -d "$BATS_TEST_TMPDIR/b" set -t "$tb" s c from-b
	run -0 perc -d "$BATS_TEST_TMPDIR/b" commit -t "$tb"
	run -0 perc -d "$BATS_TEST_TMPDIR/a" scan
	assert_output $'r\tc\tfrom-b\ns\tc\tfrom-b'
	# One oracle: timestamps interleave, strictly increasing.
	a=$(perc -d "$BATS_TEST_TMPDIR/a" ts)
	b=$(perc -d "$BATS_TEST_TMPDIR/b" ts)
	[ "$b" -gt "$a" ]
}

@test "gc in one data directory spares what another one's open transactions read" {
	t=$(table shared)
	a=$BATS_TEST_TMPDIR/a b=$BATS_TEST_TMPDIR/b
	perc init --store "$URL/$t" "$a"
	perc init --store "$URL/$t" "$b"
	perc -d "$a" set r c old
	# One handle between commands, one transaction kept by a shell.
	ta=$(perc -d "$a" begin)
	coproc SH { exec perc -d "$a" shell 2> "$BATS_TEST_TMPDIR/err"; }
	pid=$SH_PID
	BG_PIDS+=("$pid")
	ask begin
	assert_equal "$st" ok
	ts=$res
	perc -d "$b" set r c new
	perc -d "$b" set r c newer
	run -0 perc -d "$b" gc --retain 0
	safe=${output%%$'\t'*}
	[ "$safe" -le "$ta" ] || fail "safe point $safe above open $ta"
	run -0 perc -d "$a" get -t "$ta" r c
	assert_output old
	ask "get -t $ts r c"
	assert_equal "$st $res" "ok old"
	# Once both are over, gc goes past them.
	run -0 perc -d "$a" commit -t "$ta"
	ask "abort -t $ts"
	assert_equal "$st" ok
	exec {SH[1]}>&-
	poll 100 eval "! kill -0 $pid 2> /dev/null" || fail "the shell runs on"
	run -0 perc -d "$b" gc --retain 0
	[ "${output%%$'\t'*}" -gt "$ts" ] || fail "gc stayed at '$output'"
	run -0 perc -d "$b" show r c
	[ "${#lines[@]}" -eq 2 ] || fail "left: $output"
}

@test "a data directory cleans up the dead locks another one left" {
	t=$(table shared)
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/a"
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/b"
	export PERC_DIR=$BATS_TEST_TMPDIR/a
	perc set x c old
	tx=$(perc begin)
	perc set -t "$tx" x c new
	perc set -t "$tx" y c new
	# The owner dies with both cells locked and the primary committed.
	PERC_FAILPOINT=after-commit-primary run -137 perc commit -t "$tx"
	ty=$(perc begin)
	perc set -t "$ty" z c never
	perc set -t "$ty" w c never
	PERC_FAILPOINT=after-prewrite run -137 perc commit -t "$ty"
	# The other directory rolls the first forward at once.
	export PERC_DIR=$BATS_TEST_TMPDIR/b
	run -0 perc get y c
	assert_output new
	# The second's owner, as if on another machine, whose journal no
	# one here can see, is alive while its lease, on its primary w,
	# lives...
	run -0 lease "$t" w "$ty" SET $'elsewhere\t/gone' XX KEEPTTL
	assert_output OK
	PERC_LOCK_TIMEOUT=1 run -4 perc get w c
	run -0 perc resolve-locks
	assert_output $'w\tc\t'"$ty"$'\talive\nz\tc\t'"$ty"$'\talive'
	# ...and dead once its lease is gone: then its locks are cleaned.
	run -0 lease "$t" w "$ty" DEL
	assert_output 1
	run -1 perc get w c
	run -0 perc resolve-locks
	run -0 perc scan
	assert_output $'x\tc\tnew\ny\tc\tnew'
	run -0 perc show z c
	refute_output --partial lock
}

@test "a commit's lease lives in its primary's bucket from the primary's prewrite to the commit point" {
	t=$(table lease)
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	T=$(perc begin)
	perc set -t "$T" b c new
	perc set -t "$T" a c new        # the primary: first in byte order
	PERC_LOCK_TTL=30 PERC_FAILPOINT=after-prewrite-primary:pause=60 \
	    perc commit -t "$T" > "$BATS_TEST_TMPDIR/out" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 100); do
		[ "$(lease "$t" a "$T" EXISTS)" = 1 ] && break
		sleep 0.1
	done
	# Its one lease, in a's bucket: this host and data directory, for
	# the lock's TTL and 10 s more.
	run -0 leases "$t"
	assert_output "perc:{$t:$(bucket a)}:lease:$T"
	run -0 lease "$t" a "$T" GET
	assert_output "$(uname -n)"$'\t'"$(realpath "$PERC_DIR")"
	ttl=$(lease "$t" a "$T" PTTL)
	[ "$ttl" -gt 30000 ] && [ "$ttl" -le 40000 ] || fail "PTTL $ttl"
	perc show a c | grep -q 'owner-state=alive$'
	# The commit point drops it.
	kill -CONT "$pid"
	wait "$pid"
	run -0 lease "$t" a "$T" EXISTS
	assert_output 0
	run -0 leases "$t"
	assert_output ''
	run -0 perc get b c
	assert_output new
}

@test "a long commit renews its lease as it goes" {
	command -v strace > /dev/null || skip "strace is not installed"
	[ -z "${PERC_TEST_VALGRIND:-}" ] || skip "strace under valgrind"
	t=$(table renew)
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	T=$(perc begin)
	for i in $(seq 300); do echo "set r$i c v"; done |
	    sed "s/^set /set -t $T /" | perc shell > /dev/null
	# LeakSanitizer cannot run under ptrace; the ASan pass has its
	# other runs.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	# A TTL of 0.03 s: a renewal every 10 ms, so a commit of 300 cells,
	# 300 prewrites each synced and waited on, renews on the way, for
	# the lock's TTL and the lease's slack.
	PERC_LOCK_TTL=0.03 strace -f -e trace=sendto -s 1024 \
	    -o "$BATS_TEST_TMPDIR/trace" perc commit -t "$T" > /dev/null
	# The heartbeat script (lib/redis/lua/keep.lua) on the lease's key.
	run -0 grep -c 'EVALSHA.*lease:'"$T"'.*10030' "$BATS_TEST_TMPDIR/trace"
	[ "$output" -ge 1 ]
	run -0 leases "$t"
	assert_output ''
}

@test "a lone Redis server, not a cluster, is a store of one node" {
	lone_server
	url=redis://127.0.0.1:$LONE_PORT/t
	run -0 perc init --store "$url" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	perc set r c v
	t=$(perc begin)
	perc set -t "$t" r c w
	perc set -t "$t" s c x
	run -0 perc commit -t "$t"
	run -0 perc scan
	assert_output $'r\tc\tw\ns\tc\tx'
	# Among several seeds, a server that is not a cluster node is refused.
	run -7 --separate-stderr perc init \
	    --store "redis://127.0.0.1:$LONE_PORT,127.0.0.1:1/u" \
	    "$BATS_TEST_TMPDIR/e"
	assert_error_line "*not a cluster node*"
}

@test "init refuses a server without functions (before Redis 7.0), saying so" {
	# FUNCTION renamed away: what a Redis 6 server answers.
	lone_server --rename-command FUNCTION ''
	run -2 --separate-stderr perc init \
	    --store "redis://127.0.0.1:$LONE_PORT/t" "$BATS_TEST_TMPDIR/d"
	assert_error_line "*no functions*Redis 7.0 or later*"
	[ ! -e "$BATS_TEST_TMPDIR/d/config" ]
}

@test "a data directory of format 1 stays format 1 here: this store's data never changed" {
	t=$(table format)
	perc init --store "$URL/$t" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	sed -i 's/^format .*/format 1/' "$PERC_DIR/config"
	perc set r c v
	T=$(perc begin)
	perc set -t "$T" r c w
	perc commit -t "$T" > /dev/null
	run -0 perc get r c
	assert_output w
	grep -qx 'format 1' "$PERC_DIR/config"
}

@test "tables on one cluster never see each other" {
	perc init --store "$URL/$(table one)" "$BATS_TEST_TMPDIR/one"
	perc init --store "$URL/$(table two)" "$BATS_TEST_TMPDIR/two"
	perc -d "$BATS_TEST_TMPDIR/one" set r c 1
	perc -d "$BATS_TEST_TMPDIR/one" init --observe c
	run -1 perc -d "$BATS_TEST_TMPDIR/two" get r c
	run -0 perc -d "$BATS_TEST_TMPDIR/two" scan
	assert_output ''
	run -0 perc -d "$BATS_TEST_TMPDIR/two" resolve-locks
	assert_output ''
}

@test "init refuses a cluster whose settings could lose a commit, naming the setting" {
	own_cluster
	p=$("$CLUSTER" masters "$BATS_TEST_TMPDIR/c" | head -n 1)
	p=${p##*:}
	while read -r name bad good; do
		rcli "$p" config set "$name" "$bad"
		run -2 --separate-stderr perc init --store "$URL/t" \
		    "$BATS_TEST_TMPDIR/d"
		assert_error_line "*$name*$bad*"
		[ ! -e "$BATS_TEST_TMPDIR/d/config" ]
		rm -rf "$BATS_TEST_TMPDIR/d"
		rcli "$p" config set "$name" "$good"
	done <<-EOF
	appendfsync everysec always
	appendonly no yes
	maxmemory-policy allkeys-lru noeviction
	EOF
	run -0 perc init --store "$URL/t" "$BATS_TEST_TMPDIR/d"
}

@test "a cluster that stays down: exit 4 with one clear line, nothing half-done" {
	own_cluster
	perc init --store "$URL/t" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=2
	perc set r c v
	t=$(perc begin)
	perc set -t "$t" r c w
	"$CLUSTER" stop "$BATS_TEST_TMPDIR/c"
	for cmd in "get r c" "set s c v" "commit -t $t" "scan" "ts"; do
		# shellcheck disable=SC2086 # the command's words
		run -4 --separate-stderr perc $cmd
		assert_error_line "*redis*"
	done
	# A write to a handle goes to its journal alone, as on LevelDB.
	run -0 perc set -t "$t" s c w
	"$CLUSTER" start "$BATS_TEST_TMPDIR/c" > /dev/null
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
	export PERC_LOCK_TIMEOUT=10
	run -0 perc scan
	assert_output $'r\tc\tv'
}

@test "a restart of every node keeps every committed cell and the oracle" {
	own_cluster
	perc init --store "$URL/t" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
	for i in $(seq 20); do
		t=$(perc begin)
		perc set -t "$t" "row$i" c "v$i"
		perc set -t "$t" "row$i" d "w$i"
		perc commit -t "$t" > /dev/null
	done
	before=$(perc scan)
	last=$(perc ts)
	"$CLUSTER" stop "$BATS_TEST_TMPDIR/c"
	"$CLUSTER" start "$BATS_TEST_TMPDIR/c" > /dev/null
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
	run -0 perc scan
	assert_output "$before"
	[ "${#lines[@]}" -eq 40 ]
	[ "$(perc ts)" -gt "$last" ]
}

# worker ID COUNT: COUNT transfers between five accounts, each retried
# with a new transaction on a conflict (exit 3); every commit that
# printed a timestamp goes to $LOG as "TS FROM TO AMOUNT NANOSECONDS",
# the last when it was printed.  Anything else that goes wrong is
# written to $FAIL.
worker() {
	local id=$1 count=$2 n=0 tries=0 f to amt t a b ts rc
	RANDOM=$((id * 7919 + 13))
	while [ "$n" -lt "$count" ]; do
		tries=$((tries + 1))
		if [ "$tries" -gt 5000 ]; then
			echo "worker $id: no progress" >> "$FAIL"
			return 1
		fi
		f=$((RANDOM % 5))
		to=$(((f + 1 + RANDOM % 4) % 5))
		amt=$((RANDOM % 10 + 1))
		t=$(perc begin) &&
		    a=$(perc get -t "$t" "acct$f" bal) &&
		    b=$(perc get -t "$t" "acct$to" bal) &&
		    perc set -t "$t" "acct$f" bal $((a - amt)) &&
		    perc set -t "$t" "acct$to" bal $((b + amt)) ||
			{ echo "worker $id: exit $? before commit" >> "$FAIL"; return 1; }
		rc=0
		ts=$(perc commit -t "$t" 2> "$BATS_TEST_TMPDIR/err.$id") || rc=$?
		case $rc in
		0)
			echo "$ts $f $to $amt $(date +%s%N)" >> "$LOG"
			n=$((n + 1)) ;;
		3) ;;
		*)
			echo "worker $id: commit exit $rc: $(cat "$BATS_TEST_TMPDIR/err.$id")" \
			    >> "$FAIL"
			return 1 ;;
		esac
	done
}

# setter ROW: perc set ROW c 1, 2, 3... until $STOP exists, each value
# whose set exited 0 appended to $SETS: one-cell transactions, whose
# lock has no WAIT of its own.
setter() {
	local n=0 rc
	until [ -e "$STOP" ]; do
		n=$((n + 1))
		rc=0
		perc set "$1" c "$n" 2> "$BATS_TEST_TMPDIR/err.set" || rc=$?
		case $rc in
		0) echo "$n" >> "$SETS" ;;
		3) ;;
		*)
			echo "setter: set exit $rc: $(cat "$BATS_TEST_TMPDIR/err.set")" \
			    >> "$FAIL"
			return 1 ;;
		esac
	done
}

# Until $STOP exists (and at least four times): a scan of the five
# accounts, its total written to $TOTALS.
reader() {
	local k=0 out
	while { [ ! -e "$STOP" ] || [ "$k" -lt 4 ]; } && [ "$k" -lt 10000 ]; do
		k=$((k + 1))
		out=$(perc scan --column bal) ||
			{ echo "reader: scan exit $?" >> "$FAIL"; return 1; }
		awk -F '\t' '{ s += $3 } END { print s, NR }' <<<"$out" >> "$TOTALS"
	done
}

# bank_under_fault FAULT...: 4 workers' bank transfers of 30 each as
# separate commands, a reader's snapshots, and a setter's one-cell sets
# on a row of master 1, with FAULT run against master 1 once they are
# well under way; then every snapshot must sum right, every printed
# transfer and set must be there, and nothing else.
bank_under_fault() {
	own_cluster
	perc init --store "$URL/bank" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=30
	export LOG=$BATS_TEST_TMPDIR/log TOTALS=$BATS_TEST_TMPDIR/totals
	export STOP=$BATS_TEST_TMPDIR/stop
	t=$(perc begin)
	for i in 0 1 2 3 4; do
		perc set -t "$t" "acct$i" bal 100
	done
	perc commit -t "$t" > /dev/null
	: > "$LOG"
	: > "$TOTALS"
	export SETS=$BATS_TEST_TMPDIR/sets
	: > "$SETS"
	# The setter's row is on the master to be killed.
	port=$("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c" | awk '$1 == 1 { print $3 }')
	for i in $(seq 0 63); do
		row=ctr$i
		rcli "$port" GET "perc:{bank:$(bucket "$row")}:probe" |
		    grep -q MOVED || break
	done
	export -f worker reader setter
	timeout 600 bash -c reader 3>&- &
	rpid=$!
	BG_PIDS+=("$rpid")
	timeout 600 bash -c "setter $row" 3>&- &
	spid=$!
	BG_PIDS+=("$spid")
	pids=()
	for w in 1 2 3 4; do
		timeout 600 bash -c "worker $w 30" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	# Kill a master once the workers are well under way.
	for _ in $(seq "$(scaled 600)"); do
		[ "$(wc -l < "$LOG")" -ge 20 ] && break
		sleep 0.1
	done
	[ "$(wc -l < "$LOG")" -ge 20 ]
	killed=$(date +%s%N)
	"$@"
	for p in "${pids[@]}"; do
		wait "$p" || echo "a worker exited $?" >> "$FAIL"
	done
	touch "$STOP"
	wait "$rpid" || echo "the reader exited $?" >> "$FAIL"
	wait "$spid" || echo "the setter exited $?" >> "$FAIL"
	run cat "$FAIL"
	assert_output ''
	[ "$(wc -l < "$LOG")" -eq 120 ]
	# The last set that exited 0 is the row's value.
	run -0 perc get "$row" c
	assert_output "$(tail -n 1 "$SETS")"
	# Every snapshot saw five accounts summing to 500.
	run awk '$1 != 500 || $2 != 5' "$TOTALS"
	assert_output ''
	# Replaying every printed transfer gives the final balances.
	run -0 perc scan --column bal
	expect=$(awk '{ b[$2] -= $4; b[$3] += $4 }
	    END { for (i = 0; i < 5; i++) printf "acct%d\tbal\t%d\n", i, 100 + b[i] }' \
	    "$LOG")
	assert_output "$expect"
	# The failover, for the record: commits after the fault, and the
	# longest time without a commit from then on.
	awk -v k="$killed" '$5 > k { print $5 }' "$LOG" | sort -n |
	    awk -v k="$killed" '{ if ($1 - k > gap) gap = $1 - k; k = $1; n++ }
	    END { printf "# failover: %d of 120 transfers after the fault, " \
	        "longest wait for a commit %.1f s, none lost", n, gap / 1e9 }' >&3
	echo ", nor any of $(wc -l < "$SETS") one-cell sets of $row" >&3
}

@test "bank transfers from 4 workers while a master is killed: sums right, nothing printed lost" {
	bank_under_fault "$CLUSTER" kill "$BATS_TEST_TMPDIR/c" 1
}

# other_masters PORT: how many nodes but PORT's are masters now.
other_masters() {
	local conf p n=0
	for conf in "$BATS_TEST_TMPDIR"/c/node*/redis.conf; do
		p=$(awk '$1 == "port" { print $2 }' "$conf")
		[ "$p" != "$1" ] || continue
		[ "$(rcli "$p" ROLE 2> /dev/null | head -n 1)" != master ] ||
		    n=$((n + 1))
	done
	echo "$n"
}

# pause_master_until_replaced: stop master 1 (SIGSTOP) until another
# node serves its slots, its replica promoted, then let it go on: it
# comes back a replica, having answered nothing meanwhile.
pause_master_until_replaced() {
	local port pid
	port=$("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c" | awk '$1 == 1 { print $3 }')
	pid=$(pgrep -f "^redis-server 127.0.0.1:$port ")
	STOPPED=$pid
	kill -STOP "$pid"
	for _ in $(seq 300); do
		[ "$(other_masters "$port")" -eq 3 ] && break
		sleep 0.1
	done
	[ "$(other_masters "$port")" -eq 3 ] ||
	    fail "node 1's replica was never promoted"
	kill -CONT "$pid"
	STOPPED=
}

@test "bank transfers from 4 workers while a master is paused until its replica takes over: sums right, nothing printed lost" {
	bank_under_fault pause_master_until_replaced
}

# master_of TABLE ROW: the port of the master of ROW's bucket, the one
# that answers for a key of it (with nothing: it has no such key).
master_of() {
	local m
	for m in $("$CLUSTER" masters "$BATS_TEST_TMPDIR/c"); do
		[ -z "$(rcli "${m##*:}" GET "perc:{$1:$(bucket "$2")}:probe")" ] &&
		    { echo "${m##*:}"; return; }
	done
}

# replica_of PORT: the port of a replica of master PORT.
replica_of() {
	local id
	id=$(rcli "$1" CLUSTER MYID)
	rcli "$1" CLUSTER NODES | awk -v id="$id" '$4 == id && $3 ~ /slave/ {
	    split($2, a, "[:@]"); print a[2]; exit }'
}

# cut_replica M: from now on master M's replica gets none of M's writes
# (it may not sync, and its link is dropped), while M, the cluster and
# every client go on as ever: what M writes stays on M alone.
cut_replica() {
	rcli "$1" ACL SETUSER default -sync -psync -replconf > /dev/null
	rcli "$1" CLIENT KILL TYPE replica > /dev/null
}

# master_and_replica: the master M of row a0 in table $TABLE and its
# replica R, once the new cluster's nodes agree on who serves what.
master_and_replica() {
	for _ in $(seq 50); do
		M=$(master_of "$TABLE" a0)
		R=$([ -z "$M" ] || replica_of "$M")
		[ -n "$R" ] && break
		sleep 0.1
	done
	[ -n "$R" ] || fail "no master or replica of a0 (master '$M')"
}

# other_row: SEEN_ROW, a row that a master other than M serves.
other_row() {
	for i in $(seq 0 63); do
		SEEN_ROW=b$i
		[ "$(master_of "$TABLE" "$SEEN_ROW")" != "$M" ] && return
	done
	fail "every row b0 to b63 is on a0's master"
}

# takeover_during CMD...: CMD in the background on a cell of row a0
# of table $TABLE, whose master M has lost its replica R and lets none
# sync again, so that whatever M writes stays on M alone.  Once a
# commit record of a0 shows on M, or 3 s have gone by (a commit that
# waits for the replica before its commit point never gets there),
# SEEN is what a reader reads of row $SEEN_ROW; then R takes M's place
# (CLUSTER FAILOVER TAKEOVER), CMD ends, and RC is its status.
takeover_during() {
	local pid
	master_and_replica
	cut_replica "$M"
	"$@" > "$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	for _ in $(seq 30); do
		perc show a0 c | grep -q $'^c\twrite\t' && break
		sleep 0.1
	done
	SEEN=$(PERC_LOCK_TIMEOUT=1 perc get "$SEEN_ROW" c 2> /dev/null) || true
	rcli "$R" CLUSTER FAILOVER TAKEOVER > /dev/null
	rcli "$M" ACL SETUSER default +@all > /dev/null
	RC=0
	wait "$pid" || RC=$?
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
}

@test "a replica cut off at a commit point: what a reader saw stays through its takeover, both cells or neither" {
	own_cluster
	TABLE=cut
	perc init --store "$URL/$TABLE" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=20
	master_and_replica
	other_row
	t=$(perc begin)
	perc set -t "$t" a0 c 1         # the primary: first in byte order
	perc set -t "$t" "$SEEN_ROW" c 1
	takeover_during perc commit -t "$t"
	read_after a0
	a=$VALUE
	read_after "$SEEN_ROW"
	b=$VALUE
	why="primary '$a', secondary '$b', a reader saw '$SEEN', commit exit $RC: $(cat "$BATS_TEST_TMPDIR/out")"
	[ "$a" = "$b" ] || fail "$why"
	[ -z "$SEEN" ] || [ "$SEEN" = "$b" ] || fail "$why"
	[ "$RC" -ne 0 ] || [ "$a" = 1 ] || fail "$why"
}

@test "a replica cut off at a one-cell commit point: what a reader saw stays through its takeover" {
	own_cluster
	TABLE=cut1
	SEEN_ROW=a0
	perc init --store "$URL/$TABLE" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=20
	takeover_during perc set a0 c 1
	read_after a0
	a=$VALUE
	why="a0 '$a', a reader saw '$SEEN', set exit $RC: $(cat "$BATS_TEST_TMPDIR/out")"
	[ -z "$SEEN" ] || [ "$SEEN" = "$a" ] || fail "$why"
	[ "$RC" -ne 0 ] || [ "$a" = 1 ] || fail "$why"
}

# commit_on_cut_master TXN: commit TXN, whose primary is on row a0 of
# master M, so that its commit point is on M alone: every lock is
# written and on a replica, then M's replica is cut off (cut_replica),
# then the commit point goes in on M, and the committer is killed
# (kill -9) while it waits for a replica that never confirms it.
commit_on_cut_master() {
	local pid
	PERC_FAILPOINT=after-prewrite:pause=60 perc commit -t "$1" \
	    > "$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	poll 200 grep -q nanosleep "/proc/$pid/wchan" ||
	    fail "the commit never paused after its prewrites"
	cut_replica "$M"
	kill -CONT "$pid"
	poll 100 eval 'perc show a0 c | grep -q $'"'"'^c\twrite\t'"'" ||
	    fail "no commit record of a0 on its master: $(cat "$BATS_TEST_TMPDIR/out")"
	kill -9 "$pid"
}

@test "a reader never rolls a transfer forward on a commit record that only a cut-off master holds" {
	own_cluster
	TABLE=fate
	perc init --store "$URL/$TABLE" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=20
	master_and_replica
	other_row
	perc set a0 c 5
	perc set "$SEEN_ROW" c 5
	t=$(perc begin)
	perc set -t "$t" a0 c 4         # the primary: first in byte order
	perc set -t "$t" "$SEEN_ROW" c 6
	commit_on_cut_master "$t"
	# A reader meets the secondary's lock, and finds the commit record
	# on M: it must not act on it, since only M has it.
	SEEN=$(PERC_LOCK_TIMEOUT=2 perc get "$SEEN_ROW" c 2> /dev/null) || true
	rcli "$R" CLUSTER FAILOVER TAKEOVER > /dev/null
	rcli "$M" ACL SETUSER default +@all > /dev/null
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
	read_after a0
	a=$VALUE
	read_after "$SEEN_ROW"
	b=$VALUE
	why="a0 '$a', $SEEN_ROW '$b', a reader saw '$SEEN'"
	[ $((a + b)) -eq 10 ] || fail "a transfer committed in part: $why"
	[ -z "$SEEN" ] || [ "$SEEN" = "$b" ] || fail "a reader saw a lost commit: $why"
}

@test "a read never returns a value that only a cut-off master holds, through get or scan" {
	own_cluster
	TABLE=seen
	perc init --store "$URL/$TABLE" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=2
	master_and_replica
	perc set a0 c old
	t=$(perc begin)
	perc set -t "$t" a0 c new
	commit_on_cut_master "$t"
	GOT=$(perc get a0 c 2> /dev/null) || true
	SCANNED=$(perc scan --prefix a0 2> /dev/null | cut -f 3) || true
	rcli "$R" CLUSTER FAILOVER TAKEOVER > /dev/null
	rcli "$M" ACL SETUSER default +@all > /dev/null
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
	read_after a0
	why="a0 is '$VALUE' after the takeover; get read '$GOT', scan '$SCANNED'"
	[ -z "$GOT" ] || [ "$GOT" = "$VALUE" ] || fail "a get read a lost commit: $why"
	[ -z "$SCANNED" ] || [ "$SCANNED" = "$VALUE" ] ||
	    fail "a scan read a lost commit: $why"
}

# replica_flagged M R: master M flags its replica R as failing.
replica_flagged() {
	rcli "$1" CLUSTER NODES |
	    awk -v p=":$2@" 'index($2, p) && $3 ~ /fail/ { found = 1 }
	        END { exit !found }'
}

@test "a master whose replica is failing, or was when the map was loaded, acknowledges no commit alone" {
	own_cluster
	TABLE=alone
	perc init --store "$URL/$TABLE" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=2
	master_and_replica
	perc set a0 c 0
	STOPPED=$(pgrep -f "^redis-server 127.0.0.1:$R ")
	kill -STOP "$STOPPED"
	poll 150 replica_flagged "$M" "$R" ||
	    fail "master $M never flagged its stopped replica $R"
	# A commit acknowledged on M alone is lost if R takes over, which
	# is what the majority does when M is the one cut off.
	run perc set a0 c 1
	[ "$status" -ne 0 ] || fail "a commit was acknowledged with its master's replica failing"
	# A shell that loads its map now, while R is failing...
	coproc SH { exec perc shell 2> "$BATS_TEST_TMPDIR/err"; }
	BG_PIDS+=("$SH_PID")
	ask "set a0 c 2"
	[ "$st" = err ] || fail "the shell's commit was acknowledged with the replica failing: $st $res"
	kill -CONT "$STOPPED"
	STOPPED=
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c"
	poll 100 eval "rcli $M INFO replication | grep -q 'state=online'" ||
	    fail "replica $R never came back online"
	# ... still waits for R once it is back: with R then cut off, its
	# commit must not be acknowledged on M alone.
	cut_replica "$M"
	ask "set a0 c 3"
	[ "$st" = err ] || fail "the shell acknowledged a commit its master's replica never had: $st $res"
	rcli "$M" ACL SETUSER default +@all > /dev/null
}

# ts_loop ID: perc ts until $STOP exists, each timestamp with the time
# it was printed appended to $LOG.ID.
ts_loop() {
	local t
	until [ -e "$STOP" ]; do
		t=$(perc ts) || { echo "ts $1: exit $?" >> "$FAIL"; return 1; }
		echo "$t $(date +%s%N)" >> "$LOG.$1"
	done
}

@test "timestamps never repeat or go back through a failover of the oracle's master" {
	own_cluster
	perc init --store "$URL/clock" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=30
	export LOG=$BATS_TEST_TMPDIR/log STOP=$BATS_TEST_TMPDIR/stop
	# The node whose master serves the oracle's key answers GET for
	# it rather than redirect.
	key='perc:{clock:oracle}:ts'
	perc ts > /dev/null
	victim=''
	while read -r n role port; do
		[ "$role" = master ] || continue
		rcli "$port" GET "$key" | grep -q MOVED || victim=$n
	done < <("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c")
	[ -n "$victim" ]
	export -f ts_loop
	timeout 300 bash -c "ts_loop 1" 3>&- & BG_PIDS+=($!); p1=$!
	timeout 300 bash -c "ts_loop 2" 3>&- & BG_PIDS+=($!); p2=$!
	for i in $(seq 600); do
		[ -s "$LOG.1" ] && [ -s "$LOG.2" ] && break
		sleep 0.1
	done
	killed=$(date +%s%N)
	"$CLUSTER" kill "$BATS_TEST_TMPDIR/c" "$victim"
	# Each loop goes on after the failover: 20 more timestamps each.
	after() { awk -v k="$killed" '$2 > k' "$1" | wc -l; }
	for i in $(seq 1200); do
		[ "$(after "$LOG.1")" -ge 20 ] && [ "$(after "$LOG.2")" -ge 20 ] && break
		sleep 0.1
	done
	touch "$STOP"
	wait "$p1" "$p2" || true
	run cat "$FAIL"
	assert_output ''
	[ "$(after "$LOG.1")" -ge 20 ] && [ "$(after "$LOG.2")" -ge 20 ]
	# No timestamp twice, and each loop's strictly increasing.
	run bash -c "cut -d ' ' -f 1 '$LOG.1' '$LOG.2' | sort -n | uniq -d"
	assert_output ''
	for l in "$LOG.1" "$LOG.2"; do
		run awk '$1 <= last { print "went back at " NR } { last = $1 }' "$l"
		assert_output ''
	done
}

# acl_user USER PASSWORD: on every node of this test's cluster, a user
# who may do everything, and the default user turned off, so that only
# a client that says AUTH gets in.
acl_user() {
	local n role port
	while read -r n role port; do
		rcli "$port" ACL SETUSER "$1" on ">$2" '~*' '&*' '+@all' > /dev/null
		rcli "$port" --user "$1" --pass "$2" --no-auth-warning \
		    ACL SETUSER default off > /dev/null
	done < <("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c")
}

@test "a URL with USER:PASSWORD@ authenticates with an ACL user, and no output, error or status shows the password" {
	URL=$("$CLUSTER" start "$BATS_TEST_TMPDIR/c" 3 0)
	pw='s3cr%25et@/,:x'                     # the password is s3cr%et@/,:x
	acl_user alice 's3cr%et@/,:x'
	hosts=${URL#redis://}
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=2
	out=$BATS_TEST_TMPDIR/out
	# Without a password, or with a wrong one, nothing gets in.
	run -4 --separate-stderr perc init --store "redis://$hosts/acl" "$PERC_DIR"
	run -4 --separate-stderr perc init --store "redis://alice:wrong@$hosts/acl" \
	    "$BATS_TEST_TMPDIR/d2"
	assert_error_line "*WRONGPASS*"
	[[ $stderr != *wrong* ]] || fail "the password is in the error: $stderr"
	{
		perc init --store "redis://alice:$pw@$hosts/acl" "$PERC_DIR"
		perc set a col v1
		t=$(perc begin)
		perc set -t "$t" b col v2
		perc commit -t "$t"
		perc get a col b col
		perc scan
		perc status
		perc status --transactions
		perc show a col
		perc -d "$BATS_TEST_TMPDIR/d2" init --store \
		    "redis://alice:$pw@$hosts/acl2" "$PERC_DIR" || true
		perc init --store "redis://alice:$pw@$hosts/acl" \
		    "$BATS_TEST_TMPDIR/d3"
		perc -d "$BATS_TEST_TMPDIR/d3" get a col
	} > "$out" 2>&1
	run cat "$out"
	assert_line 'v1'
	assert_line 'v2'
	assert_line "store	redis://alice@$hosts/acl"
	assert_line --partial 'already a data directory whose cells are in redis://alice@'
	refute_output --partial 's3cr'
	# The config holds it, for its owner alone.
	grep -q "s3cr%25et" "$PERC_DIR/config"
	[ "$(stat -c %a "$PERC_DIR/config")" = 600 ]
}

@test "a URL with :PASSWORD@ authenticates as the default user (requirepass); the port defaults to 6379" {
	lone_server
	rcli "$LONE_PORT" CONFIG SET requirepass 'pass word' > /dev/null
	export PERC_DIR=$BATS_TEST_TMPDIR/d PERC_LOCK_TIMEOUT=2
	run -0 --separate-stderr perc init --store \
	    "redis://:pass%20word@127.0.0.1:$LONE_PORT/rp" "$PERC_DIR"
	run -0 perc set a col v
	run -0 perc get a col
	assert_output v
	run -0 perc status
	assert_line "store	redis://127.0.0.1:$LONE_PORT/rp"
	refute_output --partial 'pass'
	# Left out, the port is Redis's own: nothing answers there in a test
	# but the message names it.
	run -4 --separate-stderr perc init --store "redis://127.0.0.2/rp" \
	    "$BATS_TEST_TMPDIR/d2"
	assert_error_line "*127.0.0.2:6379*"
}
