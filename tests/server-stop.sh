#!/bin/bash
# Stops the private MariaDB server; runs after every other test, whether
# they passed or not.
. "$top_srcdir/tests/lib.sh"
"$TESTDB_SCRIPT" stop "$JOBQ_TESTDB"
ok $? "private MariaDB stopped"
! "$TESTDB_SCRIPT" status "$JOBQ_TESTDB"
ok $? "it no longer answers"
finish
