#!/usr/bin/env bats
# tests/scan-notify.bats - perc scan-notify and init --observe: which
# writes make a cell dirty, and how the dirty cells are listed

load helpers

setup() {
	perc_fresh_dir
	perc init --observe col --observe c2 "$PERC_DIR"
	OUT="$BATS_TEST_TMPDIR/out"
}

@test "no write yet: scan-notify prints nothing and exits 0" {
	run -0 --separate-stderr perc scan-notify
	assert_output ''
	[ -z "$stderr" ]
}

@test "a put to an observed column notifies, one to an unobserved column does not" {
	perc set r other v
	run -0 perc scan-notify
	assert_output ''
	perc set r col v
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\n' "$OUT"
	perc show r col > "$OUT"
	grep -q "^col	notify	" "$OUT"
	run -0 perc show r other
	refute_output --partial notify
}

@test "a delete of an observed cell notifies too" {
	perc set r other v
	perc del r col
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\n' "$OUT"
}

@test "a write in a transaction notifies only when it commits" {
	t=$(perc begin)
	perc set -t "$t" r col v
	perc set -t "$t" s c2 w
	run -0 perc scan-notify
	assert_output ''
	perc abort -t "$t"
	run -0 perc scan-notify
	assert_output ''
	t=$(perc begin)
	perc set -t "$t" r col v
	perc set -t "$t" s c2 w
	perc commit -t "$t"
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\ns\tc2\n' "$OUT"
}

@test "several writes to one cell list it once" {
	perc set r col 1
	perc set r col 2
	perc del r col
	perc set r col 3
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\n' "$OUT"
}

@test "scan-notify lists the dirty cells in byte order of row, then column" {
	t=$(perc begin)
	perc set -t "$t" b col v
	perc set -t "$t" -e '\xff' col v
	perc set -t "$t" a col v
	perc set -t "$t" a x v
	perc set -t "$t" a c2 v
	perc set -t "$t" -e 'a\x00' col v
	perc set -t "$t" A col v
	perc set -t "$t" '' col v
	perc set -t "$t" a0 col v
	perc commit -t "$t"
	perc scan-notify > "$OUT"
	assert_bytes '\tcol\nA\tcol\na\tc2\na\tcol\na\\x00\tcol\na0\tcol\nb\tcol\n\\xff\tcol\n' "$OUT"
}

@test "--column lists only the dirty cells of that column" {
	perc set a col v
	perc set a c2 v
	perc set b c2 v
	perc set c col v
	perc scan-notify --column c2 > "$OUT"
	assert_bytes 'a\tc2\nb\tc2\n' "$OUT"
	perc scan-notify --column col > "$OUT"
	assert_bytes 'a\tcol\nc\tcol\n' "$OUT"
	run -0 perc scan-notify --column nope
	assert_output ''
}

@test "binary rows are escaped, and the printed row can be passed back with -e" {
	perc set -e 'r\t1\nx\\\x00\x80\xff' col value
	perc scan-notify > "$OUT"
	assert_bytes 'r\\t1\\nx\\\\\\x00\\x80\\xff\tcol\n' "$OUT"
	row=$(cut -f1 "$OUT")
	run -0 perc get -e "$row" col
	assert_output value
}

@test "an observed column name with a tab or a backslash is escaped" {
	perc init --observe "$(printf 'c\tx\\')" "$PERC_DIR"
	perc set r "$(printf 'c\tx\\')" v
	perc scan-notify > "$OUT"
	assert_bytes 'r\tc\\tx\\\\\n' "$OUT"
	perc scan-notify --column "$(printf 'c\tx\\')" > "$OUT"
	assert_bytes 'r\tc\\tx\\\\\n' "$OUT"
}

@test "--failures adds the failure count, 0 for a cell never failed" {
	perc set a col v
	perc set b col v
	run -1 timeout 30 perc run-observer --once --quiet col -- \
	    sh -c '[ "$PERC_ROW" != b ]'
	perc scan-notify --failures > "$OUT"
	assert_bytes 'b\tcol\t1\n' "$OUT"
	perc set c col v
	perc scan-notify --failures > "$OUT"
	assert_bytes 'b\tcol\t1\nc\tcol\t0\n' "$OUT"
	perc scan-notify > "$OUT"
	assert_bytes 'b\tcol\nc\tcol\n' "$OUT"
}

@test "init --observe on an existing directory keeps its data and observes from then on" {
	printf 'x\0y\n' | perc set r new
	perc set r col v
	perc set s other w
	perc scan > "$BATS_TEST_TMPDIR/before"
	perc scan-notify > "$BATS_TEST_TMPDIR/dirty-before"
	run -0 --separate-stderr perc init --observe new "$PERC_DIR"
	perc scan > "$BATS_TEST_TMPDIR/after"
	cmp "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	perc get r new > "$OUT"
	assert_bytes 'x\0y\n' "$OUT"
	# the old dirty cell is still there; the old write to new is not
	# made dirty after the fact
	perc scan-notify > "$OUT"
	cmp "$BATS_TEST_TMPDIR/dirty-before" "$OUT"
	assert_bytes 'r\tcol\n' "$OUT"
	perc set s new w2
	perc set t col w3
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\ns\tnew\nt\tcol\n' "$OUT"
}

@test "a column named by init --observe twice is observed once" {
	run -0 perc init --observe col --observe col "$PERC_DIR"
	perc set r col v
	perc scan-notify > "$OUT"
	assert_bytes 'r\tcol\n' "$OUT"
}

@test "init --observe creates a new directory with its observed columns" {
	dir="$BATS_TEST_TMPDIR/fresh"
	run -0 perc init --observe a --observe b "$dir"
	PERC_DIR=$dir perc set r a 1
	PERC_DIR=$dir perc set r b 2
	PERC_DIR=$dir perc set r c 3
	PERC_DIR=$dir perc scan-notify > "$OUT"
	assert_bytes 'r\ta\nr\tb\n' "$OUT"
}

@test "scan-notify usage errors exit 2 with one line, even outside a data directory" {
	PERC_DIR="$BATS_TEST_TMPDIR/missing"
	run -2 --separate-stderr perc scan-notify extra
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_output ''
	run -2 --separate-stderr perc scan-notify --column
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_output ''
	run -2 --separate-stderr perc scan-notify --bogus
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/missing" ]
}

@test "scan-notify outside a data directory exits 6 with one line" {
	PERC_DIR="$BATS_TEST_TMPDIR/missing"
	run -6 --separate-stderr perc scan-notify
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"not a perc data directory"* ]]
	assert_output ''
	[ ! -e "$BATS_TEST_TMPDIR/missing" ]
}
