#!/usr/bin/env python3
"""otlp_receiver.py -- a small OTLP/HTTP (JSON) receiver for tests/otlp.sh.

  otlp_receiver.py serve PORTFILE OUTFILE [STATUS]
      listens on 127.0.0.1 (a free port, written to PORTFILE once bound)
      and appends one JSON line per POST to OUTFILE: its path, its
      Content-Type and its body as parsed; answers STATUS (200 unless
      given) with {} (400 for a body that is not JSON).  Runs until killed.
  otlp_receiver.py spans OUTFILE
      prints the spans received, one line each, tab-separated:
      kind name traceId spanId parentSpanId statusCode statusMessage
      and the attributes as key=value, sorted by name then job id.
  otlp_receiver.py requests OUTFILE
      prints each request's path, Content-Type and resource attributes.
  otlp_receiver.py counts OUTFILE
      prints the number of spans each request carried, one line each.
"""
import http.server
import json
import sys


def serve(portfile, outfile, status=200):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(n)
            try:
                body = json.loads(raw)
                code = status
            except ValueError:
                body, code = raw.decode("utf-8", "replace"), 400
            rec = {"path": self.path, "ctype": self.headers.get("Content-Type"), "body": body}
            with open(outfile, "a") as f:
                f.write(json.dumps(rec) + "\n")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


def records(outfile):
    try:
        with open(outfile) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def value(v):
    for k in ("stringValue", "intValue", "boolValue", "doubleValue"):
        if k in v:
            return str(v[k])
    return json.dumps(v)


def attrs(lst):
    return ["%s=%s" % (a["key"], value(a["value"])) for a in lst]


def spans(outfile):
    rows = []
    for rec in records(outfile):
        for rs in rec["body"].get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for s in ss.get("spans", []):
                    st = s.get("status", {})
                    a = attrs(s.get("attributes", []))
                    jid = next((int(x.split("=", 1)[1]) for x in a if x.startswith("jobq.job.id=")), 0)
                    rows.append((s["name"], jid, "\t".join([str(s.get("kind")), s["name"], s["traceId"],
                        s["spanId"], s.get("parentSpanId", "-") or "-", str(st.get("code", 0)),
                        st.get("message", "-") or "-", s["startTimeUnixNano"], s["endTimeUnixNano"]] + a)))
    for r in sorted(rows):
        print(r[2])


def count(rec):
    return sum(len(ss.get("spans", [])) for rs in rec["body"].get("resourceSpans", [])
               for ss in rs.get("scopeSpans", []))


def requests(outfile):
    for rec in records(outfile):
        for rs in rec["body"].get("resourceSpans", []):
            print("\t".join([rec["path"], str(rec["ctype"])] + attrs(rs["resource"]["attributes"])))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 200)
    elif sys.argv[1] == "spans":
        spans(sys.argv[2])
    elif sys.argv[1] == "counts":
        for rec in records(sys.argv[2]):
            print(count(rec))
    else:
        requests(sys.argv[2])
