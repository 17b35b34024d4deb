#!/bin/bash
# jobq failed retry of a job whose type has no [handler] section: as
# `jobq enqueue` refuses that type (the job would only be dead-lettered
# again, "unknown job type"), a retry of it is refused: among IDs it is
# named and nothing is done (65); with --all it stays, counted (1),
# and the others are retried; --payload refuses it too.  The same for a
# job in a queue with no [queue] section: no worker may serve it.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup life2_retry

dead() { # dead ID TYPE: a dead-lettered job of TYPE
	sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
		VALUES ($1, 'default', '$2', '{}', 1, 'x')"
}
dead 101 echo
dead 102 gone_type
dead 103 echo
dead 104 other_gone

# ---- IDs: refused, nothing done ----
run enqueue gone_type '{}'
is "$RC" 65 "enqueue of a type with no [handler]: 65 (the behaviour retry follows)"
run failed retry 101 102
is "$RC" 65 "retry of IDs one of which has no [handler]: exit 65"
is "$(lines "$ERR")" 1 "one line on stderr"
like "$ERR" "unknown job type or queue \(no \[handler\] or \[queue\] section in $(re "$CONF")\) of job 102 \(type 'gone_type'\): a retry would only dead-letter it again, or leave it where no worker serves it; nothing done" \
	"it names the job, its type and the config"
is "$(count failed_jobs)/$(count jobs)" "4/0" "nothing moved"
run failed retry --dry-run 102 104
is "$RC|$(count failed_jobs)" "65|4" "--dry-run says the same (65), nothing moved"
like "$ERR" "of job 102 \(type 'gone_type'\), 104 \(type 'other_gone'\)" "naming both"
run failed retry --payload '{"a": 1}' 104
is "$RC|$(count failed_jobs)" "65|4" "--payload of such a job: 65, nothing moved"

# ---- forget is not a retry: it goes ----
dead 105 gone_type
run failed forget 105
is "$RC|$(count failed_jobs "id = 105")" "0|0" "forget of such a job is not refused"

# ---- --all: the others are retried, these stay, counted ----
run failed retry --all --dry-run
is "$RC" 1 "retry --all --dry-run with two of unknown types: exit 1"
like "$ERR" "2 jobs of an unknown job type or queue \(no \[handler\] or \[queue\] section in .*\) would stay dead-lettered" "it says two would stay"
like "$OUT" "would retry 2 jobs" "and that two would be retried"
run failed retry --all
is "$RC" 1 "retry --all: exit 1 (some stay)"
like "$ERR" "2 jobs of an unknown job type or queue \(no \[handler\] or \[queue\] section in .*\) stay dead-lettered: a retry would only dead-letter them again" \
	"it says two stay, and why"
like "$OUT" "^retried 2 jobs" "the two of a known type are retried"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")|$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs")" \
	"102,104|101,103" "the unknown types stay dead-lettered, the others are queued"
run failed retry 101
is "$RC" 65 "an id no longer dead: still 65 'no failed job'"

# ---- a queue the configuration does not list: no worker may serve it ----
sql "DELETE FROM failed_jobs; DELETE FROM jobs"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES
	(201, 'gonequeue', 'echo', '{}', 1, 'x'), (202, 'default', 'echo', '{}', 1, 'x')"
run failed retry 201
is "$RC|$(count failed_jobs)|$(count jobs)" "65|2|0" "retry of a job in a queue with no [queue] section: 65, nothing moved"
like "$ERR" "of job 201 \(queue 'gonequeue'\): a retry would only dead-letter it again, or leave it where no worker serves it" \
	"it names the job and its queue"
run failed retry --all
is "$RC|$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")|$(sql "SELECT GROUP_CONCAT(id) FROM jobs")" "1|201|202" \
	"retry --all: the job of the unknown queue stays, the other is retried"
like "$ERR" "1 job of an unknown job type or queue" "it says one stays"
finish
