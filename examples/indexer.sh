#!/bin/bash
# examples/indexer.sh - an incremental indexer in the spirit of the
# Percolator paper: documents arrive one at a time, and observers keep
# an inverted index and its word counts up to date, each run doing the
# work of one change, where a batch job would read the whole corpus
# again.
#
#   indexer.sh DIR                  the demo: init, start the observers
#                                       in the background (serve), load
#                                       50 documents, wait, verify;
#                                       change 10 and delete 5, wait,
#                                       verify; print the index
#   indexer.sh DIR init             perc init --observe doc
#                                       --observe-weak count DIR
#   indexer.sh DIR load FIRST N [V] load N generated documents, FIRST
#                                       to FIRST+N-1, version V (default
#                                       1; another V, other words), with
#                                       perc load, in one transaction
#   indexer.sh DIR delete FIRST N   delete those documents, in one
#                                       transaction
#   indexer.sh DIR run [PASSES]     index: both observers, one --once
#                                       pass after the other, until no
#                                       cell is dirty (exit 1 if still
#                                       dirty after PASSES, default 100;
#                                       WORKERS=N: N runners each)
#   indexer.sh DIR serve            both observers, long-running, until
#                                       SIGINT or SIGTERM (run it in the
#                                       background)
#   indexer.sh DIR wait [SECONDS]   wait until the observers of serve
#                                       have indexed every change made
#                                       so far (perc wait; exit 1 when
#                                       SECONDS, default 300, run out)
#   indexer.sh DIR verify           compare the index's counts with a
#                                       batch recomputation from the
#                                       documents: exit 0 if equal
#   indexer.sh DIR index            print the index: WORD TOTAL DOCS
#   indexer.sh DIR batch            print the batch recomputation, in
#                                       the same form
#   indexer.sh DIR reindex          print the whole index recomputed in
#                                       batch, postings, word lists and
#                                       counts, in perc load's form
#
# A document is any row with a value in column doc; the generated ones
# are doc00001, doc00002, ...  A word is a run of letters and digits,
# folded to lower case; any other byte separates words.  The table:
#
#   DOCID      doc    the text (strongly observed)
#   DOCID      words  the words indexed from it, as WORD:COUNT ...
#   p:W:DOCID  n      a posting: W occurs n times in DOCID
#   q:W:DOCID  delta  "DN DD": a change not yet counted, DN more
#                     occurrences of W, in DD more documents (-1, 0, 1)
#   w:W        count  W's aggregate (weakly observed, holds no value)
#   w:W        total  the occurrences of W in the corpus
#   w:W        docs   the documents that hold W
#
# The observer of doc (a long-running one, perc run-observer
# --coprocess, speaking perc shell's request language) reads the
# document and the word list it indexed last time, writes the postings
# that changed, adds each change to the word's delta cell, and notifies
# w:W count for each word that changed, all in its transaction.  A
# deleted document takes all its postings with it.
#
# Many documents hold the same word: were they to add to w:W total
# themselves, their transactions would conflict on it.  A weak
# notification takes no lock, so they never do.  The observer of count
# then adds the word's pending deltas to total and docs and deletes
# them, in one transaction: a second run finds no delta and changes
# nothing, which is what at least once asks of it.  It reads only the
# deltas, never the word's postings, so its cost is that of the change,
# however large the corpus grows; so is the observer of doc's.  (The
# deltas it deletes stay in the store as versions until perc gc removes
# them, and a scan of a word's deltas walks past those: gc keeps the
# cost flat.)
#
# Needs perc on PATH; exit 1 when something fails.
set -u
set -o pipefail
export LC_ALL=C

prog=indexer.sh
self=$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")

