#!/bin/bash
# What the docs show runs as written, and what they say is what the
# worker does:
#   - every ```ini block of README.md, the EXAMPLES of jobq.ini(5) and
#     the configuration example of jobq-handler(7) load with `jobq check`
#     (installed paths are replaced by a handler of the tree, and the
#     sections a block names but does not hold are added);
#   - the environment a handler gets is the one jobq-handler(7) and
#     handlers/README.md list;
#   - standard error matching permanent_stderr dead-letters a failed run
#     but not a run that exited 0, as jobq-handler(7) and jobq.ini(5) say;
#   - a named [worker] timezone works although the server has no such
#     zone, as jobq(1) says (jobq converts from TZDIR itself), and no page
#     says otherwise;
#   - README's sample of `jobq schedule --list` has the program's columns
#     and time format;
#   - a handler's PATH is the one jobq-handler(7) gives, whatever the
#     worker's, and README and contrib/crontab.example say so;
#   - `jobq show` prints a run's output, where README and jobq-handler(7)
#     send the reader for it;
#   - README's persistent Python example and jobq-handler(7)'s sh example
#     of the control channel run as written;
#   - README's crontab lines are contrib/crontab.example's.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the docs say"
setup docs_check
p5=$top_srcdir/etc/jobq.ini.5
p7=$top_srcdir/handlers/jobq-handler.7

# A hash for the placeholder "password_hash = $argon2id$...", which
# the reader replaces with what `jobq passwd` prints.
HASH=$("$JOBQ" passwd --stdin <<<'a password for docs' | sed 's/^password_hash = //')

# check_block NAME FILE [whole]: load the configuration snippet FILE
# under the test's [database]; installed programs become echo.sh.  A
# snippet gets the sections it names but does not hold; a whole file
# (whole) gets none.
check_block() {
	local name=$1 f=$2 whole=${3:-} s out rc
	sed -i -E -e "s#^(exec|on_dead) = /usr/local/libexec/.*#\1 = $HANDLERS/echo.sh#" \
		-e "s#^exec = [a-z_]*\.py\$#exec = $HANDLERS/echo.sh#" \
		-e "s#^password_hash = \\\$argon2id\\\$.*\.\.\.\$#password_hash = $HASH#" "$f"
	{
		[ -n "$whole" ] || for s in $(sed -n 's/^\(queue\|type\|on_success\) = \([a-z_]*\)$/\1:\2/p' "$f" | sort -u); do
			case $s in
			queue:*) grep -q "^\[queue ${s#*:}\]" "$f" || echo "[queue ${s#*:}]" ;;
			*) grep -q "^\[handler ${s#*:}\]" "$f" || printf '[handler %s]\nexec = %s\n' "${s#*:}" "$HANDLERS/echo.sh" ;;
			esac
		done
		[ -n "$whole" ] || grep -q "^\[queue default\]" "$f" || echo "[queue default]"
		cat "$f"
	} | write_conf
	out=$(jq_ check 2>&1)
	rc=$?
	ok $rc "$name loads with jobq check"
	[ $rc = 0 ] || diag "$(head -3 <<<"$out")"
}

# ---- README.md ----
n=0
while IFS= read -r f; do
	n=$((n + 1))
	if grep -q '^\[database\]' "$f"; then
		continue # names hosts of its own
	fi
	check_block "README.md: ini block $n (line $(head -1 "$f.line"))" "$f"
