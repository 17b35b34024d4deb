#!/bin/bash
# The database user recipe: `jobq init --print-grants` run by the
# administrator creates a user that can run init, and, once the init
# rights are revoked as the output suggests, the worker and every
# operator command.  Refused credentials exit 78 with a hint; an unknown
# database hints at `jobq init`.
. "$top_srcdir/tests/lib.sh"
one_build normal "a recipe run as written"
setup grants

U="jq_grants_$$"
U2="jq_notrig_$$"
trap 'sql_root "DROP USER IF EXISTS '"'$U'@'localhost', '$U2'@'localhost'; DROP DATABASE IF EXISTS \\\`${DB}_nt\\\`"'" >/dev/null 2>&1; cleanup' EXIT
sql_root "DROP DATABASE \`$DB\`"
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler fail]
exec = /bin/false
max_attempts = 1
EOC
sed -i -e "s/^user = root$/user = $U\npassword = it's \"s3cret\"/" "$CONF"
chmod 600 "$CONF"

grants=$(jq_ init --print-grants)
ok $? "init --print-grants exits 0 without a database to talk to"
like "$grants" "CREATE USER IF NOT EXISTS '$U'@'localhost' IDENTIFIED BY 'it''s \"s3cret\"';" \
	"it creates the configured user with the configured password, quoted"
like "$grants" "GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`\.\* TO '$U'@'localhost';" \
	"the worker's rights: rows of the jobq database only"
like "$grants" "GRANT CREATE, ALTER, INDEX, TRIGGER ON \`$DB\`\.\* TO '$U'@'localhost';" \
	"init's rights include TRIGGER, for the counting triggers"

# Before the administrator runs it: access denied is a config problem.
out=$(jq_ status 2>&1)
is "$?" "78" "an unknown user exits 78"
like "$out" "^jobq: connect to .*Access denied for user '$U'.*: check user and password in \[database\] of $CONF; 'jobq init --print-grants' prints" \
	"and says what to check and what to run"
out=$(jq_ init 2>&1)
is "$?" "78" "init as an unknown user exits 78 too"

echo "$grants" | "$TESTDB_SCRIPT" client "$JOBQ_TESTDB"
ok $? "the administrator runs the printed statements"
out=$(jq_ init 2>&1)
like "$out" "schema created" "init as the new user creates the schema" || echo "# $out"

# Take back what only init needs, as the printed comment says.
revoke=$(echo "$grants" | sed -n 's/^-- init run: \(REVOKE .*\)$/\1/p')
like "$revoke" "^REVOKE " "the output says how to revoke the init rights"
sql_root "$revoke"
ok $? "and that REVOKE runs"
is "$(sql_root "SHOW GRANTS FOR '$U'@'localhost'" | grep -c 'CREATE\|ALTER\|INDEX\|DROP')" "0" \
	"the user is left with row rights only"
like "$(sql_root "SHOW GRANTS FOR '$U'@'localhost'")" "TRIGGER" \
	"and TRIGGER, which the triggers it created run with"

# Everything but init, as that user.
id=$(jq_ enqueue echo '{"n": 1}')
ok $? "enqueue as the row-rights user"
jq_ enqueue fail '{}' >/dev/null
out=$(jq_ work --stop-when-empty --quiet 2>&1)
ok $? "a worker runs as the row-rights user" || echo "# $out"
is "$(sql "SELECT COUNT(*) FROM jobs")" "0" "and finished both jobs"
for cmd in "status" "status --json" "show $id" "workers" "failed" "failed list --json" \
	"release-stale" "prune --older-than 1d --yes" "check"; do
	# shellcheck disable=SC2086
	out=$(jq_ $cmd 2>&1)
	ok $? "jobq $cmd as the row-rights user" || echo "# $out"
done
fid=$(sql "SELECT id FROM failed_jobs")
out=$(jq_ failed retry "$fid" 2>&1)
ok $? "failed retry as the row-rights user" || echo "# $out"
jq_ work --stop-when-empty --quiet 2>/dev/null
fid=$(sql "SELECT id FROM failed_jobs")
out=$(jq_ failed forget --yes "$fid" 2>&1)
ok $? "failed forget as the row-rights user" || echo "# $out"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" "0" "the dead-letter table is empty"

# The rights of an older jobq's recipe, without TRIGGER: init says in
# one line what to grant.
sql_root "CREATE USER '$U2'@'localhost' IDENTIFIED BY 'pw';
	GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX ON \`${DB}_nt\`.* TO '$U2'@'localhost'"
cp "$CONF" "$T/notrig.ini"
sed -i -e "s/^user = .*/user = $U2/" -e "s/^password = .*/password = pw/" -e "s/^database = .*/database = ${DB}_nt/" "$T/notrig.ini"
out=$("$JOBQ" -c "$T/notrig.ini" init 2>&1)
is "$?" "1" "init without the TRIGGER right fails"
is "$(printf '%s\n' "$out" | wc -l)" "1" "in one line"
like "$out" "^jobq: init database '${DB}_nt': 010-counts.sql: creating the triggers on jobs needs the TRIGGER right: GRANT TRIGGER ON \`${DB}_nt\`\.\* TO the user init runs as \('jobq init --print-grants' prints it\) \(error 1142\)$" \
	"naming the right to grant and where" || diag "$out"
sql_root "GRANT TRIGGER ON \`${DB}_nt\`.* TO '$U2'@'localhost'"
out=$("$JOBQ" -c "$T/notrig.ini" init 2>&1)
latest=$(ls "$top_srcdir"/sql/[0-9][0-9][0-9]-*.sql | sed 's|.*/0*\([0-9]*\)-.*|\1|' | sort -n | tail -1)
like "$out" "upgraded from version 9 to $latest" "once granted, init finishes the upgrade" || diag "$out"

# No rights on another database: 78 with a hint.
sed -i "s/^database = .*/database = ${DB}_other/" "$CONF"
out=$(jq_ status 2>&1)
is "$?" "78" "no rights on the configured database exits 78"
like "$out" "Access denied.*the user has no rights on database '${DB}_other'; 'jobq init --print-grants'" \
	"and names the database"

# An unknown database (as root, who could see it): hint at jobq init.
sed -i -e "s/^user = .*/user = root/" -e "/^password = /d" "$CONF"
out=$(jq_ status 2>&1)
is "$?" "69" "an unknown database exits 69"
like "$out" "Unknown database '${DB}_other'.*: run 'jobq init' to create it" "and hints at jobq init"

# A wrong password.
sed -i -e "s/^user = .*/user = $U\npassword = wrong/" "$CONF"
out=$(jq_ work --once 2>&1)
is "$?" "78" "a wrong password exits 78 from work too"
finish
