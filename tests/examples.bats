#!/usr/bin/env bats
# tests/examples.bats - the runnable examples, the installed tree, a C
# program built against it with pkg-config, and bash completion

load helpers

# The compiler and flags make check was run with (check-asan passes its
# sanitizers), so hello.c links against the library as it was built.
TEST_CC=${PERC_TEST_CC:-cc}
TEST_CFLAGS=${PERC_TEST_CFLAGS:-}

setup_file() {
	# One staged install for the whole file.
	ROOT="$BATS_FILE_TMPDIR/root"
	export ROOT
	make -C "$PERC_SRC" install PREFIX=/usr DESTDIR="$ROOT" \
	    > "$BATS_FILE_TMPDIR/install.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/install.log" >&2; return 1; }
}

setup() {
	perc_fresh_dir
}

# ---------------------------------------------------------------------
# examples/*.sh

@test "examples/bank-transfer.sh: concurrent transfers with retries conserve the total" {
	local workers=4 each=15
	# Under valgrind, where a perc run takes about a second, fewer.
	if [ -n "${PERC_TEST_VALGRIND:-}" ]; then
		workers=2
		each=5
	fi
	dir=$BATS_TEST_TMPDIR/bank
	run -0 timeout 600 "$PERC_SRC/examples/bank-transfer.sh" "$dir" \
	    "$workers" "$each" 3>&-
	total=$((workers * each))
	assert_line --partial "# $total of $total transfers committed"
	assert_line '# conserved'
	# The script's claim, checked from outside.
	run -0 perc -d "$dir" scan --column balance
	[ "${#lines[@]}" -eq 5 ]
	run awk -F '\t' '{ s += $3 } END { print s }' <<<"$output"
	assert_output 500
	run -0 timeout 30 perc -d "$dir" resolve-locks --all
	assert_output ''
}

@test "examples/bank-transfer.sh fails when the total is not conserved" {
	# A transfer that lies: a perc whose set of acct0 adds 1.  The
	# script must notice and exit 1.
	dir=$BATS_TEST_TMPDIR/bank
	mkdir "$BATS_TEST_TMPDIR/bin"
	cat > "$BATS_TEST_TMPDIR/bin/perc" <<-EOF
	#!/bin/bash
	if [ "\$1" = set ] && [ "\$4" = acct0 ]; then
		set -- "\$1" "\$2" "\$3" "\$4" "\$5" \$((\$6 + 1))
	fi
	exec "$PERC_BUILD/perc" "\$@"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/perc"
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run -1 timeout 600 \
	    "$PERC_SRC/examples/bank-transfer.sh" "$dir" 2 5 3>&-
	assert_line '# NOT conserved, or a transfer failed'
}

@test "examples/stuck-lock.sh: a stuck transaction, shown, waited for and resolved" {
	dir=$BATS_TEST_TMPDIR/stuck
	run -0 timeout 600 "$PERC_SRC/examples/stuck-lock.sh" "$dir" 3>&-
	assert_line '# everything went as expected'
	refute_line --partial 'NOT OK'
	assert_line 'ok: a reader waits for the live owner, then exit 4'
	assert_line 'ok: resolve-locks rolled both locks back'
	run -0 perc -d "$dir" scan
	assert_output $'alice\tbalance\t100\nbob\tbalance\t100'
	# The rolled-back transaction is finished: no journal is left.
	[ -z "$(ls -A "$dir/txn")" ]
	run -0 perc -d "$dir" resolve-locks --all
	assert_output ''
}

@test "examples/stuck-lock.sh fails when resolve-locks does not clean up" {
	# A perc whose resolve-locks only pretends (--dry-run): the script
	# must see the locks left behind and exit 1.
	dir=$BATS_TEST_TMPDIR/stuck
	mkdir "$BATS_TEST_TMPDIR/bin"
	cat > "$BATS_TEST_TMPDIR/bin/perc" <<-EOF
	#!/bin/bash
	[ "\$1" = resolve-locks ] && set -- resolve-locks --dry-run
	exec "$PERC_BUILD/perc" "\$@"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/perc"
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run -1 timeout 600 \
	    "$PERC_SRC/examples/stuck-lock.sh" "$dir" 3>&-
	assert_line 'NOT OK: no lock is left'
	assert_line '# something did NOT go as expected'
}

# ---------------------------------------------------------------------
# The installed tree

