#!/bin/bash
# gate.sh FILE -- test handler that waits (up to 120 s) for FILE to
# exist, then exits 0; exits 1 if it never does.
for _ in $(seq 1200); do
	[ -e "$1" ] && exit 0
	sleep 0.1
done
exit 1
