#!/usr/bin/env python3
# persist_append.py -- a test handler written with jobq_handler.py: each
# job appends "ID PID" to the file $RAN (one write, O_APPEND).
import os

import jobq_handler

fd = os.open(os.environ["RAN"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def handle(payload, job):
    os.write(fd, ("%d %d\n" % (job["id"], os.getpid())).encode())


jobq_handler.serve(handle)
