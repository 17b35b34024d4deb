#!/bin/bash
# exitwith.sh -- test handler driven by its payload (flat JSON, no
# escaped quotes): {"out": TEXT, "err": TEXT, "exit": N, "signal": NAME}.
# Prints out to stdout and err to stderr (printf %b: \n becomes a
# newline), then kills itself with the signal or exits with the code.
payload=$(cat)
field() {
	[[ $payload =~ \"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\" ]] && printf '%s' "${BASH_REMATCH[1]}"
}
code=0
[[ $payload =~ \"exit\"[[:space:]]*:[[:space:]]*([0-9]+) ]] && code=${BASH_REMATCH[1]}
out=$(field out) && printf '%b\n' "$out"
err=$(field err) && printf '%b\n' "$err" >&2
if sig=$(field signal); then
	ulimit -c 0
	kill -"$sig" $$
	sleep 5
fi
exit "$code"
