#!/bin/bash
# Starts the private MariaDB server the integration tests share.
. "$top_srcdir/tests/lib.sh"
"$TESTDB_SCRIPT" stop "$JOBQ_TESTDB" 2>/dev/null
"$TESTDB_SCRIPT" start "$JOBQ_TESTDB"
ok $? "private MariaDB started in $JOBQ_TESTDB"
"$TESTDB_SCRIPT" status "$JOBQ_TESTDB"
ok $? "it answers on $("$TESTDB_SCRIPT" socket "$JOBQ_TESTDB")"
finish
