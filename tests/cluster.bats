#!/usr/bin/env bats
# tests/cluster.bats - tests/cluster: a loopback Redis Cluster for the
# Redis store's tests.  The tests that only look share one cluster,
# started once (setup_file); a test that kills or stops nodes starts its
# own in $BATS_TEST_TMPDIR/c.

load helpers

CLUSTER="$BATS_TEST_DIRNAME/cluster"

setup_file() {
	command -v redis-server > /dev/null || return 0
	"$CLUSTER" start "$BATS_FILE_TMPDIR/c" > "$BATS_FILE_TMPDIR/out"
}

teardown_file() {
	"$CLUSTER" stop "$BATS_FILE_TMPDIR/c"
}

setup() {
	command -v redis-server > /dev/null ||
		skip "redis-server is not installed (Debian: redis-server)"
	C=$BATS_FILE_TMPDIR/c
}

teardown() {
	local d
	kill_bg
	for d in "$BATS_TEST_TMPDIR"/c*; do
		"$CLUSTER" stop "$d"
	done
}

# rcli PORT ARGS...: redis-cli on node PORT, bounded.
rcli() {
	local p=$1
	shift
	timeout 10 redis-cli -h 127.0.0.1 -p "$p" "$@"
}

# ports DIR [ROLE]: the port of every node of DIR (with ROLE).
ports() {
	"$CLUSTER" nodes "$1" | awk -v r="${2:-}" 'r == "" || $2 == r { print $3 }'
}

# owner PORT KEY: host:port of the master that serves KEY, seen by PORT.
owner() {
	local slot
	slot=$(rcli "$1" cluster keyslot "$2")
	rcli "$1" cluster nodes | awk -v s="$slot" '$3 ~ /master/ {
		for (i = 9; i <= NF; i++) {
			if (split($i, b, "-") == 1) b[2] = b[1]
			if (s >= b[1] && s <= b[2]) { sub(/@.*/, "", $2); print $2 }
		}
	}'
}

# live PID: PID is a redis-server that has not exited (nor is a zombie).
live() {
	local stat
	stat=$(ps -o stat= -p "$1") || return 1
	[[ $stat != Z* ]] && [ "$(ps -o comm= -p "$1")" = redis-server ]
}

