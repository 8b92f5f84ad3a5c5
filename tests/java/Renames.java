// Renames - threads that rename themselves over and over, as Spark's task
// threads do at every task, while the helper polls the threads' names.
//
// Usage: java Renames SECONDS THREADS PERIOD_NANOS
// Prints "pid <pid>" first. Thread i is named "ren-<i>-<n>" with n counting
// up from 0, one name every PERIOD_NANOS (a busy wait). Ends by printing
// "done".
public class Renames {
    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        int count = Integer.parseInt(args[1]);
        long period = Long.parseLong(args[2]);
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] threads = new Thread[count];
        for (int i = 0; i < count; i++) {
            final int id = i;
            threads[i] = new Thread(() -> {
                for (long n = 0; System.nanoTime() < deadline; n++) {
                    Thread.currentThread().setName("ren-" + id + "-" + n);
                    long end = System.nanoTime() + period;
                    while (System.nanoTime() < end) Thread.onSpinWait();
                }
            }, "ren-" + id + "-start");
            threads[i].start();
        }
        for (Thread t : threads) t.join();
        System.out.println("done");
    }
}
