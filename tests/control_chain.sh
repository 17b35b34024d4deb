#!/bin/bash
# on_success chains and on_dead alerts (issue 13): a 3-step pipeline
# written in the INI; an unknown on_success type refused at load; an
# on_dead program run once per dead-lettered job with the job as JSON on
# stdin, whose failure changes nothing; the shipped alert-mail.sh.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup control_chain

# step.sh FILE: appends "TYPE PAYLOAD" to FILE.
cat >"$T/step.sh" <<'EOS'
#!/bin/sh
printf '%s %s\n' "$JOBQ_TYPE" "$(cat)" >>"$1"
EOS
# alert.sh DIR: keeps its stdin (one JSON object) in DIR/JOB_ID, and
# its ALERT_TAG in DIR.env.JOB_ID; alerts may run at once.
cat >"$T/alert.sh" <<'EOS'
#!/bin/sh
cat >"$1/$JOBQ_JOB_ID"
printf '%s\n' "${ALERT_TAG:-unset}" >"$1.env.$JOBQ_JOB_ID"
EOS
# broken.sh: an alert that fails.
cat >"$T/broken.sh" <<'EOS'
#!/bin/sh
cat >/dev/null
echo "webhook unreachable" >&2
exit 3
EOS
# sendmail.sh FILE: a stand-in for sendmail -t, keeps the message.
cat >"$T/sendmail.sh" <<'EOS'
#!/bin/sh
[ "$1" = "-t" ] || exit 64
cat >"$ALERT_OUT"
EOS
# die.sh: exits 65 (a permanent failure: dead-lettered at once).
cat >"$T/die.sh" <<'EOS'
#!/bin/sh
cat >/dev/null
echo "no such customer" >&2
exit 65
EOS
chmod +x "$T"/*.sh

for mode in skip-locked update; do
	empty_tables
	rm -rf "$T/steps" "$T/alerts" "$T/alerts.env".* "$T/mail"
	mkdir "$T/alerts"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
workdir = $T
on_dead = ./alert.sh $T/alerts
env.ALERT_TAG = from-the-worker-section

[queue default]
[queue later]

[handler fetch]
exec = ./step.sh $T/steps
on_success = resize
[handler resize]
exec = ./step.sh $T/steps
on_success = publish
[handler publish]
exec = ./step.sh $T/steps
queue = later

[handler charge]
exec = ./die.sh
[handler refund]
exec = ./die.sh
on_dead = ./broken.sh
[handler mail]
exec = ./die.sh
on_dead = $top_srcdir/handlers/alert-mail.sh
env.ALERT_MAIL_TO = ops@example.com
env.SENDMAIL = $T/sendmail.sh
env.ALERT_OUT = $T/mail
EOC
	f=$(jq_ enqueue fetch '{"image":7}')
	c1=$(jq_ enqueue charge '{"order":1}')
	c2=$(jq_ enqueue charge '{"order":2}')
	c3=$(jq_ enqueue charge '{"order":3}')
	r1=$(jq_ enqueue refund '{"order":4}')
	m1=$(jq_ enqueue mail '{"to":"x@example.com"}')
	u1=$(sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'nohandler', '{}', UTC_TIMESTAMP()); SELECT LAST_INSERT_ID()")
	timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.$mode.log"
	is "$?" 0 "[$mode] the worker runs the pipeline and the failures, and exits 0"
	like "$(head -n 1 "$T/work.$mode.log")" "reserve_mode=$mode" "[$mode] the worker uses reserve_mode $mode"

	is "$(cat "$T/steps")" $'fetch {"image":7}\nresize {"image":7}\npublish {"image":7}' \
		"[$mode] on_success chains fetch, resize, publish with the same payload"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(type, ':', queue, ':', outcome) ORDER BY id) FROM job_runs WHERE type IN ('fetch', 'resize', 'publish')")" \
		"fetch:default:done,resize:default:done,publish:later:done" "[$mode] each step done once, in its handler's queue"
	is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "[$mode] nothing left in the queue"

	is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 6 "[$mode] the six failing jobs are dead-lettered"
	is "$(ls "$T/alerts" | sort -n | tr '\n' ' ')" "$c1 $c2 $c3 $u1 " "[$mode] on_dead ran for each dead job of its handlers and of no handler (the [worker] default)"
	is "$(grep -c "on_dead .*alert.sh ran" "$T/work.$mode.log")" 4 "[$mode] once each"
	like "$(cat "$T/alerts/$u1")" "^\\{\"id\":$u1,\"queue\":\"default\",\"type\":\"nohandler\",.*\"reason\":\"unknown job type\"" \
		"[$mode] a job of no handler: its alert says unknown job type"
	is "$(cat "$T/alerts.env.$u1")" from-the-worker-section \
		"[$mode] and its on_dead runs with [worker] env.NAME (the shipped alert scripts' setting)"
	for id in $c1 $c2 $c3; do
		like "$(cat "$T/alerts/$id")" \
			"^\\{\"id\":$id,\"queue\":\"default\",\"type\":\"charge\",\"payload\":\\{\"order\":[123]\\},\"attempts\":1,\"reason\":\"exit 65 is a permanent failure\",\"error\":\"no such customer\\\\n\",\"failed_at\":\"[0-9-]{10}T[0-9:.]+Z\"\\}$" \
			"[$mode] job $id: its alert got the dead job as one JSON object"
	done
	is "$(sql "SELECT CONCAT_WS('|', reason, exception) FROM failed_jobs WHERE id = $r1")" 'exit 65 is a permanent failure|no such customer\n' \
		"[$mode] a failing on_dead changes nothing about the dead job"
	like "$(grep "job $r1: on_dead" "$T/work.$mode.log")" "on_dead .*broken.sh failed: exit 3: webhook unreachable" \
		"[$mode] the failing on_dead is logged"
	like "$(cat "$T/mail")" "^To: ops@example.com" "[$mode] alert-mail.sh: the mail goes to ALERT_MAIL_TO"
	like "$(grep '^Subject:' "$T/mail")" "^Subject: jobq: job $m1 \\(mail\\) was dead-lettered$" "[$mode] alert-mail.sh: the subject names the job"
	like "$(tail -n 1 "$T/mail")" "^\\{\"id\":$m1,.*\"payload\":\\{\"to\":\"x@example.com\"\\}" "[$mode] alert-mail.sh: the body holds the job"
done

# alert-webhook.sh: POSTs the dead job to a local HTTP server; a webhook
# that does not answer is a logged failure and nothing more.
cat >"$T/hook.py" <<'EOS'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[1], "ab") as f:
            f.write(self.headers["Content-Type"].encode() + b" " + body + b"\n")
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_port, flush=True)
s.serve_forever()
EOS
if command -v curl >/dev/null && command -v python3 >/dev/null; then
	python3 "$T/hook.py" "$T/posts" >"$T/port" &
	BG_PIDS+=($!)
	for ((i = 0; i < 100; i++)); do [ -s "$T/port" ] && break; sleep 0.1; done
	port=$(cat "$T/port")
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
workdir = $T
on_dead = $top_srcdir/handlers/alert-webhook.sh
env.ALERT_WEBHOOK_URL = http://127.0.0.1:$port/jobq
[queue default]
[handler charge]
exec = ./die.sh
[handler nohook]
exec = ./die.sh
env.ALERT_WEBHOOK_URL = http://127.0.0.1:1/
EOC
	h1=$(jq_ enqueue charge '{"order":9}')
	h2=$(jq_ enqueue nohook '{}')
	timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.hook.log"
	is "$?" 0 "alert-webhook.sh: the worker exits 0"
	like "$(cat "$T/posts")" "^application/json \\{\"id\":$h1,\"queue\":\"default\",\"type\":\"charge\",\"payload\":\\{\"order\":9\\}" \
		"alert-webhook.sh: the dead job is POSTed as JSON"
	like "$(grep "job $h2: on_dead" "$T/work.hook.log")" "alert-webhook.sh failed: exit 7: curl: \\(7\\)" \
		"alert-webhook.sh: a webhook that does not answer is logged"
	is "$(where "$h2")" failed "alert-webhook.sh: and the job stays dead-lettered"
else
	ok 0 "# SKIP curl or python3 missing"
fi

# on_success must name a configured handler: refused at load, file:line.
write_conf <<EOC
[queue default]
[handler a]
exec = /bin/true
on_success = nosuch
EOC
out=$(jq_ enqueue a '{}' 2>&1)
is "$?" 78 "an unknown on_success type: exit 78"
like "$out" "jobq.ini:9: on_success: unknown job type 'nosuch'" "an unknown on_success type: file:line and the problem"
write_conf <<EOC
[queue default]
[handler a]
exec = /bin/true
on_dead = no-such-alert-program
EOC
out=$(jq_ enqueue a '{}' 2>&1)
is "$?" 78 "an on_dead program not in PATH: exit 78"
like "$out" "jobq.ini:9: on_dead: 'no-such-alert-program' not found in PATH" "an on_dead program not in PATH: file:line"

finish
