#!/usr/bin/env bats
# tests/durability.bats - the states a power cut or a full disk leaves
#
# A power cut keeps, of each file, what was synced plus any in-order
# prefix of the rest (the last write perhaps torn), and may undo a
# create, rename or unlink whose directory was not synced since.  These
# tests make such states deterministically, as LevelDB's own
# fault_injection_test drops unsynced data: by cutting files by hand at
# every byte that was not synced, by putting files back to what they
# held at their last sync, and with PERC_FAILPOINT=NAME:power-cut, which
# puts the store back to exactly what a cut at NAME would leave.  From
# every state the directory must open, keep every acknowledged commit,
# and hand out timestamps above every one printed.

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

# newest_log DIR: the path of the newest LevelDB log of data directory DIR.
newest_log() {
	ls "$1"/store/*.log | sort | tail -n 1
}

# two_steps CMD...: CMD with a failpoint that stops nothing, so that a
# commit takes Percolator's two steps, as a large one or an observer's
# does, and leaves its secondaries' records unsynced; a small commit
# otherwise takes one synced step.
two_steps() {
	PERC_FAILPOINT=after-commit-secondary:pause=0 "$@"
}

# a transaction writing x, y and z (column c) = 1, 2, 3, left open as $T
open_xyz() {
	T=$(perc begin)
	perc set -t "$T" x c 1 y c 2 z c 3
}

# ---------------------------------------------------------------------
# The store

@test "the log cut at every byte of its unsynced tail after a commit: it opens, nothing acknowledged is lost" {
	perc_leveldb_only
	perc set seed c 0
	open_xyz
	# The commit point is the last synced write: its end is where the
	# log stands when a commit dies right after it.  A copy tells; a
	# second copy, committed whole, shows the records are as long here.
	cp -a "$PERC_DIR" "$BATS_TEST_TMPDIR/probe"
	cp -a "$PERC_DIR" "$BATS_TEST_TMPDIR/whole"
	run -137 env PERC_DIR="$BATS_TEST_TMPDIR/probe" \
	    PERC_FAILPOINT=after-commit-primary perc commit -t "$T"
	synced=$(stat -c %s "$(newest_log "$BATS_TEST_TMPDIR/probe")")
	PERC_DIR="$BATS_TEST_TMPDIR/whole" two_steps perc commit -t "$T" \
	    > /dev/null
	two_steps perc commit -t "$T" > /dev/null
	log=$(newest_log "$PERC_DIR")
	full=$(stat -c %s "$log")
	[ "$(stat -c %s "$(newest_log "$BATS_TEST_TMPDIR/whole")")" -eq "$full" ]
	[ "$full" -gt "$synced" ] || fail "no unsynced tail: $synced of $full"
	[ -e "$PERC_DIR/store.clean" ]
	step=1
	[ -z "${PERC_TEST_VALGRIND:-}" ] || step=16
	for ((cut = synced; cut < full; cut += step)); do
		c=$BATS_TEST_TMPDIR/cut
		rm -rf "$c"
		cp -a "$PERC_DIR" "$c"
		truncate -s "$cut" "$c/store/${log##*/}"
		PERC_DIR=$c run -0 perc set q c "after $cut"
		PERC_DIR=$c run -0 perc scan
		assert_output "q	c	after $cut
seed	c	0
x	c	1
y	c	2
z	c	3"
		# And again, on the log the last command left.
		PERC_DIR=$c run -0 perc get q c
		assert_output "after $cut"
		PERC_DIR=$c run -0 perc resolve-locks
		assert_output ''
	done
}

