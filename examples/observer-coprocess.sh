#!/bin/bash
# examples/observer-coprocess.sh - a long-running observer in bash, for
# perc run-observer --coprocess: for each dirty cell of column doc, it
# reads the document and writes its length in bytes to column len.
#
#   perc init --observe doc db
#   perc -d db run-observer --coprocess doc -- examples/observer-coprocess.sh
#
# The runner writes "run TXN ROW COLUMN" on our standard input; we
# write requests of perc shell's language on our standard output and
# read each answer, one line, from standard input; "done 0" commits
# the run, any other status aborts it.  ROW comes escaped, as a word of
# a request, and goes back into the requests as it came.
set -u
export LC_ALL=C                         # lengths in bytes

# ask REQUEST...: send one request, its answer into st and res.
ask() {
	printf '%s\n' "$*"
	IFS= read -r answer || exit 0
	st=${answer%% *}
	res=
	[ "$st" = "$answer" ] || res=${answer#* }
}

# One line per cell; the end of input is the end of work.
while read -r verb txn row column; do
	[ "$verb" = run ] || exit 1
	ask get -t "$txn" "$row" doc
	case $st in
	ok)   doc=$res ;;
	none) doc= ;;                   # deleted: its length is 0
	*)    ask done 1; continue ;;   # an error: abort, run again later
	esac
	# The value comes escaped (\t, \n, \\, \xhh): printf %b unmakes
	# that, in this process.  A bash string cannot hold a NUL byte, so
	# each \x00 becomes \x01 first: the length stays right.
	printf -v doc '%b' "${doc//\\x00/\\x01}"
	ask set -t "$txn" "$row" len "${#doc}"
	[ "$st" = ok ] || { ask done 1; continue; }
	ask done 0
done
