#!/usr/bin/env python3
"""login_flood.py URL COOKIE SECONDS MODE -- floods /api/login and measures.

Starts CLIENTS flooding processes' worth of threads (in a child process,
so their GIL does not delay the measuring requests), each sending logins
as fast as answers come, each login on a new connection from its own
127.x.y.z source address:
  MODE new: every login from a new address with a new user name;
  MODE 200: the addresses cycle over 200, the names stay new.
Meanwhile this process asks /api/me (with COOKIE, a logged-in session)
and the page / one after the other and records their latencies.  Prints
one line of JSON: the p50/p95 of each, and the logins' answers (count per
status and the p95 latency of the refusals)."""
import http.client
import json
import multiprocessing
import sys
import threading
import time
import urllib.parse

CLIENTS = 32


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * p / 100))] * 1000, 1) if xs else None


def one_login(host, port, src, name):
    """One login from src; (status, seconds)."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection(host, port, timeout=30, source_address=(src, 0))
    try:
        body = json.dumps({"user": name, "password": "wrong-" + name})
        c.request("POST", "/api/login", body, {"Content-Type": "application/json"})
        status = c.getresponse().status
    except OSError:
        status = 0
    finally:
        c.close()
    return status, time.monotonic() - t0


def flood_thread(host, port, k, mode, stop, out):
    n = 0
    while not stop.is_set():
        n += 1
        if mode == "new":
            a = k * 100000 + n
            src = "127.%d.%d.%d" % (1 + a // 65025 % 250, 1 + a // 255 % 255, 1 + a % 255)
        else:
            src = "127.3.0.%d" % (1 + (k * 7 + n) % 200)
        out.append(one_login(host, port, src, "flood%d_%d" % (k, n)))


def flooder(host, port, seconds, mode, q):
    stop, out, ts = threading.Event(), [], []
    for k in range(CLIENTS):
        t = threading.Thread(target=flood_thread, args=(host, port, k, mode, stop, out), daemon=True)
        t.start()
        ts.append(t)
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join(35)
    q.put(out)


def measure(host, port, cookie, seconds):
    """Latencies of /api/me and / (seconds), asked one after the other."""
    me, page, bad = [], [], 0
    c = http.client.HTTPConnection(host, port, timeout=30)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for path, into in (("/api/me", me), ("/", page)):
            t0 = time.monotonic()
            try:
                c.request("GET", path, headers={"Cookie": "jobq_session=" + cookie})
                r = c.getresponse()
                data = r.read()
                if r.status != 200 or (path == "/api/me" and b'"user":null' in data):
                    bad += 1
            except OSError:
                bad += 1
                c.close()
                c = http.client.HTTPConnection(host, port, timeout=30)
            into.append(time.monotonic() - t0)
        time.sleep(0.02)
    return me, page, bad


def main():
    url, cookie, seconds, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    u = urllib.parse.urlsplit(url)
    q = multiprocessing.Queue()
    p = multiprocessing.Process(target=flooder, args=(u.hostname, u.port, seconds, mode, q))
    p.start()
    time.sleep(1)  # the flood is under way
    me, page, bad = measure(u.hostname, u.port, cookie, seconds - 1.5)
    logins = q.get()
    p.join()
    status = {}
    for s, _ in logins:
        status[str(s)] = status.get(str(s), 0) + 1
    refused = [t for s, t in logins if s in (429, 503)]
    print(json.dumps({"me_p50_ms": pct(me, 50), "me_p95_ms": pct(me, 95), "me_n": len(me),
                      "page_p50_ms": pct(page, 50), "page_p95_ms": pct(page, 95), "bad": bad,
                      "logins": status, "refused_p95_ms": pct(refused, 95)}))


if __name__ == "__main__":
    main()
