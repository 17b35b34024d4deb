#!/bin/bash
# jobq.ini: every problem is reported as "FILE:LINE: message", one line
# each, all of them, and the command exits 78; which file is read
# (-c FILE, then $JOBQ_CONFIG, then the compiled-in default).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup config

E=$HANDLERS/echo.sh

# Writes stdin to $T/NAME.ini, then (unless the content has one) a
# [database] section for this test, after the content so that the
# content's line numbers are its own.
conf_file() {
	local f=$T/$1.ini
	cat >"$f"
	grep -q '^\[database\]' "$f" ||
		printf '\n[database]\nsocket = %s\nuser = root\ndatabase = %s\n' "$SOCKET" "$DB" >>"$f"
	chmod 600 "$f"
	echo "$f"
}

# bad NAME LINE REGEX <<EOF: the configuration on stdin has exactly one
# problem, on line LINE; `jobq check` must exit 78 and print exactly one
# line "FILE:LINE: message" with the message matching REGEX.
bad() {
	local name=$1 line=$2 msg=$3 f
	f=$(conf_file "$name")
	run "$JOBQ" -c "$f" check
	is "$RC" "78" "$name: exits 78"
	is "$NERR" "1" "$name: exactly one line on stderr"
	like "$ERR" "^$(re "$f"):$line: $msg" "$name: '$f:$line: ' and a message naming the problem"
	[ -z "$OUT" ]
	ok $? "$name: nothing on stdout"
}

# ---- a configuration using every kind of key is accepted ----
mkdir "$T/bin"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/ok.sh"
chmod 755 "$T/bin/ok.sh"
f=$(conf_file good <<EOC
; a comment
# another comment
[worker]
queues = default, mail
concurrency = 4
poll_interval = 250ms
reserve_ttl = 2m
heartbeat = 20s
reserve_mode = auto
timezone = UTC
log_format = json
max_payload = 64k
timeout = 90
backoff = 30,60,120

[queue default]
[queue mail]
description = outgoing mail

[handler echo]
exec = $E --flag "two words"
queue = mail
timeout = 1h30m
kill_grace = 5s
max_attempts = 3
backoff = exponential 10s 10m
backoff_jitter = 20%
retry_until = 1d
permanent_exit = 64-78, 100
retry_exit = 75
permanent_stderr = ^fatal:
retry_stderr = (?i)try again
workdir = /tmp
env.GREETING = hello world
env.PATH = /usr/bin:/bin
stdout_limit = 1M
stderr_limit = 16k

[handler relative]
exec = bin/ok.sh

[handler bare]
exec = sh -c true

[schedule nightly]
cron = 30 2 * * *
type = echo
payload = {"report": "daily"}
priority = 5
timezone = UTC

[schedule hourly]
cron = @hourly
type = relative
EOC
)
run "$JOBQ" -c "$f" check
is "$RC" "0" "a configuration using every kind of key passes check"
like "$OUT" "ok \(2 queues, 3 handlers, 2 schedules\)" "and is counted right"
is "$ERR" "" "with nothing on stderr"

# ---- [worker] metrics_listen = off: none, as jobq.ini(5) says ----
f=$(conf_file metrics-off <<EOC
[worker]
metrics_listen = off

[queue default]
[handler echo]
exec = $E
EOC
)
run "$JOBQ" -c "$f" check
is "$RC/$ERR" "0/" "[worker] metrics_listen = off passes check"
run "$JOBQ" -c "$f" work --once
is "$RC" "0" "and a worker starts with it"
! grep -q "metrics served on" "$T/err"
ok $? "and serves no /metrics"
bad worker-metrics-listen-bad 2 "metrics_listen: expected ADDR:PORT \(port 0-65535\) or off, not 'nowhere'" <<EOC
[worker]
metrics_listen = nowhere
EOC
# [serve] offers no off: unset, /metrics is served on listen.
bad serve-metrics-listen-off 2 "metrics_listen: expected ADDR:PORT \(port 0-65535\), not 'off'" <<EOC
[serve]
metrics_listen = off
EOC

