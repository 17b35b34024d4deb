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
#   seen         a file to append the job's id to (which jobs it got)
#   envmax       print "envmax=" and JOBQ_MAX_ATTEMPTS from its environment
#   termreply    on SIGTERM, reply with this status and go on serving
#   quit         exit 0 right after the status line ("max requests")
# LINGER (environment): seconds it takes to exit after EOF on stdin,
# deaf to SIGTERM meanwhile (a slow clean-up).
import json
import os
import signal
import sys
import time

keep = []
ctl = os.fdopen(3, "w", buffering=1)
linger = float(os.environ.get("LINGER", "0"))
if linger > 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    job = json.loads(line)
    p = job["payload"]
    if "seen" in p:
        with open(p["seen"], "a") as f:
            f.write("%d\n" % job["id"])
    if p.get("envmax"):
        print("envmax=%s" % os.environ.get("JOBQ_MAX_ATTEMPTS", "unset"))
    if "termreply" in p:
        def answer(signo, frame, status=p["termreply"]):
            ctl.write(json.dumps({"status": status}) + "\n")
            ctl.flush()
            raise InterruptedError
        signal.signal(signal.SIGTERM, answer)
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
        try:
            time.sleep(p["sleep"])
        except InterruptedError:  # termreply answered the SIGTERM
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            continue
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
    if p.get("quit"):
        sys.exit(0)
time.sleep(linger)
