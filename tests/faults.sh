#!/bin/bash
# tests/faults.sh - perc on a Redis Cluster under the faults a cluster
# routinely has, with every promise checked
#
# usage: tests/faults.sh DIR SECONDS
#
# Starts a loopback cluster of 3 masters and 3 replicas in DIR/c, each
# node on an address of its own (tests/cluster, CLUSTER_APART=1; root
# and nftables), and for SECONDS seconds injects one fault at a time,
# each healed, and the cluster whole again, before the next, in turn:
#
#   partition  a master cut off from every other node for 4 to 8 s,
#              while clients still reach it (its replica takes over);
#   link       a master cut off from its replica alone for 4 s;
#   pause      a master stopped (SIGSTOP) for 4 to 8 s;
#   kill       a master killed (kill -9), its replica let take over,
#              then started again.
#
# Meanwhile, each workload on a table of its own:
#
#   bank       tests/chaos.sh, 2 workers (transfers as separate perc
#              commands, failpoints, kills): every snapshot sums right,
#              every printed commit is there, nothing half applied;
#   appends    2 workers, each a perc shell coprocess: a transaction
#              appends its id to the lists of 2 of 4 keys;
#   writes     autocommit perc set, a new row each time;
#   ts         perc ts in a loop.
#
# Then every fault is healed, and the checks run:
#   appends    an acknowledged append is in each of its lists (no lost
#              write); a refused one in none; each append in all of its
#              lists or none (no transaction in part); no id twice, none
#              never attempted; what each transaction read of a list is
#              what preceded its own id there (no lost update), and what
#              any transaction read is a prefix of the final list; the
#              orders the lists give the transactions have no cycle;
#   writes     every acknowledged write is there, no refused one is;
#   ts         each process's timestamps increase, none repeats, and the
#              oracle is past all of them.
#
# Prints the figures (faults injected, transfers, appends and writes
# acknowledged, anomalies) and exits 0 when every check holds, 1 when
# one does not (each anomaly printed), 2 when the run could not be made.
# Every process it starts, its nft table and its cluster are gone when
# it exits, however it exits.  Logs stay in DIR.
#
# Environment: PERC_BUILD (directory holding perc; default: the parent
# of this script's directory), FAULTS_SEED.

set -u

usage() {
	echo "usage: tests/faults.sh DIR SECONDS" >&2
	exit 2
}

[ $# -eq 2 ] || usage
DIR=$1
DURATION=$2
case $DURATION in '' | *[!0-9]*) usage ;; esac

here=$(cd "$(dirname "$0")" && pwd)
PERC_BUILD=${PERC_BUILD:-"$here/.."}
PATH="$PERC_BUILD:$PATH"
export PERC_BUILD
CLUSTER=$here/cluster
command -v perc > /dev/null || { echo "faults: no perc in $PERC_BUILD" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "faults: nftables needs root" >&2; exit 2; }
command -v nft > /dev/null ||
    { echo "faults: nft is not installed: install Debian's nftables" >&2; exit 2; }
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2> /dev/null)" ]; then
	echo "faults: $DIR exists and is not empty" >&2
	exit 2
fi
mkdir -p "$DIR" || exit 2
DIR=$(cd "$DIR" && pwd)
SEED=${FAULTS_SEED:-$(( $$ * 31 + $(date +%s) % 100000 ))}
RANDOM=$SEED
STOP=$DIR/stop
ANOM=$DIR/anomalies
: > "$ANOM"
: > "$DIR/faults"
PIDS=()

anomaly() {
	echo "$*" >> "$ANOM"
}

