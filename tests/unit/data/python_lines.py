"""Prints the line tables of code objects compiled by the running CPython,
with the line of every instruction as CPython itself says (co_lines), for
tests/unit/test_python_code.c. One code object per line:
    MINOR FIRSTLINENO LINETABLE_HEX INSTR:LINE ...
"""
import sys

SOURCE = '''
def plain(n):
    h = 0
    for i in range(n):
        h = (h * 31 + i) & 0xffffffff
    return h

def comprehensions(xs):
    a = [x * 2 for x in xs]
    b = {x: x for x in xs
         if x % 3}
    return sum(x for x in a) + len(b)

def generator(n):
    for i in range(n):
        yield i
''' + "\n" * 300 + '''
def far_below(x):
    try:
        return 1 / x
    except ZeroDivisionError:
        return None
    finally:
        pass

class K:
    def method(self, a, b=2, *args, **kw):
        return (a +
                b +
                len(args))
''' + "".join("\ndef long_%d(x):\n" % k + "".join(
    "    x = x + %d\n" % i for i in range(400)) + "    return x\n" for k in range(2))


def codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


def main():
    top = compile(SOURCE, "lines.py", "exec")
    for code in codes(top):
        pairs = []
        for start, end, line in code.co_lines():
            for unit in range(start // 2, end // 2):
                pairs.append("%d:%d" % (unit, line if line is not None else 0))
        print(sys.version_info[1], code.co_firstlineno, code.co_linetable.hex(), " ".join(pairs))


main()
