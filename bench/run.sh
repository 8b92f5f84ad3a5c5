#!/usr/bin/env bash
# Runs every benchmark (not part of the test suite). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 bench/cpu_cost.py "$@"

# JFR writer throughput and memory: 1,000,000 samples, 64-frame stacks.
mkdir -p build/bench
cc -O2 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild -o build/bench/jfr_bench bench/jfr_bench.c \
	build/libsparkprof.a -lz
for gzip in 0 1; do
	/usr/bin/time -f "jfr_bench gzip=$gzip: %e s wall, %U+%S s CPU, %M KiB peak RSS" \
		build/bench/jfr_bench build/bench/bench.jfr 1000000 64 5000 $gzip
done
rm -f build/bench/bench.jfr

# Naming one sample and adding it to the sample store with a stage's
# labels, and writing every view from the store at the end: 1,000,000
# samples over 5,000 and 50,000 stacks of 8 kernel + 32 user frames.
cc -O2 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild -o build/bench/steady_path bench/steady_path.c \
	build/libsparkprof.a -lz -lelf -lbpf -lcurl -lprotobuf-c -lpthread -lm
build/bench/steady_path 1000000 5000
build/bench/steady_path 1000000 50000
# The stop of the hour's soak, from a store shaped like it (632 segments,
# 87k stages): every view written, its time, files and peak RSS.
cc -O2 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild -o build/bench/stop_cost bench/stop_cost.c \
	build/libsparkprof.a -lz -lelf -lbpf -lcurl -lprotobuf-c -lpthread -lm
build/bench/stop_cost
# OTLP export: CPU and bytes per exported sample, from every segment of a
# recording of the simulated executor (-a --wall -F 999).
cc -O2 -D_GNU_SOURCE -Iinclude -Iuser -Ibuild -Ibuild/proto -o build/bench/otlp_cost \
	bench/otlp_cost.c build/libsparkprof.a -lprotobuf-c -lz
python3 -c 'import sys; sys.path[:0] = ["tests", "tests/integration"]; import spark_sim
from testlib import record
cp = spark_sim.compile_sim("build")
record("build/bench/otlp-rec", "-a", "--wall", "-F", 999, "--",
       *spark_sim.sim_command(cp, "build/bench/otlp-truth.txt", jvm_args=["-agentpath:build/libsparkprof-agent.so"]), timeout=600)'
build/bench/otlp_cost build/bench/otlp-rec/samples.store
# One executor running 600 short stages, recorded with -a -t --wall:
# files, bytes, peak RSS and the stop.
python3 bench/many_stages.py
# index.html of an hour's folder (54,000 stages): time and peak RSS.
python3 bench/run_index.py
for extra in bench/offcpu*.sh; do
	[ -x "$extra" ] && "$extra"
done

# Stack walker: BPF handler cost against Java stack depth, JDK 17 and newest.
python3 bench/walker_depth.py

# Flame graph pages: a 1M-sample, 200k-stack profile, sparkprof flame beside
# async-profiler's converter (page size, write time, Chromium load time).
python3 bench/flame_page.py

# What sparkprof costs a node, beside perf and async-profiler (quick mode;
# NODE_COST=--full for the long one). Writes bench/results/node_cost-*.md.
python3 bench/node_cost.py ${NODE_COST:-}
