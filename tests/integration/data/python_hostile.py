"""A Python process that lies about its own code objects (ctypes), for
tests/integration/test_python_hostile.py:
    python_hostile.py MODE SECONDS
MODE linetable: victim's line table claims a terabyte;
MODE qualname: victim's qualified name is an int;
MODE both. bystander runs beside victim, untouched."""
import ctypes
import os
import sys
import threading
import time

QUALNAME, LINETABLE = 128, 136   # PyCodeObject, 3.11 to 3.13


def victim(until):
    x = 0
    while time.time() < until:
        x += 1


def bystander(until):
    x = 0
    while time.time() < until:
        x += 1


mode, seconds = sys.argv[1], float(sys.argv[2])
code = victim.__code__
huge = b"z" * 64
not_a_str = 12345678901234567890
if mode in ("linetable", "both"):
    ctypes.c_ssize_t.from_address(id(huge) + 16).value = 1 << 40
    ctypes.c_void_p.from_address(id(code) + LINETABLE).value = id(huge)
if mode in ("qualname", "both"):
    ctypes.c_void_p.from_address(id(code) + QUALNAME).value = id(not_a_str)
until = time.time() + seconds
other = threading.Thread(target=bystander, args=(until,))
other.start()
print("ready", flush=True)
victim(until)
other.join()
os._exit(0)  # the code object's fields are not its own any more: no finalization
