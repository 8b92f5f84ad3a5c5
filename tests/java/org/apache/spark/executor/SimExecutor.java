/* The simulated executor's task pool, waves and ground truth (see
 * CoarseGrainedExecutorBackend.java). */
package org.apache.spark.executor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

final class SimExecutor {
    /** One task as Spark would launch it: TaskSet "stage.stageAttempt", task "index.attempt". */
    static final class SimTask {
        final long tid;
        final int index, attempt, stage, stageAttempt;
        final long cpuNanos;
        final boolean fails;
        // ground truth, filled by the worker thread
        volatile long osTid = -1, startNs, endNs, cpuNs;
        volatile String threadName;

        SimTask(long tid, int index, int attempt, int stage, int stageAttempt, long cpuNanos, boolean fails) {
            this.tid = tid; this.index = index; this.attempt = attempt; this.stage = stage;
            this.stageAttempt = stageAttempt; this.cpuNanos = cpuNanos; this.fails = fails;
        }
    }

    static final class Wave {
        final List<SimTask> tasks = new ArrayList<>();
        long startNs, endNs;
    }

    final String appId, executorId;
    final int cores;
    final double scale;
    final boolean tidOnlyNames, idleNames;
    final int shortStages;
    final double shortStageMs;
    final List<Wave> waves = new ArrayList<>();
    final SimBackground background = new SimBackground();
    long startNs, endNs;
    private long nextTid = 0;

