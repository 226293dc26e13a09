#!/usr/bin/env bats
# tests/json.bats - --json: JSON Lines that jq reads, whose byte strings
# come back as the very bytes the cells hold

load helpers

setup() {
	command -v jq > /dev/null || skip "jq is not installed (.ci/run --deps installs it)"
	perc_fresh_dir
}

# The bytes a JSON byte string on standard input stands for: the string
# itself, or its base64.
json_bytes() {
	local v
	v=$(cat)
	if [ "$(jq -r 'type' <<<"$v")" = string ]; then
		jq -j . <<<"$v"
	else
		jq -r .base64 <<<"$v" | base64 -d
	fi
}

# Values of every kind of bytes, one file each in $BATS_TEST_TMPDIR/v.N.
make_values() {
	local i=0 v
	for v in 'plain' 'Zo\xc3\xab \xf0\x9f\x98\x80' 'tab\there\nnewline' \
	    'quote " and back\\slash' '\x01\x1f\x7f' '\xff\x00\xfe' \
	    '\xc3\x28' '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' \
	    'trunc\xe2\x82' ''; do
		printf "$v" > "$BATS_TEST_TMPDIR/v.$i"
		i=$((i + 1))
	done
	NV=$i
}

@test "scan --json: one object a line, and every value, row and column comes back byte for byte" {
	make_values
	for ((i = 0; i < NV; i++)); do
		perc set "r$i" c < "$BATS_TEST_TMPDIR/v.$i"
	done
	printf 'row\xffbin' > "$BATS_TEST_TMPDIR/row"
	printf 'col \xc3\xa9' > "$BATS_TEST_TMPDIR/col"
	perc set -e 'row\xffbin' 'col \xc3\xa9' x
	run -0 perc scan --json
	[ "${#lines[@]}" -eq $((NV + 1)) ]
	for line in "${lines[@]}"; do
		jq -e 'keys == ["column", "row", "value"]' <<<"$line" > /dev/null ||
			fail "not an object of row, column, value: $line"
	done
	for ((i = 0; i < NV; i++)); do
		line=$(perc scan --json --prefix "r$i" | grep -F "\"row\":\"r$i\"")
		jq -c .value <<<"$line" | json_bytes > "$BATS_TEST_TMPDIR/out"
		cmp "$BATS_TEST_TMPDIR/v.$i" "$BATS_TEST_TMPDIR/out" ||
			fail "value $i came back different: $line"
	done
	line=$(perc scan --json --prefix 'row')
	jq -c .row <<<"$line" | json_bytes | cmp - "$BATS_TEST_TMPDIR/row"
	jq -c .column <<<"$line" | json_bytes | cmp - "$BATS_TEST_TMPDIR/col"
	# Valid UTF-8 is a string, as it is; anything else is base64.
	perc scan --json --prefix r1 | grep -qF '"value":"Zoë 😀"'
	perc scan --json --prefix r5 | grep -qF '"value":{"base64":"/wD+"}'
}

@test "get --json: a value a line, null for none; a value of 3 MB comes back whole" {
	head -c 3000000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	perc set big c < "$BATS_TEST_TMPDIR/big"
	perc set a c 'é'
	run -0 perc get --json a c
	assert_output '{"value":"é"}'
	run -1 perc get --json a c nothere c
	assert_line --index 0 '{"value":"é"}'
	assert_line --index 1 '{"value":null}'
	perc get --json big c | jq -c .value | json_bytes |
	    cmp - "$BATS_TEST_TMPDIR/big"
}

@test "log --json: commit timestamps as strings of digits, a delete without a value, resolved lines" {
	T0=$(perc ts)
	perc set a c 1
	perc del a c
	run -0 perc log --json --since "$T0"
	[ "${#lines[@]}" -eq 3 ]
	jq -e '(.commit_ts | test("^[0-9]+$")) and .row == "a" and
	    .column == "c" and .op == "put" and .value == "1"' \
	    <<<"${lines[0]}" > /dev/null
	jq -e '.op == "del" and (has("value") | not)' <<<"${lines[1]}" \
	    > /dev/null
	jq -e 'keys == ["resolved"] and (.resolved | test("^[0-9]+$"))' \
	    <<<"${lines[2]}" > /dev/null
	# The same timestamps as the TSV.
	[ "$(jq -r .commit_ts <<<"${lines[0]}")" = \
	    "$(perc log --since "$T0" | head -n 1 | cut -f1)" ]
}

@test "show, resolve-locks and scan-notify --json: the fields of their lines, named" {
	perc_fresh_dir obs
	perc init --observe doc "$PERC_DIR"
	perc set r doc v
	run -0 perc scan-notify --json
	assert_output '{"row":"r","column":"doc"}'
	run -0 perc scan-notify --json --failures
	assert_output '{"row":"r","column":"doc","failures":0}'
	run -0 perc show --json r
	for line in "${lines[@]}"; do
		jq -e 'keys == ["column", "detail", "kind", "ts"] and
		    (.ts | test("^[0-9]+$"))' <<<"$line" > /dev/null ||
			fail "show: $line"
	done
	printf '%s\n' "${lines[@]}" | jq -e 'select(.kind == "notify")' \
	    > /dev/null
	stuck_commit after-prewrite
	run -0 perc resolve-locks --json
	[ "${#lines[@]}" -eq 3 ]
	for line in "${lines[@]}"; do
		jq -e '.column == "col" and .action == "rolled-back" and
		    (.start_ts | test("^[0-9]+$"))' <<<"$line" > /dev/null ||
			fail "resolve-locks: $line"
	done
}

@test "status --json: one object, counts as numbers, timestamps as strings, none as null, the observed columns as a list" {
	perc_fresh_dir obs
	perc init --observe doc --observe-weak $'w\xff' "$PERC_DIR"
	perc set r doc v
	perc begin > "$BATS_TEST_TMPDIR/t"     # this shell's: alive
	t=$(cat "$BATS_TEST_TMPDIR/t")
	run -0 perc status --json
	[ "${#lines[@]}" -eq 1 ]
	jq -e '(.store | type) == "string" and .open_transactions == 1 and
	    .oldest_open_start == "'"$t"'" and .locks == 0 and
	    (.safe_point | test("^[0-9]+$")) and .log_hold == null and
	    .observed[0] == {"column": "doc", "kind": "strong", "dirty_cells": 1} and
	    .observed[1].kind == "weak" and .observed[1].dirty_cells == 0' \
	    <<<"$output" > /dev/null || fail "status --json: $output"
	jq -c '.observed[1].column' <<<"$output" | json_bytes > "$BATS_TEST_TMPDIR/col"
	assert_bytes 'w\xff' "$BATS_TEST_TMPDIR/col"
	run -0 perc status --transactions --json
	jq -e '.handle == "'"$t"'" and .start_ts == "'"$t"'" and
	    (.age_seconds | type) == "number" and .state == "alive" and
	    .writes == 0' <<<"$output" > /dev/null ||
	    fail "status --transactions --json: $output"
}

@test "--json changes no exit status and no error" {
	run -2 --separate-stderr perc scan --json --at 0
	[ -z "$output" ]
	assert_error_line
	run -5 --separate-stderr perc get --json -t 12345 a c
	assert_error_line
}
