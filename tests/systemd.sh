#!/bin/bash
# The systemd units: they pass `systemd-analyze verify` without a word
# (a misspelt key is only a warning there, so any output fails); the
# worker unit's ExecStart line runs a worker that a SIGTERM stops cleanly;
# the sysusers.d and tmpfiles.d entries create the jobq user and the
# directories the sample config names; `make install` puts them where
# configure said.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the package installs"
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed (apt-get install systemd)"
setup systemd

# The units with this build's paths (the installed ones name /usr/local).
mkdir -p "$T/units" "$T/var"
for f in jobq-worker@.service jobq-schedule.service jobq-serve.service jobq.sysusers jobq.tmpfiles; do
	sed -e "s|@bindir@|$(dirname "$JOBQ")|g" -e "s|@sysconfdir@|$T|g" \
		-e "s|@localstatedir@|$T/var|g" "$top_srcdir/contrib/systemd/$f.in" >"$T/units/$f"
done
cp "$top_srcdir/contrib/systemd/jobq-schedule.timer" "$T/units/"
ok "$(grep -c '@[a-z]*@' "$T"/units/* | grep -vc ':0$')" "no @placeholder@ is left in the units"

# Man pages are looked up too when the pages are in the tree.
man=--man=no
if [ -f "$top_srcdir/src/jobq.1" ] && command -v man >/dev/null; then
	mkdir -p "$T/man/man1" "$T/man/man5" "$T/man/man7"
	cp "$top_srcdir/src/jobq.1" "$T/man/man1/"
	cp "$top_srcdir/etc/jobq.ini.5" "$T/man/man5/"
	cp "$top_srcdir/handlers/jobq-handler.7" "$T/man/man7/"
	export MANPATH=$T/man
	man=--man=yes
fi
out=$(cd "$T/units" && systemd-analyze verify "$man" jobq-worker@default.service \
	"jobq-worker@$(systemd-escape critical,default).service" jobq-schedule.service jobq-schedule.timer \
	jobq-serve.service 2>&1)
ok $? "systemd-analyze verify $man passes"
is "$out" "" "and warns about nothing"

# A broken unit is caught (the check can fail).
sed 's/^KillMode=mixed/KillMode=gently/' "$T/units/jobq-worker@.service" >"$T/units/jobq-broken@.service"
out=$(cd "$T/units" && systemd-analyze verify --man=no jobq-broken@default.service 2>&1)
like "$out" "KillMode|kill mode" "a bad value in a unit is reported"
rm "$T/units/jobq-broken@.service"

# What the units promise.
unit=$T/units/jobq-worker@.service
for want in '^Restart=always$' '^KillSignal=SIGTERM$' '^KillMode=mixed$' '^NoNewPrivileges=yes$' \
	'^ProtectSystem=strict$' '^PrivateTmp=yes$' "^ReadWritePaths=.*$T/var/lib/jobq" \
	"^ReadWritePaths=.*$T/var/spool/jobq-mail"; do
	grep -qE "$want" "$unit"
	ok $? "the worker unit has $want"
done
# TimeoutStopSec must outlast the longest handler timeout of the sample.
stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)min$/\1/p' "$unit")
longest=$(sed -n 's/^;*timeout = \([0-9]*\)m$/\1/p' "$top_srcdir/etc/jobq.ini.in" | sort -n | tail -1)
ok "$([ -n "$stop" ] && [ -n "$longest" ] && [ "$stop" -gt "$longest" ]; echo $?)" \
	"TimeoutStopSec (${stop}min) outlasts the sample's longest handler timeout (${longest}m)"
grep -q '^ExecStart=.* schedule --quiet$' "$T/units/jobq-schedule.service"
ok $? "the schedule service runs 'jobq schedule --quiet'"

