/* Stage-specific hot methods of the simulated executor: one class per stage so
 * that a profile shows which stage a sample came from
 * (org/apache/spark/executor/Stage<N>Work.burn). */
package org.apache.spark.executor;

abstract class SimStageWork {
    /** Burns about cpuNanos of this thread's CPU time; returns a value so the
     * JIT cannot drop the loop. */
    abstract long burn(long cpuNanos);

    static volatile long sink;

    static final SimStageWork[] STAGES = {
        new Stage0Work(),
        new Stage1Work(),
        new Stage2Work(),
        new Stage3Work(),
        new Stage4Work(),
        new Stage5Work(),
        new Stage6Work(),
        new Stage7Work(),
    };

    static SimStageWork forStage(int stage) {
        return STAGES[stage % STAGES.length];
    }

    static String hotMethod(int stage) {
        return "org/apache/spark/executor/Stage" + (stage % STAGES.length) + "Work.burn";
    }

    /** A retried stage attempt runs a copy of its stage's hot method in a
     * class of its own (Stage<N>Attempt<A>Work.burn): not what Spark does,
     * but it lets a profile tell the attempts apart for the tests. */
    static final SimStageWork STAGE6_ATTEMPT1 = new Stage6Attempt1Work();

    static SimStageWork forTask(int stage, int stageAttempt) {
        if (stage == 6 && stageAttempt == 1)
            return STAGE6_ATTEMPT1;
        return forStage(stage);
    }

    static String hotMethod(int stage, int stageAttempt) {
        if (stage == 6 && stageAttempt == 1)
            return "org/apache/spark/executor/Stage6Attempt1Work.burn";
        return hotMethod(stage);
    }

    static long threadCpu() {
        return CoarseGrainedExecutorBackend.MX.getCurrentThreadCpuTime();
    }
}

final class Stage0Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 1L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                buf[j & 63] = x;
            }
            x += buf[0];
        }
        sink = x ^ (x >>> 29);
        return x;
    }
}

final class Stage1Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 2L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                buf[j & 63] = x;
            }
            x += buf[1];
        }
        sink = x + 3;
        return x;
    }
}

final class Stage2Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 3L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = Long.rotateLeft(x * 0x9E3779B97F4A7C15L, 31);
                buf[j & 63] = x;
            }
            x += buf[2];
        }
        sink = x * 5;
        return x;
    }
}

final class Stage3Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 4L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = x * 31 + (x >>> 11) + 7;
                buf[j & 63] = x;
            }
            x += buf[3];
        }
        sink = x ^ 0x5555;
        return x;
    }
}

final class Stage4Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 5L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
                buf[j & 63] = x;
            }
            x += buf[4];
        }
        sink = x - 1;
        return x;
    }
}

final class Stage5Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 6L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
                buf[j & 63] = x;
            }
            x += buf[5];
        }
        sink = x | 1;
        return x;
    }
}

final class Stage6Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 7L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x += Long.bitCount(x) + (x << 3);
                buf[j & 63] = x;
            }
            x += buf[6];
        }
        sink = x >>> 1;
        return x;
    }
}

final class Stage7Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 8L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x = Long.reverse(x) + 0x632BE59BD9B4E019L;
                buf[j & 63] = x;
            }
            x += buf[7];
        }
        sink = x ^ 77;
        return x;
    }
}

final class Stage6Attempt1Work extends SimStageWork {
    @Override
    long burn(long cpuNanos) {
        long end = threadCpu() + cpuNanos, x = 7L;
        while (threadCpu() < end) {
            long[] buf = new long[64]; // some garbage: the GC threads get work
            for (int j = 0; j < 20000; j++) {
                x += Long.bitCount(x) + (x << 3);
                buf[j & 63] = x;
            }
            x += buf[6];
        }
        sink = x >>> 1;
        return x;
    }
}
