#!/bin/bash
# badutf8.sh -- prints invalid UTF-8 (a stray 0xFF, a truncated
# sequence, an overlong form, a surrogate, a NUL) on stdout and stderr,
# then exits 65.
printf 'out: \xff|\xc3(|\xc0\xaf|\xed\xa0\x80|\x00| ok \xc3\xa9\n'
printf 'err: \xff|\xc3(|\xc0\xaf|\xed\xa0\x80|\x00| ok \xc3\xa9\n' >&2
exit 65
