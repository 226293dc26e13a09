#!/usr/bin/env bats
# tests/docs.bats - the README's and the man pages' examples say what
# perc does: they run as written, and agree with each other

load helpers

# The code of a README block from the line matching $1 to the one
# matching $2, its indentation taken off.
readme_block() {
	sed -n "/$1/,/$2/p" "$PERC_SRC/README" | sed 's/^    //'
}

# The same from a man page's source, its first such block only, its
# escapes undone.
man_block() {
	sed -n "/$2/,/$3/{p;/$3/q}" "$PERC_SRC/man/$1" |
	    sed 's/\\-/-/g; s/\\e/\\/g'
}

# Run a transfer example: it defines transfer() and calls it.
run_transfer() {
	perc_fresh_dir
	perc set alice balance 100
	perc set bob balance 50
	bash -euc "$1"
	run -0 perc get alice balance
	assert_output 70
	run -0 perc get bob balance
	assert_output 80
}

@test "the README's quickstart runs as written and prints what it says" {
	code=$(readme_block '^    perc init demo.db' '^    perc scan ')
	[ "$(printf '%s\n' "$code" | wc -l)" -eq 5 ]
	cd "$BATS_TEST_TMPDIR"
	run -0 bash -euc "$code"
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} =~ ^[0-9]+$ ]]   # the commit's timestamp
	assert_line --index 1 "$(printf 'alice\tbalance\t60')"
	assert_line --index 2 "$(printf 'bob\tbalance\t40')"
}

@test "the README's transfer example runs as written" {
	code=$(readme_block '^    transfer() {' '^    transfer alice bob 30')
	[ -n "$code" ]
	run_transfer "$code"
}

@test "perc(1)'s transfer example runs as written, with the README's arguments" {
	code=$(man_block perc.1 '^# transfer FROM TO AMOUNT' '^transfer alice bob 30')
	[ -n "$code" ]
	run_transfer "$code"
	# Both say the same order in the same words.
	grep -q '# transfer FROM TO AMOUNT' "$PERC_SRC/README"
}

@test "perc(1)'s NAME names both stores" {
	name=$(sed -n '/^\.Sh NAME/,/^\.Sh/p' "$PERC_SRC/man/perc.1")
	[[ $name == *"data directory"* ]]
	[[ $name == *"Redis Cluster"* ]]
}

@test "perc-run-observer(1)'s example shows a timestamp as perc prints one" {
	perc_fresh_dir
	shown=$(sed -n 's/.*committed at \([0-9]*\)$/\1/p' \
	    "$PERC_SRC/man/perc-run-observer.1")
	[ -n "$shown" ]
	real=$(perc ts)
	# As many digits, give or take one: the same clock's timestamps.
	[ "${#shown}" -ge $((${#real} - 1)) ]
	[ "${#shown}" -le $((${#real} + 1)) ]
}

@test "the README says where the bash completion is and how to use it" {
	grep -q 'cmd/perc.bash-completion' "$PERC_SRC/README"
	grep -q 'share/bash-completion/completions' "$PERC_SRC/README"
	[ -f "$PERC_SRC/cmd/perc.bash-completion" ]
}

@test "perc-shell(1)'s transfer runs as written and reads answers whole" {
	code=$(man_block perc-shell.1 '^coproc P { perc shell; }' '^done')
	[ -n "$code" ]
	# Each answer is read whole: a value's spaces are its own.
	grep -q 'IFS= read -r res' <<<"$code"
	run_transfer "$code"
}

@test "perc-run-observer(1)'s long-running observer is examples/observer-coprocess.sh, and runs as written" {
	local obs=$BATS_TEST_TMPDIR/observer.sh
	man_block perc-run-observer.1 '^#!\/bin\/bash' '^done$' > "$obs"
	[ -s "$obs" ]
	diff <(sed -n '/^ask() {/,/^done$/p' "$obs") \
	    <(sed -n '/^ask() {/,/^done$/p' \
	    "$PERC_SRC/examples/observer-coprocess.sh")
	chmod +x "$obs"
	perc_fresh_dir
	perc init --observe doc "$PERC_DIR"
	perc set a doc 'four'
	perc set 'b c' doc $'tab\there'
	run -0 timeout 30 perc run-observer --once --quiet --coprocess doc -- \
	    "$obs"
	run -0 perc scan --column len
	assert_output $'a\tlen\t4\nb c\tlen\t8'
}
