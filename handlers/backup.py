#!/usr/bin/env python3
"""backup.py -- a jobq handler that writes a backup file atomically and
keeps the newest few.

Payload (one of):
  {"kind": "database", "dest": "/var/backups/jobq", "keep": 5}
      mariadb-dump --single-transaction of the jobq tables; credentials
      come from BACKUP_DEFAULTS_FILE (a my.cnf with [client] user and
      password; the worker never passes its own), the database name from
      BACKUP_DATABASE (default jobq).
  {"kind": "directory", "dir": "/srv/uploads", "dest": "/var/backups/jobq", "keep": 5}
      a .tar.gz of the folder.

The file is written to a temporary name in dest, flushed to disk, then
renamed to NAME-YYYYmmddTHHMMSSZ.EXT, so a backup that is there is
whole; then all but the newest "keep" (default 5) backups of the same
NAME are deleted.  Delivery is at least once: a second run just makes
one more backup and the oldest goes.

Exit status: 0 done; 65 bad payload (dead-lettered at once); 73 dest
cannot be written; 1 the dump failed (retried with backoff).
"""
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time

EX_DATAERR = 65
EX_CANTCREAT = 73
TABLES = ["jobs", "failed_jobs", "job_runs", "jobq_workers", "jobq_schema",
          "jobq_schedule_runs", "jobq_schedules", "jobq_schedule_state"]


def fail(status, message):
    print(f"backup: {message}", file=sys.stderr)
    sys.exit(status)


def dump_database(fd):
    cmd = ["mariadb-dump", "--single-transaction", "--skip-lock-tables"]
    if os.environ.get("BACKUP_DEFAULTS_FILE"):
        cmd.insert(1, "--defaults-extra-file=" + os.environ["BACKUP_DEFAULTS_FILE"])
    cmd += [os.environ.get("BACKUP_DATABASE", "jobq")] + TABLES
    r = subprocess.run(cmd, stdout=fd, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail(1, f"mariadb-dump exited {r.returncode}: {r.stderr.strip()}")


def tar_directory(fd, folder):
    with os.fdopen(os.dup(fd), "wb") as f, tarfile.open(fileobj=f, mode="w:gz") as tar:
        tar.add(folder, arcname=os.path.basename(folder.rstrip("/")) or "root")


def keep_newest(dest, name, ext, keep):
    # Order by (stamp, sequence): a plain name sort puts NAME-STAMP-1.EXT
    # before NAME-STAMP.EXT ('-' < '.'), which would delete the newer one.
    pattern = re.compile(re.escape(name) + r"-(\d{8}T\d{6}Z)(?:-(\d+))?" + re.escape(ext) + "$")
    found = []
    for f in os.listdir(dest):
        m = pattern.match(f)
        if m:
            found.append((m.group(1), int(m.group(2) or 0), f))
    for _, _, old in sorted(found)[:-keep]:
        os.unlink(os.path.join(dest, old))


def publish(tmp, dest, name, ext):
    """Gives the finished temporary file its final name without ever
    replacing another backup (two runs in one second, on two workers):
    link() fails where rename() would overwrite."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n = 0
    while True:
        final = os.path.join(dest, f"{name}-{stamp}{'-%d' % n if n else ''}{ext}")
        try:
            os.link(tmp, final)
        except FileExistsError:
            n += 1
            continue
        except OSError:  # a file system without hard links: rename, checked first
            if os.path.exists(final):
                n += 1
                continue
            os.rename(tmp, final)
            return final
        os.unlink(tmp)
        return final


def main():
    try:
        job = json.load(sys.stdin)
    except ValueError as e:
        fail(EX_DATAERR, f"payload is not JSON: {e}")
    if not isinstance(job, dict) or job.get("kind") not in ("database", "directory"):
        fail(EX_DATAERR, 'expected {"kind": "database" or "directory", "dest": ...}')
    dest, keep = job.get("dest"), job.get("keep", 5)
    if not isinstance(dest, str) or not dest or not isinstance(keep, int) or keep < 1:
        fail(EX_DATAERR, "dest (a folder) and keep (a positive number) are required")
    if job["kind"] == "directory" and not (isinstance(job.get("dir"), str) and os.path.isdir(job["dir"])):
        fail(EX_DATAERR, f"dir {job.get('dir')!r} is not a folder")
    name, ext = ("jobq-db", ".sql") if job["kind"] == "database" else (
        "dir-" + re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(job["dir"].rstrip("/")) or "root"), ".tar.gz")
    try:
        os.makedirs(dest, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=dest)
    except OSError as e:
        fail(EX_CANTCREAT, f"cannot write in {dest}: {e.strerror}")
    try:
        if job["kind"] == "database":
            dump_database(fd)
        else:
            tar_directory(fd, job["dir"])
        os.fsync(fd)
        os.close(fd)
        final = publish(tmp, dest, name, ext)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dfd = os.open(dest, os.O_RDONLY)
    os.fsync(dfd)
    os.close(dfd)
    keep_newest(dest, name, ext, keep)
    print(f"backup: wrote {final}")


if __name__ == "__main__":
    main()