# cleanup: whatever happened, nothing of the run outlives it.
cleanup() {
	local p n
	touch "$STOP"
	for p in "${PIDS[@]}"; do
		pkill -9 -P "$p" 2> /dev/null
		kill -9 "$p" 2> /dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2> /dev/null
	done
	if [ -d "$DIR/c" ]; then
		for n in 1 2 3 4 5 6; do
			"$CLUSTER" resume "$DIR/c" "$n" 2> /dev/null
		done
		"$CLUSTER" stop "$DIR/c" > /dev/null
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM

URL=$(CLUSTER_APART=1 "$CLUSTER" start "$DIR/c" 2> "$DIR/cluster.err") ||
    { echo "faults: the cluster did not start: $(tail -n 3 "$DIR/cluster.err")" >&2; exit 2; }
export PERC_LOCK_TIMEOUT=10
unset PERC_FAILPOINT PERC_LOCK_TTL PERC_DIR

# ---------------------------------------------------------------- nemesis

# master_nodes: the node numbers of the masters.
master_nodes() {
	"$CLUSTER" nodes "$DIR/c" | awk '$2 == "master" { print $1 }'
}

# whole: wait until every node runs and the cluster has its shape; a
# cluster that never comes back is an anomaly of the run, not of perc,
# and ends it.
whole() {
	"$CLUSTER" wait-whole "$DIR/c" 60 2>> "$DIR/nemesis.err" && return 0
	anomaly "the cluster was not whole 60 s after a $1 healed"
	touch "$STOP"
	return 1
}

nemesis() {
	local k=0 kind m r secs masters
	local kinds=(partition link pause kill)
	sleep 2
	while [ ! -e "$STOP" ]; do
		kind=${kinds[k % 4]}
		k=$((k + 1))
		mapfile -t masters < <(master_nodes)
		[ "${#masters[@]}" -gt 0 ] || { anomaly "no master to fault"; return; }
		m=${masters[RANDOM % ${#masters[@]}]}
		secs=$((4 + RANDOM % 5))
		case $kind in
		partition)
			"$CLUSTER" cut "$DIR/c" "$m"
			sleep "$secs"
			"$CLUSTER" heal "$DIR/c" ;;
		link)
			secs=4
			r=$("$CLUSTER" replica "$DIR/c" "$m" 2>> "$DIR/nemesis.err")
			[ -n "$r" ] || { anomaly "master $m has no replica"; return; }
			"$CLUSTER" cut "$DIR/c" "$m" "$r"
			sleep "$secs"
			"$CLUSTER" heal "$DIR/c" ;;
		pause)
			"$CLUSTER" pause "$DIR/c" "$m"
			sleep "$secs"
			"$CLUSTER" resume "$DIR/c" "$m" ;;
		kill)
			# Down until its replica has taken over.
			secs=$SECONDS
			"$CLUSTER" kill "$DIR/c" "$m"
			"$CLUSTER" wait-ok "$DIR/c" 30 2>> "$DIR/nemesis.err"
			"$CLUSTER" restart "$DIR/c" "$m"
			secs=$((SECONDS - secs)) ;;
		esac
		printf '%s\t%s\t%s\t%(%s)T\n' "$kind" "$m" "$secs" -1 >> "$DIR/faults"
		whole "$kind" || return
		sleep 2
	done
}

# ---------------------------------------------------------------- appends

KEYS=(k0 k1 k2 k3)

