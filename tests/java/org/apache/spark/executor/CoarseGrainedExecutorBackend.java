/*
 * A simulated Spark executor for sparkprof's tests (not Spark's code).
 *
 * It has the executor's main class and command line, runs tasks on a cached
 * pool of "Executor task launch worker-N" threads that rename themselves per
 * task the way Spark's TaskRunner.run does, runs stage-specific hot methods
 * (Stage<N>Work.burn), keeps Spark-named background threads busy a little,
 * and runs waves where one, two or three stages share the task slots. It
 * writes the ground truth - per task: stage attempt, OS tid, CLOCK_MONOTONIC
 * start/end, thread CPU time - as JSON.
 *
 * Flags (pairs, like the real backend's parser):
 *   --driver-url U --executor-id E --hostname H --cores N --app-id A
 *   --sim-ground-truth PATH   where to write the JSON (required)
 *   --sim-scale F             multiplies every task's CPU time (default 1)
 *   --sim-name-format full|tid  3.1+ names (default) or 2.2-3.0 TID-only names
 *   --sim-idle-names true     rename finished threads "Executor task idle worker#ID" (4.2+)
 *   --sim-start-delay-ms N    sleep before the first wave (default 0)
 *   --sim-start-file PATH     then wait (up to 10 minutes) until PATH exists
 *   --sim-linger-ms N         stay alive after the last wave (default 0)
 *   --sim-short-stages N      instead of the waves: N stages one after the other, a
 *                             task per core each, of --sim-short-stage-ms (default 30)
 */
package org.apache.spark.executor;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

public final class CoarseGrainedExecutorBackend {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2)
            opt.put(args[i], args[i + 1]);
        String truth = opt.get("--sim-ground-truth");
        if (truth == null || !opt.containsKey("--executor-id") || !opt.containsKey("--app-id")) {
            System.err.println("usage: CoarseGrainedExecutorBackend --driver-url U --executor-id E "
                    + "--hostname H --cores N --app-id A --sim-ground-truth PATH [--sim-scale F] "
                    + "[--sim-name-format full|tid] [--sim-idle-names true] "
                    + "[--sim-start-delay-ms N] [--sim-start-file PATH] [--sim-linger-ms N] [--sim-short-stages N "
                    + "[--sim-short-stage-ms MS]]");
            System.exit(2);
        }
        SimExecutor sim = new SimExecutor(
                opt.get("--app-id"), opt.get("--executor-id"),
                Integer.parseInt(opt.getOrDefault("--cores", "2")),
                Double.parseDouble(opt.getOrDefault("--sim-scale", "1")),
                "tid".equals(opt.get("--sim-name-format")),
                "true".equals(opt.get("--sim-idle-names")),
                Integer.parseInt(opt.getOrDefault("--sim-short-stages", "0")),
                Double.parseDouble(opt.getOrDefault("--sim-short-stage-ms", "30")));
        long delay = Long.parseLong(opt.getOrDefault("--sim-start-delay-ms", "0"));
        System.out.println("sim-executor: started");
        System.out.flush();
        if (delay > 0)
            Thread.sleep(delay);
        String startFile = opt.get("--sim-start-file");
        for (int i = 0; startFile != null && !Files.exists(Paths.get(startFile)) && i < 6000; i++)
            Thread.sleep(100);
        sim.run();
        Files.write(Paths.get(truth), sim.groundTruthJson().getBytes(StandardCharsets.UTF_8));
        System.out.println("sim-executor: done, ground truth in " + truth);
        long linger = Long.parseLong(opt.getOrDefault("--sim-linger-ms", "0"));
        if (linger > 0)
            Thread.sleep(linger);
        sim.stop();
    }
}
