#!/bin/bash
# stubborn.sh PIDFILE -- ignores SIGTERM, and so does the sleep it starts
# (its pid goes to PIDFILE); runs for 60 s unless SIGKILLed.
trap '' TERM
sleep 60 &
echo $! >"$1.tmp" && mv "$1.tmp" "$1"
wait
echo survived
