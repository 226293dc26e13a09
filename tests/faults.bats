#!/usr/bin/env bats
# tests/faults.bats - perc on a Redis Cluster whose nodes are cut from
# each other by nftables, paused and killed: the fault suite
# (tests/faults.sh) in short, and the partitions that once broke a
# promise, one by one.  Each test starts a cluster of its own, its nodes
# on addresses of their own (CLUSTER_APART=1), and stops it, and its nft
# table, however it ends.  Root and nftables only; make check runs this
# file alone, after both stores' passes, since its load would slow the
# tests that bound a wait.

load helpers

CLUSTER="$BATS_TEST_DIRNAME/cluster"

setup() {
	command -v redis-server > /dev/null ||
		skip "redis-server is not installed (Debian: redis-server)"
	[ "$(id -u)" -eq 0 ] || skip "nftables needs root"
	command -v nft > /dev/null || skip "nft is not installed (Debian: nftables)"
	unset PERC_DIR PERC_FAILPOINT PERC_LOCK_TTL
}

teardown() {
	kill_bg
	"$CLUSTER" stop "$BATS_TEST_TMPDIR/c"
	"$CLUSTER" stop "$BATS_TEST_TMPDIR/f/c"
}

@test "40 s of partitions, cut links, pauses and kills of masters: bank, appends, writes and timestamps hold" {
	skip_under_valgrind "a fault run needs perc at full speed"
	run "$BATS_TEST_DIRNAME/faults.sh" "$BATS_TEST_TMPDIR/f" 40
	[ "$status" -eq 0 ] || fail "faults.sh exited $status: $output"
	grep '^faults: ' <<< "$output" | sed 's/^/# /' >&3
}

# apart_cluster TABLE: a cluster of this test's own, its nodes apart,
# and a data directory on TABLE; PERC_DIR and URL set.
apart_cluster() {
	URL=$(CLUSTER_APART=1 "$CLUSTER" start "$BATS_TEST_TMPDIR/c")
	perc init --store "$URL/$1" "$BATS_TEST_TMPDIR/d"
	export PERC_DIR=$BATS_TEST_TMPDIR/d
}

# node_cli N ARGS...: redis-cli on node N of the test's cluster.
node_cli() {
	local n=$1 p
	shift
	p=$("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c" | awk -v n="$n" '$1 == n { print $3 }')
	timeout 10 redis-cli -h "127.0.0.$((10 + n))" -p "$p" "$@"
}

# master_node TABLE ROW: the node number of the master of ROW.
master_node() {
	local n
	for n in $("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c" | awk '$2 == "master" { print $1 }'); do
		[ -z "$(node_cli "$n" GET "perc:{$1:$(bucket "$2")}:probe")" ] &&
		    { echo "$n"; return; }
	done
}

# promoted_without M: another node sees master M failed, and 3 masters
# but M serving slots: the majority has failed M over.
promoted_without() {
	local n=$(($1 % 6 + 1))
	node_cli "$n" CLUSTER NODES | awk -v a="127.0.0.$((10 + $1)):" '
	    index($2, a) == 1 && $3 ~ /fail/ && $3 !~ /fail\?/ { gone = 1 }
	    $3 ~ /master/ && $3 !~ /fail/ && NF > 8 { m++ }
	    END { exit !(gone && m == 3) }'
}

