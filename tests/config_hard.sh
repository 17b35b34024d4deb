#!/bin/bash
# jobq.ini hardening (issue 8): a UTF-8 byte-order mark is skipped; a
# password_file that is a directory or empty is refused; a workdir that
# does not exist fails `jobq check`; a configuration, handler program or
# folder that others can change gets a warning (and check still passes).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup config_hard

# conf_file NAME: stdin then this test's [database] to $T/NAME.ini (0600).
conf_file() {
	local f=$T/$1.ini
	cat >"$f"
	grep -q '^\[database\]' "$f" ||
		printf '\n[database]\nsocket = %s\nuser = root\ndatabase = %s\n' "$SOCKET" "$DB" >>"$f"
	chmod 600 "$f"
	echo "$f"
}

mkdir -p "$T/bin" "$T/wd"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/ok.sh"
chmod 755 "$T/bin/ok.sh"

# ---- defect 12: a byte-order mark on line 1 ----
{
	printf '\357\273\277[worker]\n'
	printf 'concurrency = 3\n[queue default]\n[handler ok]\nexec = %s\n' "$T/bin/ok.sh"
} | conf_file bom >/dev/null
run "$JOBQ" -c "$T/bom.ini" check
is "$RC" "0" "a configuration that starts with a UTF-8 byte-order mark passes check"
is "$ERR" "" "with nothing on stderr"
like "$OUT" "ok \(1 queue, 1 handler" "and its sections are all read"
# The mark is skipped on line 1 only: elsewhere it is part of a key.
printf '[worker]\n\357\273\277concurrency = 3\n' | conf_file bom2 >/dev/null
conf_refused bom2 2 "unknown key '.*concurrency' in \[worker\]" "a mark on line 2"

# ---- defect 11: password_file that is a directory or empty ----
mkdir "$T/pwdir"
conf_file pw-dir >/dev/null <<EOC
[database]
socket = $SOCKET
user = root
password_file = $T/pwdir
database = $DB
EOC
conf_refused pw-dir 4 "password_file: $(re "$T/pwdir") is a directory" "password_file naming a directory"
: >"$T/pw-empty"
chmod 600 "$T/pw-empty"
sed "s|$T/pwdir|pw-empty|" "$T/pw-dir.ini" >"$T/pw-empty.ini"
conf_refused pw-empty 4 "password_file: $(re "$T/pw-empty") is empty" "an empty password_file"
printf '\nsecret\n' >"$T/pw-blank"
chmod 600 "$T/pw-blank"
sed "s|$T/pwdir|pw-blank|" "$T/pw-dir.ini" >"$T/pw-blank.ini"
conf_refused pw-blank 4 "password_file: $(re "$T/pw-blank") has an empty first line" \
	"a password_file whose first line is empty"
# A password in jobq.ini may not hold control characters or bytes that
# are not UTF-8 (a NUL would cut it short); password_file took any.  The
# same rule for both, a tab allowed in either.
pw_bad() { # NAME BYTES REGEX: a password_file of BYTES is refused
	printf "$2" >"$T/$1"
	chmod 600 "$T/$1"
	sed "s|$T/pwdir|$1|" "$T/pw-dir.ini" >"$T/$1.ini"
	conf_refused "$1" 4 "password_file: $(re "$T/$1") line 1: $3 \\(a password is UTF-8 text" \
		"password_file $1 ($3)"
}
pw_bad pw-nul 'sec\000ret\n' "NUL byte at byte 3"
pw_bad pw-ctl 'sec\033[0mret\n' "control character at byte 3"
pw_bad pw-cr 'sec\rret\n' "control character at byte 3"
pw_bad pw-latin1 'caf\351\n' "not valid UTF-8 at byte 3"
printf 'caf\303\251\tsecret\r\n' >"$T/pw-ok"
chmod 600 "$T/pw-ok"
sed "s|$T/pwdir|pw-ok|" "$T/pw-dir.ini" >"$T/pw-ok.ini"
run "$JOBQ" -c "$T/pw-ok.ini" check
[[ $ERR != *pw-ok.ini:4:* ]]
ok $? "a UTF-8 password with a tab and a CRLF line end is taken"
mkfifo "$T/pw-fifo"
sed "s|$T/pwdir|$T/pw-fifo|" "$T/pw-dir.ini" >"$T/pw-fifo.ini"
run timeout 20 "$JOBQ" -c "$T/pw-fifo.ini" check
is "$RC" "78" "password_file naming a FIFO: exits 78 at once (no wait for a writer)"
like "$ERR" "pw-fifo.ini:4: password_file: .* is not a regular file" "and says it is not a regular file"

# ---- 13: a workdir that does not exist ----
conf_file workdir-missing >/dev/null <<EOC
[handler ok]
exec = $T/bin/ok.sh
timeout = 5s
workdir = $T/no-such-dir
EOC
conf_refused workdir-missing 4 "workdir: $(re "$T/no-such-dir"): No such file or directory" "a missing workdir"
conf_file workdir-file >/dev/null <<EOC
[handler ok]
exec = $T/bin/ok.sh
workdir = $T/bin/ok.sh
EOC
conf_refused workdir-file 3 "workdir: $(re "$T/bin/ok.sh") is not a directory" "a workdir that is a file"
conf_file workdir-worker >/dev/null <<EOC
[worker]
concurrency = 1
workdir = $T/gone