@test "a one-step commit cut at every byte of its record: none of it, whole: all, and the store opens" {
	perc_leveldb_only
	perc set seed c 0
	open_xyz
	log=$(newest_log "$PERC_DIR")
	before=$(stat -c %s "$log")
	perc commit -t "$T" > /dev/null
	[ "$(newest_log "$PERC_DIR")" = "$log" ]
	full=$(stat -c %s "$log")
	[ "$full" -gt "$before" ]
	step=1
	[ -z "${PERC_TEST_VALGRIND:-}" ] || step=16
	for ((cut = before; cut <= full; cut += step)); do
		c=$BATS_TEST_TMPDIR/cut
		rm -rf "$c"
		cp -a "$PERC_DIR" "$c"
		truncate -s "$cut" "$c/store/${log##*/}"
		PERC_DIR=$c run -0 perc set q c "after $cut"
		want="q	c	after $cut
seed	c	0"
		[ "$cut" -lt "$full" ] || want="$want
x	c	1
y	c	2
z	c	3"
		PERC_DIR=$c run -0 perc scan --column c
		assert_output "$want"
		PERC_DIR=$c run -0 perc resolve-locks
		assert_output ''
	done
}

@test "a stale or damaged store.clean never lets a torn log be appended to" {
	perc_leveldb_only
	perc set seed c 0
	cp "$PERC_DIR/store.clean" "$BATS_TEST_TMPDIR/old.clean"
	open_xyz
	two_steps perc commit -t "$T" > /dev/null
	log=$(newest_log "$PERC_DIR")
	size=$(stat -c %s "$log")
	for marker in old empty garbage gone; do
		c=$BATS_TEST_TMPDIR/$marker
		cp -a "$PERC_DIR" "$c"
		truncate -s $((size - 20)) "$c/store/${log##*/}"
		case $marker in
		old) cp "$BATS_TEST_TMPDIR/old.clean" "$c/store.clean" ;;
		empty) : > "$c/store.clean" ;;
		garbage) head -c 40 /dev/urandom > "$c/store.clean" ;;
		gone) rm "$c/store.clean" ;;
		esac
		PERC_DIR=$c run -0 perc set q c v
		PERC_DIR=$c run -0 perc scan --column c
		assert_output "q	c	v
seed	c	0
x	c	1
y	c	2
z	c	3"
	done
}

# commit_across_logs FAILPOINT SIZE: a transaction of three SIZE-byte
# values, enough to fill LevelDB's 64 KiB memtable, so that its
# prewrites and its commit point go to different logs; its commit dies
# at FAILPOINT with everything unsynced lost.
commit_across_logs() {
	local v
	v=$(head -c "$2" /dev/zero | tr '\0' v)
	perc set x c old-x
	perc set y c old-y
	perc set z c old-z
	T=$(perc begin)
	perc set -t "$T" x c "x$v" y c "y$v" z c "z$v"
	run -137 env PERC_FAILPOINT="$1:power-cut" perc commit -t "$T"
	VALUE=$v
}

@test "prewrites and commit point in different logs, everything unsynced lost: the commit survives whole" {
	perc_leveldb_only
	for size in 22000 30000 40000; do
		for fp in after-commit-primary after-commit-secondary; do
			perc_fresh_dir "db-$fp-$size"
			commit_across_logs "$fp" "$size"
			# The memtable switched, and the synced commit point
			# kept the new log's directory entry.
			[ "$(ls "$PERC_DIR"/store/*.log | wc -l)" -eq 2 ] ||
				fail "not two logs: $(ls "$PERC_DIR/store")"
			run -0 perc get x c
			[ "$output" = "x$VALUE" ] || fail "x lost at $fp, $size"
			run -0 perc get y c
			[ "$output" = "y$VALUE" ] || fail "y lost at $fp, $size"
			run -0 perc get z c
			[ "$output" = "z$VALUE" ] || fail "z lost at $fp, $size"
			run -0 perc resolve-locks
			run -0 perc scan --column c
			[ "${#lines[@]}" -eq 3 ]
		done
	done
}

@test "a power cut after the prewrites: resolve-locks rolls the transaction back" {
	# The memtable switches before z: x and y in a log LevelDB let go,
	# z in a new one that the cut takes with its directory entry.
	commit_across_logs after-prewrite 40000
	run -0 perc resolve-locks
	assert_output --partial rolled-back
	run -0 perc scan --column c
	assert_output "x	c	old-x
y	c	old-y
z	c	old-z"
	run -0 perc resolve-locks
	assert_output ''
}