# appender ID: transactions through one perc shell, each appending its
# id to the lists of two keys.  In $DIR/a$ID: attempts (ID K1 K2),
# reads (ID KEY LIST), outcomes (ID ok TS | ID no WHY | ID maybe WHY).
appender() {
	local id=$1 n=0 x k1 k2 t l1 l2 res st
	local w=$DIR/a$id
	mkdir -p "$w"
	RANDOM=$(( (SEED + id * 7919) % 32768 ))
	# ask REQUEST: one answer in st and res.  No answer: the shell
	# ended, or stayed silent for 60 s, past any wait PERC_LOCK_TIMEOUT
	# allows (an anomaly).
	ask() {
		st= res=
		if ! { echo "$1" >&"${SH[1]}" && IFS= read -t 60 -r res <&"${SH[0]}"; } 2> /dev/null; then
			[ -z "${SH_PID:-}" ] || ! kill -0 "$SH_PID" 2> /dev/null ||
			    anomaly "append $x: perc shell gave no answer to '$1' in 60 s"
			return 1
		fi
		st=${res%% *}
		[ "$st" = "$res" ] && res= || res=${res#* }
	}
	start_shell() {
		if [ -n "${SH_PID:-}" ]; then
			kill -9 "$SH_PID" 2> /dev/null
			wait "$SH_PID" 2> /dev/null
		fi
		coproc SH { exec perc -d "$DIR/lists" shell 2>> "$w/shell.err"; }
	}
	start_shell
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		x=$id-$n
		k1=${KEYS[RANDOM % 4]}
		k2=${KEYS[(RANDOM % 3 + 1 + ${k1#k}) % 4]}
		if ! ask begin || [ "$st" != ok ]; then
			[ "$st" = err ] || { start_shell; continue; }
			sleep 0.1
			continue
		fi
		t=$res
		echo "$x $k1 $k2" >> "$w/attempts"
		if ask "get -t $t $k1 c" && [ "$st" != err ] && l1=$res &&
		    ask "get -t $t $k2 c" && [ "$st" != err ] && l2=$res &&
		    ask "set -t $t $k1 c ${l1:+$l1,}$x" && [ "$st" = ok ] &&
		    ask "set -t $t $k2 c ${l2:+$l2,}$x" && [ "$st" = ok ]; then
			printf '%s %s %s\n%s %s %s\n' "$x" "$k1" "$l1" "$x" "$k2" "$l2" \
			    >> "$w/reads"
		else
			# Nothing was asked to commit: nothing can be.
			echo "$x no read:$st:${res%% *}" >> "$w/outcomes"
			[ "$st" = err ] && { ask "abort -t $t" || start_shell; continue; }
			start_shell
			continue
		fi
		if ! ask "commit -t $t"; then
			echo "$x maybe shell-ended" >> "$w/outcomes"
			start_shell
			continue
		fi
		case $st:${res%% *} in
		ok:*) echo "$x ok $res" >> "$w/outcomes" ;;
		err:3 | err:4) echo "$x no commit:${res%% *}" >> "$w/outcomes" ;;
		err:7) echo "$x maybe commit:7" >> "$w/outcomes" ;;
		*) echo "$x maybe commit:$st:$res" >> "$w/outcomes"
		   anomaly "append $x: commit answered '$st $res'" ;;
		esac
	done
}

# check_appends: the checks of the header, over every appender's logs
# and the final lists.
check_appends() {
	cat "$DIR"/a*/attempts > "$DIR/appends.attempts" 2> /dev/null
	cat "$DIR"/a*/reads > "$DIR/appends.reads" 2> /dev/null
	cat "$DIR"/a*/outcomes > "$DIR/appends.outcomes" 2> /dev/null
	awk -v attf="$DIR/appends.attempts" -v readf="$DIR/appends.reads" \
	    -v outf="$DIR/appends.outcomes" -v figf="$DIR/appends.figures" -F '\t' '
	function a(msg) { print msg; na++ }
	BEGIN {
		while ((getline line < attf) > 0) {
			split(line, f, " ")
			att[f[1]] = 1; key[f[1], f[2]] = 1; key[f[1], f[3]] = 1
			keys[f[1]] = f[2] " " f[3]
		}
		while ((getline line < readf) > 0) {
			split(line, f, " ")
			read[f[1], f[2]] = f[3]; nreads++
		}
		while ((getline line < outf) > 0) {
			split(line, f, " ")
			out[f[1]] = f[2]; nout[f[2]]++
		}
	}
	$2 == "c" { final[$1] = $3 }
	END {
		for (k in final) {
			n = split(final[k], e, ",")
			for (i = 1; i <= n; i++) {
				x = e[i]
				if ((x, k) in pos) a("append " x " is twice in " k)
				pos[x, k] = i; pre[x, k] = i == 1 ? "" : pre[e[i - 1], k] (i > 2 ? "," : "") e[i - 1]
				if (!((x, k) in key)) a("append " x " is in " k " but was never attempted there")
				if (i > 1) { edge[e[i - 1] " " x] = 1 }
				in_store[x] = 1
			}
		}
		for (x in att) {
			split(keys[x], ks, " ")
			have = ((x, ks[1]) in pos) + ((x, ks[2]) in pos)
			if (have == 1) a("append " x " committed in part: in one of " keys[x] " only")
			if (out[x] == "ok" && have == 0) a("append " x " was acknowledged but is lost")
			if (out[x] == "no" && have > 0) a("append " x " was refused but is in the store")
			if (have > 0) ncommitted++
			for (j = 1; j <= 2; j++) {
				k = ks[j]
				if (!((x, k) in read)) continue
				r = read[x, k]
				if ((x, k) in pos && pre[x, k] != r)
					a("append " x " read " split(r, t1, ",") " appends in " k ", but follows " \
					    split(pre[x, k], t2, ",") " others there: a lost update")
				fl = final[k]
				if (r != "" && substr(fl, 1, length(r)) != r || \
				    r != "" && length(fl) > length(r) && substr(fl, length(r) + 1, 1) != ",")
					a("append " x " read " split(r, t1, ",") " appends in " k \
					    ", not the first ones of its final list")
			}
		}
		# No cycle in the order the lists give: Kahn over their edges.
		for (e2 in edge) {
			split(e2, p, " ")
			indeg[p[2]]++; node[p[1]] = node[p[2]] = 1
			succ[p[1]] = succ[p[1]] " " p[2]
		}
		for (x in node) if (!(x in indeg)) q[++qt] = x
		while (qh < qt) {
			x = q[++qh]; done++
			ns = split(succ[x], s2, " ")
			for (i = 1; i <= ns; i++)
				if (--indeg[s2[i]] == 0) q[++qt] = s2[i]
		}
		nn = 0; for (x in node) nn++
		if (done < nn) a("the lists order " nn - done " appends in a cycle")
		printf "%d %d %d %d %d\n", nout["ok"], nout["no"], nout["maybe"], ncommitted, na > figf
	}' "$DIR/lists.final" >> "$ANOM"
}

# ---------------------------------------------------------------- writes, ts

# writer ID: autocommit perc set of a new row each time, each outcome
# in $DIR/w$ID (ROW ok | ROW no STATUS | ROW maybe STATUS).
writer() {
	local n=0 rc
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		rc=0
		perc -d "$DIR/writes" set "w$1-$n" c "v$1-$n" 2>> "$DIR/w$1.err" || rc=$?
		case $rc in
		0) echo "w$1-$n ok" ;;
		3 | 4) echo "w$1-$n no $rc" ;;
		7) echo "w$1-$n maybe $rc" ;;
		*) echo "w$1-$n maybe $rc"
		   anomaly "write w$1-$n: set exited $rc: $(tail -n 1 "$DIR/w$1.err")" ;;
		esac
	done >> "$DIR/w$1"
}

