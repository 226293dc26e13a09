#!/usr/bin/env bats
# tests/hostile.bats - hostile input, damaged files, full disks, signals
#
# SPEC: "Every error prints one line to standard error naming what went
# wrong and what to do, and loses nothing that was committed."  Each
# test here feeds perc something nasty (bytes, sizes, handles) or
# damages a file of the data directory, then checks the exit status of
# SPEC, the one line on stderr, and that what was committed before is
# still there, byte for byte.

load helpers

setup() {
	perc_fresh_dir
	MOUNTS=()
}

teardown() {
	local m
	kill_bg
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	undo_read_only
}

# esc FILE: the escaped form of FILE's bytes, as scan prints it (SPEC:
# tab \t, newline \n, backslash \\, other bytes outside 0x20-0x7e \xhh).
# Computed here independently of perc.
esc() {
	od -An -v -tu1 "$1" | awk '
	    { for (i = 1; i <= NF; i++) {
	        b = $i + 0
	        if (b == 9) printf "\\t"
	        else if (b == 10) printf "\\n"
	        else if (b == 92) printf "\\\\"
	        else if (b >= 32 && b <= 126) printf "%c", b
	        else printf "\\x%02x", b } }'
}

# allbytes FILE: every byte value 0x00-0xff once, in order.
allbytes() {
	local i
	for i in $(seq 0 255); do
		printf "\\$(printf %03o "$i")"
	done > "$1"
}

# damage KIND FILE: truncate it (mid-record), zero it (same length),
# fill it with random garbage (same length), or empty it.
damage() {
	local size
	size=$(stat -c %s "$2")
	case $1 in
	truncated) truncate -s $((size / 2 + 1)) "$2" ;;
	zeroed) head -c "$size" /dev/zero > "$2" ;;
	garbage) head -c "$size" /dev/urandom > "$2" ;;
	empty) : > "$2" ;;
	missing) rm -f "$2" ;;
	esac
}

# overwrite FILE [N]: 64 bytes of 'X' at 1/N (default 1/2) of FILE.
overwrite() {
	local size
	size=$(stat -c %s "$1")
	printf '%064d' 0 | tr 0 X |
	    dd of="$1" bs=1 seek=$((size / ${2:-2})) conv=notrunc 2>/dev/null
}

# The 64 MiB file, made once for the whole file.
big64() {
	BIG="$BATS_FILE_TMPDIR/big64"
	[ -s "$BIG" ] || head -c 67108864 /dev/urandom > "$BIG"
}

# fill N: commit N cells r00001..rN in column c, value vNNNNN-GEN, in
# one transaction written through one perc shell.
fill() {
	local t n=$1 gen=${2:-0} bad
	t=$(perc begin)
	bad=$(awk -v t="$t" -v n="$n" -v g="$gen" 'BEGIN {
	    for (i = 1; i <= n; i++)
	        printf "set -t %s r%05d c v%05d-%s\n", t, i, i, g }' |
	    perc shell | grep -vc '^ok$' || true)
	[ "$bad" -eq 0 ] || fail "perc shell refused $bad of the sets"
	perc commit -t "$t" > /dev/null
}

# expected_scan N GEN: what scan prints after fill N GEN.
expected_scan() {
	awk -v n="$1" -v g="${2:-0}" 'BEGIN {
	    for (i = 1; i <= n; i++) printf "r%05d\tc\tv%05d-%s\n", i, i, g }'
}

# ---------------------------------------------------------------------
# Bytes

@test "rows, columns and values of any bytes round-trip through set -e, get -e and scan" {
	d=$BATS_TEST_TMPDIR
	allbytes "$d/row"
	printf 'c\0\n\x80\xff\t\\ \x7f' > "$d/col"
	{ cat "$d/row" "$d/row"; printf '\n\n'; } > "$d/val"
	row=$(esc "$d/row")
	col=$(esc "$d/col")
	perc set -e "$row" "$col" < "$d/val"
	perc get -e "$row" "$col" > "$d/out"
	cmp "$d/val" "$d/out"
	# scan escapes every byte exactly as SPEC says.
	perc scan > "$d/scan"
	printf '%s\t%s\t%s\n' "$row" "$col" "$(esc "$d/val")" > "$d/expect"
	cmp "$d/expect" "$d/scan"
	# A ROW and COLUMN printed by scan can be passed back as they are.
	perc get -e "$(cut -f1 "$d/scan")" "$(cut -f2 "$d/scan")" > "$d/out2"
	cmp "$d/val" "$d/out2"
	run -0 perc show -e "$row" "$col"
	[[ $output == *"bytes=$(stat -c %s "$d/val") "* ]]
	# No other cell was written under a mangled key.
	[ "$(wc -l < "$d/scan")" -eq 1 ]
}

