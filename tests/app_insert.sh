#!/bin/bash
# The SQL enqueue contract (DESIGN.md 5) from other languages: a PHP
# (PDO) and a Python (pymysql) application insert an order and its job
# in one transaction with a plain INSERT INTO jobs (queue, type, payload,
# available_at); committed, the job runs; rolled back, there is no job.
. "$top_srcdir/tests/lib.sh"
one_build normal "clients in other languages"
. "$top_srcdir/tests/operator/common.sh"

have_php=
if ! command -v php >/dev/null 2>&1; then
	php_why="php-cli is not installed"
elif ! php -r 'exit(extension_loaded("pdo_mysql") ? 0 : 1);' 2>/dev/null; then
	php_why="php has no pdo_mysql (php-mysql is not installed)"
else
	have_php=1
fi
py=
for p in python3 /usr/bin/python3 /usr/local/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import pymysql' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$have_php" ] || [ -n "$py" ] || skip_all "$php_why, and no python3 with pymysql (python3-pymysql)"

setup app_insert
sql "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, ref VARCHAR(32) NOT NULL UNIQUE, lang VARCHAR(16) NOT NULL) ENGINE=InnoDB"

skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP $*"
}

# contract NAME COMMAND...: runs the application twice (commit, then
# rollback) and checks the job's fate.
contract() {
	local name=$1 id rid runs_before
	shift
	id=$("$@" "$SOCKET" "$DB" commit "$name-1" 2>"$T/$name.err")
	ok $? "$name: the committing transaction succeeds"
	[ -s "$T/$name.err" ] && diag "$(head -3 "$T/$name.err")"
	like "$id" '^[0-9]+$' "$name: it got a job id"
	id=${id:-0}
	is "$(sql "SELECT CONCAT_WS('|', queue, type, priority, attempts, lease_token IS NULL, COALESCE(max_attempts, '-')) FROM jobs WHERE id = $id")" \
		"default|echo|0|0|1|-" "$name: the job row got its defaults"
	is "$(sql "SELECT ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP())) <= 5 FROM jobs WHERE id = $id")" 1 \
		"$name: available_at is UTC now (whatever the application's time zone)"
	is "$(sql "SELECT lang FROM orders WHERE ref = '$name-1'")" "$name" "$name: the order is there"
	run status --json
	is "$(printf '%s' "$OUT" | jget 'd["queues"]["default"]["ready"]')" 1 "$name: status counts it ready"

	jq_ work --stop-when-empty 2>"$T/$name.work.log"
	ok $? "$name: a worker runs until the queue is empty"
	is "$(count jobs "id = $id")" 0 "$name: the job is done (gone from jobs)"
	is "$(sql "SELECT CONCAT(outcome, ' ', attempt) FROM job_runs WHERE job_id = $id")" "done 1" "$name: one run, done"
	# echo.sh prints "job N (...): PAYLOAD"; decode the JSON it received.
	is "$(sql "SELECT CONCAT_WS('|', JSON_VALUE(p, '\$.order'), JSON_VALUE(p, '\$.note')) FROM (SELECT SUBSTRING(output, LOCATE('{', output)) p FROM job_runs WHERE job_id = $id) t")" \
		"$name-1|café \"quoted\" O'Brien" "$name: the handler got the payload, quotes and UTF-8 intact"

	runs_before=$(count job_runs)
	rid=$("$@" "$SOCKET" "$DB" rollback "$name-2" 2>>"$T/$name.err")
	ok $? "$name: the rolled-back transaction ran"
	is "$(count jobs "id = ${rid:-0}")/$(count jobs)" "0/0" "$name: after ROLLBACK there is no job"
	is "$(count orders "ref = '$name-2'")" 0 "$name: and no order"
	jq_ work --stop-when-empty 2>>"$T/$name.work.log"
	is "$(count job_runs)" "$runs_before" "$name: a worker finds nothing to run"
	is "$(count failed_jobs)" 0 "$name: nothing dead-lettered"
}

if [ -n "$have_php" ]; then
	contract php php "$top_srcdir/tests/operator/app_insert.php"
else
	for i in $(seq 15); do skip "$php_why"; done
fi
if [ -n "$py" ]; then
	contract python "$py" "$top_srcdir/tests/operator/app_insert.py"
else
	for i in $(seq 15); do skip "no python3 with pymysql (python3-pymysql is not installed)"; done
fi
finish
