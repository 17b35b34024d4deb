#!/bin/bash
# jobq.ini keys that were accepted and then did nothing, found by the
# audit of every key of jobq.ini(5): each is refused by `jobq check`
# with one line "FILE:LINE: message" and exit 78, or now takes effect.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup config_keys

# conf_file NAME: stdin (which starts with [database]) to $T/NAME.ini.
conf_file() {
	cat >"$T/$1.ini"
	chmod 600 "$T/$1.ini"
}

# ---- [database] port where the client library ignores it ----
# No host, a socket, or the host localhost: the library takes the unix
# socket and never tries the port.  These loaded, and the first one
# reached the server on the socket, whatever port it named.
# The worker sets TRACEPARENT per job, as it sets JOBQ_*: a value given
# here passed `jobq check` and never reached the handler.
conf_file env-trace <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[handler echo]
exec = /bin/cat
env.TRACEPARENT = 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
EOC
conf_refused env-trace 7 "env\.TRACEPARENT: TRACEPARENT is set by the worker" "env.TRACEPARENT"
# A placeholder hash with the right prefix loaded, and nobody could log in.
conf_file hash-placeholder <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[user alice]
password_hash = \$argon2id\$v=19\$m=65536,t=2,p=1\$...
EOC
conf_refused hash-placeholder 6 "password_hash: not an argon2id hash" "a placeholder password_hash"
conf_file port-socket <<EOC
[database]
socket = $SOCKET
port = 1
user = root
database = $DB
EOC
conf_refused port-socket 3 "port: not used: socket is set" "port beside socket"
conf_file port-nohost <<EOC
[database]
port = 1
user = root
database = $DB
EOC
conf_refused port-nohost 2 "port: not used without host" "port without host"
# A port out of range beside a socket: one error, the range, not also "not used".
conf_file port-socket-range <<EOC
[database]
socket = $SOCKET
port = 99999
user = root
database = $DB
EOC
conf_refused port-socket-range 3 "port: bad number '99999' \\(expected a whole number from 1 to 65535\\)" \
	"port 99999 beside socket"
conf_file port-localhost <<EOC
[database]
host = localhost
port = 1
user = root
database = $DB
EOC
conf_refused port-localhost 2 "host: localhost is the default unix socket .* ignores port 1: write 127\.0\.0\.1" \
	"host = localhost with port"
conf_file port-localhost-item <<EOC
[database]
host = 127.0.0.1, localhost:3307
user = root
database = $DB
EOC
conf_refused port-localhost-item 2 "host: localhost is the default unix socket .* ignores port 3307" \
	"localhost:PORT in a host list"
# What still loads: localhost with no port (the socket, as meant), a
# port for a TCP host, and localhost with a port under tls (TCP).
for v in "host = localhost" "host = 127.0.0.1
port = 1" "host = localhost
port = 1
tls = yes"; do
	conf_file port-ok <<EOC
[database]
$v
user = root
database = $DB
connect_timeout = 1s
EOC
	run "$JOBQ" -c "$T/port-ok.ini" check
	is "$(grep -c "^$(re "$T/port-ok.ini"):" "$T/err")" "0" "loads: $(echo $v)"
done

# ---- [handler] user and group under a worker that is not root ----
# spawn.c switches identity only as root; any other worker ran the
# handler as itself and `jobq check` said ok.  Now both warn.  Run as
# nobody (setpriv), from a folder nobody can read.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && getent passwd daemon >/dev/null &&
	getent group daemon >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$JOBQ" --version >/dev/null 2>&1; then
	U=$(mktemp -d /tmp/jobq-config-keys.XXXXXX)
	chmod 755 "$U"
	printf '#!/bin/sh\nid -u\n' >"$U/h.sh"
	chmod 755 "$U/h.sh"
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$JOBQ" -c "$U/$1.ini" check; }
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n[handler t]\nexec = %s\nuser = daemon\n' \
		"$SOCKET" "$DB" "$U/h.sh" >"$U/user.ini"
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n[handler t]\nexec = %s\ngroup = daemon\n' \
		"$SOCKET" "$DB" "$U/h.sh" >"$U/group.ini"
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n[handler t]\nexec = %s\nuser = nobody\n' \
		"$SOCKET" "$DB" "$U/h.sh" >"$U/self.ini"
	chmod 644 "$U"/*.ini
	run as_nobody user
	like "$ERR" "^$(re "$U/user.ini"):7: warning: handler 't': user daemon is not used: jobq runs as uid 65534, not root" \
		"user = daemon with a worker that is not root warns"
	run as_nobody group
	like "$ERR" "^$(re "$U/group.ini"):7: warning: handler 't': group daemon is not used" \
		"group = daemon with a worker that is not root warns"
	run as_nobody self
	is "$(grep -c warning "$T/err")" "0" "user = the worker's own user does not"
	run "$JOBQ" -c "$U/user.ini" check
	is "$(grep -c warning "$T/err")" "0" "nor does user = daemon with a root worker"
	rm -rf "$U"
else
	for i in 1 2 3 4; do echo "ok $((TAP_N + i)) # SKIP not root, no setpriv or no daemon user"; done
	TAP_N=$((TAP_N + 4))
fi

# ---- [worker]: the per-type [handler] keys ----
# jobq.ini(5) said any [handler] key may be set in [worker]; these five
# were refused as "unknown key", a documented key named as a typo.
for k in "exec = /bin/true" "queue = default" "on_success = echo" "max_running = 2" "rate = 1/s"; do
	conf_file "worker-${k%% *}" <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[worker]
$k
[handler echo]
exec = $HANDLERS/echo.sh
EOC
	conf_refused "worker-${k%% *}" 6 "${k%% *}: a key of \[handler TYPE\] only, with no \[worker\] default" \
		"${k%% *} in [worker]"
done

# ---- limit_cpu and mode = persistent ----
# RLIMIT_CPU counts the process's life: a persistent process that had
# served two jobs of 0.4 s CPU each was killed by SIGXCPU during a third
# of 0.15 s under limit_cpu = 1s, and that job was charged the attempt.
printf '#!/bin/sh\nexit 0\n' >"$T/p.sh"
chmod 755 "$T/p.sh"
conf_file cpu-persistent <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[handler p]
exec = $T/p.sh
mode = persistent
limit_cpu = 5s
EOC
conf_refused cpu-persistent 8 "limit_cpu: not for handler 'p' \(mode = persistent\)" \
	"limit_cpu in a persistent handler"
conf_file cpu-worker <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[worker]
limit_cpu = 5s
[handler p]
exec = $T/p.sh
mode = persistent
[handler e]
exec = $T/p.sh
EOC
conf_refused cpu-worker 6 "limit_cpu: not for handler 'p' \(mode = persistent\)" \
	"[worker] limit_cpu inherited by a persistent handler, at the [worker] line"
sed -i 's/^\[handler e\]$/limit_cpu = none\n[handler e]/' "$T/cpu-worker.ini"
run "$JOBQ" -c "$T/cpu-worker.ini" check
is "$(grep -c "^$(re "$T/cpu-worker.ini"):" "$T/err")" "0" \
	"limit_cpu = none in the persistent handler's section loads; the exec one keeps [worker]'s"

finish
