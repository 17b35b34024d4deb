#!/usr/bin/env python3
# killm.py MODE -- test handler for tests/kill_matrix.sh.  MODE exec: one
# job per process (payload on stdin, status as exit code); MODE
# persistent: request lines on stdin, {"status": N} on descriptor 3;
# MODE alert: an on_dead program (logs the dead job's id).
#
# Everything it does is logged, one line per write, in $D/log:
#   boot PID G JOB      the process started (before any job; JOB is
#                       the job of an exec-mode process, else -)
#   start ID TYPE PID   a run began (after taking its locks)
#   end ID TYPE PID N   a run ended with status N (its last act done)
#   overlap ID TYPE PID another run of job ID held its lock
#   over ID TYPE PID    all of payload "slots" locks of TYPE were taken
#   alert ID            on_dead ran for job ID
#   term PID MS         the process got SIGTERM at MS (epoch ms) (and goes on: a handler
#                       that cleans up slowly, as the handler guide allows)
# A run holds an flock on $D/locks/job.ID from its start until it ends
# (exec mode: until the process is gone), and with "slots": N one of N
# flocks on $D/locks/slot.TYPE.I: a second run of a job, or an N+1th run
# of a type, alive at the same time is seen whoever started it.
#
# Gates (waits of at most 60 s while a file exists), so that the test can
# stop a run at a known step: $D/hold.$G.boot before the process reads
# anything, $D/hold.$G.run after "start", and, for payload act "block",
# $D/hold.block.  G names the worker (env.G), so that a killed worker's
# handlers stay put while its successor's run.
#
# The payload's "act" says how the run ends:
#   follow  writes a follow-up {"type": "child", "payload": {"from": ID}},
#           and one of type "child2" that waits for it and for job ID
#   at      writes a follow-up of type "later" starting at payload "at"
#   fgrp    writes a follow-up of type "gch" that joins group payload
#           "group", made with on_complete "gcb" on first use
#   retry   writes {"retry_after": payload "after"} and ends 75 on its
#           first two ends (counted in $D/retried.ID), then ends 0
#   dead    ends 65 (dead-lettered at once)
#   ckpt    writes {"checkpoint": {"run": PID}} as it starts, before the
#           gate, and logs "resumed ID VALUE" when an earlier attempt's
#           checkpoint reached it (JOBQ_CHECKPOINT, or the request's
#           "checkpoint" in persistent mode); then ends 0
#   other   ends 0
# A payload with "progress": N writes {"progress": N, "note": "run PID"}
# as it starts, before the gate, on its first run only (counted in
# $D/progress.ID): a later run shows whether the first one's stayed.
import fcntl
import json
import os
import signal
import sys
import time

D = os.environ["D"]
G = os.environ.get("G", "")


def log(*words):
    line = " ".join(str(w) for w in words) + "\n"
    fd = os.open(os.path.join(D, "log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line.encode())
    os.close(fd)


def hold(name):
    path = os.path.join(D, name)
    for _ in range(1200):
        if not os.path.exists(path):
            return
        time.sleep(0.05)


def try_lock(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None


def take_locks(jid, jtype, p):
    locks = []
    fd = try_lock(os.path.join(D, "locks", "job.%s" % jid))
    if fd is None:
        log("overlap", jid, jtype, os.getpid())
    else:
        locks.append(fd)
    if "slots" in p:
        for i in range(p["slots"]):
            fd = try_lock(os.path.join(D, "locks", "slot.%s.%d" % (jtype, i)))
            if fd is not None:
                locks.append(fd)
                break
        else:
            log("over", jid, jtype, os.getpid())
    return locks


def bump(jid, what="retried"):
    path = os.path.join(D, "%s.%s" % (what, jid))
    n = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write("%d\n" % (n + 1))
    return n


def run(jid, jtype, p, ctl, checkpoint):
    """Runs one job; returns its status, its locks released."""
    locks = take_locks(jid, jtype, p)
    if p.get("act") == "ckpt":
        if checkpoint is not None:
            log("resumed", jid, checkpoint.replace(" ", ""))
        ctl.write(json.dumps({"checkpoint": {"run": os.getpid()}}) + "\n")
        ctl.flush()
    if "progress" in p and bump(jid, "progress") == 0:
        ctl.write(json.dumps({"progress": p["progress"], "note": "run %d" % os.getpid()}) + "\n")
        ctl.flush()
    log("start", jid, jtype, os.getpid())
    hold("hold.%s.run" % G)
    act = p.get("act")
    if act == "block":
        hold("hold.block")
    status, lines = 0, []
    if act == "follow":
        # The second waits for the first (a ref) and for this job.
        lines.append({"enqueue": {"type": "child", "ref": "c", "payload": {"from": jid}}})
        lines.append({"enqueue": {"type": "child2", "after": ["c", int(jid)], "payload": {"from": jid}}})
    elif act == "at":
        lines.append({"enqueue": {"type": "later", "payload": {"from": jid}, "at": p["at"]}})
    elif act == "fgrp":
        lines.append({"enqueue": {"type": "gch", "payload": {"from": jid}, "group": p["group"], "on_complete": "gcb"}})
    elif act == "retry" and bump(jid) < 2:
        lines.append({"retry_after": p["after"]})
        status = 75
    elif act == "dead":
        status = 65
    for line in lines:
        ctl.write(json.dumps(line) + "\n")
    ctl.flush()
    log("end", jid, jtype, os.getpid(), status)
    for fd in locks:
        os.close(fd)
    return status


mode = sys.argv[1]
if mode == "alert":
    log("alert", json.load(sys.stdin)["id"])
    sys.exit(0)
log("boot", os.getpid(), G, os.environ.get("JOBQ_JOB_ID", "-"))
signal.signal(signal.SIGTERM, lambda n, f: log("term", os.getpid(), int(time.time() * 1000)))
hold("hold.%s.boot" % G)
ctl = os.fdopen(3, "w")
if mode == "exec":
    p = json.load(sys.stdin)
    sys.exit(run(os.environ["JOBQ_JOB_ID"], os.environ["JOBQ_TYPE"], p, ctl, os.environ.get("JOBQ_CHECKPOINT")))
for req in sys.stdin:
    job = json.loads(req)
    status = run(job["id"], job["type"], job["payload"], ctl, job.get("checkpoint"))
    ctl.write(json.dumps({"status": status}) + "\n")
    ctl.flush()
