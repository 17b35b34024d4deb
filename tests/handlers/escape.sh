#!/bin/bash
# escape.sh PIDFILE [same-group] -- leaves a grandchild that holds stdout
# and stderr open for 60 s, then exits 0 at once.  By default the
# grandchild escapes the handler's process group (setsid); with
# "same-group" it stays in it.  Its pid goes to PIDFILE.
if [ "${2:-}" = same-group ]; then
	sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1"; exec sleep 60' sh "$1" &
else
	setsid sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1"; exec sleep 60' sh "$1" &
fi
while [ ! -s "$1" ]; do sleep 0.05; done
echo "handler done"
exit 0