usage() {
	echo "usage: $prog DIR [init | load FIRST N [V] | delete FIRST N |" \
	    "run [PASSES] | serve | wait [SECONDS] | verify | index |" \
	    "batch | reindex]" >&2
	exit 2
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

# ---------------------------------------------------------------------
# The observers, each a coprocess of perc run-observer: "run TXN ROW
# COLUMN" lines in, requests out, one answer line in for each.

# ask REQUEST...: send one request; st is the answer's first word (ok,
# none or err), res the rest of it.
ask() {
	printf '%s\n' "$*"
	IFS= read -r res || exit 0
	st=${res%% *}
	res=${res#"$st"}
	res=${res# }
}

# want REQUEST...: ask; false unless the answer is ok or none.
want() {
	ask "$@"
	[ "$st" = ok ] || [ "$st" = none ]
}

# words_of TEXT: the words of TEXT, an escaped value, into the
# associative array counts (WORD -> occurrences).  Every escape stands
# for a byte that is no letter or digit, so each becomes a space: first
# each "\\", then what begins with the backslashes left.
words_of() {
	local text=$1 w
	text=${text//\\\\/ }
	text=${text//\\[tn]/ }
	text=${text//\\x[0-9a-fA-F][0-9a-fA-F]/ }
	text=${text,,}
	text=${text//[^a-z0-9]/ }
	counts=()
	for w in $text; do
		counts[$w]=$((${counts[$w]:-0} + 1))
	done
}

# index_doc TXN DOCID: bring the postings of DOCID (escaped, as a word
# of a request) up to date with its text; false on a failed request.
index_doc() {
	local t=$1 doc=$2 w pair before now dn dd
	local -A counts old
	want get -t "$t" "$doc" doc || return 1
	if [ "$st" = ok ]; then words_of "$res"; else counts=(); fi
	want get -t "$t" "$doc" words || return 1
	if [ "$st" = ok ]; then
		for pair in $res; do old[${pair%:*}]=${pair##*:}; done
	fi
	# Every word whose count changed, in either list.
	for w in "${!counts[@]}" "${!old[@]}"; do
		before=${old[$w]:-0} now=${counts[$w]:-0}
		[ "$before" != "$now" ] || continue
		old[$w]=$now            # done: the second list skips it
		if [ "$now" = 0 ]; then
			want del -t "$t" "p:$w:$doc" n || return 1
		else
			want set -t "$t" "p:$w:$doc" n "$now" || return 1
		fi
		dn=$((now - before))
		dd=$(((now > 0) - (before > 0)))
		want get -t "$t" "q:$w:$doc" delta || return 1
		if [ "$st" = ok ]; then
			dn=$((dn + ${res% *}))
			dd=$((dd + ${res#* }))
		fi
		if [ "$dn $dd" = "0 0" ]; then
			want del -t "$t" "q:$w:$doc" delta || return 1
		else
			want set -t "$t" "q:$w:$doc" delta "$dn\\x20$dd" ||
			    return 1
		fi
		want notify -t "$t" "w:$w" count || return 1
	done
	# The word list, for the next change.
	pair=
	for w in "${!counts[@]}"; do pair+="\\x20$w:${counts[$w]}"; done
	if [ -n "$pair" ]; then
		want set -t "$t" "$doc" words "${pair#\\x20}"
	else
		want del -t "$t" "$doc" words
	fi
}

# count_word TXN W: add the pending deltas of word W to its total and
# docs, and delete them; false on a failed request.
count_word() {
	local t=$1 w=$2 line row total=0 docs=0 dn=0 dd=0
	local -a rows=()
	printf 'scan -t %s --prefix q:%s: --column delta\n' "$t" "$w"
	while :; do
		IFS= read -r line || exit 0
		case $line in
		"cell "*)
			line=${line#cell }
			row=${line%%$'\t'*}
			rows+=("${row// /\\x20}")    # back as a word
			line=${line##*$'\t'}
			dn=$((dn + ${line% *}))
			dd=$((dd + ${line#* }))
			;;
		"ok "*) break ;;
		*) st=${line%% *} res=${line#* }; return 1 ;;
		esac
	done
	[ "${#rows[@]}" -gt 0 ] || return 0   # an earlier run counted them
	want get -t "$t" "w:$w" total || return 1
	[ "$st" = ok ] && total=$res
	want get -t "$t" "w:$w" docs || return 1
	[ "$st" = ok ] && docs=$res
	total=$((total + dn)) docs=$((docs + dd))
	if [ "$docs" -gt 0 ]; then
		want set -t "$t" "w:$w" total "$total" || return 1
		want set -t "$t" "w:$w" docs "$docs" || return 1
	else
		want del -t "$t" "w:$w" total || return 1
		want del -t "$t" "w:$w" docs || return 1
	fi
	for row in "${rows[@]}"; do
		want del -t "$t" "$row" delta || return 1
	done
}

# observe FUNCTION: serve run lines with FUNCTION TXN ROW until the end
# of input.  A failed request aborts the run (done 1); the runner
# retries the cell later.
observe() {
	local verb txn row column
	while read -r verb txn row column; do
		[ "$verb" = run ] || exit 1
		if "$1" "$txn" "$row"; then
			ask done 0
		else
			echo "$prog: $1 $row: $st $res" >&2
			ask done 1
		fi
	done
}

# The observer of count runs on rows w:W, and W is letters and digits.
observe_count() { count_word "$1" "${2#w:}"; }

# ---------------------------------------------------------------------
# Setting up, loading, running, checking.

# generate FIRST N V: N documents in perc load's form.  Words are drawn
# from a vocabulary of 5,000 by a log-uniform rank, so that a few are
# frequent and most are rare, as in any text; a document has 20 to 40.
generate() {
	awk -v first="$1" -v n="$2" -v v="$3" 'BEGIN {
		split("ka lo mi ne su ta ri po ve du", syl, " ")
		for (d = first; d < first + n; d++) {
			srand(d * 7919 + v * 104729)
			len = 20 + int(rand() * 21)
			text = ""
			for (i = 0; i < len; i++) {
				r = int(exp(rand() * log(5000)))
				w = ""
				for (; r > 0; r = int(r / 10))
					w = w syl[r % 10 + 1]
				if (i == 0)
					w = toupper(substr(w, 1, 1)) substr(w, 2)
				sep = rand() < 0.1 ? ", " : " "
				text = text (i ? sep : "") w
			}
			printf "doc%05d\tdoc\t%s.\n", d, text
		}
	}'
}

# drain PASSES: run both observers, a --once pass each, until nothing
# is dirty.  An observer that failed (exit 1) leaves its cell dirty for
# the next pass; anything else stops.
drain() {
	local pass rc
	for ((pass = 0; pass < $1; pass++)); do
		[ -n "$(perc scan-notify)" ] || return 0
		for column in doc count; do
			rc=0
			perc run-observer --once --quiet --coprocess \
			    --workers "${WORKERS:-1}" "$column" \
			    -- "$self" "$PERC_DIR" "observe-$column" || rc=$?
			[ "$rc" -le 1 ] || return "$rc"
		done
	done
	[ -z "$(perc scan-notify)" ]
}

# serve: both observers until SIGINT or SIGTERM, which end them both.
serve() {
	local doc count
	perc run-observer --quiet --coprocess doc \
	    -- "$self" "$PERC_DIR" observe-doc &
	doc=$!
	perc run-observer --quiet --coprocess count \
	    -- "$self" "$PERC_DIR" observe-count &
	count=$!
	trap : INT TERM
	wait -n "$doc" "$count"         # a signal, or a runner that failed
	kill -TERM "$doc" "$count" 2> /dev/null
	wait "$doc" "$count"
}

# caught_up SECONDS: wait until the observers running in the background
# have done all there is to do.  perc wait, not a look at scan-notify:
# an empty scan-notify may come while a load's commit, or an observer
# run about to notify a count, is still under way.
caught_up() {
	perc wait --timeout "$1" ||
	    die "the observers did not catch up within $1 s; is serve running?"
}

# index: the index's counts, one word a line: WORD TOTAL DOCS.
index() {
	perc scan --prefix w: | awk -F '\t' '
	    function flush() { if (w != "") print w "\t" t "\t" d }
	    $1 != "w:" w { flush(); w = substr($1, 3); t = d = "" }
	    $2 == "total" { t = $3 }
	    $2 == "docs" { d = $3 }
	    END { flush() }'
}

# batch: the same, recomputed from the documents alone.  Escapes are
# bytes that separate words, as in words_of.
batch() {
	perc scan --column doc | cut -f 3 |
	    sed -E 's/\\(\\|t|n|x[0-9a-fA-F]{2})/ /g' | tr A-Z a-z |
	    tr -cs 'a-z0-9\n' ' ' > "$tmp/words" || return
	# total: every occurrence; docs: each document's words once.
	tr -s ' ' '\n' < "$tmp/words" | sed '/^$/d' | sort | uniq -c |
	    awk '{ print $2 "\t" $1 }' > "$tmp/total" &&
	awk '{ delete seen; for (i = 1; i <= NF; i++)
	    if (!seen[$i]++) print $i }' "$tmp/words" | sort | uniq -c |
	    awk '{ print $2 "\t" $1 }' > "$tmp/docs" &&
	join -t "$(printf '\t')" "$tmp/total" "$tmp/docs"
}

# reindex: what a batch indexer would write, from the documents alone:
# every posting, word list and count (a word list in no set order).
reindex() {
	perc scan --column doc | awk -F '\t' '
	{
		text = $3
		gsub(/\\(\\|t|n|x[0-9a-fA-F][0-9a-fA-F])/, " ", text)
		text = tolower(text)
		gsub(/[^a-z0-9]+/, " ", text)
		n = split(text, words, " ")
		split("", count)
		for (i = 1; i <= n; i++)
			count[words[i]]++
		list = ""
		for (w in count) {
			printf "p:%s:%s\tn\t%d\n", w, $1, count[w]
			list = list (list == "" ? "" : " ") w ":" count[w]
			total[w] += count[w]
			docs[w]++
		}
		if (list != "")
			printf "%s\twords\t%s\n", $1, list
	}
	END {
		for (w in total)
			printf "w:%s\tdocs\t%d\nw:%s\ttotal\t%d\n", w, docs[w],
			    w, total[w]
	}'
}

# verify: the index's counts against the batch's, its postings and
# counts against a batch reindex, and no delta left uncounted.
verify() {
	index > "$tmp/index" || die "cannot read the index"
	batch > "$tmp/batch" || die "cannot read the documents"
	if ! cmp -s "$tmp/index" "$tmp/batch"; then
		diff "$tmp/batch" "$tmp/index" | head -20 >&2
		die "the index differs from the batch recomputation"
	fi
	perc scan | grep -E '^[pw]:' > "$tmp/cells"
	reindex | grep -E '^[pw]:' | sort -t "$(printf '\t')" -k 1,1 -k 2,2 \
	    > "$tmp/recells" || die "cannot read the documents"
	if ! cmp -s "$tmp/cells" "$tmp/recells"; then
		diff "$tmp/recells" "$tmp/cells" | head -20 >&2
		die "the postings differ from a batch reindex"
	fi
	[ -z "$(perc scan --prefix q:)" ] || die "deltas are left uncounted"
	echo "# the index matches the batch recomputation:" \
	    "$(wc -l < "$tmp/index") words"
}

# The demo: the observers run in the background while documents come,
# and perc wait says when the index has caught up with them.
demo() {
	perc init --observe doc --observe-weak count "$PERC_DIR" || exit
	serve &
	runners=$!                      # for the trap, which runs at exit
	trap 'kill -TERM "$runners" 2> /dev/null; wait "$runners";
	    rm -rf "$tmp"' EXIT
	echo "# 50 documents, loaded in one transaction"
	generate 1 50 1 > "$tmp/docs" && retry load_file "$tmp/docs" ||
	    die "load failed"
	caught_up 300
	verify
	echo "# 10 of them changed, 5 deleted"
	generate 11 10 2 > "$tmp/docs" && retry load_file "$tmp/docs" ||
	    die "load failed"
	retry delete 41 5 || die "delete failed"
	caught_up 300
	verify
	echo "# the index: word, occurrences, documents (the 10 most frequent)"
	index | sort -t "$(printf '\t')" -k 2,2nr -k 1,1 | sed -n '1,10p'
}

# delete FIRST N: delete documents FIRST to FIRST+N-1 in one transaction.
# retry CMD...: CMD again while it loses a write-write conflict (exit 3:
# its transaction is over, and a new one may succeed), as a writer must
# beside running observers, whose transactions lock the document rows;
# at most 50 times.
retry() {
	local i rc
	for ((i = 0; i < 50; i++)); do
		rc=0
		"$@" || rc=$?
		[ "$rc" -eq 3 ] || return "$rc"
	done
	return 3
}

# load_file FILE: load FILE's cells in one transaction.
load_file() { perc load < "$1" > /dev/null; }

delete() {
	local t i
	t=$(perc begin) || return
	for ((i = $1; i < $1 + $2; i++)); do
		perc del -t "$t" "$(printf 'doc%05d' "$i")" doc || return
	done
	perc commit -t "$t" > /dev/null
}

[ $# -ge 1 ] || usage
export PERC_DIR=$1
shift
case ${1:-demo} in
observe-doc) observe index_doc; exit ;;
observe-count) observe observe_count; exit ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/indexer.XXXXXX") || exit
trap 'rm -rf "$tmp"' EXIT
case ${1:-demo} in
demo) [ $# -le 1 ] || usage; demo ;;
init) [ $# -eq 1 ] || usage
	perc init --observe doc --observe-weak count "$PERC_DIR" ;;
load) [ $# -ge 3 ] && [ $# -le 4 ] || usage
	generate "$2" "$3" "${4:-1}" > "$tmp/docs" &&
	    retry load_file "$tmp/docs" ;;
delete) [ $# -eq 3 ] || usage; retry delete "$2" "$3" ;;
run) [ $# -le 2 ] || usage; drain "${2:-100}" ;;
serve) [ $# -eq 1 ] || usage; serve ;;
wait) [ $# -le 2 ] || usage; caught_up "${2:-300}" ;;
verify) [ $# -eq 1 ] || usage; verify ;;
index) [ $# -eq 1 ] || usage; index ;;
batch) [ $# -eq 1 ] || usage; batch ;;
reindex) [ $# -eq 1 ] || usage; reindex ;;
*) usage ;;
esac
