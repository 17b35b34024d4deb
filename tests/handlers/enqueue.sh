#!/bin/bash
# enqueue.sh NAME QUEUE TYPE PAYLOAD -- prints NAME (like exitwith.sh
# prints "out"), then enqueues a job with the jobq binary and
# configuration named by $TJOBQ and $TCONF (set with env.* keys).
cat >/dev/null
echo "$1"
"$TJOBQ" -c "$TCONF" enqueue -q "$2" "$3" "$4" >/dev/null
