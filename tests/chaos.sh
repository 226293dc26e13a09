#!/bin/bash
# tests/chaos.sh - bank transfers under crashes, kills and failpoints
#
# usage: tests/chaos.sh DIR SECONDS WORKERS
#
# Creates the perc data directory DIR (it must not exist, or be empty)
# and keeps its logs in DIR.chaos/.  NACCT accounts start with 100 each.
# For SECONDS seconds, WORKERS workers move money between them, one
# transaction per transfer, retried on a conflict (exit 3).  Each transfer
# also writes the cell (xfer, ID) = "FROM TO AMOUNT" in its own
# transaction, so the store itself says which transfers committed.
#
#   - odd-numbered workers commit with PERC_FAILPOINT picked at random:
#     none, one of the four failpoints (exit 137), or a failpoint with
#     :pause= (a slow but live owner);
#   - workers 2, 3, 6, 7, ... have their perc processes killed with
#     SIGKILL at random moments by a killer loop;
#   - after a crash a worker commits the transaction again, aborts it, or
#     leaves it for others to clean up, at random;
#   - a reader takes snapshots (scan --column bal, or ts plus get --at)
#     and checks each total;
#   - a resolver runs resolve-locks now and then.
#
# Then everything is stopped with SIGKILL, resolve-locks runs twice, and
# the invariants are checked:
#   - every snapshot saw the initial total, and the final total is it;
#   - no lock remains: resolve-locks prints nothing, a scan works;
#   - every transfer whose commit printed a timestamp is in the store,
#     with a write record at that timestamp; every commit that said
#     "rolled back" (exit 3) is not; every transfer in the store was
#     attempted, with the same FROM TO AMOUNT;
#   - each balance is 100 plus the effect of exactly the transfers in
#     the store (no lost update, nothing half applied);
#   - commit timestamps are unique, and the oracle is past all of them.
# Exit 0 when they hold; else each violation is printed, exit 1.
#
# Environment: PERC_BUILD (directory holding perc; default: the parent
# of this script's directory), CHAOS_SEED (random seed), CHAOS_ACCOUNTS
# (default 8), CHAOS_STORE (a redis:// URL: DIR keeps its cells there,
# as perc init --store makes it).  On a store of many nodes under faults
# (tests/faults.sh), a commit may also end with exit 7, its commit
# point's fate unknown (perc-commit(1)), and a timestamp may wait past
# PERC_LOCK_TIMEOUT: those count as "maybe" and as timeouts.
#
# A run that must have done something, whatever the load: the run goes
# on past SECONDS until at least CHAOS_MIN_COMMITS commits printed a
# timestamp, CHAOS_MIN_CRASHES commits stopped at a failpoint,
# CHAOS_MIN_KILLS perc processes were killed and CHAOS_MIN_SNAPSHOTS
# snapshots were checked (each 0 by default), but for no more than
# CHAOS_MAX_SECONDS in all (default: 10 times SECONDS, at least 60).
# A run that ends short of them says so, and exits 1.

set -u

usage() {
	echo "usage: tests/chaos.sh DIR SECONDS WORKERS" >&2
	exit 2
}

[ $# -eq 3 ] || usage
DIR=$1
DURATION=$2
WORKERS=$3
case $DURATION in '' | *[!0-9]*) usage ;; esac
case $WORKERS in '' | *[!0-9]*) usage ;; esac
[ "$WORKERS" -ge 1 ] || usage
MIN_COMMITS=${CHAOS_MIN_COMMITS:-0}
MIN_CRASHES=${CHAOS_MIN_CRASHES:-0}
MIN_KILLS=${CHAOS_MIN_KILLS:-0}
MIN_SNAPSHOTS=${CHAOS_MIN_SNAPSHOTS:-0}
MAX_SECONDS=${CHAOS_MAX_SECONDS:-$((DURATION * 10 > 60 ? DURATION * 10 : 60))}
for n in "$MIN_COMMITS" "$MIN_CRASHES" "$MIN_KILLS" "$MIN_SNAPSHOTS" \
    "$MAX_SECONDS"; do
	case $n in '' | *[!0-9]*) usage ;; esac
done

