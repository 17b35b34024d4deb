# operator/common.sh -- helpers for the operator-command tests (sourced
# after lib.sh).

# jget EXPR: reads JSON on stdin and prints the Python expression EXPR of
# it (d is the document): strings as they are, anything else as JSON.
jget() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
try:
    v = eval(sys.argv[1])
except (KeyError, IndexError, TypeError) as e:
    print("<missing %s>" % e)
    sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v))' "$1"
}

# count TABLE [WHERE]: rows in TABLE.
count() {
	sql "SELECT COUNT(*) FROM $1 ${2:+WHERE $2}"
}

# Runs jq_ ARGS, keeping stdout in $OUT, stderr in $ERR, the status in $RC.
run() {
	jq_ "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# Like run, with stdin from $1.
run_in() {
	local in=$1
	shift
	jq_ "$@" <"$in" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# lines TEXT: the number of lines in TEXT (0 for empty).
lines() {
	if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l | tr -d ' '; fi
}