@test "make install puts every file in place under DESTDIR" {
	missing=
	for f in bin/perc lib/libperc.a lib/libperc.so.0.1.0 include/perc.h \
	    lib/pkgconfig/perc.pc share/man/man1/perc.1 \
	    share/bash-completion/completions/perc; do
		[ -f "$ROOT/usr/$f" ] || missing="$missing $f"
	done
	for c in $COMMANDS; do
		[ -L "$ROOT/usr/bin/perc-$c" ] &&
		    [ "$(readlink -f "$ROOT/usr/bin/perc-$c")" = \
		      "$(readlink -f "$ROOT/usr/bin/perc")" ] ||
			missing="$missing bin/perc-$c"
		[ -f "$ROOT/usr/share/man/man1/perc-$c.1" ] ||
			missing="$missing share/man/man1/perc-$c.1"
	done
	[ "$(readlink "$ROOT/usr/lib/libperc.so.0")" = libperc.so.0.1.0 ] ||
		missing="$missing lib/libperc.so.0"
	[ "$(readlink "$ROOT/usr/lib/libperc.so")" = libperc.so.0 ] ||
		missing="$missing lib/libperc.so"
	[ -z "$missing" ] || fail "not installed:$missing"
	[ -x "$ROOT/usr/bin/perc" ]
	run -0 "$ROOT/usr/bin/perc" --version
	assert_output --partial 0.1.0
	run -0 "$ROOT/usr/bin/perc-get" -h
	assert_line --index 0 --partial 'usage: perc get '
	cmp "$PERC_SRC/lib/perc.h" "$ROOT/usr/include/perc.h"
	cmp "$PERC_SRC/cmd/perc.bash-completion" \
	    "$ROOT/usr/share/bash-completion/completions/perc"
}

@test "the installed perc.pc names the prefix it was installed for" {
	command -v pkg-config > /dev/null || skip "pkg-config is not installed"
	run -0 env PKG_CONFIG_PATH="$ROOT/usr/lib/pkgconfig" \
	    pkg-config --variable=prefix perc
	assert_output /usr
	run -0 env PKG_CONFIG_PATH="$ROOT/usr/lib/pkgconfig" \
	    pkg-config --modversion perc
	assert_output 0.1.0
}

# ---------------------------------------------------------------------
# examples/hello.c

# pc ARGS...: pkg-config on the staged install, every directory moved
# under $ROOT.
pc() {
	PKG_CONFIG_PATH="$ROOT/usr/lib/pkgconfig" pkg-config \
	    --define-variable=prefix="$ROOT/usr" \
	    --define-variable=libdir="$ROOT/usr/lib" \
	    --define-variable=includedir="$ROOT/usr/include" "$@"
}

# check_hello PROGRAM: run it on a fresh directory and check its output.
check_hello() {
	local dir=$BATS_TEST_TMPDIR/hello.db
	run -0 --separate-stderr "$@" "$dir"
	[ -z "$stderr" ] || fail "hello wrote to stderr: $stderr"
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} =~ ^began\ transaction\ ([0-9]+)$ ]]
	start=${BASH_REMATCH[1]}
	assert_line --index 1 'bob greeting = world'
	[[ ${lines[2]} =~ ^committed\ at\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -gt "$start" ]
	# perc sees what the program committed.
	run -0 perc -d "$dir" scan
	assert_output $'alice\tgreeting\thello\nbob\tgreeting\tworld'
	# Run again on the same directory: init leaves it as it is.
	run -0 "$@" "$dir"
	run -0 perc -d "$dir" get alice greeting
	assert_output hello
}

@test "examples/hello.c builds with pkg-config against the installed copy, and runs" {
	command -v pkg-config > /dev/null || skip "pkg-config is not installed"
	command -v cc > /dev/null || skip "no C compiler"
	cd "$BATS_TEST_TMPDIR"
	# The documented command; it may link libperc.so.
	$TEST_CC $TEST_CFLAGS -Wall -Wextra -Werror "$PERC_SRC/examples/hello.c" \
	    $(pc --cflags --libs --static perc) -o hello
	export LD_LIBRARY_PATH="$ROOT/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	check_hello ./hello
	# It uses nothing but the installed header.
	! grep -q '#include "' "$PERC_SRC/examples/hello.c"
}

@test "hello.c links statically, libperc.a and all, from pkg-config --static alone" {
	command -v pkg-config > /dev/null || skip "pkg-config is not installed"
	command -v cc > /dev/null || skip "no C compiler"
	[[ $TEST_CFLAGS != *sanitize* ]] || skip "sanitizers do not link statically"
	cd "$BATS_TEST_TMPDIR"
	run cc -static "$PERC_SRC/examples/hello.c" \
	    $(pc --cflags --libs --static perc) -o hello-static
	[ "$status" -eq 0 ] || fail "cc -static \$(pkg-config --static ...) failed: $(grep -m 3 -E 'undefined|error' <<<"$output")"
	run ldd ./hello-static
	refute_output --partial libperc
	check_hello ./hello-static
}

@test "hello.c exits with perc's status and one line when the directory is foreign" {
	command -v pkg-config > /dev/null || skip "pkg-config is not installed"
	command -v cc > /dev/null || skip "no C compiler"
	cd "$BATS_TEST_TMPDIR"
	$TEST_CC $TEST_CFLAGS "$PERC_SRC/examples/hello.c" \
	    $(pc --cflags --libs --static perc) -o hello
	export LD_LIBRARY_PATH="$ROOT/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	mkdir foreign
	echo precious > foreign/notes.txt
	run -6 --separate-stderr ./hello foreign
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ ${stderr_lines[0]} == "hello: init: "* ]]
	assert_output ''
	[ "$(ls foreign)" = notes.txt ]
	run -2 ./hello
}

