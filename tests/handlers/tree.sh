#!/bin/bash
# tree.sh PIDFILE -- starts a grandchild (sleep) in its process group,
# records the grandchild's pid in PIDFILE, then waits for it.
sleep 300 &
echo $! >"$1.tmp" && mv "$1.tmp" "$1"
wait
