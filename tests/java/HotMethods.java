// HotMethods - a Java workload with known hot methods and thread names.
//
// Usage: java HotMethods SECONDS [WORKERS] [TASKS_PER_SECOND]
// Prints "pid <pid>" first.  WORKERS threads named "hot-worker-<i>" each spend
// their time in one of three hot methods, one per class: HotAlpha.spin,
// HotBeta.spin and HotGamma.spin (worker i uses class i % 3).  With
// TASKS_PER_SECOND > 0, a Spark-like pool (a cached ThreadPoolExecutor whose
// threads are named "Executor task launch worker-N") runs short tasks that
// rename their thread to "Executor task launch worker for task I.0 in stage
// S.0 (TID I)" as Spark's TaskRunner does; every name set is printed as
// "name <java thread id> <name>", followed by "nametime <System.nanoTime()
// before the name was set> <name>" (nanoTime is CLOCK_MONOTONIC on Linux,
// the helper's clock).  Ends by printing "done".
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class HotMethods {
    static volatile long sink;

    static synchronized void say(String s) {
        System.out.println(s);
        System.out.flush();
    }

    static synchronized void named(Thread t, long nanoTime) {
        say("name " + t.getId() + " " + t.getName());
        say("nametime " + nanoTime + " " + t.getName());
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int tasksPerSecond = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        say("pid " + ProcessHandle.current().pid());
        long deadline = System.nanoTime() + (long) (seconds * 1e9);

        Thread[] threads = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            final int kind = i % 3;
            threads[i] = new Thread(() -> {
                while (System.nanoTime() < deadline) {
                    long r;
                    if (kind == 0) r = HotAlpha.spin(200_000);
                    else if (kind == 1) r = HotBeta.spin(200_000);
                    else r = HotGamma.spin(200_000);
                    sink += r;
                }
            }, "hot-worker-" + i);
            named(threads[i], System.nanoTime());
            threads[i].start();
        }

        if (tasksPerSecond > 0) {
            AtomicInteger n = new AtomicInteger();
            ThreadFactory factory = r -> {
                Thread t = new Thread(r, "Executor task launch worker-" + n.getAndIncrement());
                t.setDaemon(true);
                named(t, System.nanoTime());
                return t;
            };
            ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60,
                    TimeUnit.SECONDS, new SynchronousQueue<>(), factory);
            int tid = 0;
            long periodNanos = (long) (1e9 / tasksPerSecond);
            while (System.nanoTime() < deadline) {
                final int task = tid++;
                pool.execute(() -> {
                    Thread me = Thread.currentThread();
                    String name = "Executor task launch worker for task " + task + ".0 in stage "
                            + (task / 10) + ".0 (TID " + task + ")";
                    long before = System.nanoTime();
                    me.setName(name);
                    named(me, before);
                    long end = System.nanoTime() + 20_000_000L;
                    while (System.nanoTime() < end) sink += HotDelta.spin(20_000);
                });
                Thread.sleep(Math.max(1, periodNanos / 1_000_000));
            }
            pool.shutdown();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
        for (Thread t : threads) t.join();
        say("done");
    }
}

class HotAlpha {
    static long spin(int n) {
        long x = 1;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + i;
        return x;
    }
}

class HotBeta {
    static long spin(int n) {
        double x = 1.5;
        for (int i = 0; i < n; i++) x = Math.sqrt(x * x + i) * 0.999;
        return (long) x;
    }
}

class HotGamma {
    static long spin(int n) {
        int[] a = new int[64];
        long s = 0;
        for (int i = 0; i < n; i++) {
            a[i & 63] += i ^ (i >>> 3);
            s += a[(i * 7) & 63];
        }
        return s;
    }
}

class HotDelta {
    static long spin(int n) {
        long h = 7;
        for (int i = 0; i < n; i++) h = 31 * h + (i % 13);
        return h;
    }
}
