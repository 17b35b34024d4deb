#!/usr/bin/env python3
"""serve_slow.py -- slow clients against a running `jobq serve` (driven by
tests/serve_slow.sh, which reads the lines printed here: "pass<TAB>name",
"fail<TAB>name", "# diagnostics").

  serve_slow.py HOST:PORT METRICS_HOST:PORT

Each attack opens 500 connections that send a request head one header line
every 5 s (and open a new connection whenever one is closed), then times a
normal request from 127.0.0.1 while it goes on: every one must answer, with
p95 under 1 s.  The attacks: 500 from one address (127.0.0.2), 500 spread
over 50 addresses (127.0.0.10-59), 500 from one address on metrics_listen.
First, the limit of 64 connections per address, which a trusted proxy
is exempt from.  Beside the second attack, one connection trickling a header line every second
must be closed by the server's deadline for the whole request head.
Standard library only."""

import asyncio
import math
import os
import resource
import sys
import time

LINE_EVERY = 5.0  # s between two header lines of an attacker
RECONNECT = 1.0   # s before an attacker replaces a closed connection
SAMPLES = 20      # normal requests timed per attack
SAMPLE_GAP = 0.2
TIMEOUT = 5.0     # a normal request that takes longer failed
# The p95 bound is checked only where the binary's speed means something
# (not under the sanitizers); elsewhere it is printed as a figure.
TIMED = os.environ.get("JOBQ_TIMED", "1") == "1"


T0 = time.monotonic()


def say(kind, text):
    print(f"{kind}\t{text}" if kind in ("pass", "fail") else f"# {text}", flush=True)


def check(cond, name):
    say("pass" if cond else "fail", name)


async def slow_conn(host, port, src, stop, stats):
    """One attacker slot: a request head that never ends, replaced when
    the server closes it."""
    while not stop.is_set():
        try:
            r, w = await asyncio.open_connection(host, port, local_addr=(src, 0))
        except OSError:
            stats["refused"] += 1
            await asyncio.sleep(RECONNECT)
            continue
        stats["open"] += 1
        try:
            w.write(b"GET /api/me HTTP/1.1\r\nHost: %s\r\n" % host.encode())
            n = 0
            while not stop.is_set():
                await w.drain()
                try:
                    if await asyncio.wait_for(r.read(1), LINE_EVERY) == b"":
                        break  # closed by the server
                except asyncio.TimeoutError:
                    pass
                n += 1
                w.write(b"X-Slow-%d: %d\r\n" % (n, n))
        except OSError:
            pass
        finally:
            stats["open"] -= 1
            stats["closed"] += 1
            w.close()
        await asyncio.sleep(RECONNECT)


async def one_request(host, port, path):
    """Seconds a GET of path from 127.0.0.1 took, or None when it failed."""
    t0 = time.monotonic()
    try:
        r, w = await asyncio.wait_for(
            asyncio.open_connection(host, port, local_addr=("127.0.0.1", 0)), TIMEOUT)
        w.write(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                % (path.encode(), host.encode()))
        data = await asyncio.wait_for(r.read(), TIMEOUT - (time.monotonic() - t0))
        w.close()
    except (OSError, asyncio.TimeoutError):
        return None
    if not data.startswith(b"HTTP/1.1 200"):
        return None
    return time.monotonic() - t0


def pct(sorted_values, p):
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


async def attack(name, host, port, sources, path, extra=None):
    stop = asyncio.Event()
    stats = {"open": 0, "closed": 0, "refused": 0}
    tasks = [asyncio.create_task(slow_conn(host, port, src, stop, stats)) for src in sources]
    if sources:
        await asyncio.sleep(2.0)  # let all 500 connect
    times = []
    for _ in range(SAMPLES):
        times.append(await one_request(host, port, path))
        await asyncio.sleep(SAMPLE_GAP)
    held = stats["open"]
    if extra is not None:
        await extra
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    ok = [t for t in times if t is not None]
    say("#", f"{name}: {time.monotonic() - T0:.1f} s into the run; {len(ok)}/{SAMPLES} normal requests answered; attackers held "
        f"{held} connections while timed, {stats['closed']} closed by the server")
    check(len(ok) == SAMPLES, f"{name}: every normal request is answered")
    if ok:
        ok.sort()
        p50, p95 = pct(ok, 50) * 1000, pct(ok, 95) * 1000
        say("#", f"{name}: normal request p50 {p50:.1f} ms, p95 {p95:.1f} ms")
        print(f"FIGURE\t{name}\t{p50:.1f}\t{p95:.1f}", flush=True)
        if TIMED:
            check(p95 < 1000 and len(ok) == SAMPLES, f"{name}: p95 of a normal request under 1 s")
    elif TIMED:
        check(False, f"{name}: p95 of a normal request under 1 s")


async def trickle(host, port):
    """A connection sending one header line a second: the server must
    close it once the head's deadline passes (10 s), not keep it while
    bytes trickle in."""
    r, w = await asyncio.open_connection(host, port, local_addr=("127.0.0.3", 0))
    t0 = time.monotonic()
    w.write(b"GET /api/me HTTP/1.1\r\nHost: %s\r\n" % host.encode())
    closed_after = None
    for i in range(25):
        try:
            w.write(b"X-Trickle-%d: 1\r\n" % i)
            await w.drain()
            if await asyncio.wait_for(r.read(1), 1.0) == b"":
                closed_after = time.monotonic() - t0
                break
        except asyncio.TimeoutError:
            continue
        except OSError:
            closed_after = time.monotonic() - t0
            break
    w.close()
    say("#", f"trickling head closed after {closed_after if closed_after is None else round(closed_after, 1)} s")
    check(closed_after is not None and 9 <= closed_after <= 13,
          "a head that trickles in a line a second is closed at its 10 s deadline")


async def held_after(host, port, src, n):
    """How many of n connections from src, each with half a request head
    sent, are still open a second later."""
    conns = []
    for _ in range(n):
        r, w = await asyncio.open_connection(host, port, local_addr=(src, 0))
        w.write(b"GET /api/me HTTP/1.1\r\n")
        conns.append((r, w))
    await asyncio.sleep(1.0)

    async def still_open(r):
        try:
            return await asyncio.wait_for(r.read(1), 0.2) != b""
        except asyncio.TimeoutError:
            return True  # nothing to read and not closed
        except OSError:
            return False

    held = sum(await asyncio.gather(*(still_open(r) for r, _ in conns)))
    for _, w in conns:
        w.close()
    return held


async def per_address(host, port):
    """64 connections per address; a trusted proxy (127.0.0.4) is exempt."""
    held = await held_after(host, port, "127.0.0.5", 100)
    check(held == 64, f"100 connections from one address: 64 are kept ({held})")
    held = await held_after(host, port, "127.0.0.4", 100)
    check(held == 100, f"100 connections from a trusted proxy: all are kept ({held})")


def hostport(s):
    h, p = s.rsplit(":", 1)
    return h, int(p)


async def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    host, port = hostport(sys.argv[1])
    mhost, mport = hostport(sys.argv[2])
    await attack("no attack (baseline)", host, port, [], "/api/me")
    await per_address(host, port)
    await attack("500 slow connections from one address", host, port, ["127.0.0.2"] * 500, "/api/me")
    spread = [f"127.0.0.{10 + i % 50}" for i in range(500)]
    deadline = asyncio.create_task(trickle(host, port))
    await attack("500 slow connections from 50 addresses", host, port, spread, "/api/me", deadline)
    await attack("500 slow connections to metrics_listen", mhost, mport, ["127.0.0.2"] * 500, "/metrics")


asyncio.run(main())
