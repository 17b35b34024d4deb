#!/usr/bin/env python3
"""hog.py -- test handler that asks for more than a resource limit allows.

  hog.py mem BYTES    allocate BYTES (an uncaught MemoryError exits 1)
  hog.py files N      open /dev/null N times
  hog.py procs N      fork N children that wait to be killed
Prints how many it got; when the kernel refuses, prints the error to
stderr and exits 75 (files, procs).  Exits 0 when it got everything."""
import os
import signal
import sys

what, n = sys.argv[1], int(sys.argv[2])
if what == "mem":
    block = bytearray(n)
    print(len(block))
    sys.exit(0)
got = 0
try:
    while got < n:
        if what == "files":
            os.open("/dev/null", os.O_RDONLY)
        else:
            sys.stdout.flush()
            if os.fork() == 0:
                signal.pause()
                os._exit(0)
        got += 1
except OSError as e:
    print(got)
    print("%s after %d: %s" % (what, got, e), file=sys.stderr)
    sys.exit(75)
print(got)
