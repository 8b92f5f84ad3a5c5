#!/bin/sh
# Runs inside a kernel-matrix VM (tests/integration/test_kernels.py), as root,
# with the host's files shared read-only: each recording's folder and log go
# to OUT, which is shared writable. Nothing is asserted here: the host reads
# what was written.
#
# usage: guest.sh OUT ROOT JAVA SIM_CLASSPATH [off-cpu]
#   off-cpu: the kernel is expected to have off-CPU profiles: the JVM is
#            recorded with --wall --off-cpu
set -u
OUT=$1 ROOT=$2 JAVA=$3 SIM_CP=$4
OFF_CPU=
[ "${5:-}" = off-cpu ] && OFF_CPU="--wall --off-cpu"
SP=$ROOT/sparkprof
PROGS=$ROOT/build/progs
cd "$OUT" || exit 1

# Waits up to 60 s for a line matching PATTERN (grep's) in FILE.
wait_for() {
	for i in $(seq 120); do
		grep -q "$2" "$1" && return
		sleep 0.5
	done
}
uname -r > release

# 1. The whole node: a native program with known hot functions.
#    It runs until the recording is over: an emulated VM on a busy host can
#    take seconds to start the recorder.
"$PROGS/hot_functions" 600 > native.out 2>&1 &
native=$!
"$SP" record -a -F 199 -d 4 -o all > all.log 2>&1
kill "$native"
wait

# 2. A JVM by pid: the simulated executor, with the helper and frame pointers.
#    Its work starts once record -p has started (an emulated VM on a busy
#    host can take 20 s to load the programs); record ends when it exits.
#    list looks at it while it is recorded.
"$JAVA" -cp "$SIM_CP" -agentpath:"$ROOT/build/libsparkprof-agent.so" -XX:+PreserveFramePointer \
	org.apache.spark.executor.CoarseGrainedExecutorBackend \
	--driver-url spark://CoarseGrainedScheduler@127.0.0.1:1 --executor-id 1 \
	--hostname localhost --cores 2 --app-id app-20261122000000-0001 \
	--sim-ground-truth "$OUT/truth.json" --sim-scale 0.3 --sim-start-delay-ms 1000 --sim-start-file "$OUT/go" \
	> sim.out 2>&1 &
SIM=$!
# Once its main method runs (JVM start-up takes seconds under emulation).
wait_for sim.out "sim-executor: started"
"$SP" record -v -p "$SIM" -F 199 $OFF_CPU -o jvm > jvm.log 2>&1 &
REC=$!
wait_for jvm.log "recording into"
# The stages start once its interpreted frames can be named (a starved
# recorder reads the JVM's vmStructs late), unless this kernel cannot walk them.
wait_for jvm.log "interpreted frames are walked\|reduced:.*hotspot_walk"
"$SP" list > list.out 2> list.err
sleep 3  # its main thread waits, recorded: the wall profile's known wait
touch go
wait "$SIM"
# The recording stops once the JVM has exited. One that has not stopped
# 300 s later is stuck: where each of its threads is goes to jvm.hang (gdb's
# backtraces too, where the host has gdb), and it is not waited for again.
for i in $(seq 600); do
	kill -0 "$REC" 2>/dev/null || break
	sleep 0.5
done
if kill -0 "$REC" 2>/dev/null; then
	for t in /proc/$REC/task/*; do
		echo "== $t $(cat $t/comm) $(cat $t/wchan)"
		cat "$t/stack"
	done > jvm.hang 2>&1
	command -v gdb > /dev/null &&
		timeout 60 gdb -batch -p "$REC" -ex "thread apply all bt" >> jvm.hang 2>&1
	kill -9 "$REC"
else
	wait "$REC"
fi

# 3. Wall-clock time of a thread that sleeps half its time.
#    It stays 5 s after: the recorder may read its maps seconds late.
"$SP" record --wall -t -F 499 -o wall -- "$PROGS/sleep_share" 3 20 20 5 > wall.log 2>&1

# 4. Every program forced to load, whatever the probes say: an old kernel's
#    verifier refuses what it lacks, and says so.
SPARKPROF_ASSUME_FEATURES=all "$SP" record -a -d 1 -o forced > forced.log 2>&1
echo $? > forced.rc
echo done > done