here=$(cd "$(dirname "$0")" && pwd)
PERC_BUILD=${PERC_BUILD:-"$here/.."}
PATH="$PERC_BUILD:$PATH"
command -v perc > /dev/null || { echo "chaos: no perc in $PERC_BUILD" >&2; exit 2; }

NACCT=${CHAOS_ACCOUNTS:-8}
INIT=100
TOTAL=$((NACCT * INIT))
SEED=${CHAOS_SEED:-$(( $$ * 31 + $(date +%s) % 100000 ))}
FAILPOINTS=(after-prewrite-primary after-prewrite after-commit-primary
	after-commit-secondary)

if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
	echo "chaos: $DIR exists and is not empty" >&2
	exit 2
fi
LOG="$DIR.chaos"
rm -rf "$LOG"
mkdir -p "$LOG" || exit 2
STOP="$LOG/stop"
# The reader and the resolver stop a little earlier, so that the final
# resolve-locks finds what crashed workers left behind.
STOP_HELPERS="$LOG/stop-helpers"
VIOL="$LOG/violations"
: > "$VIOL"
: > "$LOG/attempts"     # ID START FROM TO AMOUNT, before each commit
: > "$LOG/ok"           # ID COMMIT_TS: the commit printed it
: > "$LOG/expect"       # ID present|absent|maybe WHY
: > "$LOG/kills"        # PID WORKER COMMAND, written before each kill
: > "$LOG/events"       # one word per event, for the figures
: > "$LOG/trace"        # one line per commit: failpoint, outcome, sequel
: > "$LOG/snapshots"    # one total per snapshot

export PERC_DIR="$DIR"
export PERC_LOCK_TIMEOUT=10
unset PERC_FAILPOINT PERC_LOCK_TTL

violation() {
	echo "$*" >> "$VIOL"
}

event() {
	echo "$1" >> "$LOG/events"
}

timeout 30 perc init ${CHAOS_STORE:+--store "$CHAOS_STORE"} "$DIR" \
    > /dev/null || { echo "chaos: init failed" >&2; exit 2; }
t=$(timeout 30 perc begin) || exit 2
for ((k = 0; k < NACCT; k++)); do
	timeout 30 perc set -t "$t" "acct$k" bal "$INIT" || exit 2
done
timeout 30 perc commit -t "$t" > /dev/null || { echo "chaos: setup failed" >&2; exit 2; }

# ---------------------------------------------------------------- workers

# pc ARG...: run "perc ARG..." in the background as a child of this
# worker, so that the killer can find it; wait for it.  Its standard
# output in OUT, its status returned.  $FP, if set, is its failpoint.
pc() {
	local rc=0
	if [ -n "${FP:-}" ]; then
		PERC_FAILPOINT=$FP perc "$@" > "$W/out" 2> "$W/err" 3>&- &
	else
		perc "$@" > "$W/out" 2> "$W/err" 3>&- &
	fi
	LASTPID=$!
	printf '%s %s %(%s)T\n' "$LASTPID" "$1" -1 > "$W/pid"
	wait "$LASTPID" || rc=$?
	: > "$W/pid"
	OUT=$(cat "$W/out")
	return "$rc"
}

# was_killed PID: the killer went for PID.
was_killed() {
	grep -q "^$1 " "$LOG/kills"
}

# fail_cmd WHAT RC: an exit status a worker did not expect.
fail_cmd() {
	violation "worker $ID: $1 exited $2: $(head -c 300 "$W/err")"
}

# settled_by_resolver XID T WHAT: WHAT (re-commit, abort) of T exited 5,
# the handle unknown: a resolver settled the crashed commit and removed
# its journal, rolling it forward past the commit point and back before
# it; or, after a kill, the commit had ended.  Any other message is a
# violation.
settled_by_resolver() {
	if ! grep -q 'is unknown or already finished' "$W/err"; then
		fail_cmd "$3 of $2" 5
		echo "$1 maybe $3-exit-5" >> "$LOG/expect"
		return
	fi
	case $past in
	yes) echo "$1 present $3-finds-resolved" >> "$LOG/expect" ;;
	no) echo "$1 absent $3-finds-resolved" >> "$LOG/expect" ;;
	*) echo "$1 maybe $3-exit-5" >> "$LOG/expect" ;;
	esac
}

