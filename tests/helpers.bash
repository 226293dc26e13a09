# tests/helpers.bash - loaded by every tests/*.bats file
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

PERC_BUILD=${PERC_BUILD:-"$BATS_TEST_DIRNAME/.."}
PERC_SRC=${PERC_SRC:-"$BATS_TEST_DIRNAME/.."}
PATH="$PERC_BUILD:$PATH"

# The commands that exist; cli.bats walks them all.
COMMANDS="abort begin commit del gc get help init load log notify resolve-locks
	run-observer scan scan-notify serve set shell show status ts wait"
# The ones that need a data directory.
DATA_COMMANDS="abort begin commit del gc get load log notify resolve-locks scan
	scan-notify set shell show status ts wait"

# The store the suite runs on: leveldb (the default), or redis, where
# every fresh data directory keeps its cells in a table of its own on
# the cluster $PERC_TEST_REDIS_URL names (make check runs the suite on
# both).
PERC_TEST_STORE=${PERC_TEST_STORE:-leveldb}
# PERC_TEST_SERVE=0: the suite with every process opening the LevelDB
# store itself (PERC_SERVE=0), not through its server (make check runs
# it both ways).
[ "${PERC_TEST_SERVE:-}" != 0 ] || export PERC_SERVE=0

# poll N CMD...: run CMD every 0.1 s until it succeeds, at most N times.
poll() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# Is process $1 asleep in poll(2), as an idle runner waits for its
# wakeup, rather than napping between two looks (nanosleep)?  And each
# of the processes whose parent is $1 (run-observer --workers N).
asleep_in_poll() {
	[[ $(cat "/proc/$1/wchan" 2> /dev/null) == *poll* ]]
}

workers_asleep_in_poll() {
	local w n=0
	for w in $(ps -o pid= --ppid "$1"); do
		asleep_in_poll "$w" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$2" ]
}

# A table no other test uses, for data directory $1.
perc_test_table() {
	printf 't%s' "$(printf '%s' "$1" | cksum | tr -c '0-9\n' '-')" |
	    tr -d ' \n'
}

# A fresh, empty data directory (named $1, default "db") for this test.
perc_fresh_dir() {
	PERC_DIR="$BATS_TEST_TMPDIR/${1:-db}"
	export PERC_DIR PERC_LOCK_TIMEOUT=${PERC_TEST_LOCK_TIMEOUT:-2}
	unset PERC_FAILPOINT PERC_LOCK_TTL
	if [ "$PERC_TEST_STORE" = redis ]; then
		perc init --store "$PERC_TEST_REDIS_URL/$(perc_test_table \
		    "$PERC_DIR")" "$PERC_DIR"
	else
		perc init "$PERC_DIR"
	fi
}

# For a test of what only the LevelDB store in DIR has (its files, its
# file lock, a power cut under it): skipped on the other stores.
perc_leveldb_only() {
	[ "$PERC_TEST_STORE" = leveldb ] ||
		skip "tests the LevelDB store's own files"
	# Its files, its lock and its power cuts are a process's own only
	# when that process opens the store itself, not its server.
	export PERC_SERVE=0
}

# Compare a file byte for byte with what printf(1) makes of $1.
assert_bytes() {
	printf "$1" > "$BATS_TEST_TMPDIR/expect"
	cmp "$BATS_TEST_TMPDIR/expect" "$2"
}

