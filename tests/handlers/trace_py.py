#!/usr/bin/env python3
# trace_py.py -- records the TRACEPARENT each attempt gets (through the
# Python helper, in either mode): attempt 1 asks to be retried at once,
# attempt 2 enqueues a follow-up that names no traceparent of its own.
import os

import jobq_handler


def handle(payload, job):
    with open(payload["log"], "a") as f:
        f.write("%s %s %s\n" % (job["id"], job["attempt"], os.environ.get("TRACEPARENT", "-")))
    if payload.get("retry") and job["attempt"] == 1:
        jobq_handler.retry_after(0)
        raise RuntimeError("once more")
    if payload.get("follow"):
        jobq_handler.enqueue("child", {}, delay="1h")  # stays queued: the test reads it


jobq_handler.serve(handle)
