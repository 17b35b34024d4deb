#!/usr/bin/env python3
# promise.py MODE -- test handler for tests/promises.sh.  MODE exec: the
# handler guide's example (one job per process, JSON lines written on
# JOBQ_CONTROL_FD by hand); MODE persistent: the same through the helper
# module.  The payload says what to do:
#   at, from  write a follow-up of type "child" {"from": FROM} starting at AT
#   rows      report progress once per row, this many rows, then a result
import json
import os
import sys


def work(payload, enqueue, progress, result):
    if "at" in payload:
        enqueue("child", {"from": payload["from"]}, at=payload["at"])
    rows = payload.get("rows", 0)
    for i in range(rows):
        progress(100 * (i + 1) // rows, "row %d" % (i + 1))
    if rows:
        result({"rows": rows})


if sys.argv[1] == "exec":
    ctl = os.fdopen(int(os.environ["JOBQ_CONTROL_FD"]), "w", buffering=1)

    def say(**kw):
        ctl.write(json.dumps(kw) + "\n")

    work(json.load(sys.stdin),
         lambda t, p, at: say(enqueue={"type": t, "payload": p, "at": at}),
         lambda pct, note: say(progress=pct, note=note),
         lambda v: say(result=v))
else:
    import jobq_handler

    jobq_handler.serve(lambda payload, job: work(
        payload, jobq_handler.enqueue, jobq_handler.progress, jobq_handler.result))
