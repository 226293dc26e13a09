#!/bin/bash
# examples/clustering.sh - the document clustering of the Percolator
# paper (Peng & Dabek, OSDI 2010, section 2.4), kept up to date by two
# observers as documents are loaded, instead of by a batch job.
#
#   clustering.sh DIR                 create DIR (the same as "init")
#   clustering.sh DIR init            perc init --observe contents
#                                         --observe canonical DIR
#   clustering.sh DIR load URL [TEXT] load a document: perc set URL
#                                         contents TEXT (TEXT omitted:
#                                         standard input, byte for byte)
#   clustering.sh DIR run [SECONDS]   run both observers, one --once pass
#                                         after another, until no cell of
#                                         theirs is dirty (at most SECONDS,
#                                         default 60; exit 1 if not drained)
#   clustering.sh DIR serve [N]       run both observers, N runners each
#                                         (default 1), until SIGINT/SIGTERM
#   clustering.sh DIR verify          recompute the clustering in batch
#                                         from the contents and compare:
#                                         exit 0 if equal, 1 if not
#   clustering.sh DIR demo            init, load a few documents, run,
#                                         verify and show the table
#
# The table:
#
#   URL      contents         the document, as loaded (observed)
#   URL      hash             H, the SHA-1 of the contents
#   hash:H   canonical        the smallest URL whose contents hash to H
#                             (observed)
#   hash:H   counted          1 once H is counted in stats
#   stats    canonical-count  the number of distinct contents
#
# Observer 1 runs when contents change: it hashes the document, writes
# its hash, and makes it the canonical document of its hash when that
# has none yet or a larger URL.  Observer 2 runs when a canonical cell
# changes: the first time for a hash it marks the hash counted and adds
# one to the count, in the same transaction, so a second run (the
# canonical URL of a hash can change several times) adds nothing.  Two
# runs that race on one cell meet as a write-write conflict, and the
# loser's cell stays dirty and runs again; that is all the locking
# needed.
#
# Documents are taken as immutable, as in the paper's example: loading
# a URL again with other contents, or deleting it, is not undone in the
# clustering.  URLs are printable ASCII; "smaller" is byte order.
set -u
set -o pipefail
export LC_ALL=C

self=$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")
prog=clustering.sh

usage() {
	echo "usage: $prog DIR [init | load URL [TEXT] | run [SECONDS] |" \
	    "serve [N] | verify | demo]" >&2
	exit 2
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

# The value of a cell in transaction $1, on standard output; exit 1 when
# there is none, anything else from perc is a failure of the run.
tget() {
	perc get -t "$1" -- "$2" "$3"
}

# Observer 1, on contents: run by perc run-observer, in PERC_TXN.
observe_contents() {
	local t=$PERC_TXN url=$PERC_ROW h cur rc=0

	h=$(perc get -t "$t" -e -- "$PERC_ROW_ESCAPED" contents | sha1sum) ||
	    rc=$?
	case $rc in
	0) ;;
	1) exit 0 ;;    # deleted: nothing to cluster
	*) exit "$rc" ;;
	esac
	h=${h%% *}
	perc set -t "$t" -e -- "$PERC_ROW_ESCAPED" hash "$h" || exit
	cur=$(tget "$t" "hash:$h" canonical) || rc=$?
	case $rc in
	0) [[ $url < $cur ]] || exit 0 ;;
	1) ;;
	*) exit "$rc" ;;
	esac
	perc set -t "$t" -- "hash:$h" canonical "$url"
}

# Observer 2, on canonical (rows hash:H): count each hash once.
observe_canonical() {
	local t=$PERC_TXN row=$PERC_ROW n rc=0

	tget "$t" "$row" canonical > /dev/null || rc=$?
	case $rc in
	0) ;;
	1) exit 0 ;;    # no canonical document: nothing to count
	*) exit "$rc" ;;
	esac
	tget "$t" "$row" counted > /dev/null || rc=$?
	case $rc in
	0) exit 0 ;;    # counted already
	1) ;;
	*) exit "$rc" ;;
	esac
	rc=0
	n=$(tget "$t" stats canonical-count) || rc=$?
	case $rc in
	1) n=0 ;;
	0) ;;
	*) exit "$rc" ;;
	esac
	perc set -t "$t" -- "$row" counted 1 &&
	    perc set -t "$t" stats canonical-count $((n + 1))
}

# Set ndirty to the number of dirty cells of the two observed columns.
count_dirty() {
	local out

	out=$(perc scan-notify --column contents &&
	    perc scan-notify --column canonical) || return
	ndirty=0
	[ -z "$out" ] || ndirty=$(printf '%s\n' "$out" | wc -l)
}

# One --once pass of each observer until nothing is dirty.
run_observers() {
	local deadline=$((SECONDS + ${1:-60})) col rc

	while :; do
		for col in contents canonical; do
			# 1: an observer failed; its cell is retried
			rc=0
			perc run-observer --once --quiet "$col" -- \
			    "$self" "$PERC_DIR" "observe-$col" || rc=$?
			[ "$rc" -le 1 ] || exit "$rc"
		done
		count_dirty || exit
		[ "$ndirty" -eq 0 ] && return 0
		[ "$SECONDS" -lt "$deadline" ] ||
		    die "$ndirty cells still dirty after ${1:-60} s"
	done
}

