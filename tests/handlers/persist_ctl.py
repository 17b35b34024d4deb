#!/usr/bin/env python3
# persist_ctl.py -- writes every kind of control line with the helper
# module, then fails as the payload asks.
import jobq_handler


def handle(payload, job):
    jobq_handler.progress(40, "half")
    jobq_handler.enqueue("next", {"from": job["id"]}, queue="low", delay="5m")
    jobq_handler.result({"ok": True})
    if payload.get("fail"):
        jobq_handler.retry_after("10m")
        raise RuntimeError("later")


jobq_handler.serve(handle)
