#!/bin/bash
# bigerr.sh MIB [CODE] -- writes a first line, MIB MiB of filler and a
# last line to stderr, then exits CODE (default 65).
echo "first line of stderr" >&2
head -c $(($1 * 1048576)) /dev/zero | tr '\0' 'x' >&2
echo "last line of stderr" >&2
exit "${2:-65}"