@test "a master cut off from the cluster at a transfer's commit point: no reader rolls it forward there, and it commits whole or not at all" {
	apart_cluster fate
	export PERC_LOCK_TIMEOUT=20
	M=$(master_node fate a0)
	[ -n "$M" ] || fail "no master of a0"
	for i in $(seq 0 63); do
		SEEN_ROW=b$i
		[ "$(master_node fate "$SEEN_ROW")" != "$M" ] && break
	done
	perc set a0 c 5
	perc set "$SEEN_ROW" c 5
	t=$(perc begin)
	perc set -t "$t" a0 c 4         # the primary: first in byte order
	perc set -t "$t" "$SEEN_ROW" c 6
	PERC_FAILPOINT=after-prewrite:pause=60 perc commit -t "$t" \
	    > "$BATS_TEST_TMPDIR/out" 2>&1 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	poll 200 grep -q nanosleep "/proc/$pid/wchan" ||
	    fail "the commit never paused after its prewrites"
	# Every lock is on a replica; now M's bus and replication go, while
	# M still answers clients, and the commit point goes in on M alone.
	"$CLUSTER" cut "$BATS_TEST_TMPDIR/c" "$M"
	kill -CONT "$pid"
	poll 100 eval 'perc show a0 c | grep -q $'"'"'^c\twrite\t'"'" ||
	    fail "no commit record of a0 on its master: $(cat "$BATS_TEST_TMPDIR/out")"
	# A reader meets the secondary's lock, on a master of the majority,
	# and the commit record on M: it must not act on what M alone has.
	SEEN=$(PERC_LOCK_TIMEOUT=2 perc get "$SEEN_ROW" c 2> /dev/null) || true
	poll 200 promoted_without "$M" || fail "the majority never failed master $M over"
	"$CLUSTER" heal "$BATS_TEST_TMPDIR/c"
	RC=0
	wait "$pid" || RC=$?
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c" 60
	read_after a0
	a=$VALUE
	read_after "$SEEN_ROW"
	b=$VALUE
	why="a0 '$a', $SEEN_ROW '$b', a reader saw '$SEEN', commit exit $RC: $(cat "$BATS_TEST_TMPDIR/out")"
	[ $((a + b)) -eq 10 ] || fail "a transfer committed in part: $why"
	[ -z "$SEEN" ] || [ "$SEEN" = "$b" ] || fail "a reader saw a lost commit: $why"
	[ "$RC" -ne 0 ] || [ "$a" = 4 ] || fail "an acknowledged commit was lost: $why"
}

@test "a master cut off from the cluster acknowledges no one-cell commit that its failover loses" {
	apart_cluster alone
	export PERC_LOCK_TIMEOUT=3
	perc set a0 c 0
	M=$(master_node alone a0)
	"$CLUSTER" cut "$BATS_TEST_TMPDIR/c" "$M"
	# Clients still reach M; until the majority fails it over, and after,
	# each commit there must wait for a replica that never hears of it.
	acked= sets=
	for k in 1 2 3; do
		run perc set a0 c "$k"
		[ "$status" -ne 0 ] || acked=$k
		sets+="set $k: exit $status $output; "
	done
	poll 200 promoted_without "$M" || fail "the majority never failed master $M over"
	"$CLUSTER" heal "$BATS_TEST_TMPDIR/c"
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c" 60
	read_after a0
	[ -z "$acked" ] || [ "$VALUE" = "$acked" ] ||
	    fail "set a0 c $acked was acknowledged, but a0 is '$VALUE' after the failover of master $M: $sets; a0 now: $(perc show a0 | tr '\t\n' ' ;'); nodes: $("$CLUSTER" nodes "$BATS_TEST_TMPDIR/c" | tr '\n' ';'); ts $(perc ts)"
}

@test "a shell that loaded its map while a master had no replica waits for the one that joins it later" {
	apart_cluster joined
	export PERC_LOCK_TIMEOUT=3
	M=$(master_node joined a0)
	R=$("$CLUSTER" replica "$BATS_TEST_TMPDIR/c" "$M")
	[ -n "$R" ] || fail "master $M of a0 has no replica"
	# M dies and R takes over, with no replica of its own: as designed,
	# it acknowledges alone until one joins it.
	"$CLUSTER" kill "$BATS_TEST_TMPDIR/c" "$M"
	"$CLUSTER" wait-ok "$BATS_TEST_TMPDIR/c" 60
	coproc SH { exec perc shell 2> "$BATS_TEST_TMPDIR/err"; }
	BG_PIDS+=("$SH_PID")
	ask "set a0 c 1"
	[ "$st" = ok ] || fail "a commit on the promoted master failed: $st $res"
	# M comes back as R's replica; then its link to R is cut, so that
	# what R acknowledges alone would be lost if M took over.
	"$CLUSTER" restart "$BATS_TEST_TMPDIR/c" "$M"
	"$CLUSTER" wait-whole "$BATS_TEST_TMPDIR/c" 60
	"$CLUSTER" cut "$BATS_TEST_TMPDIR/c" "$R" "$M"
	ask "set a0 c 2"
	[ "$st" = err ] || fail "the shell acknowledged a commit its master's new replica never had: $st $res"
}
