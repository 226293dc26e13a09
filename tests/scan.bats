#!/usr/bin/env bats
# tests/scan.bats - perc scan: listing the visible cells

load helpers

setup() {
	perc_fresh_dir
}

@test "an empty table prints nothing" {
	run -0 --separate-stderr perc scan
	assert_output ''
	[ -z "$stderr" ]
	perc scan > "$BATS_TEST_TMPDIR/out"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "scan prints ROW<TAB>COLUMN<TAB>VALUE, one line per cell" {
	perc set alice balance 100
	perc set bob balance 50
	perc set alice email a@example.org
	perc scan > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'alice\tbalance\t100\nalice\temail\ta@example.org\nbob\tbalance\t50\n' \
	    "$BATS_TEST_TMPDIR/out"
}

@test "scan escapes tab, newline, backslash and bytes outside 0x20-0x7e" {
	printf 'x\ty\nz\\\x80\xff\x00\x1f\x7f ~' | perc set "$(printf 'r\\ow')" "$(printf 'c\tol')"
	perc scan > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'r\\\\ow\tc\\tol\tx\\ty\\nz\\\\\\x80\\xff\\x00\\x1f\\x7f ~\n' \
	    "$BATS_TEST_TMPDIR/out"
}

@test "scan escapes every byte value as the spec says" {
	all="$BATS_TEST_TMPDIR/all"
	want="$BATS_TEST_TMPDIR/want"
	: > "$all"
	printf 'r\tc\t' > "$want"
	for i in $(seq 0 255); do
		printf "\\$(printf %03o "$i")" >> "$all"
		if [ "$i" -eq 9 ]; then
			printf '\\t'
		elif [ "$i" -eq 10 ]; then
			printf '\\n'
		elif [ "$i" -eq 92 ]; then
			printf '\\\\'
		elif [ "$i" -lt 32 ] || [ "$i" -gt 126 ]; then
			printf '\\x%02x' "$i"
		else
			printf "\\$(printf %03o "$i")"
		fi >> "$want"
	done
	printf '\n' >> "$want"
	perc set r c < "$all"
	perc scan > "$BATS_TEST_TMPDIR/out"
	cmp "$want" "$BATS_TEST_TMPDIR/out"
}

@test "a row printed by scan can be passed back to get -e, whatever its bytes" {
	for i in 0 9 10 92 127 128 255; do
		row=$(printf "a\\$(printf %03o "$i")b")
		[ "$i" -eq 0 ] && continue   # no NUL in an argument; see below
		perc set "$row" "col$i" "v$i"
	done
	perc set -e 'a\x00b' col0 v0
	perc scan | cut -f 1,2 > "$BATS_TEST_TMPDIR/cells"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/cells")" -eq 7 ]
	n=0
	while IFS=$'\t' read -r row col; do
		v=$(perc get -e "$row" "$col")
		[ "$v" = "v${col#col}" ] || fail "get -e '$row' '$col' gave '$v'"
		n=$((n + 1))
	done < "$BATS_TEST_TMPDIR/cells"
	[ "$n" -eq 7 ]
}

@test "empty ROW, COLUMN and value each still take their field" {
	perc set '' '' ''
	perc set '' c v
	perc set r '' w
	perc scan > "$BATS_TEST_TMPDIR/out"
	assert_bytes '\t\t\n\tc\tv\nr\t\tw\n' "$BATS_TEST_TMPDIR/out"
}

@test "lines come in byte order of row, then column" {
	t=$(perc begin)
	for r in 'b' 'a' 'a\x00' 'a\x01' '\xff' '\x7f' '\x80' '' 'ab' 'A'; do
		for c in 'z' '\x00' '' 'y\xff' 'Z'; do
			perc set -e -t "$t" "$r" "$c" v
		done
	done
	perc commit -t "$t" > /dev/null
	perc scan | cut -f 1,2 > "$BATS_TEST_TMPDIR/got"
	printf '%s\n' '' A a 'a\x00' 'a\x01' ab b '\x7f' '\x80' '\xff' |
	while IFS= read -r r; do
		for c in '' '\x00' Z 'y\xff' z; do
			printf '%s\t%s\n' "$r" "$c"
		done
	done > "$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "a large value takes one line" {
	head -c 1048576 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	perc set r big < "$BATS_TEST_TMPDIR/big"
	perc set s c small
	[ "$(perc scan | wc -l)" -eq 2 ]
	run -0 perc scan --prefix s
	assert_output $'s\tc\tsmall'
}