@test "any bytes round-trip inside a transaction: set -t -e, get -t -e, scan -t, commit" {
	d=$BATS_TEST_TMPDIR
	allbytes "$d/val"
	printf '\0' > "$d/nul"
	printf 'r\n\x80\0' > "$d/row"
	row=$(esc "$d/row")
	t=$(perc begin)
	perc set -t "$t" -e "$row" '\x00' < "$d/val"
	perc set -t "$t" -e '\x00' "$row" < "$d/nul"
	perc get -t "$t" -e "$row" '\x00' > "$d/out"
	cmp "$d/val" "$d/out"
	perc scan -t "$t" > "$d/scan"
	{
		printf '\\x00\t%s\t\\x00\n' "$row"
		printf '%s\t\\x00\t%s\n' "$row" "$(esc "$d/val")"
	} > "$d/expect"
	cmp "$d/expect" "$d/scan"
	perc commit -t "$t" > /dev/null
	perc get -e "$row" '\x00' > "$d/out"
	cmp "$d/val" "$d/out"
	perc get -e '\x00' "$row" > "$d/out"
	cmp "$d/nul" "$d/out"
	perc scan > "$d/scan2"
	cmp "$d/expect" "$d/scan2"
	perc del -e '\x00' "$row"
	run -1 perc get -e '\x00' "$row"
}

@test "raw arguments with newlines, tabs and bytes 0x80-0xff are kept exactly" {
	d=$BATS_TEST_TMPDIR
	perc set $'r\n\x80' $'c\t\xff' $'v\n\x80\xff\\\n'
	perc get $'r\n\x80' $'c\t\xff' > "$d/out"
	assert_bytes 'v\n\x80\xff\\\n' "$d/out"
	run -0 perc scan
	assert_output $'r\\n\\x80\tc\\t\\xff\tv\\n\\x80\\xff\\\\\\n'
	# The same cell, addressed in escaped form.
	perc get -e 'r\n\x80' 'c\t\xff' > "$d/out"
	assert_bytes 'v\n\x80\xff\\\n' "$d/out"
}

@test "an empty value is a value: get prints nothing and exits 0" {
	perc set r empty ''
	perc set r stdin < /dev/null
	run -0 --separate-stderr perc get r empty
	assert_output ''
	run -0 perc get r stdin
	assert_output ''
	run -1 perc get r missing
	run -0 perc scan
	assert_output $'r\tempty\t\nr\tstdin\t'
}

@test "a 64 MiB value round-trips through standard input" {
	[ "$PERC_TEST_STORE" = leveldb ] ||
		skip "a 64 MiB write takes a loopback Redis Cluster ~10 s, past PERC_LOCK_TIMEOUT=2"
	big64
	perc set r c < "$BIG"
	perc get r c > "$BATS_TEST_TMPDIR/out"
	cmp "$BIG" "$BATS_TEST_TMPDIR/out"
	rm -f "$BATS_TEST_TMPDIR/out"
	# The cell next to it is not disturbed.
	perc set r d small
	run -0 perc get r d
	assert_output small
	perc get r c | cmp - "$BIG"
}

@test "a 64 MiB value round-trips through a transaction: set -t from stdin, get -t, commit, get" {
	[ "$PERC_TEST_STORE" = leveldb ] ||
		skip "a 64 MiB write takes a loopback Redis Cluster ~10 s, past PERC_LOCK_TIMEOUT=2"
	big64
	perc set r other before
	t=$(perc begin)
	perc set -t "$t" r c < "$BIG"
	perc set -t "$t" r other after
	perc get -t "$t" r c > "$BATS_TEST_TMPDIR/out"
	cmp "$BIG" "$BATS_TEST_TMPDIR/out"
	rm -f "$BATS_TEST_TMPDIR/out"
	run -1 perc get r c
	run -0 perc commit -t "$t"
	[[ $output =~ ^[0-9]+$ ]]
	perc get r c > "$BATS_TEST_TMPDIR/out"
	cmp "$BIG" "$BATS_TEST_TMPDIR/out"
	run -0 perc get r other
	assert_output after
}

# ---------------------------------------------------------------------
# Damaged journals

# damaged_journal KIND: a transaction over committed cells, its journal
# damaged; every use of the handle exits 7 naming the journal, nothing
# committed changes, and abort discards the transaction.
damaged_journal() {
	perc set r c old
	perc set s c old
	t=$(perc begin)
	perc set -t "$t" r c new
	perc set -t "$t" s c new
	perc set -t "$t" u c new
	damage "$1" "$PERC_DIR/txn/$t"
	for args in "get -t $t r c" "commit -t $t" "scan -t $t" \
	    "set -t $t q c v" "del -t $t r c"; do
		run -7 --separate-stderr perc $args
		assert_error_line "*txn/$t*"
		assert_output ''
	done
	run -0 perc scan
	assert_output $'r\tc\told\ns\tc\told'
	run -0 --separate-stderr perc abort -t "$t"
	[ ! -e "$PERC_DIR/txn/$t" ]
	run -5 --separate-stderr perc commit -t "$t"
	assert_error_line
	run -0 perc scan
	assert_output $'r\tc\told\ns\tc\told'
}