# ---- one problem each ----
bad unknown-section 5 "unknown section \[wroker\]" <<EOC
[worker]
concurrency = 1

; a typo in a header
[wroker]
EOC

bad unknown-key 5 "unknown key 'timout' in \[handler x\]" <<EOC
[queue default]

[handler x]
exec = $E
timout = 5m
EOC

bad unknown-key-worker 2 "unknown key 'concurency' in \[worker\]" <<EOC
[worker]
concurency = 4
EOC

bad unknown-key-database 3 "unknown key 'hostname' in \[database\]" <<EOC
[database]
socket = $SOCKET
hostname = db.example
EOC

bad bad-number 3 "concurrency: .*'lots'" <<EOC
[worker]
poll_interval = 1s
concurrency = lots
EOC

bad bad-duration 3 "timeout: bad duration '5 parsecs'" <<EOC
[handler x]
exec = $E
timeout = 5 parsecs
EOC

bad bad-duration-worker 2 "poll_interval: bad duration '-1s'" <<EOC
[worker]
poll_interval = -1s
EOC

bad bad-backoff 3 "backoff: .*soon" <<EOC
[handler x]
exec = $E
backoff = exponential soon
EOC

bad bad-backoff-cap 3 "backoff: .*CAP" <<EOC
[handler x]
exec = $E
backoff = exponential 10m 1m
EOC

bad bad-backoff-list 2 "backoff: .*'later'" <<EOC
[worker]
backoff = 30, 60, later
EOC

