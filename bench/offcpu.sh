#!/usr/bin/env bash
# offcpu.sh - cost of the off-CPU tracer per context switch (root; run after `make`).
#
# Workload: bench/offcpu_pingpong, two threads passing a byte over pipes.
# For each configuration it prints the tracer's mean run time per
# sched_switch call (BPF run-time statistics) and the workload's round trips
# and context switches per second, against a run without the tracer.
#   not-profiled: tracer attached, the workload is not a target
#   profiled:     the workload is the target, intervals (~10 us) under the
#                 1 ms minimum: stacks taken at switch-out, nothing sent
#   every-switch: minimum 0: every interval sent through the ring buffer
# Usage: bench/offcpu.sh [SECONDS] [CPU|both]   (CPU: pin both threads to it)
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${1:-5}
placement=${2:-0}
out=build/bench
mkdir -p "$out"
cc -O2 -g -Wall -Wextra -o "$out/offcpu_pingpong" bench/offcpu_pingpong.c -lpthread
cc -O2 -g -Wall -Wextra -D_GNU_SOURCE -Iinclude -Iuser -Ibuild -o "$out/offcpu_cost" \
	bench/offcpu_cost.c build/libsparkprof.a -lbpf -lelf -lz -lpthread -lm

cpu_arg=()
[ "$placement" != both ] && cpu_arg=("$placement")

run_plain() {
	"$out/offcpu_pingpong" "$seconds" 0 "${cpu_arg[@]}"
}

# run_traced TARGET MIN_NS: the tracer attaches during the workload's 1 s delay.
run_traced() {
	local target=$1 min_ns=$2 pid result cost
	"$out/offcpu_pingpong" "$seconds" 1 "${cpu_arg[@]}" > "$out/pingpong.out" &
	pid=$!
	[ "$target" = self ] && target=$pid
	cost=$("$out/offcpu_cost" "$target" "$((seconds + 1))" "$min_ns")
	wait "$pid"
	result=$(cat "$out/pingpong.out")
	echo "$result $cost"
}

echo "# $(nproc) CPUs, kernel $(uname -r), ${seconds}s per run, placement: $placement"
for round in 1 2 3; do
	echo "round $round"
	echo "  baseline      $(run_plain)"
	echo "  not-profiled  $(run_traced 0 1000000)"
	echo "  profiled      $(run_traced self 1000000)"
	echo "  every-switch  $(run_traced self 0)"
done
