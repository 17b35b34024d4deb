#!/bin/bash
# jobq.ini keys that were accepted and then did nothing, found by the
# audit of every key of jobq.ini(5): each is refused by `jobq check`
# with one line "FILE:LINE: message" and exit 78, or now takes effect.
. "$top_srcdir/tests/lib.sh"
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

finish
