# tests/bench/workloads.sh - the bank transfers that run.sh measures,
# sourced by it: on perc (separate commands, multi-cell commands, one
# perc shell coprocess a worker) and on the sqlite3 CLI, and rate,
# which runs WORKERS of one kind at once.  With own_rows=1, each worker
# moves money among accounts of its own (no conflicts); else all share
# the same accounts.
accounts=10                     # the Redis part's rows take 1,000 too
own_rows=0                      # 1: each worker has accounts of its own
max_workers=8                   # ... of at most this many workers
# How many accounts a store holds: accounts, or a set for each worker.
all_accounts() { echo $((own_rows ? accounts * max_workers : accounts)); }
setup_perc() {
	fresh "$1"
	awk -v n="$(all_accounts)" 'BEGIN { for (i = 0; i < n; i++)
	    printf "acct%d\tbal\t1000\n", i }' | perc -d "$1" load > /dev/null
}
setup_sqlite() {
	rm -f "$1"
	awk -v n="$(all_accounts)" 'BEGIN { print "PRAGMA journal_mode=WAL;";
	    print "CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER);";
	    print "CREATE TABLE t(k TEXT PRIMARY KEY, v TEXT);";
	    print "BEGIN;"; for (i = 0; i < n; i++)
	    printf "INSERT INTO acct VALUES (%d, 1000);\n", i; print "COMMIT;" }' |
	    sqlite3 "$1" > /dev/null
}
# Two accounts of the worker's ($worker, from 1, when own_rows is 1).
pick() {
	local base=$((own_rows ? (${worker:-1} - 1) * accounts : 0))
	from=$((RANDOM % accounts))
	to=$(((from + 1 + RANDOM % (accounts - 1)) % accounts))
	from=$((base + from)) to=$((base + to))
}

xfer_separate() {       # DIR COUNT
	local k t a b rc
	for k in $(seq "$2"); do
		pick
		while :; do
			t=$(perc -d "$1" begin)
			a=$(perc -d "$1" get -t "$t" "acct$from" bal)
			b=$(perc -d "$1" get -t "$t" "acct$to" bal)
			perc -d "$1" set -t "$t" "acct$from" bal $((a - 1))
			perc -d "$1" set -t "$t" "acct$to" bal $((b + 1))
			rc=0; perc -d "$1" commit -t "$t" >/dev/null 2>&1 || rc=$?
			[ $rc -eq 0 ] && break
			[ $rc -eq 3 ] || return 1
			echo >> "$1.retries"
		done
	done
}
xfer_multi() {
	local k t a b rc
	for k in $(seq "$2"); do
		pick
		while :; do
			t=$(perc -d "$1" begin)
			{ read -r a; read -r b; } < <(perc -d "$1" get -t "$t" \
			    "acct$from" bal "acct$to" bal)
			perc -d "$1" set -t "$t" "acct$from" bal $((a - 1)) \
			    "acct$to" bal $((b + 1))
			rc=0; perc -d "$1" commit -t "$t" >/dev/null 2>&1 || rc=$?
			[ $rc -eq 0 ] && break
			[ $rc -eq 3 ] || return 1
			echo >> "$1.retries"
		done
	done
}
xfer_coproc() {
	local k t a b st res
	coproc P { perc -d "$1" shell; }
	ask() { echo "$*" >&"${P[1]}"; read -r st res <&"${P[0]}"; }
	for k in $(seq "$2"); do
		pick
		while :; do
			ask begin; t=$res
			ask get -t "$t" "acct$from" bal; a=$res
			ask get -t "$t" "acct$to" bal; b=$res
			ask set -t "$t" "acct$from" bal $((a - 1))
			ask set -t "$t" "acct$to" bal $((b + 1))
			ask commit -t "$t"
			[ "$st" = ok ] && break
			case $res in "3 "*) echo >> "$1.retries" ;; *) return 1 ;; esac
		done
	done
	exec {P[1]}>&-
	wait "$P_PID" 2>/dev/null || true
}
xfer_sqlite() {
	local k
	for k in $(seq "$2"); do
		pick
		sqlite3 -cmd '.timeout 30000' "$1" "BEGIN IMMEDIATE;
		    SELECT bal FROM acct WHERE id=$from;
		    SELECT bal FROM acct WHERE id=$to;
		    UPDATE acct SET bal=bal-1 WHERE id=$from;
		    UPDATE acct SET bal=bal+1 WHERE id=$to; COMMIT;" >/dev/null
	done
}
# One-cell writes, each worker on rows of its own: autocommit perc set,
# a process each, against sqlite3's INSERT OR REPLACE, a process each;
# and one-cell transactions through one perc shell a worker, against
# one sqlite3 process a worker.
xfer_set() {
	local k
	for k in $(seq "$2"); do
		perc -d "$1" set "w${worker:-1}-$k" c v
	done
}
xfer_sqliteset() {
	local k
	for k in $(seq "$2"); do
		sqlite3 -cmd '.timeout 30000' "$1" "PRAGMA synchronous=FULL;
		    INSERT OR REPLACE INTO t VALUES ('w${worker:-1}-$k', 'v');"
	done
}
xfer_shell1() {
	local k st res t
	coproc P { perc -d "$1" shell; }
	for k in $(seq "$2"); do
		echo begin >&"${P[1]}"; read -r st t <&"${P[0]}"
		echo "set -t $t w${worker:-1}-$k c v" >&"${P[1]}"
		read -r st res <&"${P[0]}"
		echo "commit -t $t" >&"${P[1]}"; read -r st res <&"${P[0]}"
		[ "$st" = ok ] || return 1
	done
	exec {P[1]}>&-
	wait "$P_PID" 2>/dev/null || true
}
xfer_sqliteshell1() {
	awk -v n="$2" -v w="${worker:-1}" 'BEGIN {
	    print ".timeout 30000"; print "PRAGMA synchronous=FULL;"
	    for (i = 1; i <= n; i++)
		printf "BEGIN IMMEDIATE; INSERT OR REPLACE INTO t VALUES " \
		    "(%cw%d-%d%c, %cv%c); COMMIT;\n", 39, w, i, 39, 39, 39 }' |
	    sqlite3 "$1" > /dev/null
}

# retried KIND WORKERS COUNT-PER-WORKER: how many of rate's transfers a
# conflict made start again (a transfer may retry more than once).
retried() {
	local f="$work/${RATE_TAG:-}$1-$2.retries" r=0
	[ ! -f "$f" ] || r=$(wc -l < "$f")
	echo "    ($r retries after a conflict, for $(($2 * $3)) transfers)"
}
# rate KIND WORKERS COUNT-PER-WORKER: transfers per second.  A worker
# that gives up (an error other than a conflict) is said on stderr: its
# transfers were not all made, so the figure is too high.
rate() {
	local kind=$1 workers=$2 count=$3 store="$work/${RATE_TAG:-}$1-$2" start end i
	local pids=() failed=0
	case $kind in
	sqlite*) setup_sqlite "$store" ;;
	*) setup_perc "$store" ;;
	esac
	rm -f "$store.retries"
	start=$(date +%s.%N)
	for i in $(seq "$workers"); do
		worker=$i "xfer_$kind" "$store" "$count" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || failed=$((failed + 1)); done
	end=$(date +%s.%N)
	[ "$failed" -eq 0 ] ||
	    echo "($kind, $workers workers: $failed gave up; the figure is too high)" >&2
	awk -v n=$((workers * count)) -v s="$start" -v e="$end" \
	    'BEGIN { printf "%.0f", n / (e - s) }'
}