bad bad-regex 4 "permanent_stderr: bad regular expression.*parenthesis" <<EOC
[handler x]
exec = $E
retry_stderr = ok
permanent_stderr = fatal: (unclosed
EOC

bad no-exec 2 "\[handler x\] has no exec" <<EOC
[queue default]
[handler x]
timeout = 5m
EOC

bad exec-missing 2 "exec: $(re "$T/no/such/program"): No such file or directory" <<EOC
[handler x]
exec = $T/no/such/program --arg
EOC

bad exec-not-in-path 3 "exec: 'jobq-no-such-program' not found in PATH" <<EOC
[handler x]
timeout = 5m
exec = jobq-no-such-program
EOC

printf '#!/bin/sh\nexit 0\n' >"$T/not-executable.sh"
chmod 644 "$T/not-executable.sh"
bad exec-not-executable 2 "exec: $(re "$T/not-executable.sh") is not executable" <<EOC
[handler x]
exec = $T/not-executable.sh
EOC

bad exec-relative-missing 2 "exec: $(re "$T/bin/missing.sh"): No such file" <<EOC
[handler x]
exec = bin/missing.sh
EOC

bad handler-unknown-queue 5 "queue: unknown queue 'mail' \(no \[queue mail\] section\)" <<EOC
[queue default]

[handler x]
exec = $E
queue = mail
EOC

bad worker-unknown-queue 4 ".*queues: unknown queue 'bulk'" <<EOC
[queue default]

[worker]
queues = default, bulk
EOC

# Checked where it is written, not first when a command prints a time.
bad worker-timezone 3 "timezone: unknown time zone 'Mars/Base'" <<EOC
[queue default]
[worker]
timezone = Mars/Base
EOC

bad max-payload-zero 3 "max_payload: '0' is out of range \(2 to 1G\)" <<EOC
[queue default]
[worker]
max_payload = 0
EOC

bad tls-word 3 "tls: expected no, yes or verify, not 'maybe'" <<EOC
[queue default]
[database]
tls = maybe
EOC

bad heartbeat-too-long 3 ".*heartbeat.*reserve_ttl" <<EOC
[worker]
reserve_ttl = 10s
heartbeat = 8s
EOC

bad duplicate-key 4 "duplicate key 'concurrency' in \[worker\] \(first at line 2\)" <<EOC
[worker]
concurrency = 2
poll_interval = 1s
concurrency = 3
EOC

bad duplicate-section 4 "duplicate section \[queue mail\] \(first at line 1\)" <<EOC
[queue mail]
[queue default]

[queue mail]
EOC

bad syntax-error 3 "syntax error" <<EOC
[worker]
concurrency = 2
poll_interval 1s
EOC

bad key-outside-section 2 "key 'concurrency' outside any section" <<EOC
; settings
concurrency = 4
[worker]
EOC

bad bad-env-name 3 "env\.MY-VAR: bad environment variable name 'MY-VAR'" <<EOC
[handler x]
exec = $E
env.MY-VAR = 1
EOC

bad bad-cron 6 "cron: hour: 25 is out of range 0-23 \\(column 3\\)" <<EOC
[handler x]
exec = $E

[schedule nightly]
type = x
cron = 0 25 * * *
EOC

bad bad-cron-fields 5 "cron: " <<EOC
[handler x]
exec = $E

[schedule nightly]
cron = 0 2 * *
type = x
EOC

bad schedule-unknown-type 6 "type: unknown job type 'reprot'" <<EOC
[handler report]
exec = $E

[schedule nightly]
cron = 0 2 * * *
type = reprot
EOC

bad schedule-bad-payload 6 "payload: not valid JSON" <<EOC
[handler x]
exec = $E
[schedule nightly]
cron = 0 2 * * *
type = x
payload = {"day": 
EOC

# A refused line in [schedule] (here an indented cron) is the one to
# fix: the section is not also said to have no cron.
bad schedule-indented-cron 6 "indented line: continuation lines are not supported$" <<EOC
[handler x]
exec = $E

[schedule nightly]
type = x
  cron = 0 2 * * *
EOC

# ---- one mistake, one line ----
# A header without its ']' was reported, and then each key under it
# again: filed under the section before it (or under none).
bad broken-header 3 "syntax error: section header without its closing '\]'" <<EOC
[worker]
concurrency = 2
[handler x
exec = $E
timeout = 5m
EOC
bad broken-header-first 1 "syntax error: section header without its closing '\]'" <<EOC
[handler x
exec = $E
EOC
# An unknown section with text after its header was reported twice
# (the text, then the section); its keys are dropped unreported.
bad unknown-section-text 2 "unknown section \[wroker\] \(expected" <<EOC
[queue default]
[wroker] junk
concurrency = 2
EOC
bad refused-header-text 1 "\[handler\] needs a name" <<EOC
[handler x y] exec = $E
timeout = 5m
EOC
bad long-header 1 "line too long" <<EOC
[handler $(printf 'x%.0s' $(seq 250))]
exec = $E
EOC

# ---- values longer than what they feed take ----
# A 100,000-character user name loaded, and the server refused it at
# connect; every such key is now refused at its line, by its length.
long=$(head -c 100000 /dev/zero | tr '\0' u)
bad db-user-long 3 "user: too long: 100000 characters, and a MariaDB user name is at most 128$" <<EOC
[database]
socket = $SOCKET
user = $long
database = $DB
EOC
bad db-name-long 4 "database: too long: 65 characters, and a database name is at most 64$" <<EOC
[database]
socket = $SOCKET
user = root
database = $(printf 'd%.0s' $(seq 65))
EOC
bad db-socket-long 2 "socket: too long: 108 bytes, and a unix socket path \(sun_path\) is at most 107$" <<EOC
[database]
socket = /$(printf 's%.0s' $(seq 107))
user = root
database = $DB
EOC
bad db-host-long 2 "host: item 1 of .*: its name is too long \(a host name is at most 255 bytes\)$" <<EOC
[database]
host = $(printf 'h%.0s' $(seq 256))
user = root
database = $DB
EOC
bad db-tls-ca-missing 6 "tls_ca: cannot read $(re "$T/no-ca.pem"): No such file or directory$" <<EOC
[database]
host = 127.0.0.1
user = root
database = $DB
tls = verify
tls_ca = $T/no-ca.pem
EOC
longpath=/$(head -c 5000 /dev/zero | tr '\0' p)
bad db-password-file-long 4 "password_file: too long: 5001 bytes, and a path is at most [0-9]+$" <<EOC
[database]
socket = $SOCKET
user = root
password_file = $longpath
database = $DB
EOC
bad exec-program-long 2 "exec: program path too long: 5001 bytes, and a path is at most [0-9]+$" <<EOC
[handler x]
exec = $longpath
EOC
bad exec-word-long 2 "exec: word 2 too long: 200000 bytes, and an argument is at most 131071$" <<EOC
[handler x]
exec = $E $(head -c 200000 /dev/zero | tr '\0' w)
EOC
bad env-long 3 "env\.BIG: too long: 200004 bytes as NAME=value, and an environment string is at most 131071$" <<EOC
[handler x]
exec = $E
env.BIG = $(head -c 200000 /dev/zero | tr '\0' e)
EOC
bad workdir-long 3 "workdir: too long: 5001 bytes, and a path is at most [0-9]+$" <<EOC
[handler x]
exec = $E
workdir = $longpath
EOC
# Each word and env.NAME was checked alone, never their sum against what
# execve takes: a handler past it failed every run with E2BIG.  With a
# stack limit of 1 MiB, execve takes 256 KiB (a quarter); jobq counts as
# the kernel does, exactly: a persistent handler whose every variable is
# known loads at 262144 bytes and is refused at 262145, and the kernel
# agrees on both.
printf '#!/bin/sh\nulimit -s 1024 && exec "$@"\n' >"$T/stack1m"
printf '#!/bin/sh\nexec %s %s "$@"\n' "$T/stack1m" "$JOBQ" >"$T/jobq1m"
chmod +x "$T/stack1m" "$T/jobq1m"
JOBQ_FULL=$JOBQ
JOBQ=$T/jobq1m
w100k=$(head -c 100000 /dev/zero | tr '\0' w)
known_env="env.PATH = /usr/bin:/bin
env.LANG = C.UTF-8
env.TZ = UTC
env.HOME = /tmp
env.USER = u
env.LOGNAME = u"
# execs /bin/true with the words given and that environment; 0 when the
# kernel took it, 7 for E2BIG
kernel_takes() {
	"$T/stack1m" python3 - "$@" <<'EOP'
import os, sys
env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": "/tmp", "USER": "u", "LOGNAME": "u",
       "JOBQ_CONTROL_FD": "3"}
try:
    os.execve("/bin/true", ["/bin/true"] + ["w" * int(n) for n in sys.argv[1:]], env)
except OSError:
    sys.exit(7)
EOP
}
for last in 61949 61950; do
	conf_file argmax-$last >/dev/null <<EOC
[queue default]
[handler p]
mode = persistent
$known_env
exec = /bin/true $w100k $w100k $(head -c $last /dev/zero | tr '\0' w)
EOC
done
run "$JOBQ" -c "$T/argmax-61949.ini" check
like "$OUT" "^config: $(re "$T/argmax-61949.ini"): ok" "argmax: 262144 bytes in all load, with a 1 MiB stack"
kernel_takes 100000 100000 61949
is "$?" "0" "argmax: and the kernel execs the same argv and environment"
conf_refused argmax-61950 10 "exec: too long as a whole: its arguments and environment \(env\.NAME and jobq's own variables\) take 262145 bytes, and execve takes at most 262144 here" \
	"argmax: one byte more"
kernel_takes 100000 100000 61950
is "$?" "7" "argmax: and the kernel refuses one byte more (E2BIG)"
bad argmax-env 3 "exec: too long as a whole: .* take [0-9]+ bytes, and execve takes at most 262144" <<EOC
[queue default]
[handler x]
exec = $E $w100k
env.A = $w100k
env.B = $w100k
EOC
# an exec-mode handler's environment may hold a checkpoint of 64 KiB
bad argmax-checkpoint 3 "exec: too long as a whole" <<EOC
[queue default]
[handler x]
exec = $E $w100k $w100k
EOC
f=$(conf_file argmax-persistent <<EOC
[queue default]
[handler x]
exec = $E $w100k $w100k
mode = persistent
EOC
)
run "$JOBQ" -c "$f" check
like "$OUT" "^config: $(re "$f"): ok" "argmax: the same words load in persistent mode (no job variables)"
bad argmax-on-dead 4 "on_dead: too long as a whole" <<EOC
[queue default]
[handler x]
exec = $E
on_dead = $E $w100k $w100k $w100k
EOC
# [worker]'s env.NAME keys, after on_alert, count for it
bad argmax-on-alert 2 "on_alert: too long as a whole" <<EOC
[worker]
on_alert = $E $w100k
env.A = $w100k
env.B = $w100k
[queue default]
EOC
# an on_dead of [worker] that only one handler's env.NAME makes too long:
# at that handler's exec
bad argmax-on-dead-inherited 5 "on_dead: too long as a whole" <<EOC
[worker]
on_dead = $E $w100k $w100k
[queue default]
[handler x]
exec = $E
env.A = $w100k
EOC
# Only the worker execs a handler: a client started with the same small
# stack (jobq enqueue from a web server) loads the file, and goes on to
# the database (here none: 69), not refused with 78.
sed "s|^socket = .*|socket = $T/no-server.sock|" "$T/argmax-checkpoint.ini" >"$T/argmax-client.ini"
chmod 600 "$T/argmax-client.ini"
run "$JOBQ" -c "$T/argmax-client.ini" enqueue x '{}'
is "$RC" "69" "argmax: jobq enqueue, which runs no handler, is not refused for it (69: no database here)"
! grep -q "too long as a whole" <<<"$ERR"
ok $? "argmax: and says nothing of it"
JOBQ=$JOBQ_FULL

# [serve] took names, addresses and a token of any length.
h254=$(printf 'h%.0s' $(seq 254))
h253=$(printf 'h%.0s' $(seq 253))
bad serve-host-long 3 "allowed_hosts: name 2 too long: 254 characters, and a host name is at most 253, and 1 more$" <<EOC
[queue default]
[serve]
allowed_hosts = localhost, $h254, [::1], $h254.example
EOC
bad serve-url-host-long 3 "public_url: host too long: 254 characters, and a host name is at most 253$" <<EOC
[queue default]
[serve]
public_url = https://$h254:8443/jobs/
EOC
bad serve-url-long 3 "public_url: too long: 2049 bytes, and an address is at most 2048$" <<EOC
[queue default]
[serve]
public_url = https://jobs.example.com/$(head -c 2024 /dev/zero | tr '\0' p)
EOC
bad serve-token-long 3 "metrics_token: too long: 1025 bytes, and a metrics_token is at most 1024$" <<EOC
[queue default]
[serve]
metrics_token = $(head -c 1025 /dev/zero | tr '\0' t)
EOC
f=$(conf_file serve-longest <<EOC
[queue default]
[serve]
allowed_hosts = $h253, $h253., [::1]
public_url = https://$h253:8443/$(head -c 1781 /dev/zero | tr '\0' p)
metrics_token = $(head -c 1024 /dev/zero | tr '\0' t)
EOC
)
run "$JOBQ" -c "$f" check
like "$OUT" "^config: $(re "$f"): ok" "serve-longest: a 253-character host, a 2048-byte address and a 1024-byte token load"

# A message quoting a long value keeps to one readable line.
bad queue-name-long 3 "queue: unknown queue 'qqq.*\[\.\.\. [0-9]+ bytes not shown \.\.\.\].*section\)$" <<EOC
[handler x]
exec = $E
queue = $(head -c 10000 /dev/zero | tr '\0' q)
EOC
[ "$(wc -c <"$T/err")" -lt 700 ]
ok $? "queue-name-long: the line is shortened (under 700 bytes)"

# ---- other bad input ----
# A NUL byte ended the value there: the rest of the line was dropped.
printf '[worker]\nconcurrency = 3\0junk\n' >"$T/nul.in"
bad nul-byte 2 "NUL byte at column 16" <"$T/nul.in"
# A value in another encoding (here Latin-1) is not the one its writer saw.
printf '[handler x]\nexec = %s\nenv.NAME = Jos\351\n' "$E" >"$T/latin1.in"
bad not-utf8 3 "env\.NAME: not valid UTF-8 \(at byte 3\)$" <"$T/latin1.in"
# A stray carriage return or escape became part of the value.
printf '[handler x]\nexec = %s a\r\r\n' "$E" >"$T/cr.in"
bad carriage-return 2 "exec: carriage return at byte [0-9]+ \(lines end with LF or CRLF\)$" <"$T/cr.in"
printf '[handler x]\nexec = %s a\033[31mb\n' "$E" >"$T/esc.in"
bad control-character 2 "exec: control character at byte [0-9]+$" <"$T/esc.in"
# A refused line may be the key its section needs: not also "has no exec".
bad exec-no-equals 3 "syntax error \(expected" <<EOC
[queue default]
[handler x]
exec $E
EOC
bad exec-indented 3 "indented line: continuation lines are not supported$" <<EOC
[queue default]
[handler x]
  exec = $E
EOC
bad exec-after-header 2 "text after the section header \[handler x\]" <<EOC
[queue default]
[handler x] exec = $E
EOC
printf '; caf\351 (a comment in Latin-1 is left alone)\n[queue default]\n[handler x]\nexec = %s\n' "$E" |
	conf_file latin1-comment >/dev/null
run "$JOBQ" -c "$T/latin1-comment.ini" check
is "$RC:$ERR" "0:" "a comment that is not UTF-8 still loads"
printf '[queue default]\r\n[handler x]\r\nexec = %s\r\ntimeout = 5m\r\n' "$E" | conf_file crlf >/dev/null
run "$JOBQ" -c "$T/crlf.ini" check
is "$RC:$ERR" "0:" "CRLF line ends load"

# Empty names were looked up as "": "no [queue ] section".
bad empty-queue 3 "queue: empty \(leave the key out instead\)$" <<EOC
[handler x]
exec = $E
queue =
EOC
bad empty-on-success 3 "on_success: empty \(leave the key out instead\)$" <<EOC
[handler x]
exec = $E
on_success =
EOC
bad empty-user 3 "user: empty \(leave the key out instead\)$" <<EOC
[handler x]
exec = $E
user =
EOC

# A key given twice was reported, then read again: a bad value on the
# same line was a second error for the one mistake.
bad duplicate-key-bad-value 3 "duplicate key 'concurrency' in \[worker\] \(first at line 2\)$" <<EOC
[worker]
concurrency = 2
concurrency = lots
EOC
# A misspelt exec was reported, and the section then had no exec.
bad misspelt-exec 4 "unknown key 'exce' in \[handler x\]$" <<EOC
[queue default]

[handler x]
exce = $E
EOC
bad misspelt-password-hash 2 "unknown key 'pasword_hash' in \[user bob\]$" <<EOC
[user bob]
pasword_hash = x
EOC

# Each unknown name of queues was a line of its own, for the one key.
bad worker-unknown-queues 4 "queues: unknown queue 'bulk' \(no \[queue bulk\] section\), and 2 more$" <<EOC
[queue default]

[worker]
queues = default, bulk, mail, reports
EOC

bad serve-trusted-proxies-list 2 "trusted_proxies: 'proxy\.example' is not an IP address or network \(like 10\.0\.0\.0/8\), and 1 more$" <<EOC
[serve]
trusted_proxies = proxy.example, 127.0.0.1, lb.example
EOC
bad serve-allowed-hosts-list 2 "allowed_hosts: 'a b' is not a host name or address, and 1 more$" <<EOC
[serve]
allowed_hosts = a b, c/d, jobs.example
EOC

# ---- several problems: all reported, one line each ----
f=$(conf_file several <<EOC
[worker]
concurrency = lots

[handler x]
exec = $E
timout = 5
timeout = 5 parsecs

[bogus]
[schedule s]
cron = * * * * *
type = nosuch
EOC
)
run "$JOBQ" -c "$f" check
is "$RC" "78" "several problems: exits 78"
is "$NERR" "5" "several problems: one line for each of the 5"
for line in 2 6 7 9 12; do
	is "$(grep -c "^$(re "$f"):$line: " "$T/err")" "1" "several problems: line $line is reported"
done

f=$(conf_file two-syntax-errors <<EOC
[worker]
junk one
concurrency = 2
junk two
EOC
)
run "$JOBQ" -c "$f" check
is "$RC" "78" "two syntax errors: exits 78"
is "$(grep -c "^$(re "$f"):2: syntax error" "$T/err")" "1" "two syntax errors: line 2 is reported"
is "$(grep -c "^$(re "$f"):4: syntax error" "$T/err")" "1" "two syntax errors: line 4 is reported too"

# A file that is not a configuration printed a line for each of its
# lines: 20 are shown, the rest counted.
for i in $(seq 30); do echo "not a key $i"; done | conf_file not-a-config >/dev/null
run "$JOBQ" -c "$T/not-a-config.ini" check
is "$RC" "78" "a file of 30 bad lines: exits 78"
is "$NERR" "21" "and shows 20 of them and one line for the rest"
like "$(tail -n 1 "$T/err")" "^$(re "$T/not-a-config.ini"): 10 more errors not shown \(is this jobq's configuration file\?\)$" \
	"which counts them"

# ---- which file is read ----
good=$CONF
missing=$T/missing.ini

run env JOBQ_CONFIG="$missing" "$JOBQ" -c "$good" check
is "$RC" "0" "-c FILE beats \$JOBQ_CONFIG"
like "$OUT" "^config: $(re "$good"): ok" "and -c FILE is the file read"

run env JOBQ_CONFIG="$missing" "$JOBQ" check --config="$good"
is "$RC" "0" "--config=FILE after the command works too"

run env JOBQ_CONFIG="$good" "$JOBQ" -c "$missing" check
is "$RC" "78" "a missing -c FILE exits 78 (even when \$JOBQ_CONFIG names a good file)"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^$(re "$missing"): cannot open configuration: No such file or directory$" \
	"saying which file could not be opened"
is "$OUT" "" "and nothing on stdout"

# A folder opens and reads as nothing: it must not load as a
# configuration of defaults (whose worker would dead-letter every job as
# of an unknown type).
mkdir -p "$T/confdir"
run "$JOBQ" -c "$T/confdir" check
is "$RC" "78" "a folder as -c FILE exits 78"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^$(re "$T/confdir"): cannot open configuration: Is a directory$" "saying it is a folder"
run "$JOBQ" -c "$T/confdir" work --once
is "$RC" "78" "and no worker starts with it"

run env JOBQ_CONFIG="$good" "$JOBQ" check
is "$RC" "0" "\$JOBQ_CONFIG is read without -c"
like "$OUT" "^config: $(re "$good"): ok" "and it is the file read"

run env JOBQ_CONFIG="$missing" "$JOBQ" check
is "$RC" "78" "a missing \$JOBQ_CONFIG exits 78"
like "$ERR" "^$(re "$missing"): cannot open configuration" "naming \$JOBQ_CONFIG's file"

# The compiled-in default: $(sysconfdir)/jobq.ini, as configure set it.
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$top_builddir/Makefile")
eval "sysconfdir=$sysconfdir"
default=$sysconfdir/jobq.ini
for how in unset empty; do
	if [ $how = unset ]; then
		run env -u JOBQ_CONFIG "$JOBQ" check
	else
		run env JOBQ_CONFIG= "$JOBQ" check
	fi
	if [ -e "$default" ]; then
		like "$OUT$ERR" "$(re "$default")" "\$JOBQ_CONFIG $how: the default $default is read"
	else
		is "$RC" "78" "\$JOBQ_CONFIG $how: the default $default is missing here: exit 78"
		like "$ERR" "^$(re "$default"): cannot open configuration" "\$JOBQ_CONFIG $how: the default $default is tried"
	fi
done

run env JOBQ_CONFIG="$good" "$JOBQ" --help
like "$OUT" "default: \\\$JOBQ_CONFIG or $(re "$default")\)" \
	"--help names the compiled-in default even when \$JOBQ_CONFIG is set"
finish
