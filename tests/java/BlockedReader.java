// BlockedReader - a Java thread that spends its time blocked reading a socket.
//
// Usage: java BlockedReader SECONDS
// Prints "pid <pid>" first.  A writer thread sends one byte every 2 ms over
// a loopback TCP connection; the thread "blocked-reader" reads them one at a
// time in BlockedReader.readOne, so nearly all of its wall time is spent
// blocked in that method's read (and readOne is soon JIT-compiled).  A
// thread "busy-worker" burns CPU in BlockedReader.burn for comparison.
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

public class BlockedReader {
    static volatile long sink;

    static int readOne(InputStream in) throws Exception {
        return in.read();
    }

    static long burn(int n) {
        long x = 3;
        for (int i = 0; i < n; i++) x = x * 2862933555777941757L + 3037000493L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.flush();
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept();
        Thread writer = new Thread(() -> {
            try (OutputStream out = client.getOutputStream()) {
                while (System.nanoTime() < deadline) {
                    out.write(1);
                    out.flush();
                    Thread.sleep(2);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "byte-writer");
        Thread reader = new Thread(() -> {
            try (InputStream in = accepted.getInputStream()) {
                while (readOne(in) >= 0) { }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "blocked-reader");
        Thread busy = new Thread(() -> {
            while (System.nanoTime() < deadline) sink += burn(100_000);
        }, "busy-worker");
        writer.start();
        reader.start();
        busy.start();
        writer.join();
        reader.join();
        busy.join();
        server.close();
        System.out.println("done");
    }
}