check_writes() {
	cat "$DIR"/w[0-9] > "$DIR/writes.outcomes" 2> /dev/null
	awk -v outf="$DIR/writes.outcomes" -v figf="$DIR/writes.figures" -F '\t' '
	function a(msg) { print msg; na++ }
	{ have[$1] = $3 }
	END {
		while ((getline line < outf) > 0) {
			split(line, f, " ")
			n[f[2]]++
			v = f[1]; sub(/^w/, "v", v)
			if (f[2] == "ok" && have[f[1]] != v) a("write " f[1] " was acknowledged but is lost")
			if (f[2] == "no" && f[1] in have) a("write " f[1] " was refused but is in the store")
		}
		printf "%d %d %d\n", n["ok"], n["no"], n["maybe"] > figf
	}' "$DIR/writes.final" >> "$ANOM"
}

# tser ID: perc ts in a loop, each timestamp to $DIR/t$ID.
tser() {
	local t rc
	while [ ! -e "$STOP" ]; do
		rc=0
		t=$(perc -d "$DIR/writes" ts 2>> "$DIR/t$1.err") || rc=$?
		case $rc in
		0) echo "$t" ;;
		4) ;;
		*) anomaly "ts exited $rc: $(tail -n 1 "$DIR/t$1.err")" ;;
		esac
	done >> "$DIR/t$1"
}

check_ts() {
	local last
	for f in "$DIR"/t[0-9]; do
		awk -v f="${f##*/}" 'NR > 1 && $1 + 0 <= prev {
		    print "timestamps of " f " went from " prev " to " $1; exit }
		    { prev = $1 + 0 }' "$f" >> "$ANOM"
	done
	sort "$DIR"/t[0-9] | uniq -d | head -n 3 | sed 's/^/timestamp repeated: /' >> "$ANOM"
	last=$(timeout 30 perc -d "$DIR/writes" ts) || { anomaly "ts failed at the end"; return; }
	sort -n "$DIR"/t[0-9] | tail -n 1 | awk -v last="$last" '$1 + 0 >= last + 0 {
	    print "the oracle gave " last " after " $1 " had been printed" }' >> "$ANOM"
}

