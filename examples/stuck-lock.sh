#!/bin/bash
# examples/stuck-lock.sh - a transaction stuck half way through its
# commit, seen with perc show, waited for by a reader, and cleaned up
# with perc resolve-locks.
#
#   stuck-lock.sh DIR
#
# 1. alice and bob have 100 each.  Transaction T moves 30 from alice to
#    bob, but its commit stops after prewrite (PERC_FAILPOINT=
#    after-prewrite:pause=N): both cells are locked, nothing is
#    committed, and the committing process is alive, holding its token.
# 2. perc status counts the two locks and lists T as alive; perc show
#    prints the locks, owner-state=alive.  A reader of alice
#    waits for the live owner and gives up after PERC_LOCK_TIMEOUT with
#    exit 4, and resolve-locks --dry-run reports the locks as alive.
# 3. The committer is killed (kill -9, as a crash would).  perc status
#    lists T as gone, and its locks are now dead: resolve-locks
#    --dry-run says it would roll them back, changing nothing;
#    resolve-locks rolls them back, and perc status counts no lock.
# 4. The balances are 100 and 100 again, no lock is left, and T is
#    finished, its journal removed by resolve-locks: perc commit -t T
#    exits 5.
#
# Exit 0 when every step went as described, 1 otherwise.  Needs perc on
# PATH.
set -u

dir=${1:?usage: stuck-lock.sh DIR}
export PERC_DIR=$dir
unset PERC_FAILPOINT PERC_LOCK_TTL
bad=0
pid=

say() { printf '%s\n' "$*"; }
step() { printf '\n# %s\n' "$*"; }
cmd() { printf '$ %s\n' "$*"; "$@"; }
check() {       # check WHAT COND...: report a step that did not go as expected
	local what=$1
	shift
	if "$@"; then
		say "ok: $what"
	else
		say "NOT OK: $what"
		bad=1
	fi
}
cleanup() {
	if [ -n "$pid" ]; then
		kill -9 "$pid" 2> /dev/null
		{ wait "$pid"; } 2> /dev/null
	fi
}
trap cleanup EXIT

# lock_state ROW: the owner-state of the balance lock on ROW, or "none".
lock_state() {
	perc show "$1" balance | awk -F '\t' '
	    $2 == "lock" { for (i = 1; i <= split($4, kv, " "); i++)
	        if (kv[i] ~ /^owner-state=/) { sub(/^owner-state=/, "", kv[i]);
	            print kv[i]; found = 1 } }
	    END { if (!found) print "none" }'
}

# both STATE: the locks on alice and bob are both in STATE.
both() {
	[ "$(lock_state alice)" = "$1" ] && [ "$(lock_state bob)" = "$1" ]
}

# status_of KEY: the value perc status gives KEY.
status_of() {
	perc status | awk -F '\t' -v k="$1" '$1 == k { print $2 }'
}

# txn_state: alive or gone, as perc status --transactions lists T.
txn_state() {
	perc status --transactions | awk -F '\t' -v t="$T" '$1 == t { print $4 }'
}

# wait_for STATE: poll, at most 10 seconds, until both are in STATE.
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		both "$1" && return 0
		sleep 0.1
	done
	return 1
}

step "1. two accounts, and a transfer that gets stuck after prewrite"
cmd perc init "$dir" || exit 1
cmd perc set alice balance 100 || exit 1
cmd perc set bob balance 100 || exit 1
T=$(perc begin) || exit 1
say "\$ T=\$(perc begin)      # T=$T"
cmd perc set -t "$T" alice balance 70 || exit 1
cmd perc set -t "$T" bob balance 130 || exit 1
say "\$ PERC_FAILPOINT=after-prewrite:pause=60 perc commit -t $T &"
PERC_FAILPOINT=after-prewrite:pause=60 perc commit -t "$T" \
    > /dev/null 3>&- &
pid=$!
check "both cells are locked by a live owner" wait_for alive

step "2. the stuck transaction as others see it"
cmd perc status
cmd perc status --transactions
check "status counts the two locks" [ "$(status_of locks)" = 2 ]
check "status lists T, alive" [ "$(txn_state)" = alive ]
cmd perc show alice
cmd perc show bob balance
say "\$ PERC_LOCK_TIMEOUT=0.5 perc get alice balance"
rc=0
PERC_LOCK_TIMEOUT=0.5 perc get alice balance || rc=$?
say "exit $rc"
check "a reader waits for the live owner, then exit 4" [ "$rc" -eq 4 ]
out=$(cmd perc resolve-locks --dry-run)
say "$out"
check "resolve-locks --dry-run leaves the live locks alone" \
    [ "$(printf '%s\n' "$out" | grep -c "	$T	alive$")" -eq 2 ]

step "3. the committer crashes: its locks are dead"
cmd kill -9 "$pid"
{ wait "$pid"; } 2> /dev/null
pid=
check "the owner-state is dead" wait_for dead
cmd perc status --transactions
check "status lists T, gone" [ "$(txn_state)" = gone ]
cmd perc show alice balance
out=$(cmd perc resolve-locks --dry-run)
say "$out"
check "--dry-run would roll both locks back" \
    [ "$(printf '%s\n' "$out" | grep -c "	$T	rolled-back$")" -eq 2 ]
check "--dry-run changed nothing" both dead
out=$(cmd perc resolve-locks)
say "$out"
check "resolve-locks rolled both locks back" \
    [ "$(printf '%s\n' "$out" | grep -c "	$T	rolled-back$")" -eq 2 ]
cmd perc show alice balance
check "no lock is left" both none
check "status counts no lock" [ "$(status_of locks)" = 0 ]

step "4. the result"
cmd perc scan
check "the balances are what they were" \
    [ "$(perc get alice balance)/$(perc get bob balance)" = 100/100 ]
check "resolve-locks finds nothing more" \
    [ -z "$(perc resolve-locks)" ]
say "\$ perc commit -t $T"
rc=0
perc commit -t "$T" || rc=$?
say "exit $rc"
check "the rolled-back transaction is finished: exit 5" [ "$rc" -eq 5 ]

if [ "$bad" -eq 0 ]; then
	say $'\n# everything went as expected'
	exit 0
fi
say $'\n# something did NOT go as expected'
exit 1