# settle XID T FAILPOINT PAST: the commit of T (transfer XID) at
# FAILPOINT died (exit 137); PAST is yes if it had passed the commit
# point, no if not, unknown after a kill.  Commit it again, abort it, or
# leave it, at random, and write down what the store must say about XID.
settle() {
	local xid=$1 t=$2 past=$4 rc choice=$((RANDOM % 3))
	FP=
	case $choice in
	0)	# Commit it again.
		event recommit
		rc=0
		pc commit -t "$t" || rc=$?
		TRACE="$TRACE then=re-commit:$rc:$OUT"
		[ "$rc" -eq 0 ] || TRACE="$TRACE err=$(head -c 200 "$W/err")"
		case $rc in
		0)
			if [[ $OUT =~ ^[0-9]+$ ]]; then
				echo "$xid $OUT" >> "$LOG/ok"
			else
				violation "worker $ID: re-commit of $t printed '$OUT'"
			fi ;;
		3) echo "$xid absent re-commit-exit-3" >> "$LOG/expect"
		   [ "$past" = yes ] &&
			violation "worker $ID: re-commit of $t, crashed past its commit point, exited 3" ;;
		137) echo "$xid maybe re-commit-killed" >> "$LOG/expect" ;;
		5) # Finished: a resolver settled it and removed its journal
		   # (perc-resolve-locks(1)), or a kill came after its end.
		   settled_by_resolver "$xid" "$t" re-commit ;;
		4) echo "$xid maybe re-commit-timeout" >> "$LOG/expect"
		   event timeout ;;
		7) echo "$xid maybe re-commit-exit-7" >> "$LOG/expect"
		   # A journal torn by a kill is detected; nothing else is.
		   [ "$past" = unknown ] || fail_cmd "re-commit of $t" "$rc"
		   drop "$t" ;;
		*) fail_cmd "re-commit of $t" "$rc"
		   echo "$xid maybe re-commit-exit-$rc" >> "$LOG/expect" ;;
		esac ;;
	1)	# Abort it.
		event abort
		rc=0
		pc abort -t "$t" || rc=$?
		TRACE="$TRACE then=abort:$rc"
		[ "$rc" -eq 0 ] || TRACE="$TRACE err=$(head -c 200 "$W/err")"
		case $rc in
		0)
			if [ "$past" = yes ]; then
				echo "$xid present aborted-after-commit-point" >> "$LOG/expect"
				# perc-abort(1): past the commit point, it is finished: exit 5.
				violation "worker $ID: abort of $t, crashed past its commit point, exited 0"
			elif [ "$past" = no ]; then
				echo "$xid absent aborted" >> "$LOG/expect"
			else
				echo "$xid maybe aborted-after-kill" >> "$LOG/expect"
			fi ;;
		3) echo "$xid present abort-says-committed" >> "$LOG/expect"
		   [ "$past" = no ] &&
			violation "worker $ID: abort of $t, crashed before its commit point, says committed" ;;
		137) echo "$xid maybe abort-killed" >> "$LOG/expect" ;;
		5)	# Finished already (perc-abort(1)): its message says how.
			if grep -q 'had already committed' "$W/err"; then
				echo "$xid present abort-finds-committed" >> "$LOG/expect"
				[ "$past" = no ] &&
					violation "worker $ID: abort of $t, crashed before its commit point, says committed"
			elif grep -q 'already rolled back' "$W/err"; then
				echo "$xid absent abort-finds-rolled-back" >> "$LOG/expect"
				[ "$past" = yes ] &&
					violation "worker $ID: abort of $t, crashed past its commit point, says rolled back"
			else
				settled_by_resolver "$xid" "$t" abort
			fi ;;
		4) echo "$xid maybe abort-timeout" >> "$LOG/expect"
		   event timeout ;;
		*) fail_cmd "abort of $t" "$rc"
		   echo "$xid maybe abort-exit-$rc" >> "$LOG/expect" ;;
		esac ;;
	2)	# Leave it to readers and resolve-locks.
		event leave
		TRACE="$TRACE then=leave"
		case $past in
		yes) echo "$xid present left-after-commit-point" >> "$LOG/expect" ;;
		no) echo "$xid absent left-before-commit-point" >> "$LOG/expect" ;;
		*) echo "$xid maybe left-after-kill" >> "$LOG/expect" ;;
		esac ;;
	esac
}

