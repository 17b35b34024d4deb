#!/bin/bash
# The configuration errors `jobq check` can only find against the server
# point at the line of the key that asks for what the server cannot give,
# as the loader's own errors do: reserve_mode = skip-locked on a server
# without SKIP LOCKED (played by the proxy of tests/replylost.py, which
# rewrites SKIP LOCKED into a syntax error, as an older server answers),
# and output limits whose outcome does not fit max_allowed_packet.  One
# line each, exit 78, nothing changed.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup config_runtime

command -v python3 >/dev/null || skip_all "no python3 for the proxy"

# refused LINE REGEX NAME: `jobq check` exits 78 with one line on stderr,
# "jobq: $CONF:LINE: " and a message matching REGEX.
refused() {
	run jq_ check
	is "$RC" "78" "$3: exits 78"
	is "$NERR" "1" "$3: exactly one line on stderr"
	like "$ERR" "^jobq: $(re "$CONF"):$1: $2" "$3: at line $1, naming the key"
}

jobs_before=$(sql "SELECT COUNT(*) FROM jobs")

# ---- reserve_mode = skip-locked, and the server lacks SKIP LOCKED ----
replylost_start "$T/p" || { echo "Bail out! the proxy did not start"; exit 99; }
printf '%s\n%s\n' 'SKIP LOCKED' 'SKIP LOCKD' >"$T/p/rewrite"
cat >"$CONF" <<EOC
[database]
socket = $T/p.sock
user = root
database = $DB

[worker]
concurrency = 2
reserve_mode = skip-locked

[handler echo]
exec = $HANDLERS/echo.sh
EOC
refused 8 "reserve_mode = skip-locked, but the server does not support SKIP LOCKED" \
	"skip-locked on a server without it"
# jobq work meets it on starting, and names the same line.
run jq_ work --once
is "$RC" "78" "jobq work with skip-locked on a server without it: exits 78"
like "$ERR" "cannot start: $(re "$CONF"):8: reserve_mode = skip-locked, but the server does not support SKIP LOCKED" \
	"and its log names the key's line"
sed -i 's/^reserve_mode = skip-locked/reserve_mode = auto/' "$CONF"
run jq_ check
is "$RC" "0" "the same server with reserve_mode = auto: exits 0"
like "$OUT" "reservation mode: update \(probed: the server does not support SKIP LOCKED\)" \
	"and the proxy does play a server without SKIP LOCKED"
rm -f "$T/p/rewrite"

# ---- output limits over max_allowed_packet ----
packet=$(sql "SELECT @@max_allowed_packet")
if [ "$packet" -gt $((30 * 1024 * 1024)) ]; then
	diag "max_allowed_packet is $packet: 4M limits fit, the output-limit cases are skipped"
else
	write_conf <<EOC
[worker]
stderr_limit = 4M

[handler echo]
exec = $HANDLERS/echo.sh
stdout_limit = 4M
EOC
	refused 7 "\[handler echo\]: stdout_limit 4\.0 MiB \+ 2 x stderr_limit 4\.0 MiB .*max_allowed_packet" \
		"stderr_limit of [worker] that a handler cannot store"
	write_conf <<EOC
[handler echo]
exec = $HANDLERS/echo.sh
stderr_limit = 1M
stdout_limit = 4M
timeout = 5m
EOC
	packet_need=$(( (4 * 1024 * 1024 + 2 * 1024 * 1024) * 3 ))
	if [ "$packet" -lt "$packet_need" ]; then
		refused 9 "\[handler echo\]: stdout_limit 4\.0 MiB \+ 2 x stderr_limit 1\.0 MiB" \
			"stdout_limit, the larger of the two"
	else
		diag "max_allowed_packet $packet holds 4M + 2 x 1M: that case is skipped"
	fi
fi

is "$(sql "SELECT COUNT(*) FROM jobs")" "$jobs_before" "nothing was enqueued or changed"
finish
