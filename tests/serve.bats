#!/usr/bin/env bats
# tests/serve.bats - a LevelDB data directory's store server (perc
# serve): how it starts, stops and fails, and what it promises

load helpers

setup_file() {
	# A peer that connects to a server's socket and speaks garbage, or
	# nothing: it exits 0 once the server has dropped it.
	cat > "$BATS_FILE_TMPDIR/peer.c" <<'C'
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct pollfd p;
	char junk[64], buf[256];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (argc != 3 || chdir(argv[1]) != 0)
		return 2;
	strcpy(a.sun_path, "serve.sock");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 3;
	if (strcmp(argv[2], "garbage") == 0) {
		memset(junk, 0xff, sizeof(junk));       /* a frame of 4 GiB */
		if (write(fd, junk, sizeof(junk)) != sizeof(junk))
			return 4;
	}
	p.fd = fd;
	p.events = POLLIN;
	/* dropped: the read ends; else still connected after 20 s */
	if (poll(&p, 1, 20000) == 1 && read(fd, buf, sizeof(buf)) <= 0)
		return 0;
	return 1;
}
C
	"${PERC_TEST_CC:-cc}" -o "$BATS_FILE_TMPDIR/peer" \
	    "$BATS_FILE_TMPDIR/peer.c"
}

setup() {
	[ "$PERC_TEST_STORE" = leveldb ] ||
		skip "the store server is the LevelDB store's"
	unset PERC_SERVE PERC_SERVE_IDLE
	perc_fresh_dir
}

teardown() {
	stop_servers
}

# The processes that serve $PERC_DIR: the ones holding its lock.
servers() {
	local p n=0
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2> /dev/null)" = "perc serve" ] || continue
		ls -l "$p/fd" 2> /dev/null | grep -q " $PERC_DIR/serve.lock$" &&
			n=$((n + 1))
	done
	echo "$n"
}

