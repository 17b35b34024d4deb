#!/bin/bash
# Bash completion (contrib/jobq.bash-completion): commands, each
# command's options from its --help, and job types and queue names from
# the configuration named by -c or $JOBQ_CONFIG; schedules and users of
# the configuration and of the database.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the package installs"
setup completion

HASH=$("$JOBQ" passwd --stdin <<<'a completion password' | sed 's/^password_hash = //')
cat >>"$CONF" <<EOC
[queue critical]
[queue low]
[handler send_email]
exec = /bin/true
[user ada]
password_hash = $HASH
[user bob]
password_hash = $HASH
[schedule nightly]
cron = 0 3 * * *
type = echo
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

# What the program offers, the completion offers: cancel's states, the
# schedule actions, the schedules and users kept in the database too.
states=$("$JOBQ" cancel --help | sed -n 's/.*in that state only: //p' | tr -s ', ' '\n\n' | grep -vx or | sort | tr '\n' ' ')
like "$states" "^delayed ready reserved stale waiting $" "cancel --help lists its states"
is "$(comp cancel --state "") " "$states" "cancel --state: the states cancel --help lists"
is "$(comp schedule "")" "add disable edit enable remove" "schedule's actions"
jq_ schedule add weekly --cron '0 7 * * 1' --type echo >/dev/null
is "$(comp -c "$CONF" schedule disable "")" "nightly weekly" "schedule disable NAME: the config's and the database's schedules"
is "$(comp -c "$CONF" schedule --run w)" "weekly" "schedule --run NAME too"
is "$(comp -c "$CONF" schedule add new --cron '0 7 * * 1' --type e)" "echo" "schedule add --type: the config's types"
is "$(comp -c "$CONF" schedule edit weekly "")" "" "schedule edit takes one name"
jq_ user add carol --stdin <<<'carol-password' >/dev/null
is "$(comp -c "$CONF" audit --user "")" "ada bob carol" "audit --user: the users of the config and of the database"
is "$(comp -c "$CONF" sessions end "")" "ada bob carol" "sessions end USER too"
# An option that takes a value is not taken for the command's argument:
# every option the commands with arguments to complete list with a value.
skip=$(sed -n '/case \${COMP_WORDS\[i - 1\]} in/,/) ;;/p' "$top_srcdir/contrib/jobq.bash-completion" | tr -s ' |\t\\)' '\n')
missing=""
for c in enqueue failed schedule sessions user pause resume group; do
	for o in $("$JOBQ" "$c" --help | grep -oE -- '--[a-z][a-z-]*[ =][A-Z]' | sed 's/.$//; s/=$//; s/ $//' | sort -u); do
		grep -qx -- "$o" <<<"$skip" || missing="$missing $c:$o"
	done
done
is "$missing" "" "every option with a value of those commands is skipped as an argument"
is "$(comp -c "$CONF" enqueue -k key --delay 5m "")" "echo send_email" "enqueue -k KEY --delay D TYPE: KEY and D are no type"

JOBQ_CONFIG=$CONF
is "$(comp status -q c)" "critical" "\$JOBQ_CONFIG names the config when -c does not"
unset JOBQ_CONFIG
is "$(comp -c "$T/nonexistent.ini" enqueue "")" "" "no config, no types (and no error)"
finish