# The worker unit's command line, for instance "default", as systemd
# would run it (%I -> default), against this test's config.
# Its Environment= too, with /run moved to a folder of the test's, short
# (jobq ignores an XDG_RUNTIME_DIR of 64 characters or more, as deep
# build trees such as make distcheck's give).
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
cmd=${cmd//%I/default}
read -ra argv <<<"$cmd"
run=$(mktemp -d /tmp/jobq-run.XXXXXX)
trap 'rm -rf "$run"; cleanup' EXIT
mapfile -t uenv < <(sed -n 's/^Environment=//p' "$unit" | sed "s|=/run/|=$run/|")
mkdir -p "$run/jobq"
env "${uenv[@]}" "${argv[@]}" 2>"$T/unit-worker.log" &
pid=$!
BG_PIDS+=("$pid")
jq_ enqueue echo '{"via": "unit"}' >/dev/null
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'" 1
ok $? "the unit's ExecStart runs a worker that does the job"
# PrivateTmp= hides /tmp/jobq-UID from everything outside the unit: the
# wakeup sockets must live where the scheduler's unit and others see them.
ok "$(find "$run/jobq" -type s | grep -q .; echo $?)" "its wakeup socket is under /run/jobq, not the private /tmp" ||
	ls -lR "$run" | sed 's/^/# /'
sched=$T/units/jobq-schedule.service
is "$(grep '^Environment=' "$sched")" "$(grep '^Environment=' "$unit")" \
	"the scheduler's unit looks for wakeup sockets in the same place"
for u in "$unit" "$sched"; do
	grep -q '^ReadWritePaths=.*/run/jobq' "$u"
	ok $? "$(basename "$u") may write to /run/jobq (ProtectSystem=strict)"
done
kill -TERM "$pid"
wait_exit 30 "$pid"
is "$?" "0" "SIGTERM (KillSignal) stops it with status 0"

# The dashboard's unit: its ExecStart serves the dashboard of this
# config, with the same wake-up sockets as the workers (its enqueue wakes
# them), and SIGTERM stops it with status 0.
unit=$T/units/jobq-serve.service
for want in '^ExecStart=.* serve$' '^Restart=always$' '^RestartPreventExitStatus=64 78$' \
	'^NoNewPrivileges=yes$' '^ProtectSystem=strict$' '^ReadWritePaths=.*/run/jobq'; do
	grep -qE "$want" "$unit"
	ok $? "the dashboard unit has $want"
done
is "$(grep '^Environment=' "$unit")" "$(grep '^Environment=' "$T/units/jobq-worker@.service")" \
	"the dashboard's unit looks for wakeup sockets where the workers keep them"
printf '\n[serve]\nlisten = 127.0.0.1:0\n\n[user ada]\npassword_hash = %s\n' \
	"$(printf 'correct-horse\n' | "$JOBQ" passwd --stdin | sed 's/^password_hash = //')" >>"$CONF"
read -ra argv <<<"$(sed -n 's/^ExecStart=//p' "$unit")"
mapfile -t uenv < <(sed -n 's/^Environment=//p' "$unit" | sed "s|=/run/|=$run/|")
env "${uenv[@]}" "${argv[@]}" 2>"$T/unit-serve.log" &
pid=$!
BG_PIDS+=("$pid")
for _ in $(seq 100); do
	url=$(grep -o 'listening on http://[^ ]*' "$T/unit-serve.log" | head -1)
	[ -n "$url" ] && break
	sleep 0.1
done
url=${url#listening on }
is "$(curl -s -o /dev/null -w '%{http_code}' "$url/api/login" -H 'Content-Type: application/json' \
	--data-binary '{"user": "ada", "password": "correct-horse"}')" 200 "the unit's ExecStart serves the dashboard of the config"
[ -n "$url" ] || sed 's/^/# /' "$T/unit-serve.log"
kill -TERM "$pid"
wait_exit 30 "$pid"
is "$?" "0" "SIGTERM (KillSignal) stops the dashboard with status 0"

# sysusers.d + tmpfiles.d into a scratch root: the user, then its dirs.
root=$T/root
mkdir -p "$root/etc"
out=$(systemd-sysusers --root="$root" "$T/units/jobq.sysusers" 2>&1)
ok $? "systemd-sysusers accepts the entry" || echo "# $out"
grep -q '^jobq:' "$root/etc/passwd"
ok $? "and creates the jobq user"
out=$(systemd-tmpfiles --root="$root" --create "$T/units/jobq.tmpfiles" 2>&1)
ok $? "systemd-tmpfiles accepts the entries" || echo "# $out"
uid=$(awk -F: '$1 == "jobq" { print $3 }' "$root/etc/passwd")
for d in lib/jobq lib/jobq/reports spool/jobq-mail backups/jobq; do
	is "$(stat -c '%u %a' "$root$T/var/$d" 2>&1)" "$uid 750" "$d is created, owned by jobq, mode 750"
done
is "$(stat -c '%u %a' "$root/run/jobq" 2>&1)" "$uid 2770" "/run/jobq is created, owned by jobq, mode 2770"
# Every directory the sample config names is covered (a file's folder),
# and the worker unit may write there (ProtectSystem=strict): the env.NAME
# keys of its handlers and the "dest" of its schedules' payloads.
rw=$(sed -n 's/^ReadWritePaths=//p' "$T/units/jobq-worker@.service" | tr ' ' '\n' | sed 's/^-//')
for kv in $(sed -n -e 's|^;*env\.\([A-Z_]*\) = @localstatedir@/|\1=|p' \
	-e 's|^;*payload = .*"dest": "@localstatedir@/\([^"]*\)".*|dest=\1|p' "$top_srcdir/etc/jobq.ini.in"); do
	d=${kv#*=}
	case ${kv%%=*} in *_DIR | *_SPOOL | dest) ;; *) d=$(dirname "$d") ;; esac
	ok "$([ -d "$root$T/var/$d" ]; echo $?)" "tmpfiles creates $d, named in the sample config (${kv%%=*})"
	w=1
	for p in $rw; do
		case $T/var/$d/ in "$p"/*) w=0 ;; esac
	done
	ok $w "the worker unit may write to $d (ReadWritePaths=)"
done

# make install: the units where configure put them (by default under
# ${prefix}, which make expands).
makevar() {
	local v pfx
	v=$(sed -n "s/^$1 = //p" "$top_builddir/Makefile")
	pfx=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
	echo "${v//'${prefix}'/$pfx}"
}
unitdir=$(makevar systemdsystemunitdir)
if [ -n "$unitdir" ]; then
	make -s -C "$top_builddir" install DESTDIR="$T/dest" >"$T/install.log" 2>&1
	ok $? "make install DESTDIR=..."
	for f in jobq-worker@.service jobq-schedule.service jobq-schedule.timer jobq-serve.service; do
		ok "$([ -f "$T/dest$unitdir/$f" ]; echo $?)" "installs $unitdir/$f"
	done
	for v in sysusersdir tmpfilesdir; do
		d=$(makevar $v)
		ok "$([ -f "$T/dest$d/jobq.conf" ]; echo $?)" "installs $d/jobq.conf"
	done
else
	diag "this build has no systemd unit dir (configure --with-systemdsystemunitdir=DIR)"
fi

# --without-sysusersdir leaves out that entry alone, and installs no file
# named "no" somewhere.
mkdir -p "$T/b2"
(cd "$T/b2" && "$top_srcdir/configure" -q --prefix="$T/p2" --with-systemdsystemunitdir="$T/p2/units" \
	--without-sysusersdir && make -s contrib/systemd/jobq.sysusers contrib/systemd/jobq.tmpfiles &&
	make -s install-data-hook DESTDIR="$T/d2") >"$T/b2.log" 2>&1
ok $? "configure --without-sysusersdir, make install-data-hook" || sed 's/^/# /' "$T/b2.log" | tail -5
is "$(cd "$T" && find b2 d2* -name jobq.conf)" "d2$T/p2/lib/tmpfiles.d/jobq.conf" \
	"it installs the tmpfiles.d entry only"
finish
