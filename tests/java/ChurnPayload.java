// ChurnPayload - the class CodeChurn defines afresh in a new class loader
// every round (so its compiled code is unloaded with the loader).
public class ChurnPayload implements java.util.function.IntToLongFunction {
    public long applyAsLong(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) s += step(i);
        return s;
    }

    private long step(int i) {
        return (i * 31L) ^ (i >>> 2);
    }
}
