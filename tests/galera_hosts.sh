#!/bin/bash
# [database] host lists, without a cluster: a malformed list is refused
# at load time (file:line, which item, why, exit 78), and a list whose
# first hosts do not answer connects to the next (here the private
# server's socket cannot be in a list, so every host is unreachable and
# the error names each one).
. "$top_srcdir/tests/lib.sh"
setup galera_hosts

bad() { # bad VALUE WHY-REGEX
	printf '[database]\nhost = %s\nuser = root\ndatabase = x\n' "$1" >"$T/bad.ini"
	"$JOBQ" -c "$T/bad.ini" check >"$T/out" 2>"$T/err"
	is "$?" 78 "host = $1: exit 78"
	like "$(cat "$T/err")" "$T/bad.ini:2: host: $2" "... saying $2"
	is "$(cat "$T/out")" "" "... and nothing on stdout"
}
bad "a,,b" "item 2 of 'a,,b': it names no host"
bad "a, b:0" "item 2 of 'a, b:0': its port is not a number from 1 to 65535"
bad "a:70000" "item 1 of 'a:70000': its port is not a number from 1 to 65535"
bad "a:33x" "item 1 of 'a:33x': its port"
bad "a," "item 2 of 'a,': it names no host"
bad "[::1:3306" "item 1 of '\[::1:3306': it names no host"
printf "[database]\nhost = ::1\nport = 9\nuser = root\ndatabase = x\nconnect_timeout = 2s\n" >"$T/v6.ini"
"$JOBQ" -c "$T/v6.ini" check >/dev/null 2>"$T/err"
is "$?" 69 "host = ::1 (a bare IPv6 address) is accepted: the check gets as far as connecting"

# Two hosts that refuse connections (ports nothing listens on): exit 69,
# and the error names both.
printf '[database]\nhost = 127.0.0.1:9, [::1]:9\nuser = root\ndatabase = x\nconnect_timeout = 2s\n' >"$T/down.ini"
"$JOBQ" -c "$T/down.ini" check >"$T/out" 2>"$T/err"
is "$?" 69 "a list of hosts that all refuse: exit 69"
like "$(cat "$T/err")" "127\.0\.0\.1:9: .*; .*::1:9" "... naming every host tried, in order"
finish
