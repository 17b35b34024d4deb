#!/usr/bin/env python3
# persist_raw.py -- a persistent test handler that speaks the line
# protocol itself (no helper module), driven by each job's payload:
#   out, err     text written to stdout and stderr (each then a newline)
#   bigout, bigerr  that many bytes of 'o' / 'e' to stdout / stderr
#   pid          print "pid=PID" to stdout
#   ctl          a list of raw lines written on descriptor 3 first
#   sleep        seconds to sleep before replying
#   mem          MiB to allocate and keep (for max_memory)
#   signal       kill itself with this signal mid-job (a crash)
#   die          exit with this code mid-job, no status line
#   garbage      raw text written on descriptor 3 instead of a reply
#   exit         the status to reply with (default 0)
#   twice        write the status line twice
import json
import os
import signal
import sys
import time

keep = []
ctl = os.fdopen(3, "w", buffering=1)
for line in sys.stdin:
    job = json.loads(line)
    p = job["payload"]
    if "out" in p:
        print(p["out"])
    if "err" in p:
        print(p["err"], file=sys.stderr)
    if "bigout" in p:
        sys.stdout.write("o" * p["bigout"])
    if "bigerr" in p:
        sys.stderr.write("e" * p["bigerr"])
    if p.get("pid"):
        print("pid=%d" % os.getpid())
    sys.stdout.flush()
    sys.stderr.flush()
    for c in p.get("ctl", []):
        ctl.write(c + "\n")
    if "sleep" in p:
        time.sleep(p["sleep"])
    if "mem" in p:
        keep.append(bytearray(os.urandom(1024)) * (p["mem"] * 1024))
    sys.stdout.flush()
    sys.stderr.flush()
    if "signal" in p:
        os.kill(os.getpid(), getattr(signal, "SIG" + p["signal"]))
        time.sleep(5)
    if "die" in p:
        os._exit(p["die"])
    if "garbage" in p:
        ctl.write(p["garbage"])
        ctl.flush()
        time.sleep(30)
        continue
    status = json.dumps({"status": p.get("exit", 0)})
    # "twice": both lines in one write, so that they reach the worker
    # together (two writes could straddle the worker's handing this
    # process its next job, and the second would then answer that job).
    ctl.write((status + "\n") * (2 if p.get("twice") else 1))
