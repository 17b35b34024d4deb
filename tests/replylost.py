#!/usr/bin/env python3
"""replylost.py -- a MariaDB proxy that loses answers, for the tests of
answers that never arrive (tests/replylost.sh).

    replylost.py LISTEN TARGET DIR

LISTEN is unix:PATH or tcp:HOST:PORT (port 0: any; the port taken is
written to DIR/port); TARGET is unix:PATH, the real server.  Every
connection is forwarded packet by packet.  DIR holds the orders:

  DIR/drop   a Python regular expression.  The next statement (COM_QUERY)
             whose text it matches is forwarded, the server's answer is
             read and thrown away for a second (the server has applied
             it by then), and the client's connection is closed: the
             statement took effect, the client never heard.  The file is
             removed, and the statement appended to DIR/dropped.
  DIR/hold   a Python regular expression.  The next statement whose
             text it matches is held back: DIR/held is written (the
             statement), and the statement is forwarded once DIR/hold is
             removed.  A test does something between a worker's
             statements this way, however fast they follow each other.
  DIR/after  a Python regular expression, read only by a connection one
             of whose statements DIR/hold held back: its next statement
             that matches is dropped as DIR/drop's is (and the file
             removed).  Another connection's statement, however close in
             time, is never taken for it.
  DIR/rewrite  two lines, a Python regular expression and its
             replacement: while it exists, every statement is forwarded
             with them applied (re.sub).  A test plays an older server
             this way (SKIP LOCKED rewritten into a syntax error).
  DIR/cut    while it exists, every connection is closed and new ones
             are refused (a unix socket is removed; a TCP listener stops
             answering connections with a close).

With "silent" as TARGET it accepts TCP connections and never says a
word: a host that accepts but never greets.  Runs until killed.
"""
import os
import re
import socket
import sys
import threading
import time

LISTEN, TARGET, DIR = sys.argv[1], sys.argv[2], sys.argv[3]
conns = []
lock = threading.Lock()


def listener():
    if LISTEN.startswith("unix:"):
        path = LISTEN[5:]
        if os.path.exists(path):
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
    else:
        host, port = LISTEN[4:].rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))
        with open(os.path.join(DIR, "port.tmp"), "w") as f:
            f.write("%d\n" % s.getsockname()[1])
        os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    s.listen(64)
    return s


def close_all():
    with lock:
        for c in conns:
            for x in c:
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                x.close()
        conns.clear()


def pump(src, dst, state):
    """Server to client, unchanged, unless an answer is being lost."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if not state["discard"]:
                dst.sendall(data)
    except OSError:
        pass


def ordered(name, payload):
    """The statement's text when the order DIR/name matches it, else None."""
    try:
        with open(os.path.join(DIR, name)) as f:
            pattern = f.read().strip()
    except FileNotFoundError:
        return None
    text = payload[1:].decode("utf-8", "replace")
    return text if pattern and re.search(pattern, text, re.S) else None


def should_drop(payload, name="drop"):
    text = ordered(name, payload)
    if text is None:
        return False
    os.unlink(os.path.join(DIR, name))
    with open(os.path.join(DIR, "dropped"), "a") as f:
        f.write(text.replace("\n", " ") + "\n")
    return True


def hold_back(payload):
    """Waits while DIR/hold names the statement (at most a minute)."""
    path = os.path.join(DIR, "hold")
    text = ordered("hold", payload)
    if text is None:
        return False
    with open(os.path.join(DIR, "held.tmp"), "w") as f:
        f.write(text.replace("\n", " ") + "\n")
    os.rename(os.path.join(DIR, "held.tmp"), os.path.join(DIR, "held"))
    deadline = time.monotonic() + 60
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return True


def rewritten(packet):
    """The COM_QUERY packet with DIR/rewrite applied to its text."""
    try:
        with open(os.path.join(DIR, "rewrite")) as f:
            pattern, replacement = (f.read().split("\n") + [""])[:2]
    except FileNotFoundError:
        return packet
    if not pattern:
        return packet
    text = packet[5:].decode("utf-8", "surrogateescape")
    body = packet[4:5] + re.sub(pattern, replacement, text, flags=re.S).encode("utf-8", "surrogateescape")
    return len(body).to_bytes(3, "little") + packet[3:4] + body


def forward(client):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(TARGET[5:])
    except OSError:
        client.close()
        return
    with lock:
        conns.append((client, server))
    state = {"discard": False}
    held = False
    threading.Thread(target=pump, args=(server, client, state), daemon=True).start()
    buf = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            buf += data
            while len(buf) >= 4:
                n = int.from_bytes(buf[:3], "little")
                if len(buf) < 4 + n:
                    break
                packet, buf = buf[:4 + n], buf[4 + n:]
                # A command is a packet with sequence number 0; 0x03 is
                # COM_QUERY (the handshake's packets never have seq 0).
                query = packet[3] == 0 and n > 0 and packet[4] == 3
                if query and (should_drop(packet[4:]) or held and should_drop(packet[4:], "after")):
                    state["discard"] = True
                    server.sendall(packet)
                    time.sleep(1)
                    raise OSError("answer lost on purpose")
                if query and hold_back(packet[4:]):
                    held = True
                if query:
                    packet = rewritten(packet)
                server.sendall(packet)
    except OSError:
        pass
    for x in (client, server):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        x.close()


def silent(client):
    with lock:
        conns.append((client,))


def main():
    s = listener()
    s.settimeout(0.1)
    cut = False
    while True:
        if os.path.exists(os.path.join(DIR, "cut")):
            if not cut:
                cut = True
                close_all()
                if LISTEN.startswith("unix:") and os.path.exists(LISTEN[5:]):
                    os.unlink(LISTEN[5:])
        elif cut:
            cut = False
            if LISTEN.startswith("unix:"):
                s.close()
                s = listener()
                s.settimeout(0.1)
        try:
            client, _ = s.accept()
        except socket.timeout:
            continue
        if cut:
            client.close()
        elif TARGET == "silent":
            silent(client)
        else:
            threading.Thread(target=forward, args=(client,), daemon=True).start()


main()