# drop T: give up transaction T before its commit (a get or set failed).
drop() {
	FP=
	pc abort -t "$1" || true
}

# worker ID USE_FAILPOINTS KILLABLE
worker() {
	local n=0 xid t f to amt a b rc fp past killable=$3 usefp=$2
	ID=$1
	W="$LOG/w$ID"
	mkdir -p "$W"
	RANDOM=$(( (SEED + ID * 7919) % 32768 ))
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		xid="w$ID-$n"
		f=$((RANDOM % NACCT))
		to=$(( (f + 1 + RANDOM % (NACCT - 1)) % NACCT ))
		amt=$((RANDOM % 20 + 1))
		FP=
		rc=0
		pc begin || rc=$?
		if [ "$rc" -ne 0 ]; then
			[ "$rc" -eq 137 ] || [ "$rc" -eq 4 ] || fail_cmd begin "$rc"
			continue
		fi
		t=$OUT
		if ! [[ $t =~ ^[0-9]+$ ]]; then
			violation "worker $ID: begin printed '$t'"
			continue
		fi
		rc=0
		pc get -t "$t" "acct$f" bal && a=$OUT &&
		    pc get -t "$t" "acct$to" bal && b=$OUT &&
		    pc set -t "$t" "acct$f" bal $((a - amt)) &&
		    pc set -t "$t" "acct$to" bal $((b + amt)) &&
		    pc set -t "$t" xfer "$xid" "$f $to $amt" || rc=$?
		if [ "$rc" -ne 0 ]; then
			# 137: killed; 4: a live lock or a busy store; 7: a
			# journal torn by a kill.
			case $rc in
			137 | 4) ;;
			7) [ "$killable" = yes ] || fail_cmd "get/set" "$rc" ;;
			*) fail_cmd "get/set" "$rc" ;;
			esac
			[ "$rc" -eq 4 ] && event timeout
			drop "$t"
			continue
		fi
		echo "$xid $t $f $to $amt" >> "$LOG/attempts"
		fp=
		if [ "$usefp" = yes ]; then
			case $((RANDOM % 16)) in
			0 | 1) fp=${FAILPOINTS[0]} ;;
			2 | 3) fp=${FAILPOINTS[1]} ;;
			4 | 5) fp=${FAILPOINTS[2]} ;;
			6 | 7) fp=${FAILPOINTS[3]} ;;
			8) fp="${FAILPOINTS[RANDOM % 4]}:pause=0.$((RANDOM % 5 + 1))" ;;
			esac
		fi
		FP=$fp
		rc=0
		pc commit -t "$t" || rc=$?
		FP=
		TRACE="$xid start=$t fp=${fp:-none} commit=$rc:$OUT"
		case $rc in
		0)
			event commit
			if [[ $OUT =~ ^[0-9]+$ ]]; then
				echo "$xid $OUT" >> "$LOG/ok"
			else
				violation "worker $ID: commit of $t printed '$OUT'"
			fi ;;
		3)
			event conflict
			echo "$xid absent conflict" >> "$LOG/expect" ;;
		137)
			if was_killed "$LASTPID"; then
				event killed-commit
				past=unknown
			else
				case $fp in
				*:pause=*)
					violation "worker $ID: commit of $t at $fp died (137) with no kill"
					past=unknown ;;
				after-prewrite*) past=no ;;
				after-commit*) past=yes ;;
				*)
					violation "worker $ID: commit of $t died (137) with no failpoint and no kill"
					past=unknown ;;
				esac
				event "crash-$fp"
			fi
			settle "$xid" "$t" "$fp" "$past" ;;
		4)
			event timeout
			# Nothing written, still open.
			rc=0
			pc abort -t "$t" || rc=$?
			case $rc in
			0) echo "$xid absent commit-timeout-aborted" >> "$LOG/expect" ;;
			*) echo "$xid maybe commit-timeout-abort-$rc" >> "$LOG/expect" ;;
			esac ;;
		7)
			[ "$killable" = yes ] || [ -n "${CHAOS_STORE:-}" ] ||
			    fail_cmd "commit of $t" "$rc"
			drop "$t"
			echo "$xid maybe commit-exit-7" >> "$LOG/expect" ;;
		*)
			fail_cmd "commit of $t" "$rc"
			echo "$xid maybe commit-exit-$rc" >> "$LOG/expect" ;;
		esac
		[ "$rc" -eq 137 ] && TRACE="$TRACE past=$past"
		echo "$TRACE" >> "$LOG/trace"
	done
}

