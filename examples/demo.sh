#!/bin/sh
# examples/demo.sh - a first session with perc on a fresh data directory:
# two accounts, a transfer as one transaction, a conflict, a snapshot.
set -e
dir=${1:-demo.db}
export PERC_DIR="$dir"

say() { printf '\n$ %s\n' "$*"; }
run() { say "$@"; "$@"; }

run perc init "$dir"
run perc set alice balance 100
run perc set bob balance 50
before=$(perc ts)

say "t=\$(perc begin)    # a transfer of 30 from alice to bob"
t=$(perc begin)
a=$(perc get -t "$t" alice balance)
b=$(perc get -t "$t" bob balance)
perc set -t "$t" alice balance $((a - 30))
perc set -t "$t" bob balance $((b + 30))
say "perc scan -t \$t   # the transaction sees its own writes"
perc scan -t "$t"
say "perc scan          # nobody else does yet"
perc scan

say "u=\$(perc begin); perc set -t \$u alice balance 0    # a rival"
u=$(perc begin)
perc set -t "$u" alice balance 0
run perc commit -t "$t"
say "perc commit -t \$u  # write-write conflict: exit 3"
if perc commit -t "$u"; then echo "unexpected: the rival committed"; exit 1
else echo "exit $?"; fi

run perc scan
say "perc scan --at $before   # the snapshot before the transfer"
perc scan --at "$before"