@test "a truncated journal: get -t and commit exit 7 naming it; abort discards it" {
	damaged_journal truncated
}

@test "a zeroed journal (same length, all zero bytes): exit 7 naming it; abort discards it" {
	damaged_journal zeroed
}

@test "a journal full of garbage: exit 7 naming it; abort discards it" {
	damaged_journal garbage
}

@test "an emptied journal: exit 7 naming it; abort discards it" {
	damaged_journal empty
}

@test "a stuck commit whose journal is then zeroed stays all or nothing after abort" {
	for fp in after-prewrite after-commit-primary; do
		perc_fresh_dir "db-$fp"
		stuck_commit "$fp"
		damage zeroed "$PERC_DIR/txn/$T"
		run -7 --separate-stderr perc commit -t "$T"
		assert_error_line "*txn/$T*"
		run -0 --separate-stderr perc abort -t "$T"
		run -0 abc
		if [ "$fp" = after-prewrite ]; then
			assert_output 'old-a old-b old-c'
		else
			# Past the commit point: committed, so never lost.
			assert_output 'new-a new-b new-c'
		fi
		run -0 timeout 30 perc resolve-locks --all
		assert_output ''
	done
}

# ---------------------------------------------------------------------
# The oracle

# damaged_oracle KIND: ts and begin exit 7 naming the oracle file and
# print no timestamp at all; with the file restored, timestamps go on
# above every one handed out before.
damaged_oracle() {
	perc set r c v
	last=$(perc ts)
	cp "$PERC_DIR/oracle" "$BATS_TEST_TMPDIR/oracle.good"
	damage "$1" "$PERC_DIR/oracle"
	for args in "ts" "ts -n 3" "begin" "set r c w"; do
		run -7 --separate-stderr perc $args
		assert_error_line "*$PERC_DIR/oracle*"
		assert_output ''
	done
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
	# A read at a given timestamp needs no new one.
	run -0 perc get --at "$last" r c
	assert_output v
	cp "$BATS_TEST_TMPDIR/oracle.good" "$PERC_DIR/oracle"
	run -0 perc ts
	[ "$output" -gt "$last" ]
	run -0 perc get r c
	assert_output v
}

@test "a truncated oracle file: ts and begin exit 7 naming it, never a timestamp" {
	perc_leveldb_only
	damaged_oracle truncated
}

@test "a zeroed oracle file: ts and begin exit 7 naming it, never a timestamp" {
	perc_leveldb_only
	damaged_oracle zeroed
}

@test "an oracle file of garbage: ts and begin exit 7 naming it, never a timestamp" {
	perc_leveldb_only
	damaged_oracle garbage
}

@test "a missing oracle file: ts and begin exit 7 naming it, never a timestamp" {
	perc_leveldb_only
	damaged_oracle missing
}

@test "a damaged oracle.lock only loses a hint: timestamps keep increasing" {
	perc_leveldb_only
	for kind in truncated zeroed garbage empty; do
		perc_fresh_dir "db-$kind"
		perc set r c v
		perc ts -n 100 > /dev/null
		prev=$(perc ts)
		damage "$kind" "$PERC_DIR/oracle.lock"
		for i in 1 2 3; do
			run -0 --separate-stderr perc ts
			[ "$output" -gt "$prev" ] ||
				fail "$kind oracle.lock: ts gave $output after $prev"
			prev=$output
			run -0 perc begin
			[ "$output" -gt "$prev" ] ||
				fail "$kind oracle.lock: begin gave $output after $prev"
			prev=$output
		done
		perc set r c w
		run -0 perc get r c
		assert_output w
	done
}

# ---------------------------------------------------------------------
# The config

@test "a config truncated mid-line is damage: exit 7 naming the file" {
	perc init --observe obs "$PERC_DIR"
	perc set r c v
	cfg=$PERC_DIR/config
	cp "$cfg" "$BATS_TEST_TMPDIR/config.good"
	size=$(stat -c %s "$cfg")
	# Every cut that does not fall just after a newline.
	for ((n = 0; n < size; n++)); do
		head -c "$n" "$BATS_TEST_TMPDIR/config.good" > "$cfg"
		if [ "$n" -gt 0 ] &&
		    [ "$(tail -c 1 "$cfg" | od -An -c | tr -d ' ')" = '\n' ]; then
			continue
		fi
		run -7 --separate-stderr perc get r c
		assert_error_line "*$cfg*"
		assert_output ''
	done
	cp "$BATS_TEST_TMPDIR/config.good" "$cfg"
	run -0 perc get r c
	assert_output v
}

