#!/bin/bash
# The shared-hosting recipe (README.md, "Shared hosting, without root"),
# start to finish: configure --prefix=$HOME/.local, make install, the installed
# sample config edited in place, jobq init, a job enqueued, and the
# crontab line of contrib/crontab.example run the way cron runs it
# (minimal environment): the job is done and nothing is printed.
. "$top_srcdir/tests/lib.sh"
one_build normal "an install test"
setup install_home

home=$T/home
prefix=$home/.local
mkdir -p "$home" "$T/build"
# Unoptimised (CFLAGS=-O0): what is installed where does not depend on
# it, and the build is a third quicker, on a machine running two suites.
(cd "$T/build" && "$top_srcdir/configure" -q --prefix="$prefix" CFLAGS=-O0 &&
	make -s -j2 >/dev/null && make -s install >/dev/null) >"$T/build.log" 2>&1
ok $? "configure --prefix=\$HOME/.local && make && make install, as a user" ||
	sed 's/^/# /' "$T/build.log" | tail -20
ini=$prefix/etc/jobq.ini
ok "$([ -x "$prefix/bin/jobq" ] && [ -f "$ini" ]; echo $?)" "installed bin/jobq and etc/jobq.ini under the prefix"
# Nothing outside the prefix: a user may not write to /lib or /usr (the
# systemd units too go under the prefix).  Staged, so that the check
# sees what a root install would write elsewhere.
make -s -C "$T/build" install DESTDIR="$T/stage" >/dev/null 2>&1
out=$(cd "$T/stage" && find . ! -type d ! -path ".$prefix/*")
is "$out" "" "make install writes nothing outside --prefix"

# The man pages name this build's paths, as the program, the sample
# config and the units do (their sources name /usr/local's).
grep -q "^\.Pa $prefix/etc/jobq\.ini\$" "$prefix/share/man/man1/jobq.1"
ok $? "the installed jobq(1) names the installed configuration"
is "$(grep -l '/usr/local/\(etc\|libexec\|share\|lib/\|bin/jobq\)' "$prefix"/share/man/man*/jobq*)" "" \
	"no installed man page names /usr/local's files"

# make install prefix=DIR after the build (the GNU Coding Standards'
# install-time override): the files go under DIR, nothing is rebuilt,
# and every file still names the paths the build has compiled in.
moved=$T/moved
make -s -C "$T/build" install prefix="$moved" DESTDIR="$T/stage2" >"$T/moved.log" 2>&1
ok $? "make install prefix=DIR after make" || sed 's/^/# /' "$T/moved.log" | tail -5
out=$(cd "$T/stage2" && find . ! -type d ! -path ".$moved/*")
is "$out" "" "make install prefix=DIR writes nothing outside DIR"
cmp -s "$T/build/src/jobq" "$T/stage2$moved/bin/jobq"
ok $? "it installs the program as built (nothing recompiled)"
is "$(grep -rl "$moved" "$T/stage2")" "" "no installed file names DIR"
like "$("$T/stage2$moved/bin/jobq" --help)" "default: \\\$JOBQ_CONFIG or $(re "$ini")\)" \
	"the program reads the build's configuration path"
for f in etc/jobq.ini share/man/man1/jobq.1 share/man/man5/jobq.ini.5 share/man/man7/jobq-handler.7; do
	grep -q "$prefix/" "$T/stage2$moved/$f"
	ok $? "its $f names the build's paths"
done

# What goes where: production handlers, the demo apart, the docs.
for f in libexec/jobq/echo.sh libexec/jobq/send_email.py libexec/jobq/generate_report.py \
	libexec/jobq/log_event.php libexec/jobq/word_count.pl libexec/jobq/alert-mail.sh \
	libexec/jobq/alert-webhook.sh libexec/jobq/jobq_handler.py libexec/jobq/jobq_handler.php \
	share/jobq/demo/demo.sql \
	share/jobq/demo/flaky.sh share/doc/jobq/README.md share/doc/jobq/handlers.md share/doc/jobq/crontab.example \
	share/bash-completion/completions/jobq share/man/man1/jobq.1 share/man/man5/jobq.ini.5 \
	share/man/man7/jobq-handler.7; do
	ok "$([ -f "$prefix/$f" ]; echo $?)" "installs $f"
