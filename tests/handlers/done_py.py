#!/usr/bin/env python3
# done_py.py -- a test handler written with handlers/jobq_handler.py:
# keeps {"n": payload's n} as the run's result, and fails for good when
# the payload says "die".
import jobq_handler


def handle(payload, job):
    if payload.get("die"):
        raise jobq_handler.Permanent("asked to die")
    jobq_handler.result({"n": payload.get("n")})


jobq_handler.serve(handle)
