#!/bin/bash
# jobq.ini given what an operator gets wrong, found by the command-line
# and configuration audit: each case is refused by `jobq check` with one
# line "FILE:LINE: message" and exit 78, where before it loaded and then
# did something else than the file says.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup config_audit

# conf_file NAME: stdin (which starts with [database]) to $T/NAME.ini.
conf_file() {
	cat >"$T/$1.ini"
	chmod 600 "$T/$1.ini"
}

# db_conf NAME: this test's [database] and stdin after it.
db_conf() {
	{
		printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n' "$SOCKET" "$DB"
		cat
	} | conf_file "$1"
}

# ---- two headers for one section, apart only in their spaces ----
db_conf dup-handler <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh
[handler  echo]
exec = /bin/false
EOC
conf_refused dup-handler 8 "duplicate section \[handler  echo\] \(first at line 6\)" \
	"[handler  echo] after [handler echo]"
db_conf dup-queue <<EOC
[queue   default]
[queue default]
EOC
conf_refused dup-queue 6 "duplicate section \[queue default\] \(first at line 5\)" \
	"[queue default] after [queue   default]"

# ---- [database] keys that were read and then did nothing ----
printf 'secret\n' >"$T/db.pw"
chmod 600 "$T/db.pw"
conf_file pw-both <<EOC
[database]
socket = $SOCKET
user = root
password = other
password_file = $T/db.pw
database = $DB
EOC
conf_refused pw-both 5 "password and password_file exclude each other \(line 4 and line 5\)" \
	"password and password_file both given"
for k in tls_ca tls_cert tls_key; do
	conf_file "$k-plain" <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
$k = $T/db.pw
EOC
	conf_refused "$k-plain" 5 "$k: the connection is not encrypted \(tls = no\)" "$k without tls"
done
conf_file tls-ca-yes <<EOC
[database]
host = 127.0.0.1
user = root
database = $DB
tls = yes
tls_ca = $T/db.pw
EOC
conf_refused tls-ca-yes 6 "tls_ca: tls = yes checks no certificate" "tls_ca with tls = yes"
# TLS over a unix socket: the client library goes unencrypted (yes) or
# fails (verify); refused.  With a host, TLS goes over TCP, localhost
# included (which would otherwise mean the default socket).
for mode in yes verify; do
	db_conf "tls-socket-$mode" <<EOC
tls = $mode
EOC
	conf_refused "tls-socket-$mode" 2 "socket: a unix socket is not encrypted" "tls = $mode with socket"
done
free_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
conf_file tls-localhost <<EOC
[database]
host = localhost
port = $free_port
user = root
database = $DB
tls = yes
connect_timeout = 2s
EOC
run "$JOBQ" -c "$T/tls-localhost.ini" status
is "$RC" 69 "tls = yes with host = localhost and nothing on the port: exit 69"
like "$ERR" "Can't connect to server on 'localhost'" "... it tried TCP to localhost:$free_port, not the default socket"
case $ERR in *socket*) ok 1 "... and names no socket ($ERR)" ;; *) ok 0 "... and names no socket" ;; esac
# tls = yes to a server that offers no TLS (the test server has none):
# the client library would go on in plain text; refused, and said so.
# The server is reached over TCP through tests/replylost.py, which
# forwards to its socket and loses nothing unless told to.
if [ "$(sql "SELECT @@have_ssl")" != YES ] && replylost_start "$T/px" tcp:127.0.0.1:0; then
	for mode in yes verify; do
		conf_file "tls-plain-$mode" <<EOC
[database]
host = 127.0.0.1:$(cat "$T/px/port")
user = root
database = $DB
tls = $mode
EOC
		run "$JOBQ" -c "$T/tls-plain-$mode.ini" status
		ok "$([ "$RC" != 0 ]; echo $?)" "tls = $mode to a server with no TLS: refused (exit $RC)"
	done
	like "$ERR" "TLS|SSL" "... saying why"
	conf_file tls-none <<EOC
