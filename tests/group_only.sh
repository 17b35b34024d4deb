#!/bin/bash
# Issue 8 defect 6: `group =` without `user =` on a root worker runs the
# handler with that group (real, effective and the only supplementary
# group) while it keeps the worker's user; files it creates belong to
# the group.  Before the fix the key was silently ignored (gid 0).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup group_only

if [ "$(id -u)" != 0 ] || ! getent group nogroup >/dev/null; then
	skip_all "needs root and a group nogroup"
fi
gid=$(getent group nogroup | cut -d: -f3)
mkdir -p "$T/out"
cat >"$T/ids.sh" <<'EOS'
#!/bin/sh
id -u; id -g; id -rg; id -G
touch "$1/made" && stat -c %g "$1/made"
echo "$HOME"
EOS
chmod 755 "$T/ids.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms
[queue default]
[handler grouponly]
workdir = $T
exec = $T/ids.sh out
group = nogroup
EOC

jq_ check >"$T/check.out" 2>&1
ok $? "check accepts group without user"
id=$(jq_ enqueue grouponly '{}')
timeout 60 "$JOBQ" -c "$CONF" work --once 2>"$T/w.log"
ok $? "the worker runs the job"
out=$(sql "SELECT output FROM job_runs WHERE job_id = $id")
IFS=$'\n' read -r -d '' uid egid rgid groups fgid home < <(printf '%b' "$out")
is "$uid" "0" "the handler keeps the worker's user (root)"
is "$egid" "$gid" "its effective group is nogroup"
is "$rgid" "$gid" "its real group is nogroup"
is "$groups" "$gid" "nogroup is its only group (root's supplementary groups are dropped)"
is "$fgid" "$gid" "a file it creates belongs to nogroup"
is "$home" "$(getent passwd root | cut -d: -f6)" "HOME stays the worker user's"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $id")" "0" "the job is done"
finish
