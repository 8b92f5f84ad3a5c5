#!/usr/bin/env bash
# Runs a command with every CPU kept busy by a loop at normal priority, as
# on a node doing other work; the loops stop with the command. Usage:
#   tools/busy.sh COMMAND...
set -uo pipefail
loops=()
for _ in $(seq "$(nproc)"); do
	( while :; do :; done ) &
	loops+=($!)
done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
"$@"