[database]
host = 127.0.0.1:$(cat "$T/px/port")
user = root
database = $DB
EOC
	run "$JOBQ" -c "$T/tls-none.ini" status
	is "$RC" 0 "the same server through the same path without tls: connects (the path works)"
	run "$JOBQ" -c "$T/tls-plain-yes.ini" status
	like "$ERR" "tls = yes, but the server did not encrypt the connection" "tls = yes: the one line says the connection was not encrypted"
else
	diag "the test server offers TLS, or no TCP path to it: tls = yes not tried against plain text"
fi
for k in socket user database; do
	db_conf "$k-empty" </dev/null
	sed -i "s|^$k = .*|$k =|" "$T/$k-empty.ini"
	conf_refused "$k-empty" "$(grep -n "^$k =" "$T/$k-empty.ini" | cut -d: -f1)" "$k: empty" "an empty $k ="
done

# ---- a queue served twice: the order says which comes first ----
db_conf queues-twice <<EOC
[queue default]
[queue other]
[worker]
queues = default, other, default
EOC
conf_refused queues-twice 8 "queues: 'default' is listed twice" "queues = default, other, default"

# ---- a queue's description: checked, then shown ----
db_conf queue-desc-bad <<EOC
[queue default]
description = bell$(printf '\a')here
EOC
conf_refused queue-desc-bad 6 "description: control character at byte 4" "a queue description with a control character"
db_conf queue-desc <<EOC
[queue default]
description = mail to customers
[queue other]
EOC
run "$JOBQ" -c "$T/queue-desc.ini" status --json
is "$RC" 0 "status --json with a queue description: exit 0"
is "$(printf '%s' "$OUT" | python3 -c 'import json, sys; q = json.load(sys.stdin)["queues"]; print(q["default"]["description"], q["other"]["description"])')" \
	"mail to customers None" "status --json gives each queue's description, null when none"

# ---- text after a section header was dropped, a key with it ----
db_conf header-key <<EOC
[queue default]
[worker] concurrency = 8
EOC
conf_refused header-key 6 "text after the section header \[worker\]: 'concurrency = 8'" "a key on the header's line"
db_conf header-bracket <<EOC
[queue default]]
EOC
conf_refused header-bracket 5 "text after the section header \[queue default\]: '\]'" "a header with two ']'"
db_conf header-comment <<EOC
[queue default]   ; the only queue
[worker] # defaults
EOC
run "$JOBQ" -c "$T/header-comment.ini" check
is "$RC" "0" "a comment after a header is still a comment"

# ---- a message quotes the file: its control bytes must not reach the terminal ----
{
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n' "$SOCKET" "$DB"
	printf '[worker]\n\033]0;owned\007x = 1\n'
} | conf_file escape
conf_refused escape 6 "control character at column 1 \\(jobq\\.ini is UTF-8 text" "a key holding ESC and BEL"
ok "$(grep -c $'[\033\007]' "$T/err")" "... written escaped (no ESC or BEL byte on stderr)"

# ---- an empty permanent_stderr / retry_stderr is no pattern ----
# Compiled, '' matches every stderr: a failed run of a handler given
# 'permanent_stderr =' was dead-lettered at its first attempt.
db_conf empty-re <<EOC
[worker]
permanent_stderr = never matches this
[queue default]
[handler flaky]
exec = /bin/sh -c "exit 1"
max_attempts = 3
backoff = 1
permanent_stderr =
retry_stderr =
[handler perm]
exec = /bin/sh -c "echo never matches this >&2; exit 1"
max_attempts = 3
backoff = 1
EOC
run "$JOBQ" -c "$T/empty-re.ini" check
is "$RC" "0" "permanent_stderr = and retry_stderr = (empty) load"
id=$("$JOBQ" -c "$T/empty-re.ini" enqueue flaky '{}')
run timeout 30 "$JOBQ" -c "$T/empty-re.ini" work --once
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $id")/$(sql "SELECT attempts FROM jobs WHERE id = $id")" "0/1" \
	"a failed run with empty stderr is retried (attempt 1 of 3), not dead-lettered"
id=$("$JOBQ" -c "$T/empty-re.ini" enqueue perm '{}')
sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE type = 'flaky'"
run timeout 30 "$JOBQ" -c "$T/empty-re.ini" work --once
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $id")" "1" "[worker] permanent_stderr still holds for the others"

finish