done
ok "$([ ! -e "$prefix/libexec/jobq/flaky.sh" ] && [ ! -e "$prefix/share/jobq/demo.sql" ]; echo $?)" \
	"the demo's handler and data are not installed beside production's"
is "$(grep -c '^\[handler' "$ini")" "1" "the sample config enables one handler (echo); the examples are commented"
ok "$(grep -q '^\[handler flaky\]' "$ini"; [ $? = 1 ]; echo $?)" "the test-only flaky handler is not in it"
for h in send_email generate_report log_event word_count; do
	grep -q "^;\[handler $h\]" "$ini"
	ok $? "the sample shows [handler $h], commented"
done

# "the credentials the host gives": here the test server's socket and a
# user; the sample names the installed example handlers.
sed -i -e "s|^socket = .*|socket = $SOCKET|" -e "s|^user = .*|user = root|" \
	-e "s|^database = .*|database = $DB|" "$ini"
chmod 600 "$ini"
grep -q "^exec = $prefix/libexec/jobq/echo.sh$" "$ini"
ok $? "the installed config points at the installed echo handler"
# The example handlers that run jobq (prune, health_check) name the
# installed program and configuration: a handler's PATH has no
# ~/.local/bin, and no other jobq.ini is there.
is "$(grep -c "^;env.PROGRAM = $prefix/bin/jobq$" "$ini"),$(grep -c "^;env.CONFIG = $ini$" "$ini")" "2,2" \
	"the example prune and health_check handlers name the installed jobq and jobq.ini"
is "$(grep -c '@[a-z]*@' "$ini")" "0" "no @placeholder@ is left in the installed config"
# Workers drain the [queue] sections in file order: the order the
# commented queues line shows, critical first.
is "$(sed -n 's/^\[queue \(.*\)\]$/\1/p' "$ini" | paste -sd,)" "$(sed -n 's/^;queues = //p' "$ini" | tr -d ' ')" \
	"the sample's queues are in the order its queues line gives (critical first)"

# From here on, HOME is the temporary home and jobq finds its config
# without -c (the installed default path).
export HOME=$home
sql_root "DROP DATABASE \`$DB\`"
out=$("$prefix/bin/jobq" init 2>&1)
like "$out" "schema created" "jobq init with the installed default config"
out=$("$prefix/bin/jobq" check 2>&1)
ok $? "jobq check is happy with the edited sample config" || echo "# $out"
id=$("$prefix/bin/jobq" enqueue echo '{"hello": "home"}')
ok $? "enqueue a job"

# The crontab line, with the USER paths replaced, in cron's environment.
line=$(grep -E '^\* \* \* \* \* ' "$top_srcdir/contrib/crontab.example" | cut -d' ' -f6-)
line=${line//\/home\/USER/$home}
like "$line" "^$prefix/bin/jobq -c $ini work --max-time 55 --stop-when-empty --quiet$" \
	"the crontab line names the installed jobq and config"
out=$(cd / && env -i PATH=/usr/bin:/bin HOME="$home" SHELL=/bin/sh sh -c "$line" 2>&1)
ok $? "the crontab line runs under cron's environment"
is "$out" "" "and prints nothing (no mail)"
is "$(sql "SELECT COUNT(*) FROM jobs")" "0" "the job was done"
like "$(sql "SELECT output FROM job_runs")" 'job [0-9]+ \(echo.*"hello": "home"' "by the installed echo handler"

# A second run on the now empty queue: silent too.
out=$(env -i PATH=/usr/bin:/bin HOME="$home" sh -c "$line" 2>&1)
is "$out" "" "an empty queue prints nothing"
finish