@test "a scan holds the store only while it reads a batch, not while it prints" {
	head -c 1500000 /dev/zero | tr '\0' x > "$BATS_TEST_TMPDIR/big"
	for r in a b c d; do perc set "$r" c < "$BATS_TEST_TMPDIR/big"; done
	perc scan | { dd bs=65536 count=1 status=none > /dev/null
	    perc set z c written; cat > /dev/null; }
	run -0 perc get z c
	assert_output written
	[ "$(perc scan | wc -l)" -eq 5 ]
}

@test "--prefix lists only the rows that begin with P, taken as bytes" {
	for r in a ab abc abd b 'a\x' "$(printf 'ab\xff')" "$(printf 'ac')"; do
		perc set "$r" c v
	done
	run -0 perc scan --prefix ab
	assert_output "$(printf 'ab\tc\tv\nabc\tc\tv\nabd\tc\tv\nab\\xff\tc\tv')"
	run -0 perc scan --prefix abc
	assert_output $'abc\tc\tv'
	run -0 perc scan --prefix zz
	assert_output ''
	# Not escaped: 'a\x' is the three bytes a, backslash, x.
	run -0 perc scan --prefix 'a\x'
	assert_output $'a\\\\x\tc\tv'
	run -0 perc scan --prefix "$(printf 'ab\xff')"
	assert_output $'ab\\xff\tc\tv'
	[ "$(perc scan --prefix '' | wc -l)" -eq 8 ]
}

@test "--column lists only the cells of column C, exactly" {
	perc set r1 c 1
	perc set r1 cc 2
	perc set r2 c 3
	perc set r2 '' 4
	perc set r3 d 5
	run -0 perc scan --column c
	assert_output $'r1\tc\t1\nr2\tc\t3'
	run -0 perc scan --column ''
	assert_output $'r2\t\t4'
	run -0 perc scan --column nope
	assert_output ''
	run -0 perc scan --column c --prefix r2
	assert_output $'r2\tc\t3'
}

@test "scan skips deleted cells" {
	perc set a c 1
	perc set b c 2
	perc del a c
	run -0 perc scan
	assert_output $'b\tc\t2'
}

@test "scan --at: the snapshot at TS (PEERS 8)" {
	perc set a c 1
	perc set b c 1
	t1=$(perc ts)
	perc del a c
	perc set b c 2
	perc set d c 1
	t2=$(perc ts)
	# A transaction that starts before t3 and commits after it.
	t=$(perc begin)
	perc set -t "$t" e c 1
	perc set a c re-put
	t3=$(perc ts)
	perc commit -t "$t" > /dev/null
	run -0 perc scan --at "$t1"
	assert_output $'a\tc\t1\nb\tc\t1'
	run -0 perc scan --at "$t2"
	assert_output $'b\tc\t2\nd\tc\t1'
	run -0 perc scan --at "$t3"
	assert_output $'a\tc\tre-put\nb\tc\t2\nd\tc\t1'
	run -0 perc scan
	assert_output $'a\tc\tre-put\nb\tc\t2\nd\tc\t1\ne\tc\t1'
	run -0 perc scan --at "$t1" --prefix b --column c
	assert_output $'b\tc\t1'
}

@test "scan and get --at find a version past many newer ones" {
	perc set a c first-a
	perc set z c first-z
	for i in $(seq 30); do
		perc set m c "v$i"
		[ "$i" -ne 3 ] || t3=$(perc ts)
	done
	perc del z c
	run -0 perc scan --at "$t3"
	assert_output $'a\tc\tfirst-a\nm\tc\tv3\nz\tc\tfirst-z'
	run -0 perc get --at "$t3" m c
	assert_output v3
	run -0 perc scan
	assert_output $'a\tc\tfirst-a\nm\tc\tv30'
}

