// JitShares - four JIT-compiled kernels with a known split of one thread's
// CPU time, for checking that a profiler attached late names them right.
//
// Usage: java JitShares SECONDS
// Prints "pid <pid>" first.  The thread "shares-worker" runs rounds of 10 ms
// of its own CPU time (the thread CPU clock): KernelOne.run takes 1 ms of each
// round, KernelTwo.run 2, KernelThree.run 3 and KernelFour.run 4, so they get
// 10/20/30/40% of it however much CPU the thread is given.  Each kernel's
// loop is compiled as it runs (interpreted, C1, C2 and OSR), so a profiler
// attached in the first seconds meets code being compiled and replaced.
// Ends by printing "cpu <ns of KernelOne> <Two> <Three> <Four>", as measured,
// and "done".
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class JitShares {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    static long cpu() {
        return MX.getCurrentThreadCpuTime();
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long[] spent = new long[4];
        Thread worker = new Thread(() -> {
            long acc = 1;
            while (System.nanoTime() < deadline) {
                for (int k = 0; k < 4; k++) {
                    long start = cpu();
                    long until = start + (k + 1) * 1_000_000L;
                    if (k == 0) acc = KernelOne.run(acc, until);
                    else if (k == 1) acc = KernelTwo.run(acc, until);
                    else if (k == 2) acc = KernelThree.run(acc, until);
                    else acc = KernelFour.run(acc, until);
                    spent[k] += cpu() - start;
                }
            }
            sink = acc;
        }, "shares-worker");
        worker.start();
        worker.join();
        System.out.println("cpu " + spent[0] + " " + spent[1] + " " + spent[2] + " " + spent[3]);
        System.out.println("done");
    }
}

class KernelOne {
    static long run(long acc, long untilCpu) {
        do {
            for (int i = 0; i < 2000; i++) acc = acc * 6364136223846793005L + 1442695040888963407L;
        } while (JitShares.cpu() < untilCpu);
        return acc;
    }
}

class KernelTwo {
    static long run(long acc, long untilCpu) {
        double x = acc & 0xffff;
        do {
            for (int i = 0; i < 2000; i++) x = Math.sqrt(x * 1.0001 + i);
        } while (JitShares.cpu() < untilCpu);
        return acc + (long) x;
    }
}

class KernelThree {
    static final int[] DATA = new int[4096];

    static long run(long acc, long untilCpu) {
        do {
            for (int i = 0; i < DATA.length; i++) {
                DATA[i] += (int) acc ^ i;
                acc += DATA[(i * 7) & (DATA.length - 1)];
            }
        } while (JitShares.cpu() < untilCpu);
        return acc;
    }
}

class KernelFour {
    static long run(long acc, long untilCpu) {
        do {
            for (int i = 0; i < 2000; i++) acc = Long.rotateLeft(acc ^ (acc >>> 17), 5) + i;
        } while (JitShares.cpu() < untilCpu);
        return acc;
    }
}