@test "a config of garbage or zero bytes is damage: exit 7 naming the file" {
	perc set r c v
	cfg=$PERC_DIR/config
	cp "$cfg" "$BATS_TEST_TMPDIR/config.good"
	for kind in garbage zeroed; do
		damage "$kind" "$cfg"
		for args in "get r c" "ts" "set r c w" "scan"; do
			run -7 --separate-stderr perc $args
			assert_error_line "*$cfg*"
			assert_output ''
		done
		# init does not paper over the damage either.
		run -7 --separate-stderr perc init "$PERC_DIR"
		assert_error_line "*$cfg*"
		cp "$BATS_TEST_TMPDIR/config.good" "$cfg"
	done
	run -0 perc get r c
	assert_output v
}

@test "a missing config: not a perc data directory, exit 6" {
	perc set r c v
	mv "$PERC_DIR/config" "$BATS_TEST_TMPDIR/config.good"
	for args in "get r c" "ts" "set r c w" "begin"; do
		run -6 --separate-stderr perc $args
		assert_error_line "*not a perc data directory*"
		assert_output ''
	done
	mv "$BATS_TEST_TMPDIR/config.good" "$PERC_DIR/config"
	run -0 perc get r c
	assert_output v
}

@test "init refuses a data directory that lost its config, and keeps its oracle" {
	perc_leveldb_only
	# SPEC: "a non-empty directory that is not a perc data directory is
	# refused".  Re-creating the config would also reset the oracle, so
	# that timestamps go backwards once the unsynced hint is gone.
	perc init --observe obs "$PERC_DIR"
	perc set r c v
	last=$(perc ts -n 10 | tail -n 1)
	cp "$PERC_DIR/oracle" "$BATS_TEST_TMPDIR/oracle.before"
	rm "$PERC_DIR/config"
	run -6 --separate-stderr perc init "$PERC_DIR"
	assert_error_line
	cmp "$BATS_TEST_TMPDIR/oracle.before" "$PERC_DIR/oracle"
	[ ! -e "$PERC_DIR/config" ]
}

@test "a config with format 99 is refused: exit 6 with a message about the format" {
	perc set r c v
	cfg=$PERC_DIR/config
	cp "$cfg" "$BATS_TEST_TMPDIR/config.good"
	for f in 99 6 0; do
		sed "s/^format .*/format $f/" "$BATS_TEST_TMPDIR/config.good" > "$cfg"
		grep -qx "format $f" "$cfg"
		for args in "get r c" "ts" "set r c w"; do
			run -6 --separate-stderr perc $args
			assert_error_line "*format*"
			assert_output ''
		done
		cp "$cfg" "$BATS_TEST_TMPDIR/config.newer"
		run -6 --separate-stderr perc init "$PERC_DIR"
		assert_error_line "*format*"
		cmp "$cfg" "$BATS_TEST_TMPDIR/config.newer"
	done
	cp "$BATS_TEST_TMPDIR/config.good" "$cfg"
	run -0 perc get r c
	assert_output v
}

# ---------------------------------------------------------------------
# The LevelDB store

# fill_store: 3000 cells in one transaction, enough for LevelDB to
# write table files.  EXPECT holds the scan it gives.
fill_store() {
	local t
	t=$(perc begin)
	awk 'BEGIN { for (i = 1; i <= 3000; i++)
	    printf "r%04d\nc\nvalue-%04d-%0100d\n", i, i, i }' |
	    tr '\n' '\0' | xargs -0 -n 300 perc set -t "$t"
	perc commit -t "$t" > /dev/null
	EXPECT=$BATS_TEST_TMPDIR/expect
	awk 'BEGIN { for (i = 1; i <= 3000; i++)
	    printf "r%04d\tc\tvalue-%04d-%0100d\n", i, i, i }' > "$EXPECT"
	perc scan | cmp - "$EXPECT"
}

