#!/usr/bin/env bats
# tests/notify.bats - weak notifications: init --observe-weak, perc
# notify, and observers of weak columns, which run at least once and
# clear the notifications at or below their start

load helpers

setup() {
	perc_fresh_dir
	perc init --observe-weak agg --observe doc "$PERC_DIR"
	OUT="$BATS_TEST_TMPDIR/out"
	RUNS="$BATS_TEST_TMPDIR/runs"
}

# The notify lines of perc show ROW agg: KIND TS DETAIL, tab-separated.
notify_lines() {
	perc show "$1" agg | awk -F '\t' '$2 == "notify" { print $3 "\t" $4 }'
}

@test "init --observe-weak: status says weak; a column cannot be both strong and weak" {
	run -0 perc status
	assert_line "$(printf 'observed\tdoc\tstrong\t0')"
	assert_line "$(printf 'observed\tagg\tweak\t0')"
	cp "$PERC_DIR/config" "$BATS_TEST_TMPDIR/config"
	run -2 --separate-stderr perc init --observe agg "$PERC_DIR"
	assert_error_line '*agg*both strongly and weakly observed*'
	run -2 --separate-stderr perc init --observe-weak doc "$PERC_DIR"
	assert_error_line '*doc*both strongly and weakly observed*'
	cmp "$PERC_DIR/config" "$BATS_TEST_TMPDIR/config"
	# Both at once in a new directory: refused before anything is made.
	run -2 --separate-stderr perc init --observe x --observe-weak x \
	    "$BATS_TEST_TMPDIR/new"
	assert_error_line '*x*both strongly and weakly observed*'
	[ ! -e "$BATS_TEST_TMPDIR/new" ]
	# Naming it again the same way changes nothing.
	perc init --observe-weak agg "$PERC_DIR"
	cmp "$PERC_DIR/config" "$BATS_TEST_TMPDIR/config"
}

@test "a weak column holds no values: set, del and load are usage errors, get finds none" {
	run -2 --separate-stderr perc set r agg v
	assert_usage_error
	assert_error_line "*'agg' is weakly observed*"
	t=$(perc begin)
	run -2 --separate-stderr perc set -t "$t" r agg v
	assert_usage_error
	run -2 --separate-stderr perc del -t "$t" r agg
	assert_usage_error
	run -2 --separate-stderr perc del r agg
	assert_usage_error
	printf 'a\tdoc\tv\nr\tagg\tv\n' > "$OUT"
	run -2 --separate-stderr perc load < "$OUT"
	assert_output ''
	assert_error_line '*line 2*weakly observed*'
	perc notify r agg
	run -1 --separate-stderr perc get r agg
	assert_output ''
	run -1 perc get -t "$t" r agg
	run -0 perc scan
	assert_output ''
	printf 'set r agg v\nget r agg\n' | perc shell > "$OUT"
	grep -q '^err 2 .*weakly observed' "$OUT"
	[ "$(sed -n 2p "$OUT")" = none ]
}

@test "perc notify prints nothing and makes the cell dirty; not on other columns" {
	run -0 --separate-stderr perc notify r agg
	assert_output ''
	[ -z "$stderr" ]
	perc scan-notify > "$OUT"
	assert_bytes 'r\tagg\n' "$OUT"
	run -0 perc status
	assert_line "$(printf 'observed\tagg\tweak\t1')"
	run -2 --separate-stderr perc notify r doc
	assert_usage_error
	assert_error_line "*'doc' is strongly observed*"
	run -2 --separate-stderr perc notify r other
	assert_usage_error
	assert_error_line "*'other' is not weakly observed*"
	run -2 --separate-stderr perc notify r
	assert_usage_error
}

@test "notify -t: written with the commit, at its timestamp; a notify-only transaction prints it" {
	t=$(perc begin)
	run -0 --separate-stderr perc notify -t "$t" r agg
	assert_output ''
	run -0 perc scan-notify
	assert_output ''
	run -0 perc commit -t "$t"
	[[ $output =~ ^[0-9]+$ ]]
	ts=$output
	notify_lines r > "$OUT"
	assert_bytes "$ts\\tweak=committed\\n" "$OUT"
	# With a write: at that commit's timestamp too.
	t=$(perc begin)
	perc set -t "$t" d doc v
	perc notify -t "$t" r agg
	perc notify -t "$t" s agg
	ts2=$(perc commit -t "$t")
	notify_lines s > "$OUT"
	assert_bytes "$ts2\\tweak=committed\\n" "$OUT"
	notify_lines r > "$OUT"
	assert_bytes "$ts2\\tweak=committed\\n$ts\\tweak=committed\\n" "$OUT"
	# Aborted: none.
	t=$(perc begin)
	perc notify -t "$t" u agg
	perc abort -t "$t"
	run -0 perc show u agg
	assert_output ''
}

@test "four notifiers on one hot cell never conflict" {
	local n=25 p i
	for p in 1 2 3 4; do
		(
			for ((i = 0; i < n; i++)); do
				if perc notify hot agg; then
					echo ok
				else
					echo "exit $?"
				fi
			done > "$BATS_TEST_TMPDIR/notifier.$p"
		) &
		BG_PIDS+=($!)
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	BG_PIDS=()
	cat "$BATS_TEST_TMPDIR"/notifier.* | sort | uniq -c > "$OUT"
	[ "$(cat "$OUT")" = "    $((4 * n)) ok" ] || fail "$(cat "$OUT")"
	[ "$(notify_lines hot | wc -l)" -eq $((4 * n)) ]
	# In transactions that also write, the same.
	for p in 1 2 3 4; do
		(
			t=$(perc begin)
			perc set -t "$t" "w$p" doc v
			perc notify -t "$t" hot agg
			perc commit -t "$t" > /dev/null && echo ok || echo "exit $?"
		) > "$BATS_TEST_TMPDIR/tx.$p" &
		BG_PIDS+=($!)
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	BG_PIDS=()
	[ "$(cat "$BATS_TEST_TMPDIR"/tx.* | sort | uniq -c)" = "      4 ok" ]
}

