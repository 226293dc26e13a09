#!/usr/bin/env bats
# tests/concurrency.bats - several perc processes on one data directory

load helpers

setup() {
	perc_fresh_dir
	# Contention, not a stuck lock, is what these tests wait for.
	export PERC_LOCK_TIMEOUT=20
	export FAIL="$BATS_TEST_TMPDIR/failures"
	: > "$FAIL"
}

# worker ID COUNT: COUNT transfers between the five accounts, each one
# retried with a new transaction on a conflict (exit 3).  Anything else
# that goes wrong is written to $FAIL.
worker() {
	local id=$1 count=$2 n=0 tries=0 f to amt t a b rc
	RANDOM=$((id * 7919 + 13))
	while [ "$n" -lt "$count" ]; do
		tries=$((tries + 1))
		if [ "$tries" -gt 5000 ]; then
			echo "worker $id: no progress after $tries tries" >> "$FAIL"
			return 1
		fi
		f=$((RANDOM % 5))
		to=$(((f + 1 + RANDOM % 4) % 5))
		amt=$((RANDOM % 10 + 1))
		t=$(perc begin) ||
			{ echo "worker $id: begin exit $?" >> "$FAIL"; return 1; }
		a=$(perc get -t "$t" "acct$f" bal) ||
			{ echo "worker $id: get exit $?" >> "$FAIL"; return 1; }
		b=$(perc get -t "$t" "acct$to" bal) ||
			{ echo "worker $id: get exit $?" >> "$FAIL"; return 1; }
		perc set -t "$t" "acct$f" bal $((a - amt)) ||
			{ echo "worker $id: set exit $?" >> "$FAIL"; return 1; }
		perc set -t "$t" "acct$to" bal $((b + amt)) ||
			{ echo "worker $id: set exit $?" >> "$FAIL"; return 1; }
		rc=0
		perc commit -t "$t" > /dev/null 2> "$BATS_TEST_TMPDIR/err.$id" ||
			rc=$?
		case $rc in
		0) n=$((n + 1)) ;;
		3) ;;
		*)
			echo "worker $id: commit exit $rc: $(cat "$BATS_TEST_TMPDIR/err.$id")" \
			    >> "$FAIL"
			return 1 ;;
		esac
	done
	echo "$id $n $tries" >> "$BATS_TEST_TMPDIR/workers"
}

# Take snapshots until $STOP exists, and at least four, alternately with
# one scan and with one timestamp plus five gets at it; write each total
# to $TOTALS.
reader() {
	local k=0 rc ts i v total snap="$BATS_TEST_TMPDIR/snap"
	while { [ ! -e "$STOP" ] || [ "$k" -lt 4 ]; } && [ "$k" -lt 10000 ]; do
		k=$((k + 1))
		if [ $((k % 2)) -eq 0 ]; then
			rc=0
			perc scan --column bal > "$snap" 2>> "$FAIL" || rc=$?
			if [ "$rc" -ne 0 ]; then
				echo "reader: scan exit $rc" >> "$FAIL"
				return 1
			fi
			if [ "$(wc -l < "$snap")" -ne 5 ]; then
				echo "reader: scan saw $(wc -l < "$snap") accounts" >> "$FAIL"
				return 1
			fi
			awk -F '\t' '{ s += $3 } END { print "scan", s }' "$snap" \
			    >> "$TOTALS"
		else
			ts=$(perc ts) ||
				{ echo "reader: ts exit $?" >> "$FAIL"; return 1; }
			total=0
			for i in 0 1 2 3 4; do
				v=$(perc get --at "$ts" "acct$i" bal) ||
					{ echo "reader: get exit $?" >> "$FAIL"; return 1; }
				total=$((total + v))
			done
			echo "get $total" >> "$TOTALS"
		fi
	done
}

# seed_accounts: five accounts holding 100 each, committed at once.
seed_accounts() {
	local t i
	t=$(perc begin)
	for i in 0 1 2 3 4; do
		perc set -t "$t" "acct$i" bal 100
	done
	perc commit -t "$t" > /dev/null
}

# run_transfers READER N COUNT: run the function READER, which takes
# snapshots into $TOTALS until $STOP exists, while N workers make COUNT
# transfers each; then check that nobody failed and every transfer
# was made.
run_transfers() {
	local reader=$1 n=$2 count=$3 rpid p w pids=()
	# Under valgrind, where a perc run takes about a second, fewer.
	if [ -n "${PERC_TEST_VALGRIND:-}" ]; then
		n=2
		count=5
	fi
	export TOTALS="$BATS_TEST_TMPDIR/totals" STOP="$BATS_TEST_TMPDIR/stop"
	export -f worker "$reader"
	: > "$TOTALS"
	timeout 600 bash -c "$reader" 3>&- &
	rpid=$!
	BG_PIDS+=("$rpid")
	for w in $(seq "$n"); do
		timeout 600 bash -c "worker $w $count" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || echo "a worker exited $?" >> "$FAIL"
	done
	touch "$STOP"
	wait "$rpid" || echo "the reader exited $?" >> "$FAIL"
	run cat "$FAIL"
	assert_output ''
	[ "$(wc -l < "$BATS_TEST_TMPDIR/workers")" -eq "$n" ]
	run awk '{ n += $2 } END { print n }' "$BATS_TEST_TMPDIR/workers"
	assert_output $((n * count))
}

