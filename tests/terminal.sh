#!/bin/bash
# Stored handler output shown on a terminal (ISSUE-8 defect 13): failed
# show, failed list and show make control characters visible (\x1b,
# \x07, \u009b) instead of letting a handler's stderr set the terminal's
# title or clear it; piped output keeps the stored bytes, and --json stays
# exact (JSON escapes them itself).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup terminal

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler hostile]
exec = /bin/sh -c 'printf "\\033]0;pwned\\007\\033[2Jboom\\r\\nline two\\n" >&2; exit 65'
EOC

on_tty() {
	script -qec "$JOBQ -c $CONF $*" /dev/null </dev/null >"$T/tty" 2>&1
	RC=$?
	TTY=$(tr -d '\r' <"$T/tty")
}
raw_controls() { # does $1 hold a raw ESC, BEL or C1 CSI?
	if [[ $1 == *$'\e'* || $1 == *$'\a'* || $1 == *$'\xc2\x9b'* ]]; then echo yes; else echo no; fi
}

id=$(jq_ enqueue hostile '{"x": 1}')
jq_ work --stop-when-empty 2>"$T/work.log"
is "$(count failed_jobs "id = $id")" 1 "the hostile handler's job is dead-lettered"
is "$(sql "SELECT HEX(exception) LIKE '1B5D303B70776E6564071B5B324A626F6F6D0D%' FROM failed_jobs")" 1 "its stderr is stored as written, escapes and all"

# ---- on a terminal ----
on_tty failed show "$id"
is "$RC" 0 "failed show on a terminal: exit 0"
like "$TTY" '\\x1b\]0;pwned\\x07\\x1b\[2Jboom\\x0d' "failed show: the escapes are shown as \\xHH"
like "$TTY" "line two" "the following line is still there"
is "$(raw_controls "$TTY")" no "failed show: no raw control character reaches the terminal"
on_tty failed list
like "$TTY" '\\x1b\]0;pwned\\x07\\x1b\[2Jboom' "failed list: the first line, made visible"
is "$(raw_controls "$TTY")" no "failed list: no raw control character"
on_tty show "$id"
like "$TTY" '\\x1b\]0;pwned\\x07' "show: made visible"
is "$(raw_controls "$TTY")" no "show: no raw control character"
on_tty failed show --json "$id"
like "$TTY" '"error":[[:space:]]*"\\u001b\]0;pwned\\u0007\\u001b\[2Jboom\\r\\nline two\\n"' "--json on a terminal: exact, JSON-escaped"
is "$(raw_controls "$TTY")" no "--json: no raw control character"

# C1 controls (U+009B is a CSI for some terminals), a raw payload, a type.
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES
     (777, 'default', CONCAT('t', CHAR(27), 'x'), CONCAT('not json ', CHAR(27 USING utf8mb4), '[31m'),
      CONCAT('c1 ', _utf8mb4 0xC29B, '2J', CHAR(7 USING utf8mb4)))"
on_tty failed show 777
like "$TTY" 'c1 \\u009b2J\\x07' "a C1 control is shown as \\u009b"
like "$TTY" 'not json \\x1b\[31m' "a payload that is not JSON: made visible"
like "$TTY" 'type +t\\x1bx' "the type too"
is "$(raw_controls "$TTY")" no "no raw control character"

# ---- not on a terminal: the stored bytes ----
run failed show "$id"
is "$(raw_controls "$OUT")" yes "piped: the stored text as it is"
like "$OUT" "boom" "with its text"
finish
