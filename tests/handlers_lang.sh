#!/bin/bash
# The PHP and Perl example handlers, end to end through the worker: a
# good payload is done with the expected output, a bad one is
# dead-lettered at once (exit 65).  Each part is skipped, with the reason,
# when its interpreter is not installed.
. "$top_srcdir/tests/lib.sh"
one_build normal "handlers in other languages"
setup handlers_lang

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler log_event]
exec = $HANDLERS/log_event.php
env.EVENT_LOG = $T/events.log

[handler word_count]
exec = $HANDLERS/word_count.pl
EOC

# Runs the queue empty; prints the outcome of job $1.
outcome() {
	jq_ work --stop-when-empty --quiet 2>>"$T/worker.log"
	sql "SELECT outcome FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1"
}

if command -v php >/dev/null; then
	id=$(jq_ enqueue log_event '{"event": "signup", "user": 7}')
	is "$(outcome "$id")" "done" "PHP: log_event is done"
	is "$(cat "$T/events.log" 2>&1)" "{\"job\":\"$id\",\"event\":\"signup\",\"attempt\":1}" \
		"PHP: it wrote the event with the job id and attempt from the environment"
	like "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" "^logged signup" "PHP: its stdout is the run's output"
	id=$(jq_ enqueue log_event '{"user": 7}')
	is "$(outcome "$id")" "dead" "PHP: a payload without event is dead-lettered at once"
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $id")" 'payload needs a string "event"' \
		"PHP: with its stderr as the error"
	sed -i "s|^env.EVENT_LOG = .*|env.EVENT_LOG = $T/no/such/dir/events.log|" "$CONF"
	id=$(jq_ enqueue log_event '{"event": "x"}')
	is "$(outcome "$id")" "retry" "PHP: an unwritable log is retried (exit 75)"
else
	diag "SKIP PHP handler: php not installed (apt-get install php-cli)"
fi

if command -v perl >/dev/null && perl -MJSON::PP -e 1 2>/dev/null; then
	id=$(jq_ enqueue word_count '{"text": "the  quick brown\nfox"}')
	is "$(outcome "$id")" "done" "Perl: word_count is done"
	like "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" "^job $id: 4 words" "Perl: it counted the words"
	id=$(jq_ enqueue word_count '{"text": ["not", "a", "string"]}')
	is "$(outcome "$id")" "dead" "Perl: a bad payload is dead-lettered at once"
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $id")" 'payload needs a string "text"' \
		"Perl: with its stderr as the error"
else
	diag "SKIP Perl handler: perl or its JSON::PP module not installed (apt-get install perl)"
fi
[ "$TAP_N" -gt 0 ] || skip_all "neither php nor perl is installed"
finish