@test "bank transfers: the total is conserved in every snapshot" {
	seed_accounts
	run_transfers reader 4 25
	# The final state, and every snapshot taken meanwhile, adds up.
	run -0 perc scan --column bal
	[ "${#lines[@]}" -eq 5 ]
	run awk -F '\t' '{ s += $3 } END { print s }' <<<"$output"
	assert_output 500
	[ "$(wc -l < "$TOTALS")" -ge 4 ]
	run awk '$2 != 500' "$TOTALS"
	assert_output ''
	grep -q '^scan ' "$TOTALS"
	grep -q '^get ' "$TOTALS"
	echo "# snapshots: $(wc -l < "$TOTALS"); workers: $(tr "\n" " " < "$BATS_TEST_TMPDIR/workers")" >&3
}

# Take snapshots through the read-only view $VIEW until $STOP exists, and
# at least four: scans and five-cell gets, each total written to $TOTALS.
view_reader() {
	local k=0 out
	while { [ ! -e "$STOP" ] || [ "$k" -lt 4 ]; } && [ "$k" -lt 10000 ]; do
		k=$((k + 1))
		if [ $((k % 2)) -eq 0 ]; then
			out=$(PERC_DIR=$VIEW perc scan --column bal) ||
				{ echo "view reader: scan exit $?" >> "$FAIL"; return 1; }
			awk -F '\t' '{ s += $3 } END { print "scan", s, NR }' \
			    <<<"$out" >> "$TOTALS"
		else
			out=$(PERC_DIR=$VIEW perc get acct0 bal acct1 bal acct2 bal \
			    acct3 bal acct4 bal) ||
				{ echo "view reader: get exit $?" >> "$FAIL"; return 1; }
			awk '{ s += $1 } END { print "get", s, NR }' <<<"$out" \
			    >> "$TOTALS"
		fi
	done
}

@test "a read-only view of the data directory reads whole snapshots while writers commit" {
	seed_accounts
	export VIEW="$BATS_TEST_TMPDIR/view"
	read_only_view "$PERC_DIR" "$VIEW"
	run_transfers view_reader 3 20
	# Every snapshot saw five accounts holding 500 between them.
	[ "$(wc -l < "$TOTALS")" -ge 4 ]
	run awk '$2 != 500 || $3 != 5' "$TOTALS"
	assert_output ''
	# The view sees the final state.
	run -0 env PERC_DIR="$VIEW" perc scan --column bal
	assert_output "$(perc scan --column bal)"
	echo "# view snapshots: $(wc -l < "$TOTALS")" >&3
}

@test "concurrent increments of one counter lose no update" {
	perc set counter n 0
	inc() {
		local k=0 t v rc tries=0
		while [ "$k" -lt 10 ]; do
			tries=$((tries + 1))
			[ "$tries" -le 2000 ] ||
				{ echo "inc $1: no progress" >> "$FAIL"; return 1; }
			t=$(perc begin) || { echo "inc: begin $?" >> "$FAIL"; return 1; }
			v=$(perc get -t "$t" counter n) ||
				{ echo "inc: get $?" >> "$FAIL"; return 1; }
			perc set -t "$t" counter n $((v + 1)) ||
				{ echo "inc: set $?" >> "$FAIL"; return 1; }
			rc=0
			perc commit -t "$t" > /dev/null 2>&1 || rc=$?
			case $rc in
			0) k=$((k + 1)) ;;
			3) ;;
			*) echo "inc: commit $rc" >> "$FAIL"; return 1 ;;
			esac
		done
	}
	export -f inc
	pids=()
	for w in 1 2 3 4; do
		timeout 600 bash -c "inc $w" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || echo "an incrementer exited $?" >> "$FAIL"
	done
	run cat "$FAIL"
	assert_output ''
	run -0 perc get counter n
	assert_output 40
}

@test "N concurrent ts -n 100 give N*100 distinct timestamps" {
	pids=()
	for i in $(seq 8); do
		timeout 60 perc ts -n 100 > "$BATS_TEST_TMPDIR/ts.$i" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	# (not "i": bats' run clobbers it)
	for k in $(seq 8); do
		f="$BATS_TEST_TMPDIR/ts.$k"
		[ "$(wc -l < "$f")" -eq 100 ]
		# Increasing and consecutive within each process.
		run awk 'NR > 1 && $1 != prev + 1 { print "gap at " NR } { prev = $1 }' "$f"
		assert_output ''
	done
	[ "$(cat "$BATS_TEST_TMPDIR"/ts.* | sort -u | wc -l)" -eq 800 ]
	last=$(cat "$BATS_TEST_TMPDIR"/ts.* | sort -n | tail -n 1)
	[ "$(perc ts)" -gt "$last" ]
}

