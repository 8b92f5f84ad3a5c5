"""Parses the JVMTI helper's log (include/sparkprof_helper_log.h) for tests.

Independent of the C reader on purpose: the tests check the helper's output
against the format's definition, not against the code that reads it.
"""
import re


def unescape(s):
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), s)


class HelperLog:
    def __init__(self, text):
        self.header = None
        self.blobs = {}        # id -> dict(kind, ts, start, size, name, unloaded)
        self.order = []        # ids in file order
        self.unloads = []      # (ts, id)
        self.inline = {}       # id -> [(start, end, [names])], from I and J records
        self.numbered = {}     # N records: number -> name
        self.inline_lines = {"I": 0, "J": 0}
        self.threads = []      # (ts, tid, name)
        self.ends = []         # (ts, tid)
        self.states = []       # (ts, tid, state)
        self.replays = {}      # what -> ts ("snapshot": a continued file's restated part)
        self.continued_at = None   # G: the log went on in a new file
        self.heartbeats = []
        self.bad = []
        self.records = []      # (kind, ts or None, payload) in file order
        lines = text.split("\n")
        if not text.endswith("\n"):
            lines = lines[:-1]      # a trailing partial line
        else:
            lines = lines[:-1]
        for line in lines:
            try:
                self._line(line)
            except (ValueError, IndexError, KeyError):
                self.bad.append(line)

    def _line(self, line):
        kind, rest = line[0], line[2:]
        if kind == "H":
            v, pid, ts, mode, jvm = rest.split(" ", 4)
            self.header = dict(version=int(v), pid=int(pid), ts=int(ts), mode=mode, jvm=jvm)
        elif kind in "LD":
            ts, i, start, size, name = rest.split(" ", 4)
            b = dict(kind=kind, ts=int(ts), id=int(i), start=int(start, 16),
                     size=int(size, 16), name=unescape(name), unloaded=None)
            assert b["id"] not in self.blobs
            self.blobs[b["id"]] = b
            self.order.append(b["id"])
            self.records.append((kind, b["ts"], b))
        elif kind == "I":
            i, start, end, names = rest.split(" ", 3)
            self.inline.setdefault(int(i), []).append(
                (int(start, 16), int(end, 16), [unescape(n) for n in names.split("\t")]))
            self.inline_lines["I"] += 1
        elif kind == "N":
            n, name = rest.split(" ", 1)
            n, name = int(n), unescape(name)
            if n in self.numbered:
                assert self.numbered[n] == name, "a restated N record names the same method"
            else:
                # From 1, or in a continued file from its first N record.
                first = min(self.numbered) if self.numbered else (
                    n if self.header and self.header["mode"] == "continued" else 1)
                assert n == first + len(self.numbered), "N records count up in order"
                self.numbered[n] = name
        elif kind == "J":
            i, start, end, *numbers = rest.split(" ")
            base = self.blobs[int(i)]["start"]
            assert numbers and self.order[-1] == int(i), "J follows its L record"
            self.inline.setdefault(int(i), []).append(
                (base + int(start, 16), base + int(end, 16),
                 [self.numbered[int(n)] for n in numbers]))
            self.inline_lines["J"] += 1
        elif kind == "U":
            ts, i = (int(x) for x in rest.split(" "))
            self.blobs[i]["unloaded"] = ts
            self.unloads.append((ts, i))
            self.records.append(("U", ts, self.blobs[i]))
        elif kind == "T":
            ts, tid, name = rest.split(" ", 2)
            self.threads.append((int(ts), int(tid), unescape(name)))
        elif kind == "X":
            ts, tid = rest.split(" ")
            self.ends.append((int(ts), int(tid)))
        elif kind == "S":
            ts, tid, state = rest.split(" ")
            assert state in ("idle", "busy")
            self.states.append((int(ts), int(tid), state))
        elif kind == "R":
            ts, what = rest.split(" ")
            self.replays[what] = int(ts)
        elif kind == "K":
            self.heartbeats.append(int(rest))
        elif kind == "G":
            self.continued_at = int(rest)
        else:
            raise ValueError("unknown record " + kind)

    def methods(self):
        return [b for b in self.blobs.values() if b["kind"] == "L"]

    def live_overlaps(self):
        """Pairs of compiled methods live at the same time on the same bytes."""
        live = {}
        bad = []
        for kind, ts, b in self.records:
            if kind == "U":
                live.pop(b["id"], None)
                continue
            if kind != "L":
                continue
            for o in live.values():
                if o["start"] < b["start"] + b["size"] and b["start"] < o["start"] + o["size"]:
                    bad.append((o, b))
            live[b["id"]] = b
        return bad

    def reused(self):
        """Compiled methods loaded where an unloaded one had been."""
        gone = []
        count = 0
        for kind, ts, b in self.records:
            if kind == "U":
                gone.append(b)
            elif kind == "L":
                if any(g["start"] < b["start"] + b["size"] and b["start"] < g["start"] + g["size"]
                       for g in gone):
                    count += 1
        return count

    def names_of(self, tid):
        return [n for ts, t, n in self.threads if t == tid]
