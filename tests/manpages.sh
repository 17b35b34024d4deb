#!/bin/bash
# The man pages cover what the code accepts, and lint clean:
#   - every command `jobq --help` lists has a ".Ss CMD" section in jobq(1),
#     and every long option its --help names is in that section (the
#     global options, from `jobq --help`, anywhere in the page), and
#     every exit status its --help gives is in that section;
#   - every INI key the loader compares against (src/conf*.c) is an
#     ".It Cm KEY" entry of jobq.ini(5);
#   - mandoc -T lint finds nothing in jobq(1), jobq.ini(5), jobq-handler(7);
#   - each synopsis line of a command starts a line of its own, no JSON
#     in a macro line loses its quotes, and every rendered paragraph
#     closes the parentheses and quotes it opens.
# On failure the last lines list exactly what is missing, page by page.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the package installs"
p1=$top_srcdir/src/jobq.1
p5=$top_srcdir/etc/jobq.ini.5
p7=$top_srcdir/handlers/jobq-handler.7
missing=()

# ---- commands and options ----
cmds=$("$JOBQ" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
ok "$([ "$(echo "$cmds" | wc -w)" -ge 10 ] && echo "$cmds" | grep -qx work; echo $?)" \
	"the command list was read from jobq --help ($(echo $cmds))"
# section CMD: the lines from ".Ss CMD" to the next .Ss or .Sh
section() { awk -v c="$1" '/^\.S[hs] / { on = ($0 == ".Ss " c) ; next } on' "$p1"; }
for cmd in $cmds; do
	[ "$cmd" = help ] && continue
	sec=$(section "$cmd")
	if [ -z "$sec" ]; then
		missing+=("jobq.1: command $cmd (no '.Ss $cmd' section)")
		continue
	fi
	for opt in $("$JOBQ" "$cmd" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		case $opt in --help | --config) continue ;; esac
		grep -qE -- "Fl -${opt#--}( |$)" <<<"$sec" || missing+=("jobq.1: option $opt of $cmd")
	done
done
# A command whose --help gives its exit statuses has them in its section
# too, every code the help names.
for cmd in $cmds; do
	[ "$cmd" = help ] && continue
	codes=$("$JOBQ" "$cmd" --help | sed -n '/Exit status/,/^$/p' | grep -oE '(^|[ (])(0|1|6[4-9]|7[0-8])([;,. )]|$)' |
		grep -oE '[0-9]+' | sort -un)
	[ -n "$codes" ] || continue
	sec=$(section "$cmd" | sed -n '/Exit status/,$p')
	if [ -z "$sec" ]; then
		missing+=("jobq.1: exit status of $cmd (its --help gives $(echo $codes))")
		continue
	fi
	for code in $codes; do
		grep -qE "(^|[ (])$code([;,. )]|$)" <<<"$sec" || missing+=("jobq.1: exit status $code of $cmd")
	done
done
# Every short option a command's source gives getopt is named in its
# --help (as -X) and in its section (Fl X): a letter that works but is
# written nowhere is one nobody can know of.
for src in "$top_srcdir"/src/cmd_*.c; do
	cmd=$(basename "$src" .c)
	cmd=${cmd#cmd_}
	cmd=${cmd//_/-}
	grep -qx -- "$cmd" <<<"$cmds" || continue
	for o in $(grep -oE 'CLI_COMMON_SHORTOPTS "[^"]*"' "$src" | sed -E 's/.*"(.*)"/\1/' | tr -d ':' | fold -w1 | sort -u); do
		"$JOBQ" "$cmd" --help | grep -qE -- "(^|[ [(])-$o([ ,]|$)" || missing+=("jobq $cmd --help: option -$o")
		grep -qE "Fl $o( |$)" <<<"$(section "$cmd")" || missing+=("jobq.1: option -$o of $cmd")
	done
done
for opt in $("$JOBQ" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
	grep -qE -- "Fl -${opt#--}( |$)" "$p1" || missing+=("jobq.1: global option $opt")
done
grep -q '^\.Ss help$' "$p1" || grep -q '^\.It Cm help' "$p1" || grep -q 'Cm help' "$p1" ||
	missing+=("jobq.1: command help")

# ---- INI keys ----
keys=$(cat "$top_srcdir"/src/conf*.c |
	grep -ohE 'strcmp\((k|key|e->key|s->entries\[i\]\.key), "[a-z_]+"\)' |
	sed -E 's/.*"([a-z_]+)".*/\1/' | sort -u)
limits=$(grep -ohE '\{ "limit_[a-z]+",' "$top_srcdir"/src/conf_limit.c | grep -oE 'limit_[a-z]+')
keys="$keys $limits env.NAME"
ok "$(for k in exec queues socket cron limit_as; do echo "$keys" | grep -qw "$k" || exit 1; done; echo $?)" \
	"the INI keys were read from the loader ($(echo $keys | wc -w) keys)"
for k in $keys; do
	[ "$k" = env.NAME ] && re='^\.It Cm env\.' || re="^\.It Cm $k( |$)"
	grep -qE "$re" "$p5" || missing+=("jobq.ini.5: key $k")
done
for s in database worker queue handler schedule; do
	grep -qE "^\.Ss \\\\?\[?$s" "$p5" || grep -qE "^\.Ss .*$s" "$p5" || missing+=("jobq.ini.5: section [$s]")
done

is "${#missing[@]}" "0" "nothing the code accepts is missing from the man pages"
for m in "${missing[@]}"; do diag "missing: $m"; done

# ---- lint ----
if command -v mandoc >/dev/null; then
	for p in "$p1" "$p5" "$p7"; do
		out=$(mandoc -T lint -W warning "$p" 2>&1)
		is "$out" "" "mandoc -T lint: $(basename "$p") is clean"
	done
else
	diag "SKIP lint: mandoc not installed (apt-get install mandoc)"
fi
# ---- rendering ----
# A command with several synopsis lines breaks (.br) before each .Nm after
# the first, or mandoc runs them together into one line.
runon=$(awk '/^\.Ss / { sec = $2; n = 0; first = 1; br = 0; next }
	first { syn = /^\.Nm/; first = 0 }
	/^\.(Pp|Sh|Bl|Bd)/ { syn = 0 }
	syn && /^\.br$/ { br = 1 }
	syn && /^\.Nm/ { if (n++ && !br) print sec; br = 0 }' "$p1" | sort -u | tr '\n' ' ')
is "$runon" "" "jobq(1): every synopsis line of a command starts a line of its own"
# mdoc takes a word that begins with a double quote as a quoted argument
# and drops the quotes: {"a": 1, "b": 2} in a macro line would render as
# {"a": 1, b: 2}.  Such JSON is written with \(dq.
for p in "$p1" "$p5" "$p7"; do
	bad=$(grep -nE '^\.[A-Z][a-z].*[{[].* "' "$p" | head -3)
	is "$bad" "" "$(basename "$p"): no JSON in a macro line loses its quotes"
done
# Every rendered paragraph closes the parentheses and quotes it opens
# (a .Pq or .Dq closes at the end of its line, not where the prose does).
if command -v mandoc >/dev/null; then
	for p in "$p1" "$p5" "$p7"; do
		bad=$(mandoc -T utf8 "$p" 2>/dev/null | col -b | python3 -c '
import re, sys
for par in re.split(r"\n\s*\n", sys.stdin.read()):
	flat = " ".join(par.split())
	if flat.count("(") != flat.count(")") or flat.count("\u201c") != flat.count("\u201d"):
		print(flat[:160])')
		is "$bad" "" "$(basename "$p"): every paragraph closes its parentheses and quotes"
	done
fi
# Each page names the others and its examples are there.
grep -q 'Xr jobq.ini 5' "$p1" && grep -q 'Xr jobq-handler 7' "$p1"
ok $? "jobq(1) refers to jobq.ini(5) and jobq-handler(7)"
for lang in '#!/bin/sh' 'python3' '<?php'; do
	grep -qF "$lang" "$p7"
	ok $? "jobq-handler(7) has an example in ${lang}"
done
finish