@test "concurrent set -t on one transaction: every write lands" {
	t=$(perc begin)
	pids=()
	for i in $(seq 10); do
		timeout 60 perc set -t "$t" "row$i" c "v$i" 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	for k in $(seq 10); do
		run -0 perc get -t "$t" "row$k" c
		assert_output "v$k"
	done
	perc commit -t "$t" > /dev/null
	[ "$(perc scan | wc -l)" -eq 10 ]
	for k in $(seq 10); do
		run -0 perc get "row$k" c
		assert_output "v$k"
	done
}

@test "concurrent set -t of one cell: one of the writes wins, whole" {
	t=$(perc begin)
	head -c 200000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	pids=()
	for i in $(seq 10); do
		{ printf 'writer %s:' "$i"; cat "$BATS_TEST_TMPDIR/big"; } |
		    timeout 60 perc set -t "$t" r c 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	perc get -t "$t" r c > "$BATS_TEST_TMPDIR/got"
	tag=$(head -c 10 "$BATS_TEST_TMPDIR/got" |
	    LC_ALL=C grep -aoE '^writer [0-9]+:' | head -n 1)
	[ -n "$tag" ]
	{ printf '%s' "$tag"; cat "$BATS_TEST_TMPDIR/big"; } > "$BATS_TEST_TMPDIR/want"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	perc commit -t "$t" > /dev/null
	perc get r c > "$BATS_TEST_TMPDIR/got2"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got2"
}

@test "many processes reading and writing at once: none fails for a busy store" {
	perc set r c 0
	pids=()
	for i in $(seq 6); do
		(
			for k in $(seq 15); do
				perc set "w$i" c "$k" || echo "set $i: $?" >> "$FAIL"
				perc get r c > /dev/null || echo "get $i: $?" >> "$FAIL"
				perc scan > /dev/null || echo "scan $i: $?" >> "$FAIL"
			done
		) 3>&- &
		pids+=($!)
		BG_PIDS+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	run cat "$FAIL"
	assert_output ''
	[ "$(perc scan | wc -l)" -eq 7 ]
	run -0 perc get w3 c
	assert_output 15
}

# SPEC: a read with neither -t nor --at never gets exit 8 ("snapshot
# too old"); it reads a fresh snapshot, which a gc that keeps nothing
# must not pass while the read goes on.  The table is big enough that a
# scan spans several of the store's batches, each of which the old
# reader checked against a safe point gc had raised meanwhile.
@test "fresh reads beside a gc loop that keeps nothing never exit 8: scan, get, the shell's" {
	local stop=$BATS_TEST_TMPDIR/stop passes=$BATS_TEST_TMPDIR/passes
	local out=$BATS_TEST_TMPDIR/out pids=() p i
	seq 3000 | sed 's/^/r/; s/$/\tc\tv/' | perc load > /dev/null
	perc set a bal 100
	( while [ ! -e "$stop" ]; do
		perc gc --retain 0 > /dev/null 2>&1 && echo >> "$passes"
	done ) 3>&- &
	BG_PIDS+=($!)
	( while [ ! -e "$stop" ]; do
		perc set a bal 100 2> /dev/null
	done ) 3>&- &
	BG_PIDS+=($!)
	poll 100 test -s "$passes"
	( for i in $(seq 40); do
		perc scan > "$out.scan" 2> /dev/null ||
			echo "scan exit $?" >> "$FAIL"
		[ "$(wc -l < "$out.scan")" -eq 3001 ] ||
			echo "scan printed $(wc -l < "$out.scan") lines" >> "$FAIL"
	done ) 3>&- &
	pids+=($!)
	( for i in $(seq 40); do
		perc get a bal r1 c r3000 c > /dev/null 2>&1 ||
			echo "get of three cells exit $?" >> "$FAIL"
		perc get a bal > /dev/null 2>&1 || echo "get exit $?" >> "$FAIL"
	done ) 3>&- &
	pids+=($!)
	( for i in $(seq 40); do echo scan; echo get a bal; done |
		perc shell > "$out.shell" ) 3>&- &
	pids+=($!)
	BG_PIDS+=("${pids[@]}")
	for p in "${pids[@]}"; do wait "$p"; done
	touch "$stop"
	kill_bg
	grep '^err' "$out.shell" >> "$FAIL" || true
	[ "$(grep -c '^ok 3001$' "$out.shell")" -eq 40 ] ||
		echo "the shell's scans did not all end 'ok 3001'" >> "$FAIL"
	[ "$(wc -l < "$passes")" -ge 2 ] || echo "gc hardly ran" >> "$FAIL"
	run cat "$FAIL"
	assert_output ''
}