# ---------------------------------------------------------------- others

# killer: every 0.1 to 0.5 s, pick a killable worker and kill its perc
# command once it has one running (a commit, more often than not).
killer() {
	local k w pid cmd since ppid comm tries
	RANDOM=$(( (SEED + 17) % 32768 ))
	[ "${#KILLABLE[@]}" -gt 0 ] || return 0
	while [ ! -e "$STOP" ]; do
		sleep "0.$((RANDOM % 5 + 1))"
		k=${KILLABLE[RANDOM % ${#KILLABLE[@]}]}
		w=${WPID[k]}
		for ((tries = 0; tries < 50; tries++)); do
			[ ! -e "$STOP" ] || return 0
			pid=
			read -r pid cmd since < "$LOG/w$k/pid" 2> /dev/null
			if [ -n "${pid:-}" ] &&
			    { [ "$cmd" = commit ] || [ $((RANDOM % 3)) -eq 0 ]; }; then
				# Only a perc process that worker k started, by its
				# id (read with builtins: perc commands are quick).
				comm="" ppid=""
				read -r _ comm _ ppid _ < "/proc/$pid/stat" 2> /dev/null
				if [ "$ppid" = "$w" ] && [ "$comm" = "(perc)" ]; then
					echo "$pid $k $cmd" >> "$LOG/kills"
					kill -9 "$pid" 2> /dev/null && event "kill-$cmd"
					break
				fi
			fi
			sleep 0.01
		done
	done
}

reader() {
	local k=0 rc ts total v lines acct
	local snap="$LOG/reader.snap" err="$LOG/reader.err"
	while [ ! -e "$STOP_HELPERS" ]; do
		k=$((k + 1))
		if [ $((k % 2)) -eq 0 ]; then
			rc=0
			timeout 60 perc scan --column bal > "$snap" 2> "$err" || rc=$?
			case $rc in
			0) ;;
			4) event reader-timeout; continue ;;
			*) violation "reader: scan exited $rc: $(head -c 300 "$err")"
			   continue ;;
			esac
			lines=$(wc -l < "$snap")
			total=$(awk -F '\t' '{ s += $3 } END { print s + 0 }' "$snap")
			[ "$lines" -eq "$NACCT" ] ||
				violation "reader: a scan saw $lines accounts"
			[ "$total" -eq "$TOTAL" ] ||
				violation "reader: a scan saw a total of $total, not $TOTAL: $(tr '\t\n' ' ;' < "$snap")"
			echo "scan $total" >> "$LOG/snapshots"
		else
			rc=0
			ts=$(timeout 60 perc ts) || rc=$?
			case $rc in
			0) ;;
			4) [ -n "${CHAOS_STORE:-}" ] ||
			       violation "reader: ts exited 4"
			   event reader-timeout; continue ;;
			*) violation "reader: ts exited $rc"; continue ;;
			esac
			total=0
			for ((acct = 0; acct < NACCT; acct++)); do
				rc=0
				v=$(timeout 60 perc get --at "$ts" "acct$acct" bal 2> "$err") || rc=$?
				[ "$rc" -eq 0 ] || break
				total=$((total + v))
			done
			case $rc in
			0) ;;
			4) event reader-timeout; continue ;;
			*) violation "reader: get --at $ts exited $rc: $(head -c 300 "$err")"
			   continue ;;
			esac
			[ "$total" -eq "$TOTAL" ] ||
				violation "reader: a snapshot at $ts saw a total of $total, not $TOTAL"
			echo "at $total" >> "$LOG/snapshots"
		fi
	done
}

