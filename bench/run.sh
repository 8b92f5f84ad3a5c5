#!/usr/bin/env bash
# Runs every benchmark (not part of the test suite). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 bench/cpu_cost.py "$@"
for extra in bench/offcpu*.sh; do
	[ -x "$extra" ] && "$extra"
done
