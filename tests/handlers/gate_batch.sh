#!/bin/bash
# gate_batch.sh DIR CODE [MIB] -- a handler that waits for its cue, so that a
# test can line up several outcomes: it notes its start in
# DIR/started.JOB_ID, waits until DIR/go exists, writes a line to stdout
# and one to stderr (then, when MIB is given, MIB MiB of byte 0xFF to
# each: invalid UTF-8, every byte stored as a three-byte U+FFFD),
# appends its job id to DIR/ran and exits CODE.
dir=$1 code=$2 mib=${3:-0}
touch "$dir/started.$JOBQ_JOB_ID"
while [ ! -e "$dir/go" ]; do sleep 0.05; done
echo "out of job $JOBQ_JOB_ID"
echo "err of job $JOBQ_JOB_ID" >&2
if [ "$mib" -gt 0 ]; then
	head -c $((mib * 1048576)) /dev/zero | tr '\0' '\377'
	head -c $((mib * 1048576)) /dev/zero | tr '\0' '\377' >&2
fi
echo "$JOBQ_JOB_ID" >>"$dir/ran"
exit "$code"
