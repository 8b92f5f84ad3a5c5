import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.locks.LockSupport;

/** Workloads for the stack walker tests: java JavaStacks MODE SECONDS.
 *  interp  - a chain of three methods kept in the interpreter (run with
 *            -XX:CompileCommand=exclude,InterpChain::*)
 *  deep    - a recursion 1200 frames deep (or args[2]), spinning at the bottom
 *  inline  - a compiled loop whose work is in two small methods C2 inlines
 *  mixed   - compiled code calling a method kept in the interpreter (run
 *            with -XX:CompileCommand=exclude,MixedCallee::*): a c2i adapter
 *            lays the arguments out between the two frames
 *  waits   - one thread each in sleep, park, Object.wait, a contended
 *            synchronized block and a blocking socket read
 *  Prints "ready" once every thread is in place. */
public class JavaStacks {
    static volatile long sink;

    static void spinFor(long endNanos) {
        long x = 0;
        while (System.nanoTime() < endNanos) x += x * 31 + 7;
        sink = x;
    }

    static class InterpChain {
        static void outer(long end) { middle(end); }
        static void middle(long end) { inner(end); }
        static void inner(long end) {
            long x = 0;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) x += x * 31 + i;
            }
            sink = x;
        }
    }

    static class Inlined {
        static long leaf(long x, int i) { return x * 31 + (i ^ (i >>> 3)); }
        static long middle(long x, int i) { return leaf(x, i) ^ (x >>> 7); }
        static long loop(int n) {
            long x = 1;
            for (int i = 0; i < n; i++) x = middle(x, i);
            return x;
        }
        static void run(long end) {
            while (System.nanoTime() < end) sink += loop(10_000);
        }
    }

    static class Mixed {
        static long step(long x, int i) { return MixedCallee.work(x, i, x >>> 3, i * 7); }
        static void run(long end) {
            long x = 1;
            for (int i = 0; System.nanoTime() < end; i++) x = step(x, i);
            sink = x;
        }
    }

    static class MixedCallee {
        static long work(long x, int i, long a, int b) {
            for (int k = 0; k < 2000; k++) x += x * 31 + (k ^ b) + a;
            return x + i;
        }
    }

    static class Deep {
        static void recurse(int depth, long end) {
            if (depth == 0) spinFor(end);
            else recurse(depth - 1, end);
            sink += depth;
        }
    }

    static class Waits {
        static final Object monitor = new Object();
        static final Object waitLock = new Object();

        static void sleepLoop(long end) throws InterruptedException {
            while (System.nanoTime() < end) Thread.sleep(50);
        }
        static void parkLoop(long end) {
            while (System.nanoTime() < end) LockSupport.parkNanos(50_000_000L);
        }
        static void waitLoop(long end) throws InterruptedException {
            synchronized (waitLock) {
                while (System.nanoTime() < end) waitLock.wait(50);
            }
        }
        static void holdMonitor(long end) throws InterruptedException {
            synchronized (monitor) {
                while (System.nanoTime() < end) Thread.sleep(50);
            }
        }
        static void enterMonitor() {
            synchronized (monitor) { sink++; }
        }
        static void readLoop(Socket s) throws Exception {
            InputStream in = s.getInputStream();
            while (in.read() >= 0) sink++;
        }
    }

    interface Body { void run() throws Exception; }

    static Thread start(String name, Body body) {
        Thread t = new Thread(() -> {
            try { body.run(); } catch (Exception e) { /* the test ends it */ }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        System.out.println("pid " + ProcessHandle.current().pid());
        switch (mode) {
            case "interp":
                start("interp-chain", () -> InterpChain.outer(end));
                break;
            case "inline":
                start("inline-loop", () -> Inlined.run(end));
                break;
            case "mixed":
                start("mixed-calls", () -> Mixed.run(end));
                break;
            case "deep":
                int depth = args.length > 2 ? Integer.parseInt(args[2]) : 1200;
                start("deep-recursion", () -> Deep.recurse(depth, end));
                break;
            case "waits": {
                ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                Socket client = new Socket(server.getInetAddress(), server.getLocalPort());
                Socket accepted = server.accept();
                start("w-sleep", () -> Waits.sleepLoop(end));
                start("w-park", () -> Waits.parkLoop(end));
                start("w-wait", () -> Waits.waitLoop(end));
                start("w-hold", () -> Waits.holdMonitor(end));
                Thread.sleep(200); // the holder owns the monitor first
                start("w-monitor", Waits::enterMonitor);
                start("w-read", () -> Waits.readLoop(client));
                Thread.sleep(200);
                System.out.println("ready");
                Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000));
                accepted.close();
                return;
            }
            default:
                throw new IllegalArgumentException(mode);
        }
        System.out.println("ready");
        Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000) + 200);
    }
}