resolver() {
	local rc out="$LOG/resolver.out"
	while [ ! -e "$STOP_HELPERS" ]; do
		sleep 1
		rc=0
		timeout 60 perc resolve-locks > "$out" 2>> "$LOG/resolver.err" || rc=$?
		case $rc in
		0) event resolver-run ;;
		4) event resolver-timeout ;;
		*) violation "resolver: resolve-locks exited $rc" ;;
		esac
		if grep -qv $'\t''\(rolled-forward\|rolled-back\|alive\)$' "$out"; then
			violation "resolver: odd line: $(grep -v $'\t''\(rolled-forward\|rolled-back\|alive\)$' "$out" | head -n 1)"
		fi
	done
}

# ---------------------------------------------------------------- run

WPID=()
KILLABLE=()
for ((k = 1; k <= WORKERS; k++)); do
	usefp=no killable=no
	[ $((k % 2)) -eq 1 ] && usefp=yes
	case $((k % 4)) in 2 | 3) killable=yes ;; esac
	[ "$killable" = yes ] && KILLABLE+=("$k")
	worker "$k" "$usefp" "$killable" 3>&- 2>> "$LOG/w$k.stderr" &
	WPID[k]=$!
done
reader 3>&- 2>> "$LOG/reader.stderr" &
RPID=$!
resolver 3>&- 2>> "$LOG/resolver.stderr" &
SPID=$!
killer 3>&- 2>> "$LOG/killer.stderr" &
KPID=$!

# enough: the run has done all that CHAOS_MIN_* ask for.  (The
# snapshots are counted before the reader stops: it stops first.)
enough() {
	[ "$(wc -l < "$LOG/ok")" -ge "$MIN_COMMITS" ] &&
	    [ "$(grep -c '^crash-' "$LOG/events")" -ge "$MIN_CRASHES" ] &&
	    [ "$(grep -c '^kill-' "$LOG/events")" -ge "$MIN_KILLS" ] &&
	    [ "$(wc -l < "$LOG/snapshots")" -ge "$MIN_SNAPSHOTS" ]
}

START=$SECONDS
early=$((DURATION >= 6 ? 2 : DURATION / 3))
sleep $((DURATION - early))
# Past SECONDS, on until enough has happened, bounded.
while ! enough && [ $((SECONDS - START)) -lt $((MAX_SECONDS - early)) ]; do
	sleep 0.5
done
enough || SHORT=1
ELAPSED=$((SECONDS - START + early))
touch "$STOP_HELPERS"
sleep "$early"
touch "$STOP"

# A perc command still running long after any lock wait could end hangs.
now=$(date +%s)
for ((k = 1; k <= WORKERS; k++)); do
	if read -r pid cmd since < "$LOG/w$k/pid" 2> /dev/null && [ -n "${pid:-}" ]; then
		[ $((now - since)) -le $((3 * PERC_LOCK_TIMEOUT + 10)) ] ||
			violation "worker $k: perc $cmd ran for $((now - since)) s"
	fi
done

# Stop the workers dead, children first, so that they leave locks behind.
for ((k = 1; k <= WORKERS; k++)); do
	kill -STOP "${WPID[k]}" 2> /dev/null
done
for ((k = 1; k <= WORKERS; k++)); do
	for c in $(pgrep -P "${WPID[k]}"); do
		kill -9 "$c" 2> /dev/null
	done
	kill -9 "${WPID[k]}" 2> /dev/null
	wait "${WPID[k]}" 2> /dev/null
done
# The others stop at the STOP file; wait for them, bounded.
for ((n = 0; n < 900; n++)); do
	alive=0
	for p in $RPID $SPID $KPID; do
		kill -0 "$p" 2> /dev/null && alive=1
	done
	[ "$alive" -eq 0 ] && break
	sleep 0.1
done
for p in $RPID $SPID $KPID; do
	if kill -0 "$p" 2> /dev/null; then
		violation "a helper loop (pid $p) did not stop within 90 s"
		for c in $(pgrep -P "$p"); do kill -9 "$c" 2> /dev/null; done
		kill -9 "$p" 2> /dev/null
	fi
	wait "$p" 2> /dev/null
done

# ---------------------------------------------------------------- checks

# From here on, violations go first in the report.
RUNTIME_VIOL="$LOG/violations.run"
mv "$VIOL" "$RUNTIME_VIOL"
: > "$VIOL"

