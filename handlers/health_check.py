#!/usr/bin/env python3
"""health_check.py -- a jobq handler that checks the installation and
fails loudly when something is wrong.

Checks: the database is reachable and its schema current, and every
handler program named in the configuration exists and is executable
(both by running `jobq check`); each folder in "paths" has at least
"min_free_pct" percent of its space free.

Payload: {"paths": ["/", "/var/lib/mysql"], "min_free_pct": 10}   (optional)
Environment (env.NAME keys of its [handler] section):
  PROGRAM  the jobq program (default: jobq on PATH)
  CONFIG   the configuration to check (default: jobq's)

Every problem is one line on stderr, all of them, then exit 69
(EX_UNAVAILABLE): the job is dead-lettered at once, so a failed check
shows in `jobq failed list` and as "failed" in `jobq schedule --list`
instead of retrying quietly.  Exit 0 prints one line per check passed.
"""
import json
import os
import subprocess
import sys

EX_DATAERR = 65
EX_UNAVAILABLE = 69


def main():
    raw = sys.stdin.read()
    try:
        job = json.loads(raw) if raw.strip() else {}
    except ValueError as e:
        print(f"health_check: payload is not JSON: {e}", file=sys.stderr)
        return EX_DATAERR
    if not isinstance(job, dict):
        print("health_check: payload must be a JSON object", file=sys.stderr)
        return EX_DATAERR
    paths = job.get("paths", ["/"])
    min_free = job.get("min_free_pct", 10)
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or \
            not isinstance(min_free, (int, float)) or not 0 <= min_free <= 100:
        print("health_check: expected paths (a list of folders) and min_free_pct (0-100)", file=sys.stderr)
        return EX_DATAERR
    problems = []
    jobq = os.environ.get("PROGRAM", "jobq")
    try:
        cmd = [jobq] + (["-c", os.environ["CONFIG"]] if os.environ.get("CONFIG") else []) + ["check"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            detail = (r.stderr.strip() or r.stdout.strip()).replace("\n", "; ")
            problems.append(f"jobq check failed (exit {r.returncode}): {detail}")
        else:
            print("jobq check: configuration, handler programs and database ok")
    except (OSError, subprocess.TimeoutExpired) as e:
        problems.append(f"cannot run {jobq} check: {e}")
    for p in paths:
        try:
            st = os.statvfs(p)
        except OSError as e:
            problems.append(f"disk {p}: {e.strerror}")
            continue
        free = 100.0 * st.f_bavail / st.f_blocks if st.f_blocks else 0.0
        if free < min_free:
            problems.append(f"disk {p}: {free:.1f}% free, below {min_free}%")
        else:
            print(f"disk {p}: {free:.1f}% free")
    for line in problems:
        print(f"HEALTH CHECK FAILED: {line}", file=sys.stderr)
    return EX_UNAVAILABLE if problems else 0


if __name__ == "__main__":
    sys.exit(main())
