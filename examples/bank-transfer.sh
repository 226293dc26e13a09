#!/bin/bash
# examples/bank-transfer.sh - concurrent bank transfers, each one perc
# transaction, retried on conflict; the total must be conserved.
#
#   bank-transfer.sh DIR [WORKERS] [TRANSFERS]
#
# Creates DIR as a data directory (or starts again on an existing one)
# with ACCOUNTS accounts of 100 each (default 5; set ACCOUNTS=N to change
# it), then runs WORKERS (default 4) processes that each make TRANSFERS
# (default 20) transfers of a random amount between two random accounts:
#
#   t=$(perc begin)
#   a=$(perc get -t $t FROM balance); b=$(perc get -t $t TO balance)
#   perc set -t $t FROM balance $((a - n)); perc set -t $t TO balance $((b + n))
#   perc commit -t $t     # exit 3: a conflict, try again with a new one
#
# Exit 3 from commit means another transfer committed one of the two
# accounts after this one began: the transaction is over, and a new one
# (which reads the new balances) may succeed.  Exit 4 means the store
# or a live lock stayed busy past PERC_LOCK_TIMEOUT and nothing was
# written: the transaction is still open, so it is aborted and retried.
# Meanwhile the script reads the total in a few snapshots: snapshot
# isolation means every one of them adds up, not only the final state.
#
# Exit 0 when every transfer committed and every total is conserved,
# 1 otherwise.  Needs perc on PATH.
set -u

dir=${1:?usage: bank-transfer.sh DIR [WORKERS] [TRANSFERS]}
workers=${2:-4}
transfers=${3:-20}
accounts=${ACCOUNTS:-5}
max_tries=${MAX_TRIES:-500}     # per transfer, so that a bug cannot spin
export PERC_DIR=$dir

say() { printf '%s\n' "$*"; }
die() { say "bank-transfer: $*" >&2; exit 1; }

case $workers$transfers$accounts in
*[!0-9]*) die "WORKERS, TRANSFERS and ACCOUNTS must be numbers" ;;
esac
[ "$accounts" -ge 2 ] || die "need at least 2 accounts"
expect=$((accounts * 100))

# 1. The accounts, written in one transaction.
perc init "$dir" || die "cannot create the data directory $dir"
say "# $accounts accounts of 100 in $dir: a total of $expect"
t=$(perc begin) || die "begin failed"
for ((i = 0; i < accounts; i++)); do
	perc set -t "$t" "acct$i" balance 100 || die "set failed"
done
say "\$ perc commit -t $t"
perc commit -t "$t" || die "the setup transaction did not commit"

# transfer ID: one transfer, retried until it commits.  Prints
# "ID TRIES" on success.
transfer() {
	local id=$1 from to amount t a b rc tries=0
	from=$((RANDOM % accounts))
	to=$(((from + 1 + RANDOM % (accounts - 1)) % accounts))
	amount=$((1 + RANDOM % 20))
	while :; do
		tries=$((tries + 1))
		if [ "$tries" -gt "$max_tries" ]; then
			say "transfer $id: no commit after $max_tries tries" >&2
			return 1
		fi
		t=$(perc begin) || return 1
		rc=0
		a=$(perc get -t "$t" "acct$from" balance) &&
		b=$(perc get -t "$t" "acct$to" balance) || rc=$?
		if [ "$rc" -eq 0 ] && [ "$a" -lt "$amount" ]; then
			amount=$a           # never overdraw; 0 moves nothing
		fi
		[ "$rc" -eq 0 ] &&
		perc set -t "$t" "acct$from" balance $((a - amount)) &&
		perc set -t "$t" "acct$to" balance $((b + amount)) &&
		perc commit -t "$t" > /dev/null 2>&1 || rc=$?
		case $rc in
		0)
			say "$id $tries"
			return 0
			;;
		3) ;;                           # conflict: the txn is over
		4) perc abort -t "$t" 2> /dev/null ;;  # busy: still open
		*)
			perc abort -t "$t" 2> /dev/null
			say "transfer $id: exit $rc" >&2
			return 1
			;;
		esac
		sleep "0.0$((RANDOM % 10))"     # back off a little
	done
}

# worker W: TRANSFERS transfers in a row.
worker() {
	local w=$1 k
	RANDOM=$(($$ + w))
	for ((k = 1; k <= transfers; k++)); do
		transfer "w$w.$k" || return 1
	done
}

# The total of a snapshot, summed from a scan at timestamp $1.
total_at() {
	perc scan --at "$1" --column balance |
	    awk -F '\t' '{ s += $3; n++ } END { print n + 0, s + 0 }'
}

# 2. The workers, and snapshot totals read while they run.
say "# $workers workers, $transfers transfers each"
tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
pids=()
for ((w = 1; w <= workers; w++)); do
	worker "$w" > "$tmp/w$w" 3>&- &
	pids+=($!)
done
bad=0
snapshots=0
while :; do
	running=0
	for p in "${pids[@]}"; do
		kill -0 "$p" 2> /dev/null && running=1
	done
	ts=$(perc ts) || { bad=1; break; }
	read -r n sum < <(total_at "$ts")
	snapshots=$((snapshots + 1))
	if [ "$n" -ne "$accounts" ] || [ "$sum" -ne "$expect" ]; then
		say "snapshot at $ts: $n accounts, total $sum: NOT CONSERVED"
		bad=1
	fi
	[ "$running" -eq 1 ] || break
	sleep 0.05
done
for p in "${pids[@]}"; do
	wait "$p" || { say "a worker failed"; bad=1; }
done

done_n=$(cat "$tmp"/w* | wc -l)
retries=$(cat "$tmp"/w* | awk '{ r += $2 - 1 } END { print r + 0 }')
say "# $done_n of $((workers * transfers)) transfers committed," \
    "after $retries retries on conflict"
[ "$done_n" -eq $((workers * transfers)) ] || bad=1

# 3. The final balances.
say "\$ perc scan --column balance"
perc scan --column balance || bad=1
read -r n sum < <(total_at "$(perc ts)")
say "# total $sum in $n accounts (expected $expect);" \
    "$snapshots snapshots checked meanwhile"
if [ "$bad" -eq 0 ] && [ "$n" -eq "$accounts" ] && [ "$sum" -eq "$expect" ]
then
	say "# conserved"
	exit 0
fi
say "# NOT conserved, or a transfer failed"
exit 1
