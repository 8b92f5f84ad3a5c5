/* JmcRead - test tool: loads a JFR file (plain or gzip) with JDK Mission
 * Control's parser, the library JMC's GUI loads files with, and prints what
 * it sees, one line per event:
 *   TYPE <tab> THREAD <tab> FRAME|FRAME|... (leaf first)
 * with FRAME = class.method:frametype, and at the end "count TYPE N" lines.
 * Built and run by tests/jfr/jfrtest.py. */
import java.io.File;
import java.util.Map;
import java.util.TreeMap;

import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.IMCThread;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

public class JmcRead {
    public static void main(String[] args) throws Exception {
        IItemCollection events = JfrLoaderToolkit.loadEvents(new File(args[0]));
        Map<String, Long> counts = new TreeMap<>();
        StringBuilder out = new StringBuilder();
        for (IItemIterable it : events) {
            IType<IItem> type = it.getType();
            String id = type.getIdentifier();
            IMemberAccessor<IMCStackTrace, IItem> stack =
                    JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            IMemberAccessor<IMCThread, IItem> thread = JfrAttributes.EVENT_THREAD.getAccessor(type);
            for (IItem item : it) {
                counts.merge(id, 1L, Long::sum);
                if (stack == null) {
                    continue;
                }
                out.append(id).append('\t');
                IMCThread t = thread == null ? null : thread.getMember(item);
                out.append(t == null ? "-" : t.getThreadName()).append('\t');
                IMCStackTrace st = stack.getMember(item);
                String sep = "";
                if (st != null) {
                    for (IMCFrame f : st.getFrames()) {
                        out.append(sep).append(f.getMethod().getType().getFullName()).append('.')
                                .append(f.getMethod().getMethodName()).append(':').append(f.getType());
                        sep = "|";
                    }
                }
                out.append('\n');
            }
        }
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            out.append("count ").append(e.getKey()).append(' ').append(e.getValue()).append('\n');
        }
        System.out.write(out.toString().getBytes("UTF-8"));
        System.out.flush();
    }
}
