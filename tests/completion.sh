#!/bin/bash
# Bash completion (contrib/jobq.bash-completion): commands, each
# command's options from its --help, and job types and queue names from
# the configuration named by -c or $JOBQ_CONFIG.
. "$top_srcdir/tests/lib.sh"
setup completion

cat >>"$CONF" <<EOC
[queue critical]
[queue low]
[handler send_email]
exec = /bin/true
[user ada]
password_hash = x
[user bob]
password_hash = x
EOC
# shellcheck source=/dev/null
. "$top_srcdir/contrib/jobq.bash-completion"
# comp WORD... -- the completions of the last word (as bash would ask).
comp() {
	COMP_WORDS=("$JOBQ" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	_jobq
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

is "$(complete -p jobq)" "complete -F _jobq jobq" "the file registers _jobq for jobq"
all=$(comp "")
for c in init check enqueue work status show failed release-stale workers prune; do
	like " $all " " $c " "commands: $c"
done
is "$(comp st)" "status" "a prefix completes a command"
is "$(comp -c "$CONF" wo)" "work workers" "after -c FILE too"
like "$(comp --)" "--config.*--help.*--quiet.*--verbose.*--version" "global long options"
like "$(comp work --)" "--concurrency.*--max-time.*--quiet.*--stop-when-empty" "work's options come from its --help"
like "$(comp init --)" "--print-grants" "init's --print-grants"
is "$(comp -c "$CONF" enqueue "")" "echo send_email" "enqueue TYPE: the config's handler types"
is "$(comp -c "$CONF" enqueue se)" "send_email" "a type prefix"
is "$(comp -c "$CONF" enqueue echo "")" "" "no type after the type"
is "$(comp -c "$CONF" work -q "")" "critical default low" "--queue: the config's queues"
is "$(comp -c "$CONF" pause "")" "critical default low" "pause QUEUE: the config's queues"
is "$(comp -c "$CONF" resume critical "")" "" "resume takes one queue"
is "$(comp -c "$CONF" enqueue --unique-key k "")" "echo send_email" "enqueue --unique-key KEY TYPE: KEY is no type"
is "$(comp -c "$CONF" work --queue critical,l)" "critical,low" "the next queue of a comma-separated list"
is "$(comp -c "$CONF" failed retry --all -t s)" "send_email" "--type: the config's types"
is "$(comp failed "")" "clear forget list retry show" "failed's subcommands"
like "$(comp failed retry --)" "--payload .*--payload-file" "failed retry's --payload and --payload-file"
is "$(comp failed retry --payload-file "$top_srcdir/contrib/jobq.bash-complet")" "$top_srcdir/contrib/jobq.bash-completion" \
	"--payload-file FILE: file names"
is "$(comp sessions "")" "end" "sessions' action"
is "$(comp -c "$CONF" sessions end "")" "ada bob" "sessions end USER: the config's users"
is "$(comp -c "$CONF" sessions end ada "")" "" "and only one user"
is "$(comp user "")" "add list passwd remove role" "user's actions"
is "$(comp user role carol "")" "admin viewer" "user role NAME ROLE: the two roles"
is "$(comp user add carol --role "")" "admin viewer" "user add --role: the two roles"
is "$(comp user add carol "")" "" "add names a new user: nothing to offer"
like "$(comp audit --)" "--action.*--json.*--limit.*--since.*--until.*--user" "audit's options"
is "$(comp audit --action session)" "session-end" "audit --action: the action names its --help lists"
like " $(comp audit --action "") " " enqueue .* login .* retry-all " "every action name"
is "$(comp -c "$CONF" audit --user "")" "ada bob" "audit --user: the config's users"
is "$(comp -c "$CONF" audit --user ada --action login "")" "" "no argument after the options"
JOBQ_CONFIG=$CONF
is "$(comp status -q c)" "critical" "\$JOBQ_CONFIG names the config when -c does not"
unset JOBQ_CONFIG
is "$(comp -c "$T/nonexistent.ini" enqueue "")" "" "no config, no types (and no error)"
finish
