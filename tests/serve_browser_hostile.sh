#!/bin/bash
# Hostile names and text in a real browser (tests/browser/hostile.mjs):
# a group name, a payload, a unique key, a schedule's description and a
# handler's stderr holding markup, a javascript: link and a right-to-left
# override.  No page runs any of it or draws it as markup, and the
# override stays inside the name that holds it.  Skipped, with the
# reason, when Chromium, Node or the npm packages are missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_hostile

# A handler that writes markup on stderr and dies (exit 65).
cat >"$T/hostile.sh" <<'EOH'
#!/bin/sh
cat >/dev/null
printf '<script>window.__xss=1</script>"><img src=x onerror="window.__xss=2"> javascript:window.__xss=3 \342\200\256tuo-dne\n' >&2
exit 65
EOH
chmod +x "$T/hostile.sh"
write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler hostile]
exec = $T/hostile.sh
max_attempts = 1

[schedule nightly]
cron = 15 2 * * *
type = echo
description = <img src=x onerror="window.__xss=4"> javascript:window.__xss=5

[user admin]
password_hash = $PWHASH
role = admin
EOC
jq_ init >/dev/null || { echo "Bail out! jobq init failed"; exit 99; }
RLO=$'\u202e'
GN="<img src=x onerror=\"window.__xss=6\">${RLO}sdrawkcab"
echo '{"type": "echo", "payload": {"a": "<script>window.__xss=7</script>"}, "delay": "1d"}' |
	jq_ enqueue --batch --group "$GN" >/dev/null || { echo "Bail out! jobq enqueue --group failed"; exit 99; }
jq_ enqueue -u '<img src=x onerror="window.__xss=8">' -d 1d echo \
	'{"link": "javascript:window.__xss=9", "rtl": "'"$RLO"'abc"}' >/dev/null &&
	jq_ enqueue hostile '{"x": "<img src=x onerror=\"window.__xss=10\">"}' >/dev/null &&
	jq_ work --stop-when-empty --quiet >/dev/null 2>&1 || { echo "Bail out! jobq enqueue or work failed"; exit 99; }
GID=$(sql "SELECT id FROM jobq_groups")
serve_start
browser_run hostile USER_NAME=admin GROUP_ID="$GID" \
	GJOB="$(sql "SELECT id FROM jobs WHERE group_id = $GID")" UJOB="$(sql "SELECT id FROM jobs WHERE unique_key IS NOT NULL")" \
	DEAD="$(sql "SELECT id FROM failed_jobs")"
