#!/usr/bin/env python3
# persist_py.py -- a test handler written with handlers/jobq_handler.py
# (on PYTHONPATH): says hello to stdout and its pid to stderr; fails as
# the payload asks.
import os
import sys

import jobq_handler


def handle(payload, job):
    print("%s from job %s attempt %s" % (payload.get("say"), job["id"], job["attempt"]))
    print("pid %d" % os.getpid(), file=sys.stderr)
    if os.environ.get("JOBQ_JOB_ID") != str(job["id"]):
        raise jobq_handler.Permanent("JOBQ_JOB_ID is not the job's id")
    if payload.get("fail") == "permanent":
        raise jobq_handler.Permanent("this can never work")
    if payload.get("fail"):
        raise RuntimeError("something went wrong")


jobq_handler.serve(handle)