@test "a power cut at each failpoint of a small commit: all or nothing, and the directory goes on" {
	for fp in after-prewrite-primary after-prewrite after-commit-primary \
	    after-commit-secondary; do
		perc_fresh_dir "db-$fp"
		for r in x y z; do perc set "$r" c old; done
		open_xyz
		run -137 env PERC_FAILPOINT="$fp:power-cut" perc commit -t "$T"
		run -0 perc resolve-locks
		case $fp in
		after-prewrite*) want="old old old" ;;
		*) want="1 2 3" ;;
		esac
		run -0 sh -c 'echo $(perc get x c y c z c)'
		assert_output "$want"
		run -0 perc set w c after
		run -0 perc get w c
		assert_output after
	done
}

# ---------------------------------------------------------------------
# The files beside the store

@test "the oracle put back to its last synced content: timestamps stay above every one printed" {
	perc_leveldb_only
	max=0
	for i in $(seq 20); do
		t=$(perc ts)
		[ "$t" -gt "$max" ] && max=$t
	done
	t=$(perc set a c v)
	[ "$t" -gt "$max" ] && max=$t
	max=$(perc ts -n 1000 | tail -n 1)
	# The hot state in oracle.lock is never synced: a cut leaves it
	# empty, or a torn record; the ceiling in oracle is synced ahead.
	for state in empty torn; do
		case $state in
		empty) : > "$PERC_DIR/oracle.lock" ;;
		torn) head -c 20 /dev/urandom > "$PERC_DIR/oracle.lock" ;;
		esac
		run -0 perc ts
		[ "$output" -gt "$max" ] || fail "$state: $output after $max"
		max=$output
		run -0 perc get a c
		assert_output v
	done
	# A rename of oracle.tmp undone: the old ceiling and a stray tmp.
	cp "$PERC_DIR/oracle" "$PERC_DIR/oracle.tmp"
	run -0 perc ts
	[ "$output" -gt "$max" ]
}

@test "the config put back: a stray config.tmp of an unfinished rewrite changes nothing" {
	perc set a c v
	echo "half a conf" > "$PERC_DIR/config.tmp"
	run -0 perc get a c
	assert_output v
	run -0 perc init --observe c "$PERC_DIR"
	run -0 perc set b c w
	run -0 perc scan-notify
	assert_output --partial b
}

@test "journals put back to their last synced content: empty, gone, or back after the commit" {
	for r in x y z; do perc set "$r" c old; done
	# Never synced: a cut can leave the journal of an open transaction
	# empty, or remove it.  Its locks go, its handle is refused.
	for state in empty gone; do
		open_xyz
		run -137 env PERC_FAILPOINT=after-prewrite perc commit -t "$T"
		case $state in
		empty) : > "$PERC_DIR/txn/$T" ;;
		gone) rm "$PERC_DIR/txn/$T" ;;
		esac
		run -0 perc resolve-locks
		assert_output --partial rolled-back
		case $state in
		empty)
			run -7 --separate-stderr perc commit -t "$T"
			assert_error_line "*damaged*perc abort -t $T*"
			run -0 perc abort -t "$T" ;;
		gone)
			run -5 --separate-stderr perc commit -t "$T"
			assert_error_line ;;
		esac
		run -0 sh -c 'echo $(perc get x c y c z c)'
		assert_output "old old old"
		[ ! -e "$PERC_DIR/txn/$T" ]
	done
	# The unlink of a committed transaction's journal undone: it is
	# not committed twice, nor undone.
	open_xyz
	cp "$PERC_DIR/txn/$T" "$BATS_TEST_TMPDIR/journal"
	ts=$(perc commit -t "$T")
	cp "$BATS_TEST_TMPDIR/journal" "$PERC_DIR/txn/$T"
	run -0 perc commit -t "$T"
	assert_output "$ts"
	run -0 sh -c 'echo $(perc get x c y c z c)'
	assert_output "1 2 3"
	run -0 perc resolve-locks
	assert_output ''
}