    /** Spark's Executor: Executors.newCachedThreadPool with daemon threads named
     * "Executor task launch worker-%d" (a counter from 0). */
    final ExecutorService threadPool = Executors.newCachedThreadPool(new ThreadFactory() {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "Executor task launch worker-" + count.getAndIncrement());
            t.setDaemon(true);
            return t;
        }
    });

    SimExecutor(String appId, String executorId, int cores, double scale, boolean tidOnlyNames,
                boolean idleNames, int shortStages, double shortStageMs) {
        this.appId = appId; this.executorId = executorId; this.cores = Math.max(1, cores);
        this.scale = scale; this.tidOnlyNames = tidOnlyNames; this.idleNames = idleNames;
        this.shortStages = shortStages; this.shortStageMs = shortStageMs;
        if (shortStages > 0)
            planShortStages();
        else
            planWaves();
    }

    /** Many short stages one after the other, a task per core each: what a
     * streaming or interactive application's executor sees. */
    private void planShortStages() {
        for (int s = 0; s < shortStages; s++) {
            Wave w = new Wave();
            addInterleaved(w, new int[][] {{s, 0, cores, 0}}, shortStageMs);
            waves.add(w);
        }
    }

    private long ms(double m) {
        return (long) (m * scale * 1_000_000L);
    }

    /** Round-robin over the stages so that they run at the same time. */
    private void addInterleaved(Wave w, int[][] stages, double taskMs) {
        // stages[i] = {stage, stageAttempt, tasks, firstIndex}
        int max = 0;
        for (int[] s : stages) max = Math.max(max, s[2]);
        for (int i = 0; i < max; i++)
            for (int[] s : stages)
                if (i < s[2])
                    w.tasks.add(new SimTask(nextTid++, s[3] + i, s[1], s[0], s[1], ms(taskMs), false));
    }

    private void planWaves() {
        Wave w1 = new Wave();                     // one stage alone
        addInterleaved(w1, new int[][] {{0, 0, 6, 0}}, 400);
        Wave w2 = new Wave();                     // two stages at once
        addInterleaved(w2, new int[][] {{1, 0, 4, 0}, {2, 0, 4, 0}}, 400);
        Wave w3 = new Wave();                     // three stages at once
        addInterleaved(w3, new int[][] {{3, 0, 3, 0}, {4, 0, 3, 0}, {5, 0, 3, 0}}, 300);
        Wave w4 = new Wave();                     // stage 6 attempt 0: two tasks fail
        // Index 2 last: on two slots it still runs when stage 7 starts (in
        // index order, two of stage 6's tasks would end together, then 7).
        for (int i : new int[] {0, 1, 3, 2})
            w4.tasks.add(new SimTask(nextTid++, i, 0, 6, 0, ms(i % 2 == 1 ? 150 : 400), i % 2 == 1));
        addInterleaved(w4, new int[][] {{7, 0, 2, 0}}, 400);
        Wave w5 = new Wave();                     // the retried attempt 6.1 next to stage 7
        // a retried TaskSet numbers its tasks from 0 again; the attempt number is 0
        w5.tasks.add(new SimTask(nextTid++, 0, 0, 6, 1, ms(400), false));
        w5.tasks.add(new SimTask(nextTid++, 2, 0, 7, 0, ms(400), false));
        w5.tasks.add(new SimTask(nextTid++, 1, 0, 6, 1, ms(400), false));
        w5.tasks.add(new SimTask(nextTid++, 3, 0, 7, 0, ms(400), false));
        waves.add(w1); waves.add(w2); waves.add(w3); waves.add(w4); waves.add(w5);
    }

    /** Spark's TaskRunner.run, reduced to what shows from outside. */
    final class TaskRunner implements Runnable {
        final SimTask task;
        final Semaphore slots;
        final CountDownLatch done;

        TaskRunner(SimTask task, Semaphore slots, CountDownLatch done) {
            this.task = task; this.slots = slots; this.done = done;
        }

        @Override
        public void run() {
            Thread t = Thread.currentThread();
            String name = tidOnlyNames
                    ? "Executor task launch worker for task " + task.tid
                    : "Executor task launch worker for task " + task.index + "." + task.attempt
                      + " in stage " + task.stage + "." + task.stageAttempt + " (TID " + task.tid + ")";
            task.startNs = System.nanoTime();
            t.setName(name);
            long cpu0 = CoarseGrainedExecutorBackend.MX.getCurrentThreadCpuTime();
            try {
                task.threadName = name;
                task.osTid = osTid();
                SimStageWork.forTask(task.stage, task.stageAttempt).burn(task.cpuNanos);
                if (task.fails)
                    throw new IllegalStateException("simulated fetch failure");
            } catch (IllegalStateException expected) {
                // a failed task: Spark reports it and the stage is retried
            } finally {
                task.cpuNs = CoarseGrainedExecutorBackend.MX.getCurrentThreadCpuTime() - cpu0;
                task.endNs = System.nanoTime();
                if (idleNames)
                    t.setName("Executor task idle worker#" + t.getId());
                slots.release();
                done.countDown();
            }
        }
    }

    static long osTid() {
        try {
            // "/proc/thread-self" -> "PID/task/TID"
            String link = Files.readSymbolicLink(Paths.get("/proc/thread-self")).toString();
            return Long.parseLong(link.substring(link.lastIndexOf('/') + 1));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    void run() throws InterruptedException {
        background.start();
        startNs = System.nanoTime();
        for (Wave w : waves) {
            // shuffle fetch for the wave's inputs on the netty client thread
            background.shuffleFetch(ms(shortStages > 0 ? 5 : 120));
            Semaphore slots = new Semaphore(cores);
            CountDownLatch done = new CountDownLatch(w.tasks.size());
            w.startNs = System.nanoTime();
            // tasks are launched by the executor's RPC endpoint thread
            Thread launcher = new Thread(() -> {
                for (SimTask task : w.tasks) {
                    slots.acquireUninterruptibly();
                    threadPool.execute(new TaskRunner(task, slots, done));
                }
            }, "dispatcher-Executor");
            launcher.start();
            done.await();
            launcher.join();
            w.endNs = System.nanoTime();
        }
        endNs = System.nanoTime();
    }

    void stop() throws InterruptedException {
        background.stop();
        threadPool.shutdown();
        threadPool.awaitTermination(10, TimeUnit.SECONDS);
    }

    String groundTruthJson() {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"pid\": ").append(ProcessHandle.current().pid())
         .append(",\n  \"app_id\": \"").append(appId)
         .append("\",\n  \"executor_id\": \"").append(executorId)
         .append("\",\n  \"clock\": \"CLOCK_MONOTONIC ns (System.nanoTime)\"")
         .append(",\n  \"cores\": ").append(cores)
         .append(",\n  \"name_format\": \"").append(tidOnlyNames ? "tid" : "full")
         .append("\",\n  \"idle_names\": ").append(idleNames)
         .append(",\n  \"start_ns\": ").append(startNs)
         .append(",\n  \"end_ns\": ").append(endNs)
         .append(",\n  \"waves\": [");
        for (int i = 0; i < waves.size(); i++) {
            Wave w = waves.get(i);
            b.append(i == 0 ? "\n" : ",\n").append("    {\"start_ns\": ").append(w.startNs)
             .append(", \"end_ns\": ").append(w.endNs).append(", \"stages\": [");
            List<String> seen = new ArrayList<>();
            for (SimTask t : w.tasks) {
                String k = "[" + t.stage + ", " + t.stageAttempt + "]";
                if (!seen.contains(k)) seen.add(k);
            }
            b.append(String.join(", ", seen)).append("]}");
        }
        b.append("\n  ],\n  \"tasks\": [");
        boolean first = true;
        for (Wave w : waves)
            for (SimTask t : w.tasks) {
                b.append(first ? "\n" : ",\n");
                first = false;
                b.append("    {\"tid\": ").append(t.tid).append(", \"index\": ").append(t.index)
                 .append(", \"attempt\": ").append(t.attempt).append(", \"stage\": ").append(t.stage)
                 .append(", \"stage_attempt\": ").append(t.stageAttempt)
                 .append(", \"failed\": ").append(t.fails)
                 .append(", \"os_tid\": ").append(t.osTid)
                 .append(", \"thread_name\": \"").append(t.threadName)
                 .append("\", \"hot_method\": \"").append(SimStageWork.hotMethod(t.stage, t.stageAttempt))
                 .append("\", \"start_ns\": ").append(t.startNs).append(", \"end_ns\": ").append(t.endNs)
                 .append(", \"cpu_ns\": ").append(t.cpuNs).append("}");
            }
        b.append("\n  ],\n  \"stages\": [");
        // CPU time per stage attempt, in first-run order
        List<String> keys = new ArrayList<>();
        List<long[]> sums = new ArrayList<>(); // {stage, attempt, cpuNs, tasks}
        for (Wave w : waves)
            for (SimTask t : w.tasks) {
                String k = t.stage + "." + t.stageAttempt;
                int at = keys.indexOf(k);
                if (at < 0) {
                    keys.add(k);
                    sums.add(new long[] {t.stage, t.stageAttempt, 0, 0});
                    at = keys.size() - 1;
                }
                sums.get(at)[2] += t.cpuNs;
                sums.get(at)[3]++;
            }
        for (int i = 0; i < sums.size(); i++) {
            long[] s = sums.get(i);
            b.append(i == 0 ? "\n" : ",\n").append("    {\"stage\": ").append(s[0])
             .append(", \"attempt\": ").append(s[1]).append(", \"cpu_ns\": ").append(s[2])
             .append(", \"tasks\": ").append(s[3])
             .append(", \"hot_method\": \"").append(SimStageWork.hotMethod((int) s[0], (int) s[1]))
             .append("\"}");
        }
        b.append("\n  ],\n  \"background\": ").append(background.json()).append("\n}\n");
        return b.toString();
    }
}