@test "scan lists each cell once, whatever page its many versions cross" {
	# The Redis store reads pages of a bucket's keys: a cell's versions
	# may fill a page alone, or run past the end of one with others.
	for i in $(seq 300); do
		printf 'row%03d\tc\tone\n' "$i"
	done | perc load > /dev/null
	for i in $(seq 150); do
		printf 'row150\tc\tv%d\nrow151\tc\tw%d\n' "$i" "$i"
	done | perc load --batch 2 > /dev/null
	t=$(perc ts)
	perc set row151 c last
	run -0 perc scan
	[ "${#lines[@]}" -eq 300 ] || fail "${#lines[@]} lines"
	assert_line --index 149 $'row150\tc\tv150'
	assert_line --index 150 $'row151\tc\tlast'
	[ "$(printf '%s\n' "${lines[@]}" | grep -c $'\tone$')" -eq 298 ]
	run -0 perc scan --at "$t" --prefix row15
	assert_output "$(printf 'row150\tc\tv150\nrow151\tc\tw150\n'
	    for i in 2 3 4 5 6 7 8 9; do printf 'row15%d\tc\tone\n' "$i"; done)"
}

@test "scan -t includes the transaction's buffered writes and hides its deletes" {
	perc set a c 1
	perc set b c 2
	perc set d c 4
	t=$(perc begin)
	perc set e c late      # committed after t started: not visible to t
	perc set -t "$t" c c 3
	perc set -t "$t" b c changed
	perc del -t "$t" d c
	perc set -t "$t" "$(printf 'a\tb')" c tab
	perc del -t "$t" nothing c
	run -0 perc scan -t "$t"
	assert_output $'a\tc\t1\na\\tb\tc\ttab\nb\tc\tchanged\nc\tc\t3'
	run -0 perc scan -t "$t" --prefix b
	assert_output $'b\tc\tchanged'
	run -0 perc scan -t "$t" --column c --prefix d
	assert_output ''
	# Others do not see them.
	run -0 perc scan
	assert_output $'a\tc\t1\nb\tc\t2\nd\tc\t4\ne\tc\tlate'
	perc commit -t "$t" > /dev/null
	run -0 perc scan
	assert_output $'a\tc\t1\na\\tb\tc\ttab\nb\tc\tchanged\nc\tc\t3\ne\tc\tlate'
}

@test "scan -t with a buffered write in another column of a listed row" {
	perc set r a 1
	perc set r c 3
	t=$(perc begin)
	perc set -t "$t" r b 2
	perc set -t "$t" r d 4
	run -0 perc scan -t "$t"
	assert_output $'r\ta\t1\nr\tb\t2\nr\tc\t3\nr\td\t4'
	run -0 perc scan -t "$t" --column b
	assert_output $'r\tb\t2'
}

@test "scan usage errors: exit 2, one line" {
	t=$(perc begin)
	for args in "extra" "-t $t --at 5" "--at x" "--at 0" "--bogus" "-e"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc scan $args
		assert_usage_error
	done
}

@test "scan -t with an unknown, finished or garbage handle exits 5" {
	for h in 999999 abc '' 12x; do
		run -5 --separate-stderr perc scan -t "$h"
		assert_error_line
		assert_output ''
	done
	t=$(perc begin)
	perc commit -t "$t" > /dev/null
	run -5 --separate-stderr perc scan -t "$t"
	assert_error_line
}

@test "scan outside a data directory exits 6 with one line" {
	assert_exit_6_outside scan
	assert_exit_6_outside scan --prefix a
}