@test "start prints the seed URL, the masters, and keeps it in DIR/url" {
	url=$(cat "$BATS_FILE_TMPDIR/out")
	[[ $url =~ ^redis://127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+){2}$ ]]
	run -0 "$CLUSTER" url "$C"
	assert_output "$url"
	run -0 "$CLUSTER" masters "$C"
	assert_output "$(tr , '\n' <<< "${url#redis://}")"
}

@test "start makes 3 masters with 1 replica online each" {
	run -0 "$CLUSTER" nodes "$C"
	[ "${#lines[@]}" -eq 6 ]
	[ "$(ports "$C" master | wc -l)" -eq 3 ]
	[ "$(ports "$C" replica | wc -l)" -eq 3 ]
	for p in $(ports "$C" master); do
		run -0 rcli "$p" info replication
		assert_line --partial connected_slaves:1
		assert_line --regexp '^slave0:.*state=online'
	done
	for p in $(ports "$C" replica); do
		run -0 rcli "$p" info replication
		assert_line --partial master_link_status:up
	done
}

@test "every node is ok and sees all 16384 slots served" {
	for p in $(ports "$C"); do
		run -0 rcli "$p" cluster info
		assert_line --partial cluster_state:ok
		assert_line --partial cluster_slots_assigned:16384
		assert_line --partial cluster_slots_ok:16384
		assert_line --partial cluster_known_nodes:6
		assert_line --partial cluster_size:3
	done
}

@test "every node syncs each write to its AOF and never evicts" {
	for p in $(ports "$C"); do
		run -0 rcli "$p" config get appendonly
		assert_output $'appendonly\nyes'
		run -0 rcli "$p" config get appendfsync
		assert_output $'appendfsync\nalways'
		run -0 rcli "$p" config get maxmemory-policy
		assert_output $'maxmemory-policy\nnoeviction'
		run -0 rcli "$p" config get cluster-node-timeout
		assert_output $'cluster-node-timeout\n2000'
	done
}

@test "a key written on its master is read there, on its replica, and via MOVED" {
	p=$(ports "$C" master | head -n 1)
	m=$(owner "$p" greeting)
	[ -n "$m" ]
	# The replica has it once WAIT says one replica acknowledged it;
	# WAIT counts the writes of its own connection only, so both go
	# down one.
	run -0 rcli "${m##*:}" <<< $'SET greeting hello\nWAIT 1 5000'
	assert_output $'OK\n1'
	run -0 rcli "${m##*:}" get greeting
	assert_output hello
	r=$(rcli "${m##*:}" info replication | sed -n 's/^slave0:.*port=\([0-9]*\),.*/\1/p')
	run -0 rcli "$r" <<< $'READONLY\nGET greeting'
	assert_output $'OK\nhello'
	# Another master redirects to the right one.
	o=$(ports "$C" master | grep -vx "${m##*:}" | head -n 1)
	run rcli "$o" get greeting
	assert_output --partial "MOVED $(rcli "$p" cluster keyslot greeting) $m"
	run -0 rcli "$o" -c get greeting
	assert_output hello
}

@test "kill of a master, then wait-ok: its replica serves its slots" {
	d=$BATS_TEST_TMPDIR/c
	"$CLUSTER" start "$d" > /dev/null
	p=$(ports "$d" master | head -n 1)
	m=$(owner "$p" k)
	# One connection: WAIT counts the writes of its own connection only.
	run -0 rcli "${m##*:}" <<< $'SET k v\nWAIT 1 5000'
	assert_output $'OK\n1'
	r=$(rcli "${m##*:}" info replication | sed -n 's/^slave0:.*port=\([0-9]*\),.*/\1/p')
	n=$("$CLUSTER" nodes "$d" | awk -v p="${m##*:}" '$3 == p { print $1 }')
	run -0 "$CLUSTER" kill "$d" "$n"
	run -0 "$CLUSTER" wait-ok "$d" 30
	run -0 "$CLUSTER" nodes "$d"
	assert_line "$n down ${m##*:}"
	assert_line --regexp "^[0-9]+ master $r\$"
	o=$(ports "$d" master | head -n 1)
	[ "$(owner "$o" k)" = "127.0.0.1:$r" ]
	run -0 rcli "$r" get k
	assert_output v
	run -0 "$CLUSTER" masters "$d"
	assert_line "127.0.0.1:$r"
	refute_line "$m"
	# The old master comes back as a replica of the new one.
	run -0 "$CLUSTER" restart "$d" "$n"
	run -0 "$CLUSTER" wait-ok "$d" 30
	run -0 "$CLUSTER" nodes "$d"
	assert_line "$n replica ${m##*:}"
}

@test "stop leaves no node running, even one killed before; start brings it back" {
	d=$BATS_TEST_TMPDIR/c
	url=$("$CLUSTER" start "$d" 3 0)
	p=$(ports "$d" master | head -n 1)
	rcli "$p" -c set kept 1
	"$CLUSTER" kill "$d" 2
	pids=$(cat "$d"/node*/redis.pid)
	[ "$(wc -w <<< "$pids")" -eq 3 ]
	run -0 "$CLUSTER" stop "$d"
	for pid in $pids; do
		! live "$pid" || fail "redis-server $pid still runs"
	done
	run -0 "$CLUSTER" nodes "$d"
	[ "$(grep -c ' down ' <<< "$output")" -eq 3 ]
	run -0 "$CLUSTER" stop "$d"
	run -1 --separate-stderr "$CLUSTER" kill "$d" 1
	assert_error_line '*node 1 is not running*'
	# The same cluster, from its AOFs.
	run -0 "$CLUSTER" start "$d"
	assert_output "$url"
	run -0 rcli "$p" -c get kept
	assert_output 1
}

@test "two clusters started at once get their own ports" {
	for i in 1 2; do
		"$CLUSTER" start "$BATS_TEST_TMPDIR/c$i" 3 0 > "$BATS_TEST_TMPDIR/out$i" &
		BG_PIDS+=($!)
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	BG_PIDS=()
	[ "$(ports "$BATS_TEST_TMPDIR/c1" master | wc -l)" -eq 3 ]
	[ "$(ports "$BATS_TEST_TMPDIR/c2" master | wc -l)" -eq 3 ]
	run -1 grep -xFf <(ports "$BATS_TEST_TMPDIR/c1") <(ports "$BATS_TEST_TMPDIR/c2")
}

@test "start without redis-server says to install it, on one line" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	run -1 --separate-stderr env PATH="$BATS_TEST_TMPDIR/empty" \
	    /bin/bash "$CLUSTER" start "$BATS_TEST_TMPDIR/c"
	assert_error_line '*install*redis-server*'
	[ ! -e "$BATS_TEST_TMPDIR/c" ]
}

@test "apart: each node on an address of its own; cut makes the others fail it over, heal and stop undo the cut" {
	[ "$(id -u)" -eq 0 ] || skip "nftables needs root"
	command -v nft > /dev/null || skip "nft is not installed (Debian: nftables)"
	d=$BATS_TEST_TMPDIR/c
	CLUSTER_APART=1 "$CLUSTER" start "$d" > /dev/null
	run -0 "$CLUSTER" url "$d"
	[[ $output == redis://127.0.0.11:*,127.0.0.12:*,127.0.0.13:* ]] || fail "url: $output"
	table=$(cat "$d/nft")
	p1=$("$CLUSTER" nodes "$d" | awk '$1 == 1 { print $3 }')
	"$CLUSTER" cut "$d" 1
	nft list table ip "$table" > /dev/null
	# A client still reaches node 1; the others promote its replica.
	[ "$(timeout 5 redis-cli -h 127.0.0.11 -p "$p1" PING)" = PONG ]
	poll 300 eval '[ "$("$CLUSTER" nodes "$d" | grep -c " master ")" -eq 4 ]' ||
	    fail "node 1's replica never took over: $("$CLUSTER" nodes "$d")"
	poll 100 eval "timeout 5 redis-cli -h 127.0.0.11 -p $p1 CLUSTER INFO | grep -q cluster_state:fail" ||
	    fail "node 1, cut off, never saw the cluster fail"
	"$CLUSTER" heal "$d"
	! nft list table ip "$table" > /dev/null 2>&1
	"$CLUSTER" wait-whole "$d" 60
	[ "$("$CLUSTER" nodes "$d" | awk '$1 == 1 { print $2 }')" = replica ]
	"$CLUSTER" cut "$d" 2 5
	"$CLUSTER" stop "$d"
	! nft list table ip "$table" > /dev/null 2>&1
}
