# app_insert.py SOCKET DB commit|rollback REF -- what a Python web app
# does: an order and its job, one transaction, through pymysql.  Prints
# the job id.
import json
import sys

import pymysql

socket, db, mode, ref = sys.argv[1:5]
conn = pymysql.connect(unix_socket=socket, user="root", password="", database=db,
                       charset="utf8mb4", autocommit=False)
with conn.cursor() as cur:
    # An application in its own time zone: the contract uses UTC_TIMESTAMP().
    cur.execute("SET time_zone = '+05:00'")
    conn.begin()
    cur.execute("INSERT INTO orders (ref, lang) VALUES (%s, %s)", (ref, "python"))
    payload = json.dumps({"order": ref, "note": "café \"quoted\" O'Brien"}, ensure_ascii=False)
    cur.execute("INSERT INTO jobs (queue, type, payload, available_at)"
                " VALUES ('default', 'echo', %s, UTC_TIMESTAMP())", (payload,))
    job_id = cur.lastrowid
if mode == "commit":
    conn.commit()
else:
    conn.rollback()
conn.close()
print(job_id)
