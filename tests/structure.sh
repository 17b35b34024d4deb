#!/bin/bash
# The house rules for src/ hold (tests/structure.py): files of at most 800
# lines, functions of at most 80, and no two files that depend on each
# other in a loop (by calls, includes or page-script imports).  Needs no
# database.
exec python3 "$top_srcdir/tests/structure.py" "$top_srcdir"
