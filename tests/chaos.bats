#!/usr/bin/env bats
# tests/chaos.bats - a short run of tests/chaos.sh: transfers under
# failpoints, kill -9 and concurrent readers and resolvers

load helpers

setup() {
	CHAOS="$BATS_TEST_DIRNAME/chaos.sh"
	PERC_BIN=$(command -v perc)
}

# bats test_tags=slow
@test "20 s of chaos with 4 workers: every invariant holds" {
	skip_under_valgrind "no transfer would commit in 20 s"
	# However loaded the machine, the run goes on (up to 240 s) until
	# it has committed, crashed, killed and checked something.
	run -0 timeout 300 env PERC_BUILD="$(dirname "$PERC_BIN")" \
	    CHAOS_MIN_COMMITS=1 CHAOS_MIN_CRASHES=1 CHAOS_MIN_KILLS=1 \
	    CHAOS_MIN_SNAPSHOTS=1 CHAOS_MAX_SECONDS=240 \
	    "$CHAOS" "$BATS_TEST_TMPDIR/db" 20 4 3>&-
	assert_output --partial 'chaos: all invariants hold'
	# It did crash, kill and commit something.
	[[ $output =~ chaos:\ ([0-9]+)\ commits\ printed ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	[[ $output =~ ([0-9]+)\ failpoint\ crashes ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	[[ $output =~ ([0-9]+)\ kills ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
	[[ $output =~ ([0-9]+)\ snapshots\ checked ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
}

# bats test_tags=slow
@test "chaos.sh catches a perc that breaks an invariant" {
	skip_under_valgrind "no transfer would commit in 6 s"
	# A perc that writes every balance one too high, but for the first
	# eight (the accounts chaos.sh sets up, one by one): each transfer
	# that commits adds 2 to the total.  The run goes on (up to 240 s)
	# until three transfers have committed, so the mutant has acted.
	mkdir "$BATS_TEST_TMPDIR/bad"
	cat > "$BATS_TEST_TMPDIR/bad/perc" <<-SH
	#!/bin/bash
	if [ "\$1" = set ] && [ "\$2" = -t ] && [ "\${5:-}" = bal ]; then
	    echo >> "$BATS_TEST_TMPDIR/bad/sets"
	    if [ "\$(wc -l < "$BATS_TEST_TMPDIR/bad/sets")" -gt 8 ]; then
	        exec "$PERC_BIN" set -t "\$3" "\$4" bal "\$((\$6 + 1))"
	    fi
	fi
	exec "$PERC_BIN" "\$@"
	SH
	chmod +x "$BATS_TEST_TMPDIR/bad/perc"
	run -1 timeout 300 env PERC_BUILD="$BATS_TEST_TMPDIR/bad" \
	    CHAOS_MIN_COMMITS=3 CHAOS_MAX_SECONDS=240 \
	    "$CHAOS" "$BATS_TEST_TMPDIR/db" 6 2 3>&-
	assert_output --partial 'violations'
	assert_output --partial 'final total is'
	# The mutant did act, on the transfers' sets.
	[ "$(wc -l < "$BATS_TEST_TMPDIR/bad/sets")" -gt 8 ]
}

@test "chaos.sh usage errors: exit 2" {
	run -2 "$CHAOS"
	run -2 "$CHAOS" "$BATS_TEST_TMPDIR/db" 10
	run -2 "$CHAOS" "$BATS_TEST_TMPDIR/db" ten 2
	run -2 "$CHAOS" "$BATS_TEST_TMPDIR/db" 10 0
	CHAOS_MIN_COMMITS=many run -2 "$CHAOS" "$BATS_TEST_TMPDIR/db" 10 1
	CHAOS_MAX_SECONDS=-1 run -2 "$CHAOS" "$BATS_TEST_TMPDIR/db" 10 1
	mkdir "$BATS_TEST_TMPDIR/full"
	touch "$BATS_TEST_TMPDIR/full/x"
	run -2 "$CHAOS" "$BATS_TEST_TMPDIR/full" 1 1
	[ "$(ls "$BATS_TEST_TMPDIR/full")" = x ]
}