rc=0
timeout 120 perc resolve-locks > "$LOG/resolve1" 2> "$LOG/resolve1.err" || rc=$?
[ "$rc" -eq 0 ] || violation "final resolve-locks exited $rc: $(head -c 300 "$LOG/resolve1.err")"
if grep -q $'\t''alive$' "$LOG/resolve1"; then
	violation "final resolve-locks found a live owner: $(grep $'\t''alive$' "$LOG/resolve1" | head -n 1)"
fi
if grep -qv $'\t''\(rolled-forward\|rolled-back\)$' "$LOG/resolve1"; then
	violation "final resolve-locks printed an odd line: $(grep -v $'\t''\(rolled-forward\|rolled-back\)$' "$LOG/resolve1" | head -n 1)"
fi
rc=0
timeout 120 perc resolve-locks > "$LOG/resolve2" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$LOG/resolve2" ] ||
	violation "second resolve-locks (exit $rc) printed: $(head -n 3 "$LOG/resolve2" | tr '\t\n' ' ;')"
rc=0
timeout 120 perc resolve-locks --all --dry-run > "$LOG/resolve3" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$LOG/resolve3" ] ||
	violation "a lock remains (resolve-locks --all --dry-run, exit $rc): $(head -n 3 "$LOG/resolve3" | tr '\t\n' ' ;')"

rc=0
PERC_LOCK_TIMEOUT=2 timeout 60 perc scan > "$LOG/final.scan" 2> "$LOG/final.err" || rc=$?
[ "$rc" -eq 0 ] || violation "final scan exited $rc: $(head -c 300 "$LOG/final.err")"
rc=0
PERC_LOCK_TIMEOUT=2 timeout 60 perc scan --prefix xfer > "$LOG/final.xfer" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || violation "final scan --prefix xfer exited $rc"
rc=0
PERC_LOCK_TIMEOUT=2 timeout 60 perc show xfer > "$LOG/final.show" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || violation "show xfer exited $rc"
grep -q $'\t''lock'$'\t' "$LOG/final.show" &&
	violation "show xfer still has a lock: $(grep $'\t''lock'$'\t' "$LOG/final.show" | head -n 1)"

# The rest is arithmetic over the logs; awk does it and prints violations.
awk -F '\t' -v nacct="$NACCT" -v init="$INIT" -v total="$TOTAL" \
    -v attempts="$LOG/attempts" -v okf="$LOG/ok" -v expectf="$LOG/expect" \
    -v showf="$LOG/final.show" -v xferf="$LOG/final.xfer" \
    -v tracef="$LOG/trace" '
function v(msg) { print msg; nv++ }
BEGIN {
	while ((getline line < tracef) > 0) {
		split(line, f, " ")
		trace[f[1]] = " [" line "]"
	}
	while ((getline line < attempts) > 0) {
		split(line, f, " ")
		att[f[1]] = f[3] " " f[4] " " f[5]; start[f[1]] = f[2]
	}
	# The committed transfers: (xfer, ID) = "FROM TO AMOUNT".
	while ((getline line < xferf) > 0) {
		split(line, f, "\t")
		if (f[1] != "xfer") { v("scan --prefix xfer gave row " f[1]); continue }
		present[f[2]] = f[3]; npresent++
	}
	# Their write records: ID write TS op=put start=S.
	while ((getline line < showf) > 0) {
		split(line, f, "\t")
		if (f[2] == "write" && f[4] ~ /^op=put start=/) {
			s = f[4]; sub(/^op=put start=/, "", s)
			wts[f[1]] = f[3]; wstart[f[1]] = s
		}
	}
	while ((getline line < okf) > 0) {
		split(line, f, " ")
		nok++
		if (!(f[1] in present))
			v("transfer " f[1] " printed commit ts " f[2] " but is not in the store" trace[f[1]])
		else if (wts[f[1]] != f[2])
			v("transfer " f[1] " printed commit ts " f[2] " but its write record is at " wts[f[1]])
		if (f[2] in seen)
			v("commit ts " f[2] " printed for both " seen[f[2]] " and " f[1])
		seen[f[2]] = f[1]
		if (f[2] + 0 > maxts) maxts = f[2] + 0
	}
	while ((getline line < expectf) > 0) {
		split(line, f, " ")
		if (f[2] == "present" && !(f[1] in present))
			v("transfer " f[1] " (" f[3] ") should have committed but is not in the store" trace[f[1]])
		if (f[2] == "absent" && (f[1] in present))
			v("transfer " f[1] " (" f[3] ") should have been rolled back but is in the store" trace[f[1]])
		if (f[2] == "maybe") nmaybe++
	}
	for (id in present) {
		if (!(id in att)) { v("transfer " id " is in the store but was never attempted"); continue }
		if (att[id] != present[id])
			v("transfer " id " is in the store as \"" present[id] "\", attempted as \"" att[id] "\"")
		if (wstart[id] != start[id])
			v("transfer " id " committed with start ts " wstart[id] ", attempted in " start[id])
		split(present[id], g, " ")
		want["acct" g[1]] -= g[3]; want["acct" g[2]] += g[3]
	}
	printf "%d %d %d %d\n", nok + 0, npresent + 0, nmaybe + 0, maxts > "/dev/stderr"
}
{
	if ($2 != "bal") next
	have[$1] = $3; sum += $3; n++
}
END {
	if (n != nacct) v("final scan has " n " balances, not " nacct)
	if (sum != total) v("final total is " sum ", not " total)
	for (k = 0; k < nacct; k++) {
		a = "acct" k
		if (!(a in have)) continue
		if (have[a] != init + want[a])
			v(a " is " have[a] " but the transfers in the store make it " init + want[a])
	}
}' "$LOG/final.scan" >> "$VIOL" 2> "$LOG/figures"

