#!/bin/bash
# The example schedules of etc/jobq.ini.in, uncommented, with their
# handlers (handlers/prune.sh, health_check.py, backup.py) run by the
# real worker: they load, fire, and do their job; the health check fails
# loudly; the backup is atomic and keeps the newest 5.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the docs say"
setup schedule_examples
[ -x /usr/bin/python3 ] || skip_all "python3 is not installed"
VAR=$T/var
mkdir -p "$VAR/lib/mysql" "$T/site/uploads"
echo "hello" >"$T/site/uploads/a.txt"
cat >"$T/backup.cnf" <<EOC
[client]
socket = $SOCKET
user = root
EOC

# The example block, uncommented, with this build's paths put in as
# make does (the jobq program, this test's config in place of the
# installed one) and pointed at this test's folders; the placeholder
# password_hash gets a real one, as its reader would give it.
HASH=$("$JOBQ" passwd --stdin <<<'an example password' | sed 's/^password_hash = //')
examples() {
	sed -n '/^; Example schedules/,$p' "$top_srcdir/etc/jobq.ini.in" |
		sed -n 's/^;\(\[.*\]\)$/\1/p; s/^;\([a-z_.A-Z]* = .*\)$/\1/p' |
		sed -e "s|@pkglibexecdir@|$HANDLERS|g" -e "s|@localstatedir@|$VAR|g" \
			-e "s|@bindir@/jobq|$JOBQ|g" -e "s|@sysconfdir@/jobq.ini|$CONF|g" \
			-e "s|\"/var/lib/mysql\"|\"$VAR/lib/mysql\"|" \
			-e "s|^env.BACKUP_DEFAULTS_FILE = .*|env.BACKUP_DEFAULTS_FILE = $T/backup.cnf|" \
			-e "s|^env.BACKUP_DATABASE = .*|env.BACKUP_DATABASE = $DB|" \
			-e "s|^password_hash = .*\.\.\.\$|password_hash = $HASH|"
}
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue low]

[handler generate_report]
exec = $HANDLERS/generate_report.py
env.REPORT_DIR = $T/reports

$(examples)
EOC
is "$(grep -c '^\[schedule' "$CONF")" 4 "the sample configuration has 4 example schedules"
OUT=$(jq_ check 2>&1)
ok $? "the examples, uncommented, load and their handlers exist"
LIST=$(jq_ schedule --list)
like "$LIST" "nightly-backup +ini +on +30 2 \\* \\* \\* .*dump of the jobq tables" "--list shows the example schedules"

run_jobs() { jq_ work --stop-when-empty 2>>"$T/worker.log"; }

# ---- each example, fired with --run and run by the worker ----
for s in nightly-prune health-check nightly-backup; do
	jq_ schedule --run "$s" >/dev/null
done
run_jobs
is "$(sql "SELECT GROUP_CONCAT(CONCAT(type, '=', outcome) ORDER BY type) FROM job_runs")" \
	"backup=done,health_check=done,prune=done" "prune, health check and backup all succeed"
like "$(sql "SELECT output FROM job_runs WHERE type = 'prune'")" "pruned [0-9]+ run" "prune ran jobq prune"
like "$(sql "SELECT output FROM job_runs WHERE type = 'health_check'")" "jobq check: configuration, handler programs and database ok" \
	"the health check ran jobq check"
dump=$(ls "$VAR"/backups/jobq/jobq-db-*.sql 2>/dev/null | head -1)
ok $([ -n "$dump" ] && grep -q "CREATE TABLE \`jobq_schedule_runs\`" "$dump"; echo $?) "the backup is a dump of the jobq tables"
is "$(ls -A "$VAR/backups/jobq" | grep -c '\.tmp$')" 0 "... and leaves no temporary file"

# ---- the health check fails loudly ----
empty_tables
jq_ enqueue health_check '{"paths": ["/"], "min_free_pct": 100}' >/dev/null
jq_ enqueue health_check '{"paths": ["/no/such/folder"]}' >/dev/null
run_jobs
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE type = 'health_check' AND exit_status = 'exit 69'")" 2 \
	"a failed health check is dead-lettered at once (exit 69)"
like "$(sql "SELECT exception FROM failed_jobs ORDER BY id LIMIT 1")" "HEALTH CHECK FAILED: disk /: .*% free, below 100%" \
	"... saying what is wrong"
like "$(sql "SELECT exception FROM failed_jobs ORDER BY id DESC LIMIT 1")" "HEALTH CHECK FAILED: disk /no/such/folder" \
	"... for a missing folder too"
sed -i "s|^exec = $HANDLERS/generate_report.py|exec = $T/missing.py|" "$CONF"
printf '[handler gone]\nexec = %s\n' "$T/missing-handler" >>"$CONF"
cp "$CONF" "$T/broken.ini"
sed -i "s|^env.CONFIG = .*|env.CONFIG = $T/broken.ini|" "$CONF"
sed -i "/^\[handler gone\]/,+1d; s|^exec = $T/missing.py|exec = $HANDLERS/generate_report.py|" "$CONF"
jq_ enqueue health_check '{"paths": ["/"], "min_free_pct": 0}' >/dev/null
run_jobs
like "$(sql "SELECT exception FROM failed_jobs ORDER BY id DESC LIMIT 1")" "HEALTH CHECK FAILED: jobq check failed \\(exit 78\\)" \
	"a missing handler program fails the health check"

# ---- the backup keeps the newest 5, for a folder too ----
empty_tables
for i in 1 2 3 4 5 6 7; do
	jq_ enqueue backup "{\"kind\": \"directory\", \"dir\": \"$T/site/uploads\", \"dest\": \"$T/bk\", \"keep\": 5}" >/dev/null
done
run_jobs
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'")" 7 "seven directory backups ran"
is "$(ls "$T/bk" | grep -c '^dir-uploads-.*\.tar\.gz$')" 5 "... and the newest 5 are kept"
newest=$(ls "$T/bk"/dir-uploads-* | sort | tail -1)
is "$(tar -xzOf "$newest" uploads/a.txt)" "hello" "... each a whole tarball of the folder"
jq_ enqueue backup '{"kind": "tape"}' >/dev/null
run_jobs
is "$(sql "SELECT exit_status FROM failed_jobs WHERE type = 'backup'")" "exit 65" "a bad backup payload is dead-lettered (65)"
finish
