#!/usr/bin/env bats
# tests/cli.bats - rules every command keeps (after git's t0012-help.sh)

load helpers

@test "every command answers -h and --help outside a data directory" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	export PERC_DIR="$BATS_TEST_TMPDIR/nowhere"
	for c in $COMMANDS; do
		for h in -h --help; do
			run -0 --separate-stderr perc "$c" "$h"
			[ -z "$stderr" ] || fail "perc $c $h wrote to stderr: $stderr"
			[[ "${lines[0]} " == "usage: perc $c "* ]] ||
				fail "perc $c $h: '${lines[0]}'"
			assert_line '    -d, --dir DIR        the data directory (default: $PERC_DIR, else .)'
			assert_line --regexp '^    -h, --help +[a-z]'
		done
	done
	[ ! -e "$PERC_DIR" ]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/cwd")" ]
}

@test "-h says in a sentence, after the usage line, what the command does and prints" {
	for c in $COMMANDS; do
		run -0 perc "$c" -h
		# bats drops empty lines: the sentence is the second line.
		[[ ${lines[1]} =~ ^[A-Z].*\.$ ]] ||
			fail "perc $c -h: no sentence after the usage: '${lines[1]}'"
	done
	run -0 perc set -h
	[[ ${lines[1]} == *"a missing VALUE is read from standard input"* ]]
	run -0 perc shell -h
	[[ ${lines[1]} == *"requests read from standard input"* ]]
}

@test "-h wins over the other arguments and needs no data directory" {
	export PERC_DIR="$BATS_TEST_TMPDIR/nowhere"
	run -0 --separate-stderr perc get -h r c
	[ -z "$stderr" ]
	[[ $output == "usage: perc get "* ]]
	run -0 --separate-stderr perc commit -t 12 -h
	[ -z "$stderr" ]
	[[ $output == "usage: perc commit "* ]]
}

@test "a link named perc-COMMAND behaves as perc COMMAND" {
	for c in $COMMANDS; do
		[ -L "$PERC_BUILD/perc-$c" ] || [ -x "$PERC_BUILD/perc-$c" ]
		run -0 --separate-stderr "perc-$c" -h
		[ -z "$stderr" ]
		[[ "${lines[0]} " == "usage: perc $c "* ]]
	done
	perc_fresh_dir
	run -0 --separate-stderr perc-set r c 'via link'
	assert_output ''
	run -0 perc-get r c
	assert_output 'via link'
	run -0 perc-ts -n 2
	[ "${#lines[@]}" -eq 2 ]
}

@test "a link named after no command is a usage error" {
	ln -s "$PERC_BUILD/perc" "$BATS_TEST_TMPDIR/perc-frobnicate"
	run -2 --separate-stderr "$BATS_TEST_TMPDIR/perc-frobnicate"
	assert_error_line '*frobnicate*'
	assert_output ''
}

@test "perc --version prints the version, the build, the data formats it reads and its stores" {
	run -0 --separate-stderr perc --version
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 4 ]
	version=$(sed -n 's/^VERSION *= *//p' "$PERC_SRC/Makefile")
	assert_line --index 0 "perc $version"
	assert_line --index 1 --regexp '^build [0-9a-z.-]+$'
	assert_line --index 2 --regexp '^data formats 1 to [0-9]+$'
	assert_line --index 3 'stores leveldb redis'
	# The newest format is the one a fresh LevelDB directory gets.
	perc init "$BATS_TEST_TMPDIR/d"
	newest=${lines[2]##* }
	grep -qx "format $newest" "$BATS_TEST_TMPDIR/d/config"
}

@test "an unknown command is a usage error: exit 2, one line" {
	run -2 --separate-stderr perc frobnicate
	assert_error_line '*frobnicate*'
	assert_output ''
	# Commands that are planned but do not exist yet are unknown too.
	run -2 --separate-stderr perc frobnicate --help
	assert_error_line
	assert_output ''
}

@test "perc with no command is a usage error" {
	run -2 --separate-stderr perc
	assert_error_line 'perc: which command? *usage: perc *'
	assert_output ''
	run -2 --separate-stderr perc -d "$BATS_TEST_TMPDIR"
	assert_error_line 'perc: which command? *usage: perc *'
	run -2 --separate-stderr perc --bogus get r c
	assert_error_line
	assert_output ''
}

