#!/usr/bin/env bats
# tests/indexer.bats - examples/indexer.sh, the incremental indexer: its
# index, kept by a strong and a weak observer, checked against a batch
# recomputation from the documents, on both stores

load helpers

setup() {
	perc_fresh_dir
	INDEXER=$PERC_SRC/examples/indexer.sh
	TAB=$'\t'
}

# The words' totals recomputed in batch, apart from the script's own
# check: every occurrence of every word of every document, counted.
# The generated documents hold no escapes.
batch_totals() {
	perc scan --column doc | cut -f 3 | tr A-Z a-z |
	    tr -cs 'a-z0-9' '\n' | sed '/^$/d' | LC_ALL=C sort | uniq -c |
	    awk '{ print $2 "\t" $1 }'
}

# The index's totals, in the same form.
index_totals() {
	perc scan --prefix w: --column total | sed 's/^w://' | cut -f 1,3
}

no_dirty() {
	[ -z "$(perc scan-notify)" ]
}

@test "examples/indexer.sh: 50 documents, 10 changed, 5 deleted, indexed incrementally as a batch would" {
	skip_under_valgrind "hundreds of observer runs"
	run -0 timeout 300 "$INDEXER" "$PERC_DIR" 3>&-
	assert_line --index 0 '# 50 documents, loaded in one transaction'
	assert_line --index 2 '# 10 of them changed, 5 deleted'
	[ "$(grep -c '^# the index matches the batch recomputation' \
	    <<<"$output")" -eq 2 ]
	no_dirty
	# The script's claim, checked from outside.
	batch_totals > "$BATS_TEST_TMPDIR/batch"
	index_totals > "$BATS_TEST_TMPDIR/index"
	[ -s "$BATS_TEST_TMPDIR/batch" ]
	cmp "$BATS_TEST_TMPDIR/batch" "$BATS_TEST_TMPDIR/index"
	[ "$(perc scan --column doc | wc -l)" -eq 45 ]
	# A deleted document leaves no posting, word list or delta.
	run -0 perc scan
	refute_output --regexp 'doc0004[1-5]'
	assert_output --partial 'doc00040'
	run -0 perc scan --prefix q:
	assert_output ''
	# A changed one has the postings of its new words only: its word
	# list names exactly the words of its posting rows.
	perc get doc00011 words | tr ' ' '\n' | cut -d : -f 1 | LC_ALL=C sort \
	    > "$BATS_TEST_TMPDIR/listed"
	perc scan --prefix p: | cut -f 1 | grep ':doc00011$' | cut -d : -f 2 |
	    LC_ALL=C sort > "$BATS_TEST_TMPDIR/posted"
	[ -s "$BATS_TEST_TMPDIR/listed" ]
	cmp "$BATS_TEST_TMPDIR/listed" "$BATS_TEST_TMPDIR/posted"
}

@test "examples/indexer.sh: words split at any byte but letters and digits, escapes included" {
	run -0 "$INDEXER" "$PERC_DIR" init
	# A tab, a backslash before x41, UTF-8, a NUL byte, newlines, a
	# row with a space; then one document emptied and one deleted.
	printf '%s\n' 'my\x20doc	doc	Tab\there\\x41 caf\xc3\xa9 NUL\x00byte\nnew LINE\\\nline' \
	    'a	doc	Hello, hello HELLO!' 'b	doc	hello  line' |
	    perc load > /dev/null
	run -0 timeout 120 "$INDEXER" "$PERC_DIR" run
	run -0 "$INDEXER" "$PERC_DIR" index
	assert_output "$(printf '%s\t%s\t%s\n' byte 1 1 caf 1 1 hello 4 2 \
	    here 1 1 line 3 2 new 1 1 nul 1 1 tab 1 1 x41 1 1)"
	run -0 "$INDEXER" "$PERC_DIR" verify
	perc set b doc ''
	perc del a doc
	run -0 timeout 120 "$INDEXER" "$PERC_DIR" run
	run -0 "$INDEXER" "$PERC_DIR" index
	assert_output "$(printf '%s\t%s\t%s\n' byte 1 1 caf 1 1 here 1 1 \
	    line 2 1 new 1 1 nul 1 1 tab 1 1 x41 1 1)"
	run -0 "$INDEXER" "$PERC_DIR" verify
	run -0 perc scan --prefix a
	assert_output ''
}

@test "examples/indexer.sh: background runners keep the index up to date" {
	skip_under_valgrind "hundreds of observer runs"
	"$INDEXER" "$PERC_DIR" init
	"$INDEXER" "$PERC_DIR" serve 3>&- &
	BG_PIDS+=($!)
	"$INDEXER" "$PERC_DIR" load 1 30
	"$INDEXER" "$PERC_DIR" load 21 10 2
	"$INDEXER" "$PERC_DIR" delete 1 5
	"$INDEXER" "$PERC_DIR" load 31 10
	# perc wait: no look at scan-notify, which may be empty while a
	# run that is to notify a count has yet to commit
	run -0 timeout 300 "$INDEXER" "$PERC_DIR" wait 200
	run -0 "$INDEXER" "$PERC_DIR" verify
	[ "$(perc scan --column doc | wc -l)" -eq 35 ]
	# SIGTERM ends both runners, and the script, with status 0.
	kill -TERM "${BG_PIDS[0]}"
	rc=0
	wait "${BG_PIDS[0]}" || rc=$?
	BG_PIDS=()
	[ "$rc" -eq 0 ]
}

@test "examples/indexer.sh wait: with no observer running, exit 1 when its time runs out, naming why" {
	run -0 "$INDEXER" "$PERC_DIR" init
	run -0 "$INDEXER" "$PERC_DIR" load 1 3
	run -1 --separate-stderr timeout 60 "$INDEXER" "$PERC_DIR" wait 1
	[[ $stderr == *'did not catch up within 1 s; is serve running?' ]]
	run -0 timeout 120 "$INDEXER" "$PERC_DIR" run
	run -0 timeout 60 "$INDEXER" "$PERC_DIR" wait 1
}

@test "examples/indexer.sh verify fails on an index that is out of date or wrong" {
	run -0 "$INDEXER" "$PERC_DIR" init
	run -0 "$INDEXER" "$PERC_DIR" load 1 3
	run -0 timeout 120 "$INDEXER" "$PERC_DIR" run
	run -0 "$INDEXER" "$PERC_DIR" verify
	perc set doc00002 doc 'Brand new words'
	run -1 --separate-stderr "$INDEXER" "$PERC_DIR" verify
	[[ $stderr == *'the index differs from the batch recomputation'* ]]
	run -0 timeout 120 "$INDEXER" "$PERC_DIR" run
	run -0 "$INDEXER" "$PERC_DIR" verify
	run -0 perc get w:brand total
	assert_output 1
	# A posting that lies, with the counts right, is found too.
	perc set p:brand:doc00002 n 2
	run -1 --separate-stderr "$INDEXER" "$PERC_DIR" verify
	[[ $stderr == *'the postings differ from a batch reindex'* ]]
}

@test "examples/indexer.sh: usage errors exit 2" {
	run -2 "$INDEXER"
	run -2 "$INDEXER" "$PERC_DIR" frobnicate
	run -2 "$INDEXER" "$PERC_DIR" load 1
}