# ---------------------------------------------------------------- run

perc init --store "$URL/lists" "$DIR/lists" > /dev/null &&
    perc init --store "$URL/writes" "$DIR/writes" > /dev/null ||
    { echo "faults: init failed" >&2; exit 2; }

nemesis 3>&- 2>> "$DIR/nemesis.err" &
PIDS+=($!)
for id in 1 2; do
	appender "$id" 3>&- 2>> "$DIR/a$id.stderr" &
	PIDS+=($!)
done
writer 1 3>&- &
PIDS+=($!)
tser 1 3>&- &
PIDS+=($!)
CHAOS_STORE=$URL/bank CHAOS_SEED=$SEED CHAOS_MIN_COMMITS=1 \
    "$here/chaos.sh" "$DIR/bank" "$DURATION" 2 > "$DIR/bank.out" 2>&1 &
BANK=$!
PIDS+=("$BANK")

brc=0
wait "$BANK" || brc=$?
touch "$STOP"
for p in "${PIDS[@]}"; do
	[ "$p" = "$BANK" ] || wait "$p" 2> /dev/null
done
PIDS=()
"$CLUSTER" heal "$DIR/c"
"$CLUSTER" wait-whole "$DIR/c" 60 2>> "$DIR/nemesis.err" ||
    anomaly "the cluster was not whole 60 s after the run"

[ "$brc" -eq 0 ] || anomaly "the bank: $(grep -v '^chaos: [0-9]' "$DIR/bank.out" | head -n 20)"
PERC_LOCK_TIMEOUT=30 perc -d "$DIR/lists" resolve-locks > /dev/null 2>> "$DIR/final.err" &&
    PERC_LOCK_TIMEOUT=30 perc -d "$DIR/lists" scan > "$DIR/lists.final" 2>> "$DIR/final.err" ||
    anomaly "the final scan of the lists failed: $(tail -n 1 "$DIR/final.err")"
PERC_LOCK_TIMEOUT=30 perc -d "$DIR/writes" resolve-locks > /dev/null 2>> "$DIR/final.err" &&
    PERC_LOCK_TIMEOUT=30 perc -d "$DIR/writes" scan > "$DIR/writes.final" 2>> "$DIR/final.err" ||
    anomaly "the final scan of the writes failed: $(tail -n 1 "$DIR/final.err")"
check_appends
check_writes
check_ts

read -r a_ok a_no a_maybe a_in _ < "$DIR/appends.figures"
read -r w_ok w_no w_maybe < "$DIR/writes.figures"
printf 'faults: seed %s, %s s, %s faults: %s\n' "$SEED" "$DURATION" \
    "$(wc -l < "$DIR/faults")" \
    "$(cut -f 1 "$DIR/faults" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')"
grep '^chaos: [0-9]' "$DIR/bank.out" | sed 's/^chaos:/faults: bank:/'
printf 'faults: appends: %s acknowledged, %s refused, %s of unknown fate; %s in the store\n' \
    "$a_ok" "$a_no" "$a_maybe" "$a_in"
printf 'faults: writes: %s acknowledged, %s refused, %s of unknown fate\n' \
    "$w_ok" "$w_no" "$w_maybe"
printf 'faults: timestamps: %s taken\n' "$(cat "$DIR"/t[0-9] | wc -l)"
n=$(wc -l < "$ANOM")
if [ "$n" -gt 0 ]; then
	printf 'faults: %s anomalies (logs in %s):\n' "$n" "$DIR"
	head -n 30 "$ANOM" | sed 's/^/  /'
	exit 1
fi
[ "$(wc -l < "$DIR/faults")" -gt 0 ] || { echo "faults: no fault was injected"; exit 1; }
[ "${a_ok:-0}" -gt 0 ] && [ "${w_ok:-0}" -gt 0 ] ||
    { echo "faults: no append or no write was acknowledged"; exit 1; }
echo "faults: 0 anomalies"
exit 0
