# deps_lib.sh -- what the tests of jobs that wait for jobs share
# (tests/deps.sh, tests/follow_after.sh); sourced after lib.sh.  $LOG is
# the log tests/handlers/deps_log.py writes.

# t WORD NAME: the time (ns) of the first "WORD NAME" line of the log.
t() { awk -v w="$1" -v n="$2" '$1 == w && $2 == n { print $4; exit }' "$LOG"; }
# starts NAME: how many times NAME started.
starts() { awk -v n="$1" '$1 == "start" && $2 == n' "$LOG" 2>/dev/null | wc -l; }
# before T1 T2: both times known, the first earlier.
before() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -lt "$2" ]; }
# run_of ID: "outcome|error" of job ID's last run.
run_of() { sql "SELECT CONCAT_WS('|', outcome, error) FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1"; }
# The time a run's error names ("cancelled by ... at STAMP UTC").
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}'
