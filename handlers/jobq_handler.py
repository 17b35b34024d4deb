"""jobq_handler -- write a jobq handler in Python, in either mode.

    import jobq_handler

    def send(payload, job):
        ...                      # do the work; return normally when done
        jobq_handler.enqueue("log_event", {"sent": payload["to"]})

    jobq_handler.serve(send)

serve(fn) calls fn(payload, job) once per job, where payload is the
job's decoded JSON payload and job a dict with id, type, queue, attempt,
max_attempts, enqueued_at, checkpoint (JSON text, or absent) and
traceparent.  fn returning is success (done); raising
Permanent dead-letters the job at once; any other exception retries it
with backoff (its traceback goes to stderr, which jobq keeps).

With `mode = persistent` in the handler's section the process stays up
and serve() takes one request line after another from stdin, answering
each with {"status": N} on descriptor 3 (see jobq-handler(7)).  With
`mode = exec` (one process per job) serve() reads the payload from
stdin, calls fn once and exits with the matching status.  The control
functions (enqueue, retry_after, progress, result, save_checkpoint) work
in both modes, and so does checkpoint(), which returns what an earlier
attempt saved:

    def walk(payload, job):
        start = (jobq_handler.checkpoint() or {"row": 0})["row"]
        for row in range(start, payload["rows"]):
            handle(row)
            if (row + 1) % 1000 == 0:
                jobq_handler.save_checkpoint({"row": row + 1})

Delivery is at-least-once: fn must be idempotent.
"""

import json
import os
import sys
import traceback

__all__ = ["serve", "Permanent", "enqueue", "retry_after", "progress", "result",
           "checkpoint", "save_checkpoint"]

EX_DONE = 0
EX_DATAERR = 65  # a permanent failure: dead-letter now
EX_TEMPFAIL = 75  # retry with backoff

_JOB_ENV = {
    "id": "JOBQ_JOB_ID",
    "type": "JOBQ_TYPE",
    "queue": "JOBQ_QUEUE",
    "attempt": "JOBQ_ATTEMPT",
    "max_attempts": "JOBQ_MAX_ATTEMPTS",
    "enqueued_at": "JOBQ_ENQUEUED_AT",
    "checkpoint": "JOBQ_CHECKPOINT",
    "traceparent": "TRACEPARENT",
}


class Permanent(Exception):
    """Raise to dead-letter the job now: retrying cannot help."""


def _control_fd():
    return int(os.environ.get("JOBQ_CONTROL_FD", "3"))


def _write_line(obj):
    data = (json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8")
    fd = _control_fd()
    while data:
        n = os.write(fd, data)
        data = data[n:]


def enqueue(type, payload, queue=None, delay=None, at=None, **fields):
    """Enqueue a follow-up job, committed only if this job is done.

    delay (seconds or "5m") or at (an ISO 8601 time) says when it starts.
    Any other field of a follow-up goes by name: after=[id or ref, ...],
    after_policy="any", ref="name", group="name", priority=N, ..."""
    job = dict(fields, type=type, payload=payload)
    if queue is not None:
        job["queue"] = queue
    if delay is not None:
        job["delay"] = delay
    if at is not None:
        job["at"] = at
    _write_line({"enqueue": job})


def retry_after(duration):
    """With a retry outcome, wait this long (e.g. "10m") instead of the backoff."""
    _write_line({"retry_after": duration})


def progress(percent, note=None):
    """Report progress (0-100) and an optional note while the job runs."""
    line = {"progress": percent}
    if note is not None:
        line["note"] = note
    _write_line(line)


def result(value):
    """Keep a small JSON value as the run's result."""
    _write_line({"result": value})


def save_checkpoint(value):
    """Save where this job got to (any JSON value, at most 64 KiB as
    compact JSON); the newest wins.  jobq stores it with the job, also when
    the worker dies, and the next attempt reads it with checkpoint()."""
    _write_line({"checkpoint": value})


def checkpoint():
    """The checkpoint an earlier attempt saved, decoded; None when none."""
    text = os.environ.get("JOBQ_CHECKPOINT")
    return json.loads(text) if text else None


def _exit_status(code):
    """The status sys.exit(code) gives a process, as the shell would see it."""
    if code is None:
        return EX_DONE
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run(fn, payload, job):
    """Calls fn; returns (status, exiting): the status the job ends with,
    and whether fn called sys.exit.  sys.exit(N) means what exit status N
    means in both modes (0 done, 75 retry, ...).  In persistent mode the
    status is sent as the job's reply and the process goes on to the next
    job: were it to exit after replying, the worker could hand it the next
    job first, which would then fail for no fault of its own."""
    try:
        fn(payload, job)
        return EX_DONE, False
    except SystemExit as e:
        return _exit_status(e.code), True
    except Permanent:
        traceback.print_exc()
        return EX_DATAERR, False
    except Exception:  # any other failure: retry with backoff
        traceback.print_exc()
        return EX_TEMPFAIL, False


def _flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError):
            pass


def _serve_exec(fn):
    raw = sys.stdin.buffer.read()
    payload = json.loads(raw) if raw.strip() else None
    job = {k: os.environ.get(v) for k, v in _JOB_ENV.items()}
    for k in ("id", "attempt", "max_attempts"):
        if job[k] is not None:
            job[k] = int(job[k])
    status, _ = _run(fn, payload, job)
    _flush()
    sys.exit(status)


def _serve_persistent(fn):
    for line in sys.stdin.buffer:
        request = json.loads(line)
        payload = request.pop("payload", None)
        for k, v in _JOB_ENV.items():  # as an exec-mode handler would see them
            if k in request:
                os.environ[v] = str(request[k])
            else:
                os.environ.pop(v, None)
        status, _ = _run(fn, payload, request)
        _flush()  # the job's output reaches jobq before its status line
        _write_line({"status": status})


def serve(fn):
    """Run fn(payload, job) for each job jobq hands this process."""
    if "JOBQ_JOB_ID" in os.environ:
        _serve_exec(fn)
    else:
        _serve_persistent(fn)
