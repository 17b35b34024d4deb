#!/bin/bash
# contrib/demo, the README's main command, ends on the dashboard: with
# --keep it leaves `jobq serve` and a worker running on a private server
# of its own (here under $T, on a free port), prints the address and a
# login that work, and `contrib/demo --stop` leaves nothing running.
. "$top_srcdir/tests/lib.sh"
one_build normal "the tour, timed"
[ -z "${JOBQ_VALGRIND:-}" ] || skip_all "the tour waits on leases timed for a native jobq"
command -v curl >/dev/null || skip_all "no curl"
setup demo

export JOBQ_DEMO_DIR=$T/demo JOBQ_DEMO_PORT=0
demo() { JOBQ=$JOBQ "$top_srcdir/contrib/demo" "$@"; }
# Whatever happens, the test's demo is stopped.
trap 'demo --stop >/dev/null 2>&1; cleanup' EXIT
running() { pgrep -f "$JOBQ_DEMO_DIR/" >/dev/null; }

out=$(demo --keep 2>&1)
ok $? "contrib/demo --keep exits 0" || printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
like "$out" $'\n\\{"user":"demo","role":"admin","csrf":"...","timezone":"[^"]*"\\} \\(HTTP 200\\)' \
	"the demo logs in to its dashboard and shows the answer, without the CSRF token"
login=$(printf '%s\n' "$out" | sed -n 's/^ *dashboard: \(http[^ ]*\) *user: demo *password: \([^ ]*\)$/\1 \2/p')
url=${login% *}
pw=${login#* }
hostport=${url#http://}
hostport=${hostport%/}
like "$url" '^http://127\.0\.0\.1:[0-9]+/$' "it prints the dashboard's address, on the loopback"
ok "$(
	ini=$JOBQ_DEMO_DIR/jobq.ini
	grep -q '^\[user demo\]$' "$ini" && grep -qx "listen = $hostport" "$ini" &&
		! grep -qF "$pw" "$ini" && [ "$(stat -c %a "$ini")" = 600 ]
	echo $?
)" "jobq.ini has [serve] on that port and [user demo] hashed, readable by its owner only"

code=$(curl -s -o "$T/login" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary "{\"user\": \"demo\", \"password\": \"$pw\"}" "${url}api/login")
is "$code $(grep -o '"role":"[a-z]*"' "$T/login")" '200 "role":"admin"' \
	"the printed login opens an admin session on the printed address"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary '{"user": "demo", "password": "not-it"}' "${url}api/login")
is "$code" 401 "another password is refused"

id=$("$JOBQ" -c "$JOBQ_DEMO_DIR/jobq.ini" enqueue echo '{"from": "tests/demo.sh"}')
i=0
until grep -q "job=$id .*outcome=done" "$JOBQ_DEMO_DIR/work.log" || [ $i -ge 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
grep -q "job=$id .*outcome=done" "$JOBQ_DEMO_DIR/work.log"
ok $? "the worker --keep left running does a job enqueued afterwards"

out=$(demo --stop 2>&1)
ok $? "contrib/demo --stop exits 0" || diag "$out"
running
ok "$([ $? = 1 ]; echo $?)" "nothing of the demo is left running (server, worker, dashboard)" ||
	diag "$(pgrep -af "$JOBQ_DEMO_DIR/")"
finish
