#!/bin/bash
# sleeper.sh SECONDS [MARKER] -- touches MARKER (when given), sleeps,
# prints "slept" and exits 0.
[ -n "${2:-}" ] && : >"$2"
sleep "$1"
echo slept
