/* Background threads of the simulated executor, named as Spark names them
 * (shared/docs/spark-executors.md section 3), each doing a little CPU work in
 * its own class so that its samples are recognisable. */
package org.apache.spark.executor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

final class SimBackground {
    private final List<Thread> threads = new ArrayList<>();
    private final List<long[]> cpu = new ArrayList<>(); // {osTid, cpuNs} per thread
    private volatile boolean running = true;
    private final LinkedBlockingQueue<Long> fetches = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Boolean> fetched = new LinkedBlockingQueue<>();

    static long spin(long cpuNanos) {
        long end = SimStageWork.threadCpu() + cpuNanos, x = 1;
        while (SimStageWork.threadCpu() < end)
            for (int j = 0; j < 5000; j++)
                x = x * 2862933555777941757L + 3037000493L;
        return x;
    }

    /** A thread that runs body every periodMs until stopped, recording its CPU time. */
    private void periodic(String name, long periodMs, Runnable body) {
        long[] slot = {-1, 0};
        cpu.add(slot);
        Thread t = new Thread(() -> {
            slot[0] = SimExecutor.osTid();
            while (running) {
                body.run();
                slot[1] = SimStageWork.threadCpu();
                try {
                    Thread.sleep(periodMs);
                } catch (InterruptedException e) {
                    break;
                }
            }
            slot[1] = SimStageWork.threadCpu();
        }, name);
        t.setDaemon(true);
        threads.add(t);
    }

    void start() {
        periodic("dispatcher-event-loop-0", 50, () -> RpcDispatchWork.handle(500_000));
        periodic("dispatcher-event-loop-1", 50, () -> RpcDispatchWork.handle(500_000));
        periodic("executor-heartbeater", 250, () -> HeartbeatWork.report(2_000_000));
        periodic("netty-rpc-env-timeout", 1000, () -> { });
        periodic("block-manager-future-0", 1000, () -> { });
        periodic("Task reaper-0", 1000, () -> { });
        // the shuffle client thread serves fetch requests between waves
        long[] slot = {-1, 0};
        cpu.add(slot);
        Thread shuffle = new Thread(() -> {
            slot[0] = SimExecutor.osTid();
            while (running) {
                try {
                    Long ns = fetches.poll(100, TimeUnit.MILLISECONDS);
                    if (ns != null) {
                        ShuffleFetchWork.fetch(ns);
                        fetched.put(Boolean.TRUE);
                    }
                } catch (InterruptedException e) {
                    break;
                }
                slot[1] = SimStageWork.threadCpu();
            }
            slot[1] = SimStageWork.threadCpu();
        }, "shuffle-client-1-1");
        shuffle.setDaemon(true);
        threads.add(shuffle);
        for (Thread t : threads)
            t.start();
    }

    /** Runs a shuffle fetch of about cpuNanos on the shuffle client thread and waits for it. */
    void shuffleFetch(long cpuNanos) throws InterruptedException {
        fetches.put(cpuNanos);
        fetched.take();
    }

    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads)
            t.join(2000);
    }

    String json() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < threads.size(); i++) {
            long[] s = cpu.get(i);
            b.append(i == 0 ? "\n" : ",\n").append("    {\"name\": \"").append(threads.get(i).getName())
             .append("\", \"os_tid\": ").append(s[0]).append(", \"cpu_ns\": ").append(s[1]).append("}");
        }
        return b.append("\n  ]").toString();
    }
}

final class RpcDispatchWork {
    static void handle(long cpuNanos) {
        SimStageWork.sink = SimBackground.spin(cpuNanos);
    }
}

final class HeartbeatWork {
    static void report(long cpuNanos) {
        SimStageWork.sink = SimBackground.spin(cpuNanos);
    }
}

final class ShuffleFetchWork {
    static void fetch(long cpuNanos) {
        SimStageWork.sink = SimBackground.spin(cpuNanos);
    }
}
