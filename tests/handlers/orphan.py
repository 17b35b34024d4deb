#!/usr/bin/env python3
# orphan.py MODE -- test handler for tests/orphans.sh: for each job it
# starts a grandchild (sleep 300), writes "HANDLER_PID GRANDCHILD_PID" to
# $DIR/pids.JOB_ID, and waits for the grandchild.  MODE exec reads one
# payload; MODE persistent reads request lines (no helper module).
import json
import os
import subprocess
import sys


def run(job_id):
    child = subprocess.Popen(["sleep", "300"])
    path = os.path.join(os.environ["DIR"], "pids.%s" % job_id)
    with open(path + ".tmp", "w") as f:
        f.write("%d %d\n" % (os.getpid(), child.pid))
    os.rename(path + ".tmp", path)
    child.wait()


if sys.argv[1] == "exec":
    sys.stdin.read()
    run(os.environ["JOBQ_JOB_ID"])
else:
    ctl = os.fdopen(3, "w", buffering=1)
    for line in sys.stdin:
        run(json.loads(line)["id"])
        ctl.write('{"status": 0}\n')
