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
# Configurations are interleaved, ROUNDS times; the last lines give medians.
# Usage: bench/offcpu.sh [SECONDS] [CPU|both] [ROUNDS]   (CPU: pin both threads to it)
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${1:-5}
placement=${2:-0}
rounds=${3:-5}
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

echo "# $(nproc) CPUs, kernel $(uname -r), ${seconds}s per run, placement: $placement," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
log="$out/offcpu.log"
: > "$log"
for round in $(seq "$rounds"); do
	echo "round $round"
	for config in baseline not-profiled profiled every-switch; do
		case $config in
		baseline) line=$(run_plain) ;;
		not-profiled) line=$(run_traced 0 1000000) ;;
		profiled) line=$(run_traced self 1000000) ;;
		every-switch) line=$(run_traced self 0) ;;
		esac
		printf '  %-13s %s\n' "$config" "$line"
		echo "$config $line" >> "$log"
	done
done

# Medians per configuration: switches/s, slowdown against the baseline's
# median, and ns per sched_switch run.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { awk -v c="$1" -v k="$2" '$1 == c { for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' "$log"; }
base=$(field baseline switches_per_s | median)
echo "# medians over $rounds rounds"
for config in baseline not-profiled profiled every-switch; do
	sw=$(field "$config" switches_per_s | median)
	ns=$(field "$config" ns_per_run | median)
	awk -v c="$config" -v sw="$sw" -v b="$base" -v ns="${ns:-}" 'BEGIN {
		printf "  %-13s switches/s %8.0f  vs baseline %+6.1f%%", c, sw, (sw / b - 1) * 100
		if (ns != "") printf "  ns/sched_switch %7.1f", ns
		printf "\n" }'
done
