#!/usr/bin/env python3
# cancel_tree.py DIR -- a handler, in exec or persistent mode (the
# payload's "persistent": true), that starts a grandchild (sleep 300) in
# its process group, writes "PID CHILD" to DIR/tree.<job id>, then waits
# for the grandchild: only a signal ends it.  A job whose payload has
# "quick": true ends at once (exit 0), writing DIR/ran.<job id>; one
# with "gate": PATH ends (exit 0) once PATH exists.
import json
import os
import subprocess
import time
import sys

DIR = sys.argv[1]


def run(payload, job_id):
    if payload.get("gate"):
        while not os.path.exists(payload["gate"]):
            time.sleep(0.05)
        return
    if payload.get("quick"):
        open(os.path.join(DIR, "ran.%s" % job_id), "w").close()
        return
    child = subprocess.Popen(["sleep", "300"])
    tmp = os.path.join(DIR, "tree.%s.tmp" % job_id)
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (os.getpid(), child.pid))
    os.rename(tmp, os.path.join(DIR, "tree.%s" % job_id))
    child.wait()


if len(sys.argv) > 2 and sys.argv[2] == "persistent":
    import jobq_handler

    jobq_handler.serve(lambda payload, job: run(payload, job["id"]))
else:
    run(json.load(sys.stdin), os.environ["JOBQ_JOB_ID"])