# ---------------------------------------------------------------------
# init

# syncs_after TRACE: every name made, renamed or removed in a directory
# is followed, later in TRACE (strace -y), by an fsync of that directory.
syncs_after() {
	awk '
	function parent(p) { sub("/[^/]*$", "", p); return p }
	function pending(dir) { if (dir != "") need[dir] = NR }
	/= -1 / { next }
	/^(mkdir|unlink|rmdir)\("/ { split($0, a, "\""); pending(parent(a[2])) }
	/^rename\("/ { split($0, a, "\""); pending(parent(a[2])); pending(parent(a[4])) }
	/^openat\(.*O_CREAT/ { split($0, a, "\""); pending(parent(a[2])) }
	/^write\([0-9]+</ { match($0, /<[^>]*>/); dirty[substr($0, RSTART + 1, RLENGTH - 2)] = NR }
	/^rename\("/ && (a[2] in dirty) { print "rename of " a[2] " before its fsync"; bad = 1 }
	/^f(data)?sync\([0-9]+</ { match($0, /<[^>]*>/); d = substr($0, RSTART + 1, RLENGTH - 2); delete need[d]; delete dirty[d] }
	END { for (d in need) { print "no fsync of " d " after line " need[d]; bad = 1 } exit bad }
	' "$1"
}

@test "init is durable: every file synced before its rename, every directory it changed before it returns" {
	command -v strace > /dev/null || skip "strace is not installed"
	[ -z "${PERC_TEST_VALGRIND:-}" ] || skip "strace under valgrind"
	cd "$BATS_TEST_TMPDIR"
	# LeakSanitizer cannot run under ptrace.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	run -0 strace -f -qq -y -o trace -e trace=mkdir,openat,write,rename,unlink,rmdir,fsync,fdatasync \
	    perc init "$BATS_TEST_TMPDIR/new/parent/db"
	sed -i -e 's/^[0-9]* *//' trace
	grep -q '^rename(.*config' trace || fail "no rename of config in the trace"
	run syncs_after trace
	assert_success
	# The checker catches a missing sync.
	grep -v 'fsync([0-9]*</[^>]*/new/parent>)' trace > trace.bad
	run syncs_after trace.bad
	assert_failure
	assert_output --partial "no fsync of $BATS_TEST_TMPDIR/new/parent"
	# And a file renamed into place before its own fsync.
	grep -v '^fsync([0-9]*<[^>]*/config.tmp>)' trace > trace.bad
	run syncs_after trace.bad
	assert_failure
	assert_output --partial "rename of $BATS_TEST_TMPDIR/new/parent/db/config.tmp before its fsync"
}

# ---------------------------------------------------------------------
# A full disk

# mount_small_fs SIZE: a tmpfs of SIZE at $MNT, or skip.
mount_small_fs() {
	MNT=$BATS_TEST_TMPDIR/small
	mkdir "$MNT"
	mount -t tmpfs -o "size=$1" tmpfs "$MNT" 2>/dev/null ||
		skip "cannot mount a tmpfs here (needs root)"
	MOUNTS+=("$MNT")
}

# fill_up: fill the file system at $MNT to the last byte.
fill_up() {
	cat /dev/zero >> "$MNT/filler" 2>/dev/null || true
}

@test "a full disk: a directory of format 1 is still read, and marked format 5 once there is room" {
	perc_leveldb_only
	mount_small_fs 2m
	export PERC_DIR=$MNT/db
	perc init "$PERC_DIR"
	perc set r c v
	sed -i 's/^format .*/format 1/' "$PERC_DIR/config"
	fill_up
	run -0 --separate-stderr perc get r c
	assert_output v
	grep -qx 'format 1' "$PERC_DIR/config"
	[ ! -e "$PERC_DIR/config.tmp" ]
	run -7 --separate-stderr perc set r c w
	assert_error_line "*no space left*"
	rm "$MNT/filler"
	run -0 perc set r c w
	grep -qx 'format 5' "$PERC_DIR/config"
	run -0 perc get r c
	assert_output w
}

@test "a full disk: a scan reads past a dead transaction's locks that it cannot clean" {
	mount_small_fs 4m
	export PERC_DIR=$MNT/db
	perc init "$PERC_DIR"
	# A dead load of 3,000 cells, its primary rolled back while there
	# was room: the scan settles the first secondary it meets (a small
	# write, which may still fit) and gathers the rest to clean, which
	# no longer fit.
	awk 'BEGIN { for (i = 0; i < 3000; i++)
	    printf "k%05d\tc\tvalue %d\n", i, i }' > "$BATS_TEST_TMPDIR/in"
	run -137 env PERC_FAILPOINT=after-prewrite perc load \
	    < "$BATS_TEST_TMPDIR/in"
	perc set z c old
	run -1 perc get k00000 c
	fill_up
	run -0 --separate-stderr perc scan
	assert_output "z	c	old"
	rm "$MNT/filler"
	run -0 perc resolve-locks
	run -0 perc resolve-locks --all --dry-run
	assert_output ''
}

@test "a full disk: reads work, a write fails with one line naming the file system, and all comes back once space is freed" {
	mount_small_fs 3m
	export PERC_DIR=$MNT/db
	perc init "$PERC_DIR"
	# Room that the test gives back at the end.
	head -c 1500000 /dev/zero > "$MNT/ballast"
	# A dead transaction's locks, to be read past without writing.
	stuck_commit after-prewrite
	head -c 60000 /dev/urandom > "$BATS_TEST_TMPDIR/v"
	n=0 rc=0
	while [ "$n" -lt 200 ]; do
		run --separate-stderr perc set "r$n" c < "$BATS_TEST_TMPDIR/v"
		[ "$status" -eq 0 ] || break
		n=$((n + 1))
	done
	[ "$status" -eq 7 ] || fail "200 sets of 60 kB fit in 3 MiB? ($status)"
	assert_error_line "*no space left on the file system at '$MNT' (tmpfs)*free some space*nothing committed was lost*"
	[[ $stderr != *backup* ]] || fail "a full disk is not damage: $stderr"
	fill_up
	# Reads: get, get --at, scan, show, scan-notify.
	for ((i = 0; i < n; i++)); do
		perc get "r$i" c | cmp - "$BATS_TEST_TMPDIR/v"
	done
	run -0 abc
	assert_output 'old-a old-b old-c'
	at=$(perc show r0 c | awk '$2 == "write" { print $3; exit }')
	perc get --at "$at" r0 c | cmp - "$BATS_TEST_TMPDIR/v"
	run -0 perc scan --column col
	assert_output "a	col	old-a
b	col	old-b
c	col	old-c"
	run -0 perc show b col
	run -0 perc scan-notify
	# A write that needs a new block fails: one line, exit 7, nothing
	# about backups.  (A small one may still fit in the store's last
	# page: then it must have worked.)  The reads above may have let
	# LevelDB delete a file it no longer needs, so fill what that freed.
	fill_up
	run -7 --separate-stderr perc begin
	# Its journal, or the oracle's ceiling (3 s of clock ahead).
	assert_error_line "*no space left on the file system at '$MNT'*"
	for args in "set w c v" "resolve-locks"; do
		fill_up
		run --separate-stderr perc $args
		[ "$status" -eq 0 ] && continue
		[ "$status" -eq 7 ] || fail "$args exited $status: $stderr"
		assert_error_line "*no space left*"
		[[ $stderr != *backup* ]] || fail "$args: $stderr"
	done
	rm "$MNT/filler" "$MNT/ballast"
	# Space again: every command works, nothing was lost.
	run -0 perc resolve-locks
	run -0 perc set w c v
	run -0 abc
	assert_output 'old-a old-b old-c'
	for ((i = 0; i < n; i++)); do
		perc get "r$i" c | cmp - "$BATS_TEST_TMPDIR/v"
	done
}