@test "a damaged LevelDB table: a read that touches it exits 7 with one line naming it, never a wrong value" {
	perc_leveldb_only
	fill_store
	good=$BATS_TEST_TMPDIR/store.good
	cp -a "$PERC_DIR/store" "$good"
	tables=$(cd "$good" && ls -S -- *.ldb 2>/dev/null) ||
		fail "3000 cells wrote no table file: $(ls "$good")"
	hits=0
	for table in $tables; do
		rm -rf "$PERC_DIR/store"
		cp -a "$good" "$PERC_DIR/store"
		# A quarter in: a data block, not the filter or index at the end.
		overwrite "$PERC_DIR/store/$table" 4
		run --separate-stderr perc scan
		if [ "$status" -eq 0 ]; then
			# A table no longer in use, or a damaged filter: all right,
			# but only if every cell is still right.
			printf '%s\n' "${lines[@]}" > "$BATS_TEST_TMPDIR/scan"
			cmp -s "$EXPECT" "$BATS_TEST_TMPDIR/scan" ||
				fail "with $table damaged, scan exited 0 but printed ${#lines[@]} of 3000 cells: $(diff "$EXPECT" "$BATS_TEST_TMPDIR/scan" | grep -c '^<') missing, $(diff "$EXPECT" "$BATS_TEST_TMPDIR/scan" | grep -c '^>') wrong"
			continue
		fi
		[ "$status" -eq 7 ] || fail "scan with $table damaged exited $status: $stderr"
		assert_error_line
		[[ $stderr == *"store/$table"* ]] ||
			fail "scan with $table damaged does not name it: $stderr"
		hits=$((hits + 1))
		# What scan printed before it stopped is right, line for line.
		n=${#lines[@]}
		[ "$n" -lt 3000 ]
		if [ "$n" -gt 0 ]; then
			head -n "$n" "$EXPECT" | cmp - <(printf '%s\n' "${lines[@]}")
		fi
		# The cell it stopped at: get exits 7 too, unless it reads
		# the cell's head (perc(1) STORES), which may lie before the
		# damaged block: then it prints the right value.
		row=$(sed -n "$((n + 1))p" "$EXPECT" | cut -f1)
		k=$((10#${row#r}))
		run --separate-stderr perc get "$row" c
		case $status in
		0) assert_output "$(printf 'value-%04d-%0100d' "$k" "$k")" ;;
		7) assert_error_line; assert_output '' ;;
		*) fail "get $row exited $status: $stderr" ;;
		esac
		# Every other cell reads right, or exits 7; never a crash.
		for k in $(seq 1 97 3000); do
			row=$(printf 'r%04d' "$k")
			run --separate-stderr perc get "$row" c
			case $status in
			0) assert_output "$(printf 'value-%04d-%0100d' "$k" "$k")" ;;
			7) assert_error_line ;;
			*) fail "get $row exited $status: $stderr" ;;
			esac
		done
	done
	[ "$hits" -gt 0 ] || fail "no damaged table was ever read: $tables"
}

