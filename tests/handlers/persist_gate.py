#!/usr/bin/env python3
# persist_gate.py -- a persistent test handler (handlers/jobq_handler.py
# on PYTHONPATH): each job waits (up to 120 s) for the file its payload
# names in "gate", then succeeds; fails if the file never comes.
import os
import time

import jobq_handler


def handle(payload, job):
    for _ in range(1200):
        if os.path.exists(payload["gate"]):
            return
        time.sleep(0.1)
    raise RuntimeError("the gate %s never opened" % payload["gate"])


jobq_handler.serve(handle)
