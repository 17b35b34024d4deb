#!/bin/bash
# chatty.sh -- writes 1 MiB to stdout and 1 MiB to stderr before it
# reads stdin, then prints the sha256 of stdin on stderr and exits 0.
# A worker that fed stdin without reading the outputs would deadlock.
head -c 1048576 /dev/zero | tr '\0' 'o'
head -c 1048576 /dev/zero | tr '\0' 'e' >&2
echo >&2
echo "stdin sha256 $(sha256sum | cut -d' ' -f1)" >&2
exit 0