one_server() { [ "$(servers)" -eq 1 ]; }
# Has process $1 exited?  A server's parent is init, which may take its
# time to reap it: a zombie has exited.
gone() {
	local stat
	stat=$(cat "/proc/$1/stat" 2> /dev/null) || return 0
	[ "$(cut -d ' ' -f 1 <<< "${stat##*) }")" = Z ]
}
no_server() { ! perc serve --status > /dev/null 2>&1; }

@test "a command starts the server, which keeps none of its descriptors, and the next command uses it" {
	run -1 --separate-stderr perc serve --status
	assert_error_line "*no store server runs*"
	# $(...) ends when the command does: the server holds no pipe of it
	out=$(timeout 20 perc set a c 1 && echo done)
	[ "$out" = done ]
	pid=$(perc serve --status)
	[ "$pid" -gt 0 ]
	for fd in /proc/"$pid"/fd/*; do
		link=$(readlink "$fd")
		[[ $link != pipe:* && $link != /dev/pts/* ]] ||
			fail "the server holds $link"
	done
	# a session of its own, not the test's
	[ "$(ps -o sid= -p "$pid")" -ne "$(ps -o sid= -p $$)" ]
	run -0 perc get a c
	assert_output 1
	[ "$(perc serve --status)" = "$pid" ]
	run -0 perc status
	assert_line "server	$pid"
}

@test "many commands at once with no server running: exactly one server, every write there" {
	local pids=() i
	for i in $(seq 8); do
		perc set "k$i" c "v$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "a set exited $?"
	done
	poll 50 one_server || fail "$(servers) servers"
	for i in $(seq 8); do
		v=$(perc get "k$i" c) || fail "get k$i exited $?"
		[ "$v" = "v$i" ] || fail "k$i holds '$v'"
	done
}

@test "a server that a command started exits after PERC_SERVE_IDLE seconds with no process" {
	PERC_SERVE_IDLE=1 perc set a c 1
	pid=$(perc serve --status)
	poll 50 gone "$pid" || fail "still there after 5 s"
	run -0 perc get a c
	assert_output 1
}

@test "a server killed with kill -9 leaves a socket that the next server replaces" {
	perc set a c 1
	pid=$(perc serve --status)
	kill -9 "$pid"
	poll 50 gone "$pid"
	[ -S "$PERC_DIR/serve.sock" ]
	run -0 perc get a c
	assert_output 1
	run -0 perc serve --status
	[ "$output" != "$pid" ]
}

@test "a server exits within 2 s once its data directory is removed or renamed" {
	perc set a c 1
	pid=$(perc serve --status)
	mv "$PERC_DIR" "$PERC_DIR.moved"
	poll 20 gone "$pid" || fail "still serving a renamed directory"
	PERC_DIR=$PERC_DIR.moved
	perc set b c 2
	pid=$(perc serve --status)
	rm -rf "$PERC_DIR"
	poll 20 gone "$pid" || fail "still serving a removed directory"
}

@test "a server of another perc build is never used: the command has it stop, and starts its own" {
	# another build: this perc with its build's name changed
	other=$BATS_TEST_TMPDIR/other/perc
	mkdir "${other%/perc}"
	perl -0777 -pe 's/ built (\w{3} [ \d]\d \d{4})/ BUILT $1/' \
	    "$PERC_BUILD/perc" > "$other"
	chmod +x "$other"
	! cmp -s "$other" "$PERC_BUILD/perc" || fail "no build name to change"
	"$other" set a c 1
	old=$("$other" serve --status)
	run -0 perc get a c
	assert_output 1
	poll 20 gone "$old" || fail "the server of another build goes on"
	new=$(perc serve --status)
	[ "$new" != "$old" ]
	# and the other way round
	"$other" set b c 2
	[ "$("$other" serve --status)" != "$new" ]
	run -0 perc get b c
	assert_output 2
}

@test "a stopped server makes a command wait at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc set a c 1
	pid=$(perc serve --status)
	kill -STOP "$pid"
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr perc get a c
	assert_error_line "*store server*did not answer in time*"
	PERC_LOCK_TIMEOUT=1 run -4 --separate-stderr perc set a c 2
	kill -CONT "$pid"
	run -0 perc get a c
	[ "$output" = 1 ] || [ "$output" = 2 ]
}

@test "a peer that speaks garbage, or stays silent, is dropped without harm to the others" {
	perc set a c 1
	"$BATS_FILE_TMPDIR/peer" "$PERC_DIR" garbage &
	garbage=$!
	"$BATS_FILE_TMPDIR/peer" "$PERC_DIR" silent &
	silent=$!
	run -0 perc set b c 2
	run -0 perc get a c
	assert_output 1
	wait "$garbage" || fail "garbage: not dropped ($?)"
	wait "$silent" || fail "silence: not dropped ($?)"
	run -0 perc get b c
	assert_output 2
}

@test "a data directory on a path longer than a socket address can hold" {
	local d=$BATS_TEST_TMPDIR
	while [ ${#d} -lt 200 ]; do d=$d/a-rather-long-directory-name; done
	perc init "$d/db"
	PERC_DIR=$d/db
	run -0 perc set a c 1
	run -0 perc get a c
	assert_output 1
	run -0 perc serve --status
}

@test "PERC_SERVE=0 opens the store itself: a running server lets it go within a second" {
	perc set a c 1
	pid=$(perc serve --status)
	PERC_SERVE=0 PERC_LOCK_TIMEOUT=1 run -0 perc set b c 2
	PERC_SERVE=0 PERC_LOCK_TIMEOUT=1 run -0 perc get a c
	assert_output 1
	# and takes it back
	run -0 perc get b c
	assert_output 2
	[ "$(perc serve --status)" = "$pid" ]
}

@test "perc serve in the foreground: one at a time, --status, and SIGTERM or --stop end it" {
	run -1 --separate-stderr perc serve --status
	perc serve 3>&- &
	fg=$!
	poll 50 perc serve --status > /dev/null
	[ "$(perc serve --status)" = "$fg" ]
	run -1 --separate-stderr perc serve
	assert_error_line "*runs for*already: process $fg*"
	run -0 perc set a c 1
	kill -TERM "$fg"
	wait "$fg"
	no_server
	perc serve --idle 30 3>&- &
	fg=$!
	poll 50 perc serve --status > /dev/null
	run -0 perc serve --stop
	wait "$fg"
	no_server
	run -0 perc serve --stop        # none runs: nothing to do
	run -2 --separate-stderr perc serve --idle 0
	run -2 --separate-stderr perc serve --status --stop
}

@test "kill -9 of the server under concurrent writers loses no write that was acknowledged" {
	local w pids=() i
	writer() {
		local i
		for i in $(seq 40); do
			perc set "w$1-$i" c "$1.$i" 2> /dev/null &&
				echo "w$1-$i $1.$i"
		done > "$BATS_TEST_TMPDIR/acked.$1"
	}
	perc set start c 1
	for w in 1 2 3; do
		writer "$w" &
		pids+=($!)
	done
	# kill the server again and again while they write
	for i in $(seq 8); do
		sleep 0.3
		kill -9 "$(perc serve --status 2> /dev/null)" 2> /dev/null || true
	done
	for w in "${pids[@]}"; do wait "$w"; done
	n=$(cat "$BATS_TEST_TMPDIR"/acked.* | wc -l)
	[ "$n" -gt 60 ] || fail "only $n of 120 writes acknowledged"
	while read -r key value; do
		run -0 perc get "$key" c
		[ "$output" = "$value" ] || fail "$key: '$output', not '$value'"
	done < <(cat "$BATS_TEST_TMPDIR"/acked.*)
	run -0 perc resolve-locks
}