done < <(awk -v d="$T" '/^```ini/ { on = 1; n++; f = d "/readme." n ".ini"; print NR > (f ".line"); print f; next }
	/^```/ { on = 0 } on { print > f }' "$top_srcdir/README.md")
ok "$([ "$n" -ge 5 ]; echo $?)" "README.md's ini blocks were read ($n)"

# ---- jobq.ini(5) EXAMPLES ----
awk '/^\.Sh EXAMPLES/ { on = 1 } on && /^\.Bd/ { p = 1; next } on && /^\.Ed/ { p = 0 } p' "$p5" |
	sed -e '/^\[database\]/,/^$/d' >"$T/ini5.ini"
like "$(cat "$T/ini5.ini")" '\[handler send_email\]' "the EXAMPLES of jobq.ini(5) were read"
check_block "jobq.ini(5) EXAMPLES" "$T/ini5.ini" whole

# ---- jobq-handler(7): the [handler] example ----
awk '/^\.Bd/ { b = "" ; on = 1; next } /^\.Ed/ { if (b ~ /^\[handler/) printf "%s", b; on = 0 } on { b = b $0 "\n" }' \
	"$p7" >"$T/h7.ini"
like "$(cat "$T/h7.ini")" 'mode = persistent' "the configuration example of jobq-handler(7) was read"
check_block "jobq-handler(7) configuration example" "$T/h7.ini"

# ---- the handler's environment, as jobq-handler(7) lists it ----
cat >"$T/env.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort >"$ENV_OUT"
echo '{"checkpoint": 1}' >&3
[ "$JOBQ_ATTEMPT" = 2 ] || exit 75
EOF
chmod +x "$T/env.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler env]
exec = $T/env.sh
backoff = 100ms
env.ENV_OUT = $T/env.out

[handler stderr]
exec = /bin/sh -c 'cat >/dev/null; echo "FATAL: \$0" >&2; exit \$0' 0
permanent_stderr = ^FATAL
max_attempts = 3

[handler stderr3]
exec = /bin/sh -c 'cat >/dev/null; echo "FATAL: \$0" >&2; exit \$0' 3
permanent_stderr = ^FATAL
max_attempts = 3
EOC
# the documented names: the .It Ev entries of the Environment section
documented=$(awk '/^\.Ss Environment/ { on = 1; next } /^\.S[sh] / { on = 0 }
	on && /^\.It Ev / { sub(/^\.It /, ""); gsub(/Ev |,/, ""); print }' "$p7" | tr ' ' '\n' | grep . | sort)
like "$documented" 'JOBQ_JOB_ID' "jobq-handler(7)'s environment list was read"
id=$(jq_ enqueue env '{}')
jq_ work --max 2 --max-time 20 2>"$T/work.log"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $id")" "2" "the env job ran twice (a retry, with a checkpoint)"
got=$(grep -vx 'ENV_OUT\|PWD\|SHLVL\|_' "$T/env.out")
is "$got" "$documented" "a handler's environment is the one jobq-handler(7) lists (env.NAME keys and the shell's own aside)"
readme=$(sed -n '/^| variable | value |$/,/^$/p' "$top_srcdir/handlers/README.md" |
	grep -oE '^\| `[^|]*' | grep -oE '`[A-Z_]+`' | tr -d '`' | sort)
is "$readme" "$got" "handlers/README.md's table lists that environment too"

# ---- a handler's PATH is jobq-handler(7)'s, not the worker's ----
# README's cron section and contrib/crontab.example once said jobq hands
# the crontab's PATH on to handlers; it does not, and they say how
# (env.PATH) instead.
cat >"$T/path.sh" <<'EOF2'
#!/bin/sh
cat >/dev/null
printf '%s\n' "$PATH" >"$PATH_OUT"
EOF2
chmod +x "$T/path.sh"
printf '\n[handler path]\nexec = %s\nenv.PATH_OUT = %s\n' "$T/path.sh" "$T/path.out" >>"$CONF"
doc_path=$(awk '/^\.It Ev PATH$/ { getline; sub(/^\.Pa /, ""); print; exit }' "$p7")
is "$doc_path" "/usr/local/bin:/usr/bin:/bin" "jobq-handler(7) gives the handler's PATH"
jq_ enqueue path '{}' >/dev/null
PATH=$T/cron-bin:$PATH jq_ work --stop-when-empty --max-time 20 2>>"$T/work.log"
is "$(cat "$T/path.out" 2>&1)" "$doc_path" "a worker started with another PATH gives its handler jobq-handler(7)'s"
for f in "$top_srcdir/README.md" "$top_srcdir/contrib/crontab.example"; do
	text=$(tr -s ' \n#' ' ' <"$f")
	is "$(grep -ciE 'passes .?PATH.? on to (them|handlers)|hands PATH to handlers' <<<"$text")" "0" \
		"$(basename "$f") does not say jobq hands its PATH to handlers"
	like "$text" 'env\.PATH' "$(basename "$f") says how a handler gets another PATH (env.PATH)"
done

# ---- jobq show prints the handler's output ----
# README (shared hosting: "jobq show ID the handler's output") and
# jobq-handler(7) ("Standard output is kept as the run's output (jobq
# show)") send the reader there for it.
printf '\n[handler out]\nexec = /bin/sh -c %s\n' "'cat >/dev/null; echo \"handler output: \$JOBQ_JOB_ID\"; echo line 2'" >>"$CONF"
out_id=$(jq_ enqueue out '{}')
jq_ work --stop-when-empty --max-time 20 2>>"$T/work.log"
like "$(jq_ show "$out_id")" $'\n +output +handler output: '"$out_id"$'\n +line 2\n' "jobq show prints a run's output (stdout)"
is "$(jq_ show --json "$out_id" | python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["output"], end="")')" \
	"handler output: $out_id"$'\nline 2' "jobq show --json has it as runs[].output"
like "$(tr -s ' \n' ' ' <"$top_srcdir/README.md")" '`jobq show ID` the handler.s output' \
	"README still sends the reader to jobq show for the output"

# ---- README's persistent Python example, follow-up and all ----
# Its follow-up goes to the shipped log_event handler, which must take it.
if command -v php >/dev/null; then
	{
		echo 'def send(to): print("sent to", to)'
		awk '/^```python/ { on = 1; next } /^```/ { on = 0 } on' "$top_srcdir/README.md"
	} >"$T/mail_order.py"
	printf '\n[handler mail_order]\nexec = /usr/bin/python3 %s\nmode = persistent\nenv.PYTHONPATH = %s\n' \
		"$T/mail_order.py" "$HANDLERS" >>"$CONF"
	printf '\n[handler log_event]\nexec = %s/log_event.php\nenv.EVENT_LOG = %s\n' "$HANDLERS" "$T/events.log" >>"$CONF"
	mo=$(jq_ enqueue mail_order '{"to": "ada@example.com"}')
	jq_ work --stop-when-empty --max-time 20 2>>"$T/work.log"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(type, '=', outcome) ORDER BY id) FROM job_runs WHERE job_id >= $mo")" \
		"mail_order=done,log_event=done" "README's Python example runs, and log_event takes its follow-up"
else
	diag "SKIP README's Python example: php is not installed"
fi

# ---- jobq-handler(7): the sh example of the control channel ----
# With its upstream answering 429, it asks for 10m and its stderr is the
# run's error (no file in the worker's folder, which may be read-only or
# shared by the jobs running at once).
awk '/^Talking back on the control channel, in$/ { f = 1 } f && /^\.Bd -literal/ { on = 1; next }
	on && /^\.Ed/ { exit } on' "$p7" | sed 's/\\e/\\/g' >"$T/talk.sh"
sed -i '2a compress() { echo "upstream answered 429" >&2; return 1; }' "$T/talk.sh"
chmod +x "$T/talk.sh"
like "$(cat "$T/talk.sh")" 'retry_after' "jobq-handler(7)'s sh control-channel example was read"
printf '\n[handler talk]\nexec = %s\n' "$T/talk.sh" >>"$CONF"
talk=$(jq_ enqueue talk '{"file": "a.mp4"}')
jq_ work --stop-when-empty --max-time 20 2>>"$T/work.log"
is "$(sql "SELECT CONCAT(outcome, ' ', TRIM(TRAILING '\n' FROM error)) FROM job_runs WHERE job_id = $talk")" "retry upstream answered 429" \
	"the example's failed run keeps its error text"
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), available_at) BETWEEN 540 AND 601 FROM jobs WHERE id = $talk")" "1" \
	"... and comes back in 10m, as it asked"

# ---- README's crontab lines are contrib/crontab.example's ----
# The example has a ~/.local install's paths; README shows them for the
# default prefix.
readme_cron=$(awk '/^```crontab/ { n++; on = (n == 1); next } /^```/ { on = 0 } on' "$top_srcdir/README.md")
example_cron=$(grep -vE '^(#|$)' "$top_srcdir/contrib/crontab.example" | sed 's|/home/USER/\.local|/usr/local|g')
is "$readme_cron" "$example_cron" "README's cron lines are contrib/crontab.example's, for the default prefix"

# ---- stderr patterns against exit 0 ----
done_id=$(jq_ enqueue stderr '{}')
dead_id=$(jq_ enqueue stderr3 '{}')
jq_ work --stop-when-empty --max-time 20 2>>"$T/work.log"
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $done_id")" "done" \
	"exit 0 is done although stderr matches permanent_stderr"
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $dead_id")" "dead" \
	"exit 3 with stderr matching permanent_stderr is dead at once"
# and the page says so: its permanent_stderr sentence excepts exit 0
text=$(mandoc -T utf8 "$p7" 2>/dev/null | col -b | tr -s ' \t\n' ' ')
like "$text" 'Exit status 0 is done, whatever the handler wrote on standard error' \
	"jobq-handler(7) says exit 0 is done whatever stderr holds"
is "$(grep -c 'retry_stderr`* | \*\*retry\*\*, whatever the exit status |' "$top_srcdir/handlers/README.md")" "0" \
	"handlers/README.md does not say retry_stderr applies to exit 0"
like "$(cat "$top_srcdir/handlers/README.md")" 'Exit 0 is done whatever the handler wrote on stderr' \
	"handlers/README.md says exit 0 is done whatever stderr holds"

# ---- a named timezone needs no zone tables on the server ----
mkdir -p "$T/zoneinfo/Docs"
cp /usr/share/zoneinfo/America/Lima "$T/zoneinfo/Docs/Lima" # -05:00, no DST
id=$(jq_ enqueue --delay 1h env '{}')
sed -i 's/^poll_interval = 20ms$/&\ntimezone = Docs\/Lima/' "$CONF"
is "$(sql "SELECT CONVERT_TZ(UTC_TIMESTAMP(), '+00:00', 'Docs/Lima') IS NULL")" "1" \
	"the server knows no zone Docs/Lima"
out=$(TZDIR=$T/zoneinfo jq_ show "$id" 2>&1)
like "$out" 'created +[0-9-]+ [0-9:]+ -05:00' "show prints times in a zone only TZDIR has (-05:00)"
like "$(TZDIR=$T/zoneinfo jq_ failed list 2>&1; echo "rc=$?")" 'rc=0' "failed list works in that zone"
pages=$(cat "$top_srcdir/src/jobq.1" "$top_srcdir/etc/jobq.ini.5" | tr -s ' \n' ' ')
is "$(grep -c 'need the server.s time zone tables\|names need the server' <<<"$pages")" "0" \
	"no page says named zones need the server's time zone tables"

# ---- README: the sample of jobq schedule --list ----
sed -i '/^timezone = Docs/d' "$CONF"
cat >>"$CONF" <<'EOC'

[schedule nightly]
cron = 30 2 * * *
type = env
timezone = Europe/Berlin
EOC
real=$(jq_ schedule --list)
sample=$(awk '/^`jobq schedule --list` answers/ { on = 1 } on && /^```$/ { if (++n == 2) exit; next } on && n == 1' \
	"$top_srcdir/README.md")
is "$(head -1 <<<"$sample")" "$(head -1 <<<"$real" | sed 's/ *$//')" "README's schedule --list sample has the program's header"
# NEXT FIRE is column 42 for 26 characters, in the program and the sample
tfmt='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{2}:[0-9]{2}$'
like "$(sed -n 2p <<<"$real" | cut -c42-67)" "$tfmt" "the program prints a fire as 2026-12-01 02:30:00 +01:00"
bad=$(grep -E '^[a-z]' <<<"$sample" | cut -c42-67 | grep -vE "$tfmt")
is "$bad" "" "README's sample prints its fires that way too"

# ---- README: the exit statuses of jobq(1) ----
page=$(sed -n '/^\.Sh EXIT STATUS/,/^\.Sh [^E]/s/^\.It \([0-9]*\)$/\1/p' "$top_srcdir/src/jobq.1" | sort -n | tr '\n' ' ')
readme=$(sed -n '/^Every command has `--help`/,/^$/p' "$top_srcdir/README.md" | tr '\n' ' ' |
	sed 's/.*follow sysexits(3)://; s/\. Errors are.*//' | grep -oE '(^| )[0-9]+ ' | tr -d ' ' | sort -n | tr '\n' ' ')
is "$readme" "$page" "README's exit statuses are jobq(1)'s"
finish