# Both observers, long-running, until SIGINT or SIGTERM, which are passed
# on to the runners; exit 0 if both runners exit 0.
serve() {
	local n=${1:-1} p rc=0 st prev sigs=0 seen pids=()

	trap 'sigs=$((sigs + 1)); kill -TERM "${pids[@]}" 2> /dev/null' TERM INT
	perc run-observer --quiet --workers "$n" contents -- \
	    "$self" "$PERC_DIR" observe-contents &
	pids+=($!)
	perc run-observer --quiet --workers "$n" canonical -- \
	    "$self" "$PERC_DIR" observe-canonical &
	pids+=($!)
	[ "$sigs" -eq 0 ] || kill -TERM "${pids[@]}"
	for p in "${pids[@]}"; do
		# A trapped signal ends wait early, with no status taken:
		# then wait again.  (127 then means the first was p's.)
		st=
		while :; do
			seen=$sigs prev=$st st=0
			wait "$p" || st=$?
			[ "$sigs" -ne "$seen" ] || break
		done
		[ "$st" -ne 127 ] || [ -z "$prev" ] || st=$prev
		[ "$st" -eq 0 ] || rc=$st
	done
	return "$rc"
}

# Recompute the clustering from the documents alone and compare it with
# what the observers left, all at one snapshot.
verify() {
	local at erow ecol eval h n docs hashcells canon bad=0
	local -A want=() hashes=() got=()

	count_dirty || exit
	[ "$ndirty" -eq 0 ] || die "cells are still dirty; '$prog DIR run' first"
	at=$(perc ts) || exit
	docs=$(perc scan --at "$at" --column contents) || exit
	hashcells=$(perc scan --at "$at" --column hash) || exit
	canon=$(perc scan --at "$at" --column canonical) || exit
	# group the documents by the hash of their contents (scan escapes
	# them; printf %b undoes \t, \n, \\ and \xhh)
	while IFS=$'\t' read -r erow ecol eval; do
		[ -n "$ecol" ] || continue      # no document at all
		h=$(printf '%b' "$eval" | sha1sum)
		h=${h%% *}
		hashes[$erow]=$h
		if [ -z "${want[$h]+set}" ] || [[ $erow < ${want[$h]} ]]; then
			want[$h]=$erow
		fi
	done <<< "$docs"
	# every document's hash cell
	while IFS=$'\t' read -r erow ecol eval; do
		[ -n "$ecol" ] && got[$erow]=$eval
	done <<< "$hashcells"
	for erow in "${!hashes[@]}"; do
		if [ "${got[$erow]-none}" != "${hashes[$erow]}" ]; then
			echo "$prog: $erow: hash is ${got[$erow]-none}," \
			    "want ${hashes[$erow]}" >&2
			bad=1
		fi
	done
	# the canonical document of each hash, and no other hash rows
	got=()
	while IFS=$'\t' read -r erow ecol eval; do
		[ -n "$ecol" ] && got[${erow#hash:}]=$eval
	done <<< "$canon"
	for h in "${!want[@]}"; do
		if [ "${got[$h]-none}" != "${want[$h]}" ]; then
			echo "$prog: hash:$h: canonical is ${got[$h]-none}," \
			    "want ${want[$h]}" >&2
			bad=1
		fi
	done
	for h in "${!got[@]}"; do
		if [ -z "${want[$h]+set}" ]; then
			echo "$prog: hash:$h: canonical ${got[$h]} for no" \
			    "document" >&2
			bad=1
		fi
	done
	# the count of canonical documents
	n=$(perc get --at "$at" stats canonical-count) || n=0
	if [ "$n" != "${#want[@]}" ]; then
		echo "$prog: stats canonical-count is $n, want ${#want[@]}" >&2
		bad=1
	fi
	[ "$bad" -eq 0 ] || return 1
	echo "${#hashes[@]} documents, ${#want[@]} distinct: clustering verified"
}

say() {
	printf '\n$ %s\n' "$*"
}

demo() {
	local url text

	perc init --observe contents --observe canonical "$PERC_DIR" || exit
	while read -r url text; do
		say "$prog DIR load $url '$text'"
		perc set -- "$url" contents "$text" || exit
	done <<-'EOF'
	http://b.example/ the quick brown fox
	http://a.example/mirror the quick brown fox
	http://c.example/ jumps over the lazy dog
	http://a.example/ the quick brown fox
	http://d.example/ percolator
	EOF
	say "perc scan-notify"
	perc scan-notify
	say "$prog DIR run"
	run_observers 60 || exit
	say "perc scan"
	perc scan
	say "$prog DIR verify"
	verify
}

[ $# -ge 1 ] || usage
case $1 in
-h | --help)
	sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
	exit 0
	;;
esac
PERC_DIR=$1
export PERC_DIR
shift
cmd=${1:-init}
[ $# -eq 0 ] || shift
case $cmd in
init)
	[ $# -eq 0 ] || usage
	perc init --observe contents --observe canonical "$PERC_DIR"
	;;
load)
	[ $# -eq 1 ] || [ $# -eq 2 ] || usage
	perc set -- "$1" contents ${2+"$2"}
	;;
run)
	[ $# -le 1 ] || usage
	run_observers "$@"
	;;
serve)
	[ $# -le 1 ] || usage
	serve "$@"
	;;
verify)
	[ $# -eq 0 ] || usage
	verify
	;;
demo)
	[ $# -eq 0 ] || usage
	demo
	;;
observe-contents)
	observe_contents
	;;
observe-canonical)
	observe_canonical
	;;
*)
	usage
	;;
esac