@test "scan waits for a live lock below its snapshot, then exit 4" {
	perc set a col old-a
	perc set b col old-b
	perc set z col z
	t=$(perc begin)
	perc set -t "$t" a col new-a
	perc set -t "$t" b col new-b
	start_live_commit "$t" a col
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 perc scan
	assert_error_line
	assert_output ''
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr timeout 20 perc scan --prefix b
	assert_error_line
	# Cells away from the lock, and snapshots below it, need no wait.
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc scan --prefix z
	assert_output $'z\tcol\tz'
	PERC_LOCK_TIMEOUT=1 run -0 timeout 20 perc scan --at $((t - 1))
	assert_output $'a\tcol\told-a\nb\tcol\told-b\nz\tcol\tz'
	kill_live_commit
	# The owner is gone: the next scan cleans up and lists the old values.
	PERC_LOCK_TIMEOUT=2 run -0 timeout 20 perc scan
	assert_output $'a\tcol\told-a\nb\tcol\told-b\nz\tcol\tz'
}

@test "scan rolls forward the locks of a commit that passed its commit point" {
	stuck_commit after-commit-primary
	run -0 timeout 20 perc scan --column col
	assert_output $'a\tcol\tnew-a\nb\tcol\tnew-b\nc\tcol\tnew-c'
}

# load_dead FAILPOINT: a load of $DEAD cells r1..r$DEAD (value new)
# that stops dead at FAILPOINT, every lock of it left; its last ten
# cells hold the value old, committed before (late in byte order: the
# old reader walked again from the last cell it had listed).
load_dead() {
	seq $((DEAD - 9)) "$DEAD" | sed 's/^/r/; s/$/\tc\told/' | perc load > /dev/null
	seq "$DEAD" | sed 's/^/r/; s/$/\tc\tnew/' |
		PERC_FAILPOINT=$1 perc load > /dev/null 2>&1 || true
	[ "$(perc resolve-locks --dry-run --all | wc -l)" -ge $((DEAD - 1)) ]
}

# A reader cleans a dead transaction's locks in bulk, as resolve-locks
# does, asking its primary once.  One lock at a time, each followed by
# a walk from the start again, took 200 s here (LevelDB, 40,000 locks)
# and longer still on Redis (45 s for 5,000).  The bound is many times
# what the scan needs; the test is of what it prints.
@test "scan over the locks of a dead load of many cells: the cells as rolled back or forward, and no lock left" {
	local want=$BATS_TEST_TMPDIR/want
	DEAD=40000
	[ "$PERC_TEST_STORE" = leveldb ] || DEAD=20000
	load_dead after-prewrite
	run -0 --separate-stderr timeout 20 perc scan
	seq $((DEAD - 9)) "$DEAD" | sed 's/^/r/; s/$/\tc\told/' > "$want"
	assert_output "$(cat "$want")"
	[ -z "$stderr" ]
	run -0 perc resolve-locks --dry-run --all
	assert_output ''

	perc_fresh_dir forward
	load_dead after-commit-primary
	run -0 --separate-stderr timeout 20 perc scan
	seq "$DEAD" | sed 's/^/r/; s/$/\tc\tnew/' | LC_ALL=C sort > "$want"
	assert_output "$(cat "$want")"
	run -0 perc resolve-locks --dry-run --all
	assert_output ''
}

@test "scan waits for a busy store at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc_leveldb_only
	perc set r c v
	hold_flock "$PERC_DIR/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc scan
	assert_error_line
	assert_output ''
	release_flock
	run -0 perc scan
	assert_output $'r\tc\tv'
}

@test "scan -t on a damaged journal exits 7" {
	t=$(perc begin)
	perc set -t "$t" r c v
	printf 'torn' >> "$PERC_DIR/txn/$t"
	run -7 --separate-stderr perc scan -t "$t"
	assert_error_line
	assert_output ''
}

@test "scan --at a timestamp not yet handed out is exit 2, and --at 0 says why" {
	perc set k c v1
	newest=$(perc ts)
	run -2 --separate-stderr perc scan --at $((newest * 2))
	assert_usage_error
	assert_error_line "*not been handed out*"
	run -0 perc scan --at $((newest + 1))
	assert_output "$(printf 'k\tc\tv1')"
	perc set k c v2
	run -0 perc scan --at $((newest + 1))
	assert_output "$(printf 'k\tc\tv1')"
	run -2 --separate-stderr perc scan --at 0
	assert_usage_error
	assert_error_line "*--at takes a timestamp*'0'*"
}