# After `run --separate-stderr`: exactly one line on standard error, one
# that says something beyond "perc: ", and matching the glob $1 if given.
assert_error_line() {
	local msg
	if [ "${#stderr_lines[@]}" -ne 1 ]; then
		fail "expected one line on stderr, got ${#stderr_lines[@]}: '$stderr'"
	fi
	msg=${stderr_lines[0]#perc:}
	msg=${msg#"${msg%%[![:space:]]*}"}
	if [ "${#msg}" -lt 8 ] || [[ $msg != *[[:alpha:]]* ]]; then
		fail "the error line says nothing: '${stderr_lines[0]}'"
	fi
	if [ $# -gt 0 ] && [[ ${stderr_lines[0]} != $1 ]]; then
		fail "error line '${stderr_lines[0]}' does not match '$1'"
	fi
}

# After `run --separate-stderr`: a usage error, exit 2 checked by the
# caller; one line on stderr, nothing on stdout.
assert_usage_error() {
	assert_error_line
	assert_output ''
}

# The three kinds of directory that are not perc data directories, made
# under $BATS_TEST_TMPDIR: missing, empty and foreign (holds a file).
make_non_data_dirs() {
	rm -rf "$BATS_TEST_TMPDIR/missing"
	mkdir -p "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/foreign"
	echo precious > "$BATS_TEST_TMPDIR/foreign/notes.txt"
}

# Check that make_non_data_dirs' directories are as they were made.
assert_non_data_dirs_untouched() {
	[ ! -e "$BATS_TEST_TMPDIR/missing" ] ||
		fail "a command created $BATS_TEST_TMPDIR/missing"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/empty")" ] ||
		fail "a command wrote into an empty directory"
	[ "$(ls -A "$BATS_TEST_TMPDIR/foreign")" = notes.txt ] ||
		fail "a command wrote into a foreign directory"
}

# Run "perc ARGS..." against each non-data directory: exit 6, one line.
assert_exit_6_outside() {
	local d
	make_non_data_dirs
	for d in missing empty foreign; do
		PERC_DIR="$BATS_TEST_TMPDIR/$d" run -6 --separate-stderr perc "$@"
		assert_error_line '*not a perc data directory*'
		assert_output ''
	done
	assert_non_data_dirs_untouched
}

# Background jobs started by a test, killed by teardown, which stops
# the store servers its commands started too.
BG_PIDS=()

teardown() {
	kill_bg
	undo_read_only
}

kill_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do
		# One a test stopped goes on first.  Only that one: a SIGCONT
		# that reaches a process ending on the TERM can cancel the stop
		# that LeakSanitizer's exit-time check waits for, and hang
		# check-asan for good.
		continue_if_stopped "$p"
		kill "$p" 2>/dev/null || true
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	BG_PIDS=()
	stop_servers
}

# Send SIGCONT to process $1 if it is stopped, and only then (see kill_bg).
continue_if_stopped() {
	local st=
	{ read -r st < "/proc/$1/stat"; } 2>/dev/null || true
	st=${st##*) }
	[ "${st%% *}" != T ] || kill -CONT "$1" 2>/dev/null || true
}

# Stop the store server of each data directory under the test's
# directory, wherever the test moved it: nothing outlives a test.  One
# that the test stopped goes on first (see kill_bg), and one that does
# not end within PERC_LOCK_TIMEOUT is killed.
stop_servers() {
	local lock dir pid
	while IFS= read -r -d '' lock; do
		dir=${lock%/serve.lock}
		pid=$(perc -d "$dir" serve --status 2>/dev/null) ||
			continue
		continue_if_stopped "$pid"
		perc -d "$dir" serve --stop 2>/dev/null ||
			kill -9 "$pid" 2>/dev/null || true
	done < <(find "$BATS_TEST_TMPDIR" -name serve.lock -print0 2>/dev/null)
}

# skip_under_valgrind WHY: skip a test that needs perc at full speed
# (make check-valgrind makes each perc run take about a second).
skip_under_valgrind() {
	[ -z "${PERC_TEST_VALGRIND:-}" ] || skip "under valgrind: $1"
}

# scaled SECONDS: SECONDS, ten times over under valgrind, for a test
# whose TTLs and pauses must outlast a few perc runs.
scaled() {
	if [ -n "${PERC_TEST_VALGRIND:-}" ]; then
		echo $(($1 * 10))
	else
		echo "$1"
	fi
}

# read_only_view DIR [VIEW]: make DIR read-only for perc, or skip the
# test.  Without VIEW, DIR itself turns read-only: by chmod for a user,
# by a read-only bind mount onto itself for root, whom permissions do
# not stop.  With VIEW (root only), DIR stays writable and VIEW becomes
# a read-only bind mount of it, the same files seen two ways.
# undo_read_only, which teardown calls, makes everything writable again.
RO_MOUNTS=()
RO_CHMODDED=
read_only_view() {
	local dir=$1 view=${2:-$1}
	if [ "$(id -u)" -ne 0 ]; then
		[ "$view" = "$dir" ] ||
			skip "a read-only view of a directory needs root"
		RO_CHMODDED=$dir
		chmod -R a-w "$dir"
		[ ! -w "$dir" ] || skip "chmod a-w leaves $dir writable"
		return 0
	fi
	mkdir -p "$view"
	mount --bind "$dir" "$view" 2>/dev/null ||
		skip "root ignores permissions, and bind mounts are not allowed"
	RO_MOUNTS+=("$view")
	mount -o remount,bind,ro "$view" 2>/dev/null ||
		skip "root ignores permissions, and a read-only remount failed"
	! touch "$view/probe" 2>/dev/null ||
		skip "the read-only mount is writable"
}

undo_read_only() {
	local m
	for m in "${RO_MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	RO_MOUNTS=()
	if [ -n "$RO_CHMODDED" ]; then
		chmod -R u+w "$RO_CHMODDED"
		RO_CHMODDED=
	fi
}

# Hold the flock(2) lock on file $1 from a background process, the way
# another perc process would, until release_flock.  Waits (bounded)
# until the lock is really held.
hold_flock() {
	local i
	( exec 9>>"$1"; flock 9; exec sleep 60 ) 3>&- &
	FLOCK_PID=$!
	BG_PIDS+=("$FLOCK_PID")
	for i in $(seq 400); do
		flock -n "$1" true || return 0
		sleep 0.05
	done
	fail "could not see $1 locked"
}

release_flock() {
	kill "$FLOCK_PID"
	wait "$FLOCK_PID" || true
}

# Wait (bounded) until a reader of cell ($1, $2) times out on a live
# lock, while process $3, its owner, still runs.  Twice in a row, so
# that a store busy for a moment is not taken for the lock.
wait_for_live_lock() {
	local row=$1 col=$2 pid=$3 i rc seen=0
	for i in $(seq 50); do
		rc=0
		PERC_LOCK_TIMEOUT=0.2 perc get "$row" "$col" > /dev/null 2>&1 ||
			rc=$?
		if [ "$rc" -eq 4 ]; then
			seen=$((seen + 1))
			[ "$seen" -ge 2 ] && return 0
			continue
		fi
		seen=0
		kill -0 "$pid" 2>/dev/null ||
			fail "the owner of the lock on ($row, $col) exited early"
		sleep 0.1
	done
	fail "no live lock on ($row, $col) after 50 tries"
}

# Start "perc commit -t $1" in the background, stopped with its owner
# alive at failpoint ${4:-after-prewrite} for ${5:-30} seconds, so that
# cell ($2, $3), one it writes, carries a live lock.  Returns once a
# reader of that cell times out (exit 4).  The committer's pid is in
# COMMIT_PID, its standard output in $BATS_TEST_TMPDIR/live-commit.out.
start_live_commit() {
	local t=$1 row=$2 col=$3 fp=${4:-after-prewrite}
	PERC_FAILPOINT="$fp:pause=${5:-30}" perc commit -t "$t" \
	    > "$BATS_TEST_TMPDIR/live-commit.out" 3>&- &
	COMMIT_PID=$!
	BG_PIDS+=("$COMMIT_PID")
	wait_for_live_lock "$row" "$col" "$COMMIT_PID"
}

# Kill the paused committer, as a crash would, and reap it.
kill_live_commit() {
	kill -9 "$COMMIT_PID"
	{ wait "$COMMIT_PID"; } 2> /dev/null || true
}

# A transaction that wrote a=new-a, b=new-b, c=new-c over a=old-a,
# b=old-b, c=old-c, stopped dead at failpoint $1 (exit 137).  The
# handle is in T.
stuck_commit() {
	perc set a col old-a
	perc set b col old-b
	perc set c col old-c
	T=$(perc begin)
	perc set -t "$T" a col new-a
	perc set -t "$T" b col new-b
	perc set -t "$T" c col new-c
	run -137 env PERC_FAILPOINT="$1" perc commit -t "$T"
	assert_output ''
}

# Print the values of a, b and c in column col, '-' for none, on one line.
abc() {
	local r v rc out=
	for r in a b c; do
		rc=0
		v=$(perc get "$r" col) || rc=$?
		case $rc in
		0) ;;
		1) v=- ;;
		*) v="exit$rc" ;;
		esac
		out="$out$v "
	done
	echo "${out% }"
}

# bucket ROW: the bucket of ROW's keys, its CRC-32 modulo 64, which
# gzip's trailer holds (little-endian).
bucket() {
	printf %s "$1" | gzip -c | tail -c 8 | od -An -N4 -tu1 |
	    awk '{ print ($1 + 256 * ($2 + 256 * ($3 + 256 * $4))) % 64 }'
}

# ask REQUEST: send one request to the shell coprocess SH, and read its
# answer's first word into st and the rest into res.
ask() {
	echo "$1" >&"${SH[1]}"
	read -r st res <&"${SH[0]}"
}

# read_after ROW: ROW's value once the cluster answers (a failover may
# be under way), in VALUE.
read_after() {
	for _ in $(seq 50); do
		run perc get "$1" c
		[ "$status" -le 1 ] && break
		sleep 0.2
	done
	[ "$status" -le 1 ] || fail "reading $1: exit $status: $output"
	VALUE=$output
}
