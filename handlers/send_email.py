#!/usr/bin/env python3
"""send_email.py -- a jobq handler that sends one e-mail.

Payload: {"to": "a@example.com", "subject": "...", "body": "..."}

Environment (set with env.NAME in the handler's section of jobq.ini):
  SMTP_HOST, SMTP_PORT   the mail relay; when SMTP_HOST is empty the message
                         is written to MAIL_SPOOL instead (a folder, one file
                         per message), which is handy for demos and tests
  MAIL_FROM              the sender

Exit status, as the jobq handler contract reads it:
  0   sent (or spooled)
  65  EX_DATAERR: the payload or the address is invalid; retrying cannot
      help, so jobq dead-letters the job at once
  75  EX_TEMPFAIL: the relay is unreachable or said "try later"; jobq
      retries with backoff

Idempotency: jobq delivers at least once.  The message carries a
Message-ID derived from the job id, so a relay or a mailbox that
de-duplicates on Message-ID keeps a retried job from arriving twice, and
the spool writes to a file named after the job (written atomically).
"""
import json
import os
import re
import smtplib
import socket
import sys
import tempfile
from email.message import EmailMessage

EX_DATAERR = 65
EX_TEMPFAIL = 75
ADDRESS = re.compile(r"^[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def fail(status, message):
    print(f"send_email: {message}", file=sys.stderr)
    sys.exit(status)


def build(job):
    if not isinstance(job, dict):
        fail(EX_DATAERR, "payload must be a JSON object")
    to = job.get("to")
    if not isinstance(to, str) or not ADDRESS.match(to):
        fail(EX_DATAERR, f"invalid address {to!r}")
    msg = EmailMessage()
    msg["From"] = os.environ.get("MAIL_FROM", "jobq@localhost")
    msg["To"] = to
    msg["Subject"] = str(job.get("subject", "(no subject)"))
    msg["Message-ID"] = f"<jobq-{os.environ.get('JOBQ_JOB_ID', '0')}@{socket.gethostname()}>"
    msg.set_content(str(job.get("body", "")))
    return msg


def spool(msg, folder):
    os.makedirs(folder, exist_ok=True)
    final = os.path.join(folder, f"job-{os.environ.get('JOBQ_JOB_ID', '0')}.eml")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(bytes(msg))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    print(f"spooled {msg['To']} -> {final}")


def send(msg, host, port):
    try:
        with smtplib.SMTP(host, port, timeout=20) as smtp:
            smtp.send_message(msg)
    except smtplib.SMTPRecipientsRefused as e:
        codes = [code for code, _ in e.recipients.values()]
        if all(500 <= c < 600 for c in codes):
            fail(EX_DATAERR, f"relay refused {msg['To']}: {e.recipients}")
        fail(EX_TEMPFAIL, f"relay deferred {msg['To']}: {e.recipients}")
    except (OSError, smtplib.SMTPException) as e:
        fail(EX_TEMPFAIL, f"mail relay {host}:{port} unreachable: {e}")
    print(f"sent to {msg['To']} via {host}:{port}")


def main():
    try:
        job = json.load(sys.stdin)
    except ValueError as e:
        fail(EX_DATAERR, f"payload is not JSON: {e}")
    msg = build(job)
    host = os.environ.get("SMTP_HOST", "")
    if host:
        send(msg, host, int(os.environ.get("SMTP_PORT", "25")))
    else:
        spool(msg, os.environ.get("MAIL_SPOOL", "/tmp/jobq-mail"))


if __name__ == "__main__":
    main()
