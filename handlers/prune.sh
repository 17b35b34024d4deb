#!/bin/sh
# prune.sh -- a jobq handler for the nightly prune schedule: trims run
# history, dead-letter rows, gone workers and schedule fires older than
# a cut-off by
# running `jobq prune` (which deletes in chunks).
#
# Payload: {"older_than": "30d", "keep_failed": false}   (both optional)
# Environment (from env.NAME keys of its [handler] section):
#   PROGRAM  the jobq program (default: jobq on PATH)
#   CONFIG   the configuration jobq prune connects with (default: jobq's)
#
# Idempotent: pruning twice deletes nothing more the second time.
# Exit status: 0 pruned; 65 bad payload (dead-lettered at once); what
# jobq prune exits otherwise (69 database unavailable: retried).
set -u
payload=$(cat)
older=$(printf '%s' "$payload" | sed -n 's/.*"older_than"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
older=${older:-30d}
case $older in
'' | *[!0-9smhd]* | [!0-9]*)
	echo "prune: bad older_than '$older' (expected a duration such as 30d)" >&2
	exit 65
	;;
esac
# A handler has no terminal: jobq prune deletes nothing without --yes.
# Dead letters are kept by jobq prune unless --failed is given; this
# schedule trims them too unless the payload says keep_failed: true.
set -- prune --older-than "$older" --yes
[ -n "${CONFIG:-}" ] && set -- -c "$CONFIG" "$@"
if ! printf '%s' "$payload" | grep -q '"keep_failed"[[:space:]]*:[[:space:]]*true'; then
	set -- "$@" --failed
fi
exec "${PROGRAM:-jobq}" "$@"
