#!/bin/bash
# Log injection: text from outside (a login name nobody checked, a job
# type an application inserted) reaches the log escaped, in text and in
# JSON, in `jobq serve` and in `jobq work`: a newline, a carriage return
# or an escape code in it can neither forge a line nor drive the
# terminal of whoever reads the log.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_logsafe

conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms
log_format = $1

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin
EOC
}

# A forged line: what a log reader would take for a line of its own.
FORGED='2026-12-01T00:00:00Z info forged'
# The login name (at most 64 bytes) as JSON text: CR LF, the forged line,
# an ESC code (clear the line), a C1 control (CSI, U+009B), a line
# separator (U+2028) and a right-to-left override (U+202E).
NAME_JSON=$(python3 -c 'import json, sys; print(json.dumps("mallory\r\n" + sys.argv[1] + "\x1b[2K\u009b1m\u2028tail\u202e"))' "$FORGED")

# raw_bytes FILE: how many bytes of FILE are CR, ESC, a C1 control in
# UTF-8, U+2028 or U+202E (none may reach a log).
raw_bytes() {
	python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
print(sum(b.count(x) for x in (b"\r", b"\x1b", b"\xc2\x9b", b"\xe2\x80\xa8", b"\xe2\x80\xae")))' "$1"
}

# ---- jobq serve, text log ----
conf text
serve_start
hit POST /api/login "$T/jar" "{\"user\": $NAME_JSON, \"password\": \"wrong\"}"
is "$CODE" 401 "a login with control characters in the name is refused"
serve_stop
log=$(cat "$T/serve.log")
is "$(grep -c '^2026-12-01T00:00:00' "$T/serve.log")" 0 "no line of the text log starts with the forged time"
is "$(grep -c 'mallory' "$T/serve.log")" 1 "the name is on one line"
is "$(raw_bytes "$T/serve.log")" 0 "no CR, ESC, C1 control, line separator or bidi override in the text log"
like "$log" "mallory\\\\x0d\\\\n2026-12-01T00:00:00" "CR and LF are written as \\x0d and \\n"
like "$log" "\\\\x1b\\[2K\\\\u009b1m\\\\u2028tail\\\\u202e" "ESC, CSI, U+2028 and U+202E are written as escapes"

# ---- jobq serve, JSON log ----
conf json
serve_start
URL=${URL%%\"*} # the address ends where the JSON string does
hit POST /api/login "$T/jar" "{\"user\": $NAME_JSON, \"password\": \"wrong\"}"
is "$CODE" 401 "refused again (JSON log)"
serve_stop
is "$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)
    n += 1
print(n)' "$T/serve.log" 2>&1)" "$(wc -l <"$T/serve.log" | tr -d ' ')" "every line of the JSON log is one JSON object"
is "$(raw_bytes "$T/serve.log")" 0 "no raw CR, ESC, C1, U+2028 or U+202E in the JSON log"
is "$(python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    if "mallory" in d["msg"]:
        print("\x1b[2K" in d["msg"] and sys.argv[2] in d["msg"] and "\u2028tail\u202e" in d["msg"])' \
	"$T/serve.log" "$FORGED")" True "the JSON message still holds the name as it was sent"

# ---- jobq work: a type an application inserted ----
conf text
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES
     ('default', CONCAT('evil', CHAR(13), CHAR(10), '$FORGED', CHAR(27), '[2J'), '{}', UTC_TIMESTAMP())"
jq_ work --once 2>"$T/work.log"
is "$(count failed_jobs)" 1 "the job of an unknown type is dead-lettered"
is "$(grep -c '^2026-12-01T00:00:00' "$T/work.log")" 0 "no line of the worker's log starts with the forged time"
is "$(raw_bytes "$T/work.log")" 0 "no CR or ESC in the worker's log"
like "$(grep -F 'evil' "$T/work.log")" 'type="evil\\x0d\\n2026-12-01T00:00:00' "the type field is quoted and escaped"

# ---- a command's error line ----
run enqueue "$(printf 'bad\033[2Jtype\nforged')" '{}'
[ "$RC" != 0 ]
ok $? "enqueue of an unknown type fails"
is "$(printf '%s' "$ERR" | tr -cd '\033' | wc -c | tr -d ' ')" 0 "its error line holds no ESC"
is "$(grep -c '^forged' "$T/err")" 0 "and no second line made of the type"

finish
