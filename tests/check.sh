#!/bin/bash
# jobq check: exits 0 when a worker could start (and says which
# reservation mode it would use), 69 when the database cannot be reached,
# refuses us or lacks the schema, 78 when the configuration is bad; each
# failure with a one-line reason on stderr.  Also the password sources
# (password, password_file) and the warning about a readable password.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup check

U=jqcheck_$$
PW=s3cret-$$
EMPTY=${DB}_empty

check_cleanup() {
	sql_root "DROP USER IF EXISTS '$U'@'localhost'; DROP DATABASE IF EXISTS \`$EMPTY\`" >/dev/null 2>&1
	cleanup
}
trap check_cleanup EXIT

# A configuration with a [database] section of our own (no write_conf).
conf_db() {
	cat >"$CONF"
	chmod 600 "$CONF"
}

# ---- ready ----
run jq_ check
is "$RC" "0" "check on a ready database exits 0"
like "$OUT" "reservation mode: skip-locked \(probed: the server supports SKIP LOCKED\)" \
	"it reports the probed reservation mode skip-locked"
LATEST=$(ls "$top_srcdir/sql" | sed -n 's/^0*\([0-9][0-9]*\)-.*\.sql$/\1/p' | sort -n | tail -1)
like "$OUT" "database '$DB', schema version $LATEST: ok" "it reports the database and schema version"
like "$OUT" "config: $(re "$CONF"): ok \(1 queue, 1 handler, 0 schedules\)" "it summarises the configuration"
is "$ERR" "" "nothing on stderr when all is well"

for mode in update skip-locked; do
	write_conf <<EOC
[worker]
reserve_mode = $mode

[handler echo]
exec = $HANDLERS/echo.sh
EOC
	run jq_ check
	is "$RC" "0" "check with reserve_mode = $mode exits 0"
	like "$OUT" "reservation mode: $mode \(set by reserve_mode" "it reports the configured mode $mode"
	n=$(grep -c '^reservation mode:' "$T/out")
	is "$n" "1" "and exactly one reservation mode line"
done

write_conf <<EOC
[worker]
reserve_mode = auto
EOC
run jq_ check
like "$OUT" "reservation mode: skip-locked \(probed" "reserve_mode = auto probes"

# ---- database unreachable: 69, one line naming where we tried ----
write_conf <<EOC
EOC
sed -i "s|^socket = .*|socket = $T/nothing-here.sock|" "$CONF"
run jq_ check
is "$RC" "69" "check against a socket path that does not exist exits 69"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^jobq: connect to socket $(re "$T/nothing-here.sock"): " "naming the socket"

# A socket file that nobody listens on any more (a server that died).
if command -v python3 >/dev/null; then
	python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$T/dead.sock"
	sed -i "s|^socket = .*|socket = $T/dead.sock|" "$CONF"
	[ -S "$T/dead.sock" ]
	ok $? "a dead socket file exists"
	run jq_ check
	is "$RC" "69" "check against a socket nobody listens on exits 69"
	is "$NERR" "1" "with one line on stderr"
	like "$ERR" "^jobq: connect to socket $(re "$T/dead.sock"): .*\(error 2002\)$" "naming the socket and the error"
else
	diag "no python3: the dead-socket case is skipped"
fi

conf_db <<EOC
[database]
host = 127.0.0.1
port = 1
user = root
database = $DB
EOC
run jq_ check
is "$RC" "69" "check against a TCP port nobody listens on exits 69"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^jobq: connect to 127\.0\.0\.1:1: " "naming host and port"

# ---- the server refuses us ----
sql_root "CREATE USER '$U'@'localhost' IDENTIFIED BY '$PW'; GRANT ALL ON \`$DB\`.* TO '$U'@'localhost'"
ok $? "created user $U"

conf_db <<EOC
[database]
socket = $SOCKET
user = $U
password = wrong-$PW
database = $DB
EOC
run jq_ check
is "$RC" "78" "check with a wrong password exits 78 (a configuration problem)"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^jobq: connect to socket $(re "$SOCKET"): Access denied for user '$U'@'localhost'" \
	"saying access was denied to whom"

# The right password, in a file only we can read: no warning.
sed -i "s|^password = .*|password = $PW|" "$CONF"
run jq_ check
is "$RC" "0" "check with the right password exits 0"
is "$ERR" "" "a mode 0600 configuration holding a password gets no warning"

# The same file readable by others: one warning line, still ready.
chmod 644 "$CONF"
run jq_ check
is "$RC" "0" "a configuration readable by others still works"
is "$NERR" "1" "but prints one line on stderr"
like "$ERR" "^$(re "$CONF"): warning: .*password.*readable" "warning that the password is readable by others"
chmod 604 "$CONF"
run jq_ check
like "$ERR" "warning: .*password" "mode 0604 (world-readable only) also warns"

# password_file, relative to the configuration's folder (not the cwd).
printf '%s\n' "$PW" >"$T/db.pw"
chmod 600 "$T/db.pw"
conf_db <<EOC
[database]
socket = $SOCKET
user = $U
password_file = db.pw
database = $DB
EOC
chmod 644 "$CONF"
run bash -c 'cd / && "$@"' _ "$JOBQ" -c "$CONF" check
is "$RC" "0" "password_file (relative to the configuration's folder) works"
is "$ERR" "" "a readable configuration without a password and a private password_file: no warning"

printf 'wrong-%s\n' "$PW" >"$T/db.pw"
run jq_ check
is "$RC" "78" "a password_file with the wrong password exits 78 (the file is what is used)"
like "$ERR" "Access denied for user '$U'" "and says access was denied"

printf '%s\n' "$PW" >"$T/db.pw"
chmod 644 "$T/db.pw"
run jq_ check
is "$RC" "0" "a readable password_file still works"
is "$NERR" "1" "but prints one line on stderr"
like "$ERR" "warning: .*password.*readable.*$(re "$T/db.pw")" "a warning naming the readable password_file"

sed -i "s|^password_file = .*|password_file = no-such.pw|" "$CONF"
run jq_ check
is "$RC" "78" "a missing password_file is a configuration error (78)"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^$(re "$CONF"):4: password_file: .*$(re "$T/no-such.pw").*No such file" \
	"naming the line and the file it looked for"

# ---- no schema, or a schema from a newer jobq ----
sql_root "CREATE DATABASE \`$EMPTY\`"
write_conf <<EOC
EOC
sed -i "s|^database = .*|database = $EMPTY|" "$CONF"
run jq_ check
is "$RC" "69" "check on a database without the schema exits 69"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^jobq: database '$EMPTY' .*run 'jobq init'$" "telling to run 'jobq init'"

write_conf <<EOC
EOC
sql "INSERT INTO jobq_schema (version, name) VALUES (999, 'from the future')"
run jq_ check
is "$RC" "69" "check on a schema newer than this jobq exits 69"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^jobq: .*999.*upgrade jobq" "telling to upgrade jobq (running 'jobq init' cannot help)"
sql "DELETE FROM jobq_schema WHERE version = 999"

# ---- a bad configuration: 78, before any connection ----
write_conf <<EOC
[worker]
reserve_mode = sometimes
EOC
run jq_ check
is "$RC" "78" "check with a bad configuration exits 78"
is "$NERR" "1" "with one line on stderr"
like "$ERR" "^$(re "$CONF"):7: reserve_mode: .*'sometimes'" "naming file, line and problem"
is "$OUT" "" "and nothing on stdout"

run jq_ check extra
is "$RC" "64" "check with an extra argument is a usage error"
finish
