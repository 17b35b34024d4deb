#!/usr/bin/env python3
# walk_rows.py -- the checkpoint example of jobq-handler(7): walks
# payload["rows"] rows and saves where it got to every 1,000, so that an
# attempt after a crash, a kill or a retry starts from the last
# checkpoint instead of row 0.  The test hooks (marked) only record what
# each attempt saw and make it fail or go slowly where tests/checkpoint.sh
# needs it.
import os
import signal
import time

import jobq_handler


def walk(payload, job):
    start = (jobq_handler.checkpoint() or {"row": 0})["row"]
    attempt_began(payload, job, start)  # test hook
    for row in range(start, payload["rows"]):
        handle(row, payload)  # test hook: the work of one row
        if (row + 1) % 1000 == 0:
            jobq_handler.save_checkpoint({"row": row + 1})
            after_checkpoint(row + 1, payload)  # test hook


# ---- test hooks ----

def attempt_began(payload, job, start):
    with open(payload["log"], "a") as f:
        f.write("%s %d %s %d\n" % (job["attempt"], start, os.environ.get("JOBQ_CHECKPOINT", "-"),
                                   os.getpgid(0)))
    if payload.get("on_term"):
        # told to stop: save where it got to (here, a row the test names)
        # and end as interrupted
        def stop(signum, frame):
            jobq_handler.save_checkpoint({"row": payload["on_term"]})
            os._exit(75)

        signal.signal(signal.SIGTERM, stop)
    if payload.get("big"):
        for _ in range(payload.get("times", 1)):
            jobq_handler.save_checkpoint("a" * payload["big"])
            jobq_handler.progress(50)
        if payload.get("then") == "retry":
            raise RuntimeError("retry after big checkpoints")


def handle(row, payload):
    pass


def after_checkpoint(row, payload):
    if payload.get("pace"):
        time.sleep(payload["pace"])
    if row == payload.get("fail_at") and os.environ.get("JOBQ_ATTEMPT") == "1":
        raise RuntimeError("failing at row %d on purpose" % row)
    if row == payload.get("dead_at") and os.environ.get("JOBQ_ATTEMPT") == "1":
        raise jobq_handler.Permanent("dead at row %d on purpose" % row)
    if row == payload.get("bad_at") and os.environ.get("JOBQ_ATTEMPT") == "1":
        # a bad control line after a good checkpoint, then a quick end
        os.write(jobq_handler._control_fd(), b"not json\n")
        raise RuntimeError("a bad control line at row %d on purpose" % row)


jobq_handler.serve(walk)