@test "an observer of a weak column runs, even writing nothing, and clears the notifications at or below its start" {
	perc notify a agg
	perc notify a agg
	perc notify b agg
	run -0 perc run-observer --once agg -- \
	    sh -c 'printf "%s\n" "$PERC_ROW" >> "$0"' "$RUNS"
	sort "$RUNS" > "$OUT"
	assert_bytes 'a\nb\n' "$OUT"
	run -0 perc scan-notify
	assert_output ''
	# A failed run clears nothing.
	perc notify a agg
	run -1 perc run-observer --once agg -- false
	perc scan-notify > "$OUT"
	assert_bytes 'a\tagg\n' "$OUT"
}

@test "a notification committed after the run's start stays for the next run" {
	perc notify r agg
	# The run notifies its own cell: that commit is above its start.
	run -0 perc run-observer --once agg -- \
	    sh -c 'echo run >> "$0"; perc notify "$PERC_ROW" agg' "$RUNS"
	[ "$(wc -l < "$RUNS")" -eq 1 ]
	perc scan-notify > "$OUT"
	assert_bytes 'r\tagg\n' "$OUT"
	# And so does one in the run's own transaction.
	run -0 perc run-observer --once agg -- \
	    sh -c 'echo run >> "$0"; perc notify -t "$PERC_TXN" "$PERC_ROW" agg' \
	    "$RUNS"
	[ "$(wc -l < "$RUNS")" -eq 2 ]
	perc scan-notify > "$OUT"
	assert_bytes 'r\tagg\n' "$OUT"
	run -0 perc run-observer --once agg -- true
	run -0 perc scan-notify
	assert_output ''
}

@test "a run sees what the notifying transactions wrote" {
	t=$(perc begin)
	perc set -t "$t" d1 doc one
	perc notify -t "$t" total agg
	perc commit -t "$t"
	run -0 perc run-observer --once agg -- \
	    sh -c 'perc get d1 doc > "$0"' "$OUT"
	assert_bytes 'one' "$OUT"
}

@test "a notifier that dies past its commit point still notifies" {
	perc set p data old
	t=$(perc begin)
	perc set -t "$t" p data new
	perc notify -t "$t" q agg
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	# Pending until settled by its primary, which committed.
	perc scan-notify > "$OUT"
	assert_bytes 'q\tagg\n' "$OUT"
	run -0 perc show q agg
	assert_output --regexp "^agg	notify	$t	weak=pending primary-row=p primary-column=data\$"
	run -0 perc run-observer --once agg -- \
	    sh -c 'perc get p data > "$0"' "$OUT"
	assert_bytes 'new' "$OUT"
	run -0 perc scan-notify
	assert_output ''
}

@test "gc keeps a pending weak notification, settled before its primary's record goes" {
	perc set p data old
	t=$(perc begin)
	perc set -t "$t" p data new
	perc notify -t "$t" q agg
	run -137 env PERC_FAILPOINT=after-commit-primary perc commit -t "$t"
	perc resolve-locks      # its journal goes: gc is held back no more
	perc set p data newer    # the crashed commit is no longer the newest
	perc notify r agg       # and a committed notification
	run -0 perc gc --retain 0
	printf '%s\n' "$output" | grep -Eq '^[0-9]+	[1-9][0-9]*$'
	perc scan-notify > "$OUT"
	assert_bytes 'q\tagg\nr\tagg\n' "$OUT"
	run -0 perc show q agg
	assert_output --regexp "^agg	notify	[0-9]+	weak=committed\$"
	run -0 perc run-observer --once agg -- \
	    sh -c 'echo "$PERC_ROW" >> "$0"' "$RUNS"
	sort "$RUNS" > "$OUT"
	assert_bytes 'q\nr\n' "$OUT"
}

@test "perc shell: notify, alone and in a transaction" {
	t=$(perc begin)
	printf 'notify a agg\nnotify -t %s b agg\ncommit -t %s\nnotify a doc\nnotify a\n' \
	    "$t" "$t" | perc shell > "$OUT"
	run -0 sed -n '1,2p' "$OUT"
	assert_output "$(printf 'ok\nok')"
	sed -n 3p "$OUT" | grep -Eq '^ok [0-9]+$'
	sed -n 4p "$OUT" | grep -q "^err 2 .*'doc' is strongly observed"
	sed -n 5p "$OUT" | grep -q '^err 2 '
	perc scan-notify > "$OUT"
	assert_bytes 'a\tagg\nb\tagg\n' "$OUT"
}

@test "a --coprocess observer of a weak column: done 0 clears, anything else leaves it dirty" {
	perc notify a agg
	cat > "$BATS_TEST_TMPDIR/co.sh" <<-'EOF'
	#!/bin/bash
	while read -r verb txn row col; do
		echo "$row" >> "$RUNS"
		echo "done ${STATUS:-0}"
		read -r answer
	done
	EOF
	chmod +x "$BATS_TEST_TMPDIR/co.sh"
	export RUNS
	STATUS=1 run -1 perc run-observer --once --coprocess agg -- \
	    "$BATS_TEST_TMPDIR/co.sh"
	perc scan-notify > "$OUT"
	assert_bytes 'a\tagg\n' "$OUT"
	run -0 perc run-observer --once --coprocess agg -- \
	    "$BATS_TEST_TMPDIR/co.sh"
	run -0 perc scan-notify
	assert_output ''
	[ "$(cat "$RUNS")" = "$(printf 'a\na')" ]
}
