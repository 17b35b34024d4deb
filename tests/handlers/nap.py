#!/usr/bin/env python3
# nap.py [persistent] -- a handler, in exec or persistent mode, that
# sleeps the payload's "ms" (default 30) and is done: a job that takes
# a moment, for races between its outcome and a cancel.
import json
import sys
import time


def run(payload):
    time.sleep(payload.get("ms", 30) / 1000.0)


if len(sys.argv) > 1 and sys.argv[1] == "persistent":
    import jobq_handler

    jobq_handler.serve(lambda payload, job: run(payload))
else:
    run(json.load(sys.stdin))