[handler ok]
exec = $T/bin/ok.sh
EOC
conf_refused workdir-worker 3 "workdir: $(re "$T/gone"): No such file" "a missing workdir set in [worker]"
run "$JOBQ" -c "$T/workdir-missing.ini" work --once
is "$RC" "78" "work refuses the missing workdir too (exit 78)"
run "$JOBQ" -c "$T/workdir-missing.ini" enqueue ok '{}'
is "$RC" "0" "but enqueue (which runs nothing) does not look at it"
conf_file workdir-ok >/dev/null <<EOC
[handler ok]
exec = $T/bin/ok.sh
workdir = $T/wd
EOC
run "$JOBQ" -c "$T/workdir-ok.ini" check
is "$RC:$ERR" "0:" "an existing workdir passes check without a word"

# ---- 13: who else can change what the worker runs ----
conf_file clean >/dev/null <<EOC
[handler ok]
exec = $T/bin/ok.sh
EOC
run "$JOBQ" -c "$T/clean.ini" check
is "$RC:$ERR" "0:" "a 0600 configuration and a 0755 program: no warning"

chmod 666 "$T/clean.ini"
run "$JOBQ" -c "$T/clean.ini" check
is "$RC" "0" "a world-writable configuration still passes check"
like "$ERR" "^$(re "$T/clean.ini"): warning: the configuration $(re "$T/clean.ini") is world-writable \(chmod o-w\)" \
	"with a warning naming the file"
is "$NERR" "1" "one warning line"
chmod 600 "$T/clean.ini"

chmod 777 "$T/bin/ok.sh"
run "$JOBQ" -c "$T/clean.ini" check
is "$RC" "0" "a world-writable handler program still passes check"
like "$ERR" "^$(re "$T/clean.ini"):2: warning: handler 'ok': program $(re "$T/bin/ok.sh") is world-writable" \
	"with a warning naming the program and its exec line"
chmod 755 "$T/bin/ok.sh"

mkdir "$T/open"
cp "$T/bin/ok.sh" "$T/open/ok.sh"
chmod 777 "$T/open"
conf_file open-dir >/dev/null <<EOC
[queue default]
[handler ok]
exec = $T/open/ok.sh
EOC
run "$JOBQ" -c "$T/open-dir.ini" check
is "$RC" "0" "a program in a world-writable folder still passes check"
like "$ERR" "^$(re "$T/open-dir.ini"):3: warning: handler 'ok': program $(re "$T/open/ok.sh") is in $(re "$T/open"), which is world-writable" \
	"with a warning naming the folder"
chmod 1777 "$T/open"
run "$JOBQ" -c "$T/open-dir.ini" check
like "$ERR" "is in $(re "$T/open"), which is world-writable" "a sticky world-writable folder right above the program warns too"
chmod 755 "$T/open"
mkdir -p "$T/sticky/sub"
chmod 1777 "$T/sticky"
cp "$T/bin/ok.sh" "$T/sticky/sub/ok.sh"
sed "s|$T/open/ok.sh|$T/sticky/sub/ok.sh|" "$T/open-dir.ini" >"$T/sticky.ini"
run "$JOBQ" -c "$T/sticky.ini" check
is "$RC:$ERR" "0:" "a sticky folder (like /tmp) further up does not warn: nobody can replace our folder in it"
# The script an interpreter runs is checked too.
chmod 666 "$T/open/ok.sh"
conf_file script >/dev/null <<EOC
[handler ok]
exec = /bin/sh $T/open/ok.sh
EOC
run "$JOBQ" -c "$T/script.ini" check
like "$ERR" ":2: warning: handler 'ok': argument $(re "$T/open/ok.sh") is world-writable" \
	"a world-writable script given to an interpreter warns"
chmod 755 "$T/open/ok.sh"

if [ "$(id -u)" = 0 ] && getent group nogroup >/dev/null && getent passwd nobody >/dev/null; then
	chgrp nogroup "$T/bin/ok.sh"
	chmod 775 "$T/bin/ok.sh"
	run "$JOBQ" -c "$T/clean.ini" check
	like "$ERR" ":2: warning: handler 'ok': program $(re "$T/bin/ok.sh") is writable by group nogroup \(chmod g-w\)" \
		"as root: a program group-writable by a group other than root's warns"
	chgrp root "$T/bin/ok.sh"
	run "$JOBQ" -c "$T/clean.ini" check
	is "$ERR" "" "as root: group-writable by root's own group does not"
	chmod 755 "$T/bin/ok.sh"
	chown nobody "$T/bin/ok.sh"
	run "$JOBQ" -c "$T/clean.ini" check
	like "$ERR" ":2: warning: handler 'ok': program $(re "$T/bin/ok.sh") is owned by user nobody" \
		"as root: a program another user owns warns (they could change it)"
	conf_file as-nobody >/dev/null <<EOC
[handler ok]
exec = $T/bin/ok.sh
user = nobody
EOC
	run "$JOBQ" -c "$T/as-nobody.ini" check
	is "$RC:$ERR" "0:" "but not when the handler runs as that user anyway"
	chown root "$T/bin/ok.sh"
else
	for i in 1 2 3 4; do echo "ok $((TAP_N + i)) # SKIP not root, or no nobody/nogroup"; done
	TAP_N=$((TAP_N + 4))
fi
finish