@test "every man page lints clean" {
	n=0
	for f in "$PERC_SRC"/man/*.1; do
		run -0 mandoc -T lint -W warning "$f"
		assert_output ''
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
	for c in $COMMANDS; do
		[ -f "$PERC_SRC/man/perc-$c.1" ] || fail "no man page for $c"
	done
	[ -f "$PERC_SRC/man/perc.1" ]
}

@test "each usage line matches the SYNOPSIS of its man page" {
	set -f
	for c in $COMMANDS; do
		syn=$(mandoc -T ascii "$PERC_SRC/man/perc-$c.1" | sed 's/.\x08//g' |
		    awk '/^SYNOPSIS/ { f = 1; next } /^[A-Z]/ { f = 0 } f')
		use=$(perc "$c" -h | head -n 1)
		[ -n "$syn" ] || fail "no SYNOPSIS in perc-$c.1"
		# unquoted echo on purpose: it squeezes the blanks
		a=$(echo $syn | tr a-z A-Z)
		b=$(echo ${use#usage: } | tr a-z A-Z)
		[ "$a" = "$b" ] || fail "perc-$c.1 says '$a', perc $c -h says '$b'"
	done
	set +f
}

@test "perc.1 lists every command" {
	page=$(mandoc -T ascii "$PERC_SRC/man/perc.1" | sed 's/.\x08//g')
	for c in $COMMANDS; do
		grep -Eq "^ +$c +[A-Z]" <<<"$page" || fail "perc.1 does not list $c"
		grep -q "perc-$c(1)" <<<"$page" || fail "perc.1: no SEE ALSO perc-$c(1)"
	done
}

@test "perc help lists the commands" {
	cd "$BATS_TEST_TMPDIR"
	export PERC_DIR="$BATS_TEST_TMPDIR/nowhere"
	run -0 --separate-stderr perc help
	[ -z "$stderr" ]
	for c in $COMMANDS; do
		printf '%s\n' "${lines[@]}" | grep -Eq "^ *$c( |$)" ||
			fail "perc help does not list $c"
	done
	[ ! -e "$PERC_DIR" ]
}

@test "perc help COMMAND shows its manual page" {
	command -v man > /dev/null || skip "man(1) is not installed"
	export PERC_DIR="$BATS_TEST_TMPDIR/nowhere"
	run -0 timeout 20 perc help get < /dev/null
	[[ $output == *PERC-GET* ]]
	[[ $output == *"perc get"* ]]
}

@test "perc help lists perc(1)'s topics and opens perc(1) for each" {
	export PERC_DIR="$BATS_TEST_TMPDIR/nowhere"
	run -0 perc help
	for t in perc environment exit-status escaping stores files; do
		assert_line --regexp "^ +$t +[A-Za-z]"
	done
	command -v man > /dev/null || skip "man(1) is not installed"
	for t in perc environment exit-status; do
		run -0 timeout 20 perc help "$t" < /dev/null
		[[ $output == *PERC\(1\)* ]]
		[[ $output == *ENVIRONMENT*PERC_LOCK_TIMEOUT* ]]
		[[ $output == *"EXIT STATUS"* ]]
	done
}

@test "perc help of a mistyped command or topic says what was meant" {
	run -2 --separate-stderr perc help comit
	assert_output ''
	assert_error_line "*'comit'*did you mean 'commit'?*"
	run -2 --separate-stderr perc help enviroment
	assert_error_line "*did you mean 'environment'?*"
}

@test "perc help of an unknown command is a usage error" {
	run -2 --separate-stderr perc help frobnicate
	assert_error_line '*frobnicate*'
	assert_output ''
	run -2 --separate-stderr perc help get set
	assert_usage_error
}

@test "every command that needs one refuses a non-data directory: exit 6" {
	for c in $DATA_COMMANDS; do
		case $c in
		get | del | notify) args=(r c) ;;
		show) args=(r) ;;
		set) args=(r c v) ;;
		commit | abort) args=(-t 1) ;;
		*) args=() ;;
		esac
		assert_exit_6_outside "$c" "${args[@]}"
	done
}

@test "-d DIR may stand before or after the command name" {
	perc_fresh_dir one
	perc_fresh_dir two
	unset PERC_DIR
	cd "$BATS_TEST_TMPDIR"
	perc -d one set r c 1
	perc set -d two r c 2
	perc --dir one set r d 3
	perc set --dir two r d 4
	perc --dir=one set r e 5
	perc set --dir=two r e 6
	run -0 perc -d one scan
	assert_output "$(printf 'r\tc\t1\nr\td\t3\nr\te\t5')"
	run -0 perc scan -d two
	assert_output "$(printf 'r\tc\t2\nr\td\t4\nr\te\t6')"
}

@test "the data directory is -d, else PERC_DIR, else the current directory" {
	perc_fresh_dir one
	perc_fresh_dir two
	perc_fresh_dir three
	perc -d "$BATS_TEST_TMPDIR/one" set r c one
	perc -d "$BATS_TEST_TMPDIR/two" set r c two
	perc -d "$BATS_TEST_TMPDIR/three" set r c three
	cd "$BATS_TEST_TMPDIR/three"
	export PERC_DIR="$BATS_TEST_TMPDIR/two"
	run -0 perc -d "$BATS_TEST_TMPDIR/one" get r c
	assert_output one
	run -0 perc get r c
	assert_output two
	unset PERC_DIR
	run -0 perc get r c
	assert_output three
}

@test "-- ends the options, so a ROW may begin with '-'" {
	perc_fresh_dir
	run -0 perc set -- -7 balance 100
	run -0 perc set -- --dir c v
	run -0 perc get -- -7 balance
	assert_output 100
	t=$(perc begin)
	run -0 perc set -t "$t" -- -h c w
	run -0 perc get -t "$t" -- -h c
	assert_output w
	run -0 perc commit -t "$t"
	run -0 perc scan
	assert_output "$(printf -- '--dir\tc\tv\n-7\tbalance\t100\n-h\tc\tw')"
	run -0 perc del -- -7 balance
	run -1 perc get -- -7 balance
	# Without --, -7 is taken for an option.
	run -2 --separate-stderr perc get -7 balance
	assert_usage_error
}

@test "options end at the first operand, so a VALUE may begin with '-'" {
	perc_fresh_dir
	run -0 perc set account7 balance -30
	run -0 perc get account7 balance
	assert_output -30
	run -0 perc set account7 balance --help
	run -0 perc get account7 balance
	assert_output --help
}

@test "an option after an operand is refused, never taken for another cell" {
	perc_fresh_dir
	perc set alice balance 5
	t=$(perc begin)
	perc set -t "$t" alice balance 6
	for args in "get alice balance -t $t" "get alice balance --at 1" \
	    "get alice balance -d ." "get alice balance -e" \
	    "get alice -t $t" "get alice -- balance" \
	    "set alice balance 7 -t $t" "set -t $t alice balance 7 -t x y" \
	    "set alice -t" "del alice balance -t $t" "del alice -x" \
	    "show alice -e" "show alice --bogus"; do
		# shellcheck disable=SC2086 # the words of the command
		run -2 --separate-stderr perc $args
		assert_usage_error
	done
	run -2 --separate-stderr perc get alice balance -t "$t"
	assert_error_line "*'-t' after an operand*"
	# Nothing was read as a row named -t, nothing written.
	run -0 perc get -t "$t" alice balance
	assert_output 6
	run -0 perc commit -t "$t"
	run -0 perc scan
	assert_output "$(printf 'alice\tbalance\t6')"
	# After --, a ROW or COLUMN may begin with '-' wherever it stands.
	run -0 perc set -- alice -t v
	run -0 perc get -- alice balance alice -t
	assert_output "$(printf '6\nv')"
	run -0 perc del -- alice -t
	run -1 perc get -- alice -t
}

@test "a bad option is a usage error: exit 2, one line on stderr" {
	perc_fresh_dir
	for c in $COMMANDS; do
		for bad in --bogus -Q; do
			run -2 --separate-stderr perc "$c" "$bad"
			assert_usage_error
		done
	done
}

@test "a missing option argument is a usage error" {
	perc_fresh_dir
	for args in "ts -n" "get -t" "get --at" "set -t" "del -t" \
	    "commit -t" "abort -t" "scan -t" "scan --at" "scan --prefix" \
	    "scan --column" "init --observe" "get -d"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc $args
		assert_usage_error
	done
}

@test "errors go to stderr as one line, and stdout stays empty" {
	make_non_data_dirs
	export PERC_DIR="$BATS_TEST_TMPDIR/missing"
	run -6 --separate-stderr perc scan
	assert_error_line 'perc: *'
	assert_output ''
}

@test "a full standard output is an I/O error: exit 7" {
	perc_fresh_dir
	perc set r c v
	for args in "ts" "ts -n 3" "get r c" "scan" "begin" "help"; do
		# shellcheck disable=SC2086
		run -7 --separate-stderr sh -c 'perc "$@" > /dev/full' sh $args
		assert_error_line
	done
}

@test "--help describes each option of the usage line on a line of its own" {
	for c in $COMMANDS; do
		run -0 perc "$c" --help
		# Each option the usage line names, as -x or --long.
		for opt in $(grep -oE '(^|[[ ])--?[a-z][a-z-]*' <<<"${lines[0]}" |
		    tr -d '[ '); do
			printf '%s\n' "${lines[@]:1}" |
			    grep -Eq -- "^ +(-[a-z], )?$opt(, --[a-z-]+)?( [A-Z]+)? +[A-Za-z]" ||
				fail "perc $c --help does not describe $opt"
		done
	done
}

@test "a usage error names the problem, not only the usage line" {
	perc_fresh_dir
	for args in "commit 123:*a handle goes after -t: perc commit -t 123*" \
	    "abort 123:*a handle goes after -t: perc abort -t 123*" \
	    "commit:*which transaction?*" \
	    "ts -n 0:*-n takes a count*not '0'*" \
	    "set a x 1 b y 2:*several cells need a transaction*" \
	    "set a x 1 b:*triples*" \
	    "run-observer doc ./count.sh:*the command goes after '--'*" \
	    "scan --bogus:*unknown option '--bogus'*" \
	    "scan -Q:*unknown option '-Q'*" \
	    "scan -t:*option '-t' needs a value*" \
	    "scan extra:*unexpected argument 'extra'*" \
	    "gc --retain soon:*--retain takes seconds, not 'soon'*" \
	    "load --batch 0:*--batch takes*not '0'*" \
	    "-x scan:*unknown option '-x'*" \
	    "-d:*'-d' needs a directory*" \
	    "get --lock a x:*--lock*give -t TXN*" \
	    "get a:*a cell is a ROW and a COLUMN*" \
	    "shell x:*unexpected argument 'x'*"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr perc ${args%%:*}
		assert_usage_error
		assert_error_line "${args#*:}"
	done
}

@test "a mistyped command: did you mean the nearest one" {
	for typo in gte:get scna:scan comit:commit begni:begin; do
		run -2 --separate-stderr perc "${typo%%:*}"
		assert_error_line "perc: '${typo%%:*}' is not a perc command; did you mean '${typo#*:}'?*"
	done
	# Nothing near: no guess.
	run -2 --separate-stderr perc xyzzy
	assert_error_line "perc: 'xyzzy' is not a perc command; see 'perc help'"
}

@test "-dDIR before the command works as -d DIR does" {
	perc_fresh_dir
	perc set r c v
	cd "$BATS_TEST_TMPDIR"
	PERC_DIR= run -0 perc "-d$PERC_DIR" get r c
	assert_output v
	PERC_DIR= run -0 perc get "-d$PERC_DIR" r c
	assert_output v
}

@test "set without a value and load say on a terminal that they read it" {
	command -v script > /dev/null || skip "script(1) is not installed"
	perc_fresh_dir
	# script(1) gives perc a terminal; the end of its own standard
	# input ends perc's.
	run -0 script -qec "perc set r c" /dev/null < /dev/null
	assert_output --partial 'perc: reading the value from standard input; end it with Ctrl-D'
	run -0 script -qec "perc load" /dev/null < /dev/null
	assert_output --partial 'perc: reading cells'
	# Not on a pipe: a script's stderr stays clean.
	run -0 --separate-stderr perc set r c < /dev/null
	[ -z "$stderr" ]
}