@test "a damaged LevelDB log, MANIFEST or CURRENT: every command exits 7 with one line naming the file" {
	perc_leveldb_only
	fill_store
	# Records in the log too, synced (a commit point), then damaged
	# where no power cut tears: the middle, not the tail.
	for i in $(seq 1 50); do perc set "s$i" c "$(printf '%0200d' "$i")"; done
	cp -a "$PERC_DIR/store" "$BATS_TEST_TMPDIR/store.good"
	for what in log manifest current; do
		rm -rf "$PERC_DIR/store"
		cp -a "$BATS_TEST_TMPDIR/store.good" "$PERC_DIR/store"
		case $what in
		log)
			file=$(ls "$PERC_DIR"/store/*.log | tail -n 1)
			overwrite "$file" ;;
		manifest)
			file=$(ls "$PERC_DIR"/store/MANIFEST-*)
			overwrite "$file" ;;
		current)
			file=$PERC_DIR/store/CURRENT
			printf 'MANIFEST-000001' > "$file" ;;
		esac
		for args in "get r0001 c" "scan" "set r0001 c x" "show r0001" \
		    "resolve-locks"; do
			run -7 --separate-stderr perc $args
			assert_error_line
			assert_output ''
			[[ $stderr == *"$file"* ]] ||
				fail "$what damaged: '$args' does not name $file: $stderr"
		done
	done
}

# ---------------------------------------------------------------------
# A read-only data directory

# dir_digest: a digest of every file under $PERC_DIR, names and bytes.
dir_digest() {
	(cd "$PERC_DIR" && find . -type f | LC_ALL=C sort | xargs sha256sum)
}

@test "a read-only data directory: reads work, writes fail with one clear line, nothing changes" {
	perc_leveldb_only
	perc init --observe doc "$PERC_DIR"
	for i in $(seq 200); do
		perc set "r$i" c "v$i"
	done
	perc set r c v
	perc set page doc text      # leaves a notification
	t=$(perc begin)
	perc set -t "$t" r c w
	last=$(perc ts)
	perc set r c newest         # committed after the last ts above
	before=$(dir_digest)
	read_only_view "$PERC_DIR"
	for args in "set r c x" "del r c" "ts" "begin" "set -t $t r d x" \
	    "commit -t $t" "abort -t $t" "init --observe other $PERC_DIR"; do
		run -7 --separate-stderr perc $args
		assert_error_line
		[[ $stderr == *"Read-only file system"* ||
		    $stderr == *"Permission denied"* ]] ||
			fail "perc $args: the error does not say why: $stderr"
		assert_output ''
	done
	# Reads see the newest commit, an older snapshot, a transaction's
	# own writes, and the same through scan, show and scan-notify.
	run -0 perc get r c
	assert_output newest
	run -0 perc get r c r7 c r200 c
	assert_output $'newest\nv7\nv200'
	run -0 perc get --at "$last" r c
	assert_output v
	run -0 perc get -t "$t" r c
	assert_output w
	run -0 perc scan --prefix page
	assert_output $'page\tdoc\ttext'
	run -0 perc scan --column c
	[ "${#lines[@]}" -eq 201 ]
	run -0 perc show r c
	assert_line --partial "value=newest"
	run -0 perc scan-notify
	assert_output $'page\tdoc'
	run -0 perc resolve-locks --dry-run
	# Nothing in the directory changed, not even LevelDB's own files.
	[ "$(dir_digest)" = "$before" ]
	undo_read_only
	run -0 perc ts
	[ "$output" -gt "$last" ]
	run -3 perc commit -t "$t"      # r c was written after it began
	run -0 perc get r c
	assert_output newest
	run -0 perc get r200 c
	assert_output v200
}

@test "a read-only data directory: reads see past a dead transaction's locks; they are cleaned once writable" {
	perc_leveldb_only
	for fp in after-prewrite after-commit-primary; do
		perc_fresh_dir "db-$fp"
		stuck_commit "$fp"
		read_only_view "$PERC_DIR"
		# The locks stay, and each read says what the primary decided.
		run -0 perc show b col
		assert_line --partial "lock"
		if [ "$fp" = after-prewrite ]; then want=old; else want=new; fi
		run -0 abc
		assert_output "$want-a $want-b $want-c"
		run -0 perc scan --column col
		assert_output "a	col	$want-a
b	col	$want-b
c	col	$want-c"
		run -0 perc show b col
		assert_line --partial "lock"
		undo_read_only
		run -0 perc resolve-locks
		run -0 abc
		assert_output "$want-a $want-b $want-c"
	done
}

@test "a read-only data directory: an expired lock of another host's owner fails a read clearly" {
	perc_leveldb_only
	unshare -u true 2>/dev/null || skip "playing another host needs unshare -u (root)"
	perc set a col old-a
	T=$(perc begin)
	perc set -t "$T" a col new-a
	run -137 unshare -u sh -c 'hostname elsewhere.example &&
	    PERC_LOCK_TTL=1 PERC_FAILPOINT=after-prewrite exec perc commit -t "$0"' "$T"
	for i in $(seq 100); do
		perc show a col | grep -q expired && break
		sleep 0.1
	done
	run -0 perc show a col
	assert_line --partial expired
	read_only_view "$PERC_DIR"
	run -7 --separate-stderr perc get a col
	assert_error_line "*past its TTL*resolve-locks*"
	assert_output ''
	undo_read_only
	run -0 perc get a col
	assert_output old-a
}

# ---------------------------------------------------------------------
# A full disk

# limited CMD...: run CMD with the file size limit LIMIT_KB, SIGXFSZ
# ignored, so that a write past the limit fails with EFBIG.
limited() {
	bash -c 'trap "" XFSZ; ulimit -f "$0"; exec "$@"' "$LIMIT_KB" "$@"
}

@test "set -t past the file size limit exits 7; the transaction keeps its earlier writes" {
	head -c 1200000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	perc set a col old
	t=$(perc begin)
	perc set -t "$t" a col new
	cp "$PERC_DIR/txn/$t" "$BATS_TEST_TMPDIR/journal.before"
	LIMIT_KB=512
	run -7 --separate-stderr limited perc set -t "$t" b col \
	    < "$BATS_TEST_TMPDIR/big"
	assert_error_line "*txn/$t*"
	# Not half applied: the journal is as it was.
	cmp "$BATS_TEST_TMPDIR/journal.before" "$PERC_DIR/txn/$t"
	run -1 perc get -t "$t" b col
	run -0 perc get -t "$t" a col
	assert_output new
	run -0 perc commit -t "$t"
	run -0 perc get a col
	assert_output new
	run -1 perc get b col
}

# full_commit: old values for a, b and c, 40 KB of padding in the
# store's log, then T writing a, b (900 KB) and c, committed under a
# file size limit that the journal fits in but the store's log does not.
# Below the 1 MB from which a one-step commit writes its change log
# entries apart (lib/leveldb/mvcc.c), which makes the store's log start
# anew, padding gone.
full_commit() {
	head -c 900000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	head -c 40000 /dev/urandom > "$BATS_TEST_TMPDIR/pad"
	perc set a col old
	perc set b col old
	perc set c col old
	perc set pad col < "$BATS_TEST_TMPDIR/pad"
	T=$(perc begin)
	perc set -t "$T" a col new
	perc set -t "$T" b col < "$BATS_TEST_TMPDIR/big"
	perc set -t "$T" c col new
	LIMIT_KB=$((($(stat -c %s "$PERC_DIR/txn/$T") + 8192) / 1024))
	run -7 --separate-stderr limited perc commit -t "$T"
	assert_error_line
	assert_output ''
}

@test "commit past the file size limit exits 7, all or nothing; what was committed stays" {
	perc_leveldb_only
	full_commit
	run -0 timeout 30 perc resolve-locks
	run -0 abc
	assert_output 'old old old'
	perc get pad col | cmp - "$BATS_TEST_TMPDIR/pad"
	run -0 perc abort -t "$T"
	run -0 abc
	assert_output 'old old old'
}

@test "after a commit failed on a full disk, later commits are not lost" {
	perc_leveldb_only
	full_commit
	run -0 perc set z col after
	run -0 perc get z col
	assert_output after
	run -0 perc abort -t "$T"
	run -0 perc get z col
	assert_output after
	run -0 timeout 30 perc resolve-locks --all
	assert_output ''
}

@test "a full file system (2 MiB tmpfs) during set -t and commit: exit 7, nothing lost" {
	mnt=$BATS_TEST_TMPDIR/tmpfs
	mkdir "$mnt"
	mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null ||
		skip "cannot mount a tmpfs here"
	MOUNTS+=("$mnt")
	export PERC_DIR=$mnt/db
	perc init "$PERC_DIR"
	perc set a col old
	perc set b col old
	perc set c col old
	head -c 3000000 /dev/urandom > "$BATS_TEST_TMPDIR/big3m"
	head -c 1200000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	t=$(perc begin)
	perc set -t "$t" a col new
	# A value bigger than the file system.
	run -7 --separate-stderr perc set -t "$t" b col < "$BATS_TEST_TMPDIR/big3m"
	assert_error_line "*txn/$t*"
	run -0 perc get -t "$t" b col
	assert_output old
	# A journal that fits, and a store that does not: the disk fills
	# up during the commit.
	perc set -t "$t" b col < "$BATS_TEST_TMPDIR/big"
	perc set -t "$t" c col new
	head -c 400000 /dev/zero > "$mnt/filler"
	run -7 --separate-stderr perc commit -t "$t"
	assert_error_line
	rm "$mnt/filler"
	run -0 timeout 30 perc resolve-locks
	run -0 abc
	assert_output 'old old old'
	run -0 perc abort -t "$t"
	# The store takes new commits again, and keeps them.
	run -0 perc set z col after
	run -0 perc get z col
	assert_output after
	run -0 abc
	assert_output 'old old old'
}

# ---------------------------------------------------------------------
# Signals

@test "perc scan | head -1 on a big table: the next scan is complete and correct" {
	fill 10000
	expected_scan 10000 > "$BATS_TEST_TMPDIR/expect"
	for i in 1 2 3; do
		perc scan | head -n 1 > "$BATS_TEST_TMPDIR/first"
		[ "$(cat "$BATS_TEST_TMPDIR/first")" = $'r00001\tc\tv00001-0' ]
		perc scan | head -c 100 > /dev/null
	done
	perc scan > "$BATS_TEST_TMPDIR/scan"
	cmp "$BATS_TEST_TMPDIR/expect" "$BATS_TEST_TMPDIR/scan"
	run -0 timeout 30 perc resolve-locks --all
	assert_output ''
	# A killed scan leaves its owner file (its snapshot was open to
	# gc), which holds nothing back: gc's look at the open ones sweeps
	# it.  Nothing else is left.
	perc gc --dry-run > /dev/null
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
}

@test "SIGINT and SIGTERM at random moments of a big commit: resolve-locks cleans up, all or nothing" {
	n=8000
	fill "$n" 0
	prev=0
	killed=0
	# The same delays every run; where they fall in the commit depends
	# on the machine, and every outcome is checked: all or nothing.
	RANDOM=4211
	# A background job of a script ignores SIGINT: undo that for perc.
	dflt=(env --default-signal=INT)
	"${dflt[@]}" true 2>/dev/null || dflt=()
	for k in 1 2 3 4 5; do
		t=$(perc begin)
		awk -v t="$t" -v n="$n" -v g="$k" 'BEGIN {
		    for (i = 1; i <= n; i++)
		        printf "set -t %s r%05d c v%05d-%s\n", t, i, i, g }' |
		    perc shell > /dev/null
		case $((k % 2)) in
		0) sig=INT ;;
		1) sig=TERM ;;
		esac
		"${dflt[@]}" perc commit -t "$t" \
		    > /dev/null 2>&1 3>&- &
		pid=$!
		BG_PIDS+=("$pid")
		sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
		kill -s "$sig" "$pid" 2>/dev/null || true
		rc=0
		wait "$pid" || rc=$?
		BG_PIDS=()
		case $rc in
		0) ;;
		130 | 143) killed=$((killed + 1)) ;;
		*) fail "commit $k exited $rc on SIG$sig" ;;
		esac
		# Up to all 8,000 cells locked (on Redis a commit locks 1,024
		# a round trip), each rolled back alone: on Redis some 3 ms
		# each, a WAIT for a replica among them.
		run -0 timeout 300 perc resolve-locks
		# Every cell has the old value, or every cell the new one.
		perc scan > "$BATS_TEST_TMPDIR/scan"
		if cmp -s "$BATS_TEST_TMPDIR/scan" <(expected_scan "$n" "$k"); then
			prev=$k
		else
			expected_scan "$n" "$prev" |
			    cmp - "$BATS_TEST_TMPDIR/scan" ||
				fail "commit $k, SIG$sig (exit $rc): neither all old nor all new"
		fi
		# Abort of what is left changes nothing more: 0 (discarded),
		# 5 (it had finished), or 3 (it had committed, and stays so).
		run --separate-stderr perc abort -t "$t"
		case $status in
		0 | 5) ;;
		3) assert_error_line '*commit*' ;;
		*) fail "abort after commit $k exited $status: $stderr" ;;
		esac
		expected_scan "$n" "$prev" | cmp - <(perc scan)
	done
	run -0 timeout 30 perc resolve-locks --all
	assert_output ''
	echo "# $killed of 5 commits were killed part way" >&3
}

# ---------------------------------------------------------------------
# Handles

@test "handles perc never issued exit 5, whatever they look like, and touch no file" {
	perc set r c v
	cp "$PERC_DIR/config" "$BATS_TEST_TMPDIR/config.before"
	if [ -e "$PERC_DIR/oracle" ]; then
		cp "$PERC_DIR/oracle" "$BATS_TEST_TMPDIR/oracle.before"
	else
		: > "$BATS_TEST_TMPDIR/oracle.before"     # not on a Redis store
	fi
	echo keep > "$BATS_TEST_TMPDIR/x"
	for h in '' 99999999999999999999999 18446744073709551615 \
	    18446744073709551616 -1 ../../x ../config ../oracle /etc/passwd \
	    ' 1' '1 ' 0 00 +1 0x1 1e3 $'1\n'; do
		for args in "get -t" "set -t" "del -t" "scan -t" "commit -t" \
		    "abort -t"; do
			case $args in
			get* | del*) extra=(r c) ;;
			set*) extra=(r c w) ;;
			*) extra=() ;;
			esac
			run -5 --separate-stderr perc $args "$h" "${extra[@]}"
			assert_error_line
			assert_output ''
		done
	done
	cmp "$BATS_TEST_TMPDIR/config.before" "$PERC_DIR/config"
	if [ -e "$PERC_DIR/oracle" ]; then
		cmp "$BATS_TEST_TMPDIR/oracle.before" "$PERC_DIR/oracle"
	fi
	[ "$(cat "$BATS_TEST_TMPDIR/x")" = keep ]
	[ -z "$(ls -A "$PERC_DIR/txn")" ]
	run -0 perc scan
	assert_output $'r\tc\tv'
}

@test "another directory's handle, and a timestamp that is not a handle, exit 5" {
	other=$BATS_TEST_TMPDIR/other
	perc init "$other"
	perc -d "$other" ts -n 1000 > /dev/null
	t_other=$(perc -d "$other" begin)
	perc -d "$other" set -t "$t_other" r c theirs
	ts=$(perc ts)
	for h in "$t_other" "$ts"; do
		run -5 --separate-stderr perc get -t "$h" r c
		assert_error_line
		run -5 --separate-stderr perc set -t "$h" r c mine
		assert_error_line
		run -5 --separate-stderr perc commit -t "$h"
		assert_error_line
		run -5 --separate-stderr perc abort -t "$h"
		assert_error_line
	done
	run -1 perc get r c
	# The other directory's transaction is untouched.
	run -0 perc -d "$other" get -t "$t_other" r c
	assert_output theirs
	run -0 perc -d "$other" commit -t "$t_other"
	run -0 perc -d "$other" get r c
	assert_output theirs
}

# ---------------------------------------------------------------------
# Sizes of rows and columns

@test "rows and columns longer than 64 KiB work, and so do empty ones" {
	d=$BATS_TEST_TMPDIR
	r=$(head -c 70000 /dev/zero | tr '\0' r)
	c=$(head -c 70000 /dev/zero | tr '\0' c)
	perc set "$r" "$c" long
	run -0 perc get "$r" "$c"
	assert_output long
	run -1 perc get "$r" "${c%c}"
	# 20000 NUL bytes and 50000 others, through -e.
	{ head -c 20000 /dev/zero; head -c 50000 /dev/zero | tr '\0' x; } > "$d/row"
	row=$(esc "$d/row")
	perc set -e "$row" "$c" nul-long
	run -0 perc get -e "$row" "$c"
	assert_output nul-long
	# Empty row and column.
	perc set '' '' empty
	run -0 perc get '' ''
	assert_output empty
	run -0 perc get -e '' ''
	assert_output empty
	perc scan > "$d/scan"
	{
		printf '\t\tempty\n'
		printf '%s\t%s\tnul-long\n' "$row" "$c"
		printf '%s\t%s\tlong\n' "$r" "$c"
	} > "$d/expect"
	cmp "$d/expect" "$d/scan"
	run -0 perc show "$r"
	[[ ${lines[0]} == "$c"$'\t'* ]]
	# In a transaction, and deleted again.
	t=$(perc begin)
	perc set -t "$t" '' "$c" x
	perc del -t "$t" '' ''
	run -0 perc get -t "$t" '' "$c"
	assert_output x
	run -1 perc get -t "$t" '' ''
	perc commit -t "$t" > /dev/null
	run -1 perc get '' ''
	run -0 perc get '' "$c"
	assert_output x
}
