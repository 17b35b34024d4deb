#!/bin/sh
# control.sh MODE -- test handler that talks back on its control channel
# (descriptor 3, JOBQ_CONTROL_FD), then ends as MODE says.  The payload
# is ignored; follow-ups are of type "child" with {"from": JOB_ID}.
cat >/dev/null
follow() {
	printf '{"enqueue": {"type": "child", "payload": {"from": %s}, "delay": "1h"}}\n' "$JOBQ_JOB_ID" >&"$JOBQ_CONTROL_FD"
}
case $1 in
follow_fail) follow; exit 1 ;;
follow_kill) follow; kill -KILL $$ ;;
follow_ok) follow; exit 0 ;;
follow_three) follow; follow; follow; exit 0 ;;
follow_wait)
	# $2: a file whose appearance lets the handler finish (exit 0).
	follow
	i=0
	while [ ! -e "$2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	exit 0 ;;
follow_crash_once)
	follow
	[ "$JOBQ_ATTEMPT" != 1 ] || kill -KILL $$
	exit 0 ;;
retry_after) echo '{"retry_after": "7m"}' >&3; exit 75 ;;
retry_in) printf '{"retry_after": "%s"}\n' "$2" >&3; exit 75 ;; # $2: the delay asked for
garbage) echo '{"progress": 5}' >&3; echo 'this is not json' >&3; exit 0 ;;
late_garbage)
	# The runner keeps the newest progress line only and the checkpoint
	# apart: the error must still name line 5 as written.
	printf '%s\n' '{"checkpoint": 1}' '{"progress": 1}' '{"progress": 2}' '{"progress": 3}' 'not json' >&3
	exit 0 ;;
flood) head -c 70000 /dev/zero | tr '\0' ' ' >&3; exit 0 ;;
bad_type) echo '{"enqueue": {"type": "nope", "payload": {}}}' >&3; exit 0 ;;
bad_after)
	# A ref names an earlier follow-up: the second line's is a later one.
	echo '{"enqueue": {"type": "child", "ref": "a", "after": ["b"]}}' >&3
	echo '{"enqueue": {"type": "child", "ref": "b"}}' >&3
	exit 0 ;;
result) echo '{"result": {"rows": 3}}' >&3; exit 0 ;;
progress)
	# $2: a file whose appearance lets the handler finish.
	echo '{"progress": 20}' >&3
	echo '{"progress": 40, "note": "half way"}' >&3
	echo '{"result": "finished"}' >&3
	i=0
	while [ ! -e "$2" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	exit 0 ;;
esac
exit 70
