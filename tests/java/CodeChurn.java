// CodeChurn - makes the JIT load, deoptimize, unload and reuse code-cache
// memory, to check the helper's load/unload records.
//
// Usage: java -XX:ReservedCodeCacheSize=... CodeChurn SECONDS CLASSDIR [STOPFILE]
// (it also ends, before SECONDS, once STOPFILE exists).
// Each round defines ChurnPayload afresh in its own class loader (from
// CLASSDIR/ChurnPayload.class), runs it hot so it is compiled, and drops
// the loader; System.gc() then unloads the classes and their compiled code,
// freeing code-cache memory for the next rounds.  A call site whose receiver
// type changes (ChurnShapes) deoptimizes compiled code along the way.
// Prints "pid <pid>" first and "done rounds=<n>" at the end.
import java.nio.file.Files;
import java.nio.file.Path;

public class CodeChurn {
    static volatile long sink;

    static final class OneShot extends ClassLoader {
        private final byte[] bytes;

        OneShot(byte[] bytes) {
            super(CodeChurn.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals("ChurnPayload")) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) c = defineClass(name, bytes, 0, bytes.length);
                    return c;
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        byte[] bytes = Files.readAllBytes(Path.of(args[1], "ChurnPayload.class"));
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        Path stop = args.length > 2 ? Path.of(args[2]) : null;
        int rounds = 0;
        while (System.nanoTime() < deadline && (stop == null || !Files.exists(stop))) {
            Class<?> c = new OneShot(bytes).loadClass("ChurnPayload");
            java.util.function.IntToLongFunction p =
                    (java.util.function.IntToLongFunction) c.getDeclaredConstructor().newInstance();
            for (int i = 0; i < 3000; i++) sink += p.applyAsLong(2000 + (i & 7));
            sink += ChurnShapes.area(rounds);
            rounds++;
            if (rounds % 8 == 0) System.gc();
        }
        System.out.println("done rounds=" + rounds);
    }
}

// The receiver type of area()'s call site changes every few rounds, so code
// compiled for one type deoptimizes.
class ChurnShapes {
    interface Shape { double area(); }
    static final class Circle implements Shape { public double area() { return 3.14159; } }
    static final class Square implements Shape { public double area() { return 1.0; } }
    static final class Tri implements Shape { public double area() { return 0.5; } }

    static double area(int round) {
        Shape[] kinds = { new Circle(), new Square(), new Tri() };
        Shape s = kinds[(round / 4) % 3];
        double a = 0;
        for (int i = 0; i < 20000; i++) a += total(s, i);
        return a;
    }

    static double total(Shape s, int i) {
        return s.area() * (i & 3);
    }
}