read -r n_ok n_present n_maybe max_ts < "$LOG/figures"
rc=0
now_ts=$(timeout 30 perc ts) || rc=$?
if [ "$rc" -ne 0 ]; then
	violation "perc ts exited $rc at the end"
elif [ "${max_ts:-0}" -ge "$now_ts" ]; then
	violation "the oracle gave $now_ts after commit ts $max_ts had been printed"
fi

count() { grep -c "^$1\$" "$LOG/events"; }
n_kills=$(grep -c '^kill-' "$LOG/events")
n_killed_commits=$(count killed-commit)
n_crash=$(grep -c '^crash-' "$LOG/events")
n_snap=$(wc -l < "$LOG/snapshots")
n_resolved=$(wc -l < "$LOG/resolve1")
cat "$RUNTIME_VIOL" >> "$VIOL"
n_viol=$(wc -l < "$VIOL")

printf 'chaos: seed %s, %s s (asked for %s), %s workers, %s accounts\n' \
    "$SEED" "$ELAPSED" "$DURATION" "$WORKERS" "$NACCT"
printf 'chaos: %s commits printed a ts, %s transfers in the store, %s of uncertain fate\n' \
    "$n_ok" "$n_present" "$n_maybe"
printf 'chaos: %s conflicts, %s failpoint crashes, %s kills (%s of commits), %s re-commits, %s aborts, %s left\n' \
    "$(count conflict)" "$n_crash" "$n_kills" "$n_killed_commits" \
    "$(count recommit)" "$(count abort)" "$(count leave)"
printf 'chaos: %s snapshots checked, %s reader timeouts, %s other timeouts, %s resolver runs, %s locks left at the end\n' \
    "$n_snap" "$(count reader-timeout)" "$(count timeout)" "$(count resolver-run)" "$n_resolved"
if [ "$n_viol" -ne 0 ]; then
	printf 'chaos: %s violations (logs in %s):\n' "$n_viol" "$LOG"
	head -n 50 "$VIOL" | sed 's/^/  /'
	[ "$n_viol" -le 50 ] || echo "  ... and $((n_viol - 50)) more"
	exit 1
fi
if [ -n "${SHORT:-}" ]; then
	printf 'chaos: after %s s, short of CHAOS_MIN_COMMITS=%s, CHAOS_MIN_CRASHES=%s, CHAOS_MIN_KILLS=%s or CHAOS_MIN_SNAPSHOTS=%s\n' \
	    "$ELAPSED" "$MIN_COMMITS" "$MIN_CRASHES" "$MIN_KILLS" "$MIN_SNAPSHOTS"
	exit 1
fi
[ "$n_ok" -gt 0 ] || { echo "chaos: no transfer committed at all"; exit 1; }
[ "$n_snap" -gt 0 ] || { echo "chaos: no snapshot was taken"; exit 1; }
echo "chaos: all invariants hold"
exit 0