# ---------------------------------------------------------------------
# cmd/perc.bash-completion

# complete_line WORD...: run _perc as bash would for the command line
# WORD... with the cursor at the end of the last word; COMPREPLY holds
# the candidates.
complete_line() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_perc "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
	    "${COMP_WORDS[COMP_CWORD - 1]}"
}

# has WORD: COMPREPLY holds WORD.
has() {
	local w
	for w in "${COMPREPLY[@]}"; do
		[ "$w" = "$1" ] && return 0
	done
	fail "'$1' not among the completions: ${COMPREPLY[*]}"
}

@test "bash completion: commands, options and open transaction handles" {
	source "$PERC_SRC/cmd/perc.bash-completion"
	complete -p perc | grep -q -- '-F _perc'

	complete_line perc co
	[ "${COMPREPLY[*]}" = commit ]
	complete_line perc ''
	[ "${#COMPREPLY[@]}" -eq $(echo $COMMANDS | wc -w) ]
	for c in $COMMANDS; do has "$c"; done
	complete_line perc help sc
	[ "${COMPREPLY[*]}" = 'scan scan-notify' ]
	# The topics perc help lists, and a link of every command.
	complete_line perc help env
	[ "${COMPREPLY[*]}" = environment ]
	complete_line perc help e
	[ "$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)" = \
	    'environment escaping exit-status' ]
	for c in $COMMANDS; do
		complete -p "perc-$c" | grep -q -- '-F _perc' ||
			fail "perc-$c has no completion"
	done

	complete_line perc get --
	has --lock
	has --at
	for w in "${COMPREPLY[@]}"; do
		[[ $w == --* ]] || fail "perc get --<TAB> offered $w"
	done
	complete_line perc resolve-locks --d
	[ "${COMPREPLY[*]}" = '--dry-run --dir' ]
	complete_line perc ts -
	has -n

	t1=$(perc begin)
	t2=$(perc begin)
	perc commit -t "$(perc begin)" > /dev/null    # finished: not offered
	complete_line perc commit -t ''
	[ "$(printf '%s\n' "${COMPREPLY[@]}" | sort -n | tr '\n' ' ')" = "$t1 $t2 " ]
	complete_line perc get -t "${t2:0:1}"
	has "$t2"
}

@test "bash completion: the observed columns of DIR after run-observer and after --column of scan-notify and wait" {
	source "$PERC_SRC/cmd/perc.bash-completion"
	perc_fresh_dir obs
	perc init --observe doc --observe dot --observe-weak weak \
	    --observe-weak 'a b' "$PERC_DIR"
	complete_line perc run-observer ''
	[ "$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)" = 'doc dot weak' ]
	complete_line perc run-observer --once do
	[ "$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)" = 'doc dot' ]
	complete_line perc scan-notify --column w
	[ "${COMPREPLY[*]}" = weak ]
	complete_line perc wait --timeout 5 --column doc --column dot
	[ "${COMPREPLY[*]}" = dot ]
	# scan's --column is any column: nothing is guessed.
	complete_line perc scan --column d
	[ "${#COMPREPLY[@]}" -eq 0 ]
	# Another directory's, by -d.
	other=$BATS_TEST_TMPDIR/other
	perc init --observe elsewhere "$other"
	complete_line perc -d "$other" run-observer ''
	[ "${COMPREPLY[*]}" = elsewhere ]
}

@test "bash completion: -d DIR earlier on the line chooses the directory of the handles" {
	source "$PERC_SRC/cmd/perc.bash-completion"
	other=$BATS_TEST_TMPDIR/other
	perc init "$other"
	perc -d "$other" ts -n 500 > /dev/null
	t_other=$(perc -d "$other" begin)
	t_mine=$(perc begin)
	complete_line perc -d "$other" commit -t ''
	[ "${COMPREPLY[*]}" = "$t_other" ]
	complete_line perc abort --dir "$other" -t ''
	[ "${COMPREPLY[*]}" = "$t_other" ]
	complete_line perc abort -t ''
	[ "${COMPREPLY[*]}" = "$t_mine" ]
	# Without PERC_DIR: the current directory.
	cd "$other"
	PERC_DIR= complete_line perc abort -t ''
	[ "${COMPREPLY[*]}" = "$t_other" ]
	# A link named perc-COMMAND completes as perc COMMAND.
	complete_line perc-get --l
	[ "${COMPREPLY[*]}" = --lock ]
	# No guesses for rows, columns or values.
	complete_line perc get r
	[ "${#COMPREPLY[@]}" -eq 0 ]
}
