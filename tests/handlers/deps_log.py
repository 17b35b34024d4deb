#!/usr/bin/env python3
# deps_log.py LOG [persistent] -- a handler, in exec or persistent mode,
# that appends "start NAME ID TIME" to LOG, waits until the file the
# payload's "gate" names exists (when it names one: a test opens the gate
# once it has looked at the running job, however slow the machine), sleeps
# the payload's "sleep" seconds, appends "end NAME ID TIME" and ends with
# the payload's "exit" status (default 0), having written the follow-ups
# its "follow" lists (jobq_handler.enqueue; PYTHONPATH names handlers/;
# "self" in an "after" stands for the job's own id).  TIME: nanoseconds since the epoch.  Each line is
# one write() to a file opened with O_APPEND, so lines of concurrent
# handlers never mix.
import json
import os
import sys
import time

LOG = sys.argv[1]


def note(word, payload, job_id):
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, ("%s %s %s %d\n" % (word, payload.get("name", "-"), job_id, time.time_ns())).encode())
    os.close(fd)


def run(payload, job_id):
    note("start", payload, job_id)
    gate = payload.get("gate")
    deadline = time.monotonic() + 120
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(float(payload.get("sleep", 0)))
    for f in payload.get("follow", []):
        import jobq_handler  # on PYTHONPATH in both modes

        fields = {k: v for k, v in f.items() if k not in ("type", "payload")}
        if "after" in fields:  # "self": this job's own id
            fields["after"] = [int(job_id) if a == "self" else a for a in fields["after"]]
        jobq_handler.enqueue(f["type"], f.get("payload", {}), **fields)
    note("end", payload, job_id)
    code = int(payload.get("exit", 0))
    if code:
        sys.exit(code)


if len(sys.argv) > 2 and sys.argv[2] == "persistent":
    import jobq_handler

    jobq_handler.serve(lambda payload, job: run(payload, job["id"]))
else:
    run(json.load(sys.stdin), os.environ["JOBQ_JOB_ID"])
