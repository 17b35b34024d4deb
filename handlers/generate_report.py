#!/usr/bin/env python3
"""generate_report.py -- a jobq handler that writes a report file.

Payload: {"report": "daily-sales", "rows": 1000, "out_dir": "/var/lib/reports"}
(out_dir may also come from the REPORT_DIR environment variable.)

The file is written atomically: into a temporary file in the same folder,
flushed to disk, then renamed over the final name.  A reader never sees
half a report, and a job that runs twice (delivery is at least once)
simply replaces the file with the same content: the handler is idempotent.

Exit status: 0 written; 65 (EX_DATAERR) bad payload, dead-lettered at once;
73 (EX_CANTCREAT) the folder cannot be written, also permanent by default;
anything unexpected exits 1 and is retried with backoff.
"""
import csv
import json
import os
import re
import sys
import tempfile

EX_DATAERR = 65
EX_CANTCREAT = 73


def fail(status, message):
    print(f"generate_report: {message}", file=sys.stderr)
    sys.exit(status)


def main():
    try:
        job = json.load(sys.stdin)
    except ValueError as e:
        fail(EX_DATAERR, f"payload is not JSON: {e}")
    name = job.get("report") if isinstance(job, dict) else None
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", name):
        fail(EX_DATAERR, f"bad report name {name!r}")
    rows = job.get("rows", 10)
    if not isinstance(rows, int) or not 0 <= rows <= 10_000_000:
        fail(EX_DATAERR, f"bad row count {rows!r}")
    out_dir = job.get("out_dir") or os.environ.get("REPORT_DIR") or "/tmp/jobq-reports"
    try:
        os.makedirs(out_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
    except OSError as e:
        fail(EX_CANTCREAT, f"cannot write in {out_dir}: {e}")
    final = os.path.join(out_dir, f"{name}.csv")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["row", "value"])
            for i in range(rows):
                w.writerow([i, (i * 7919) % 1000])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"wrote {final} ({rows} rows)")


if __name__ == "__main__":
    main()
