#!/bin/bash
# What the docs show runs as written: every ```ini block of README.md,
# the EXAMPLES of jobq.ini(5) and the configuration example of
# jobq-handler(7) load with `jobq check` (installed paths are replaced by
# a handler of the tree, and the sections a snippet names but does not
# hold are added).
. "$top_srcdir/tests/lib.sh"
setup docs_check
p5=$top_srcdir/etc/jobq.ini.5
p7=$top_srcdir/handlers/jobq-handler.7

# check_block NAME FILE [whole]: load the configuration snippet FILE
# under the test's [database]; installed programs become echo.sh.  A
# snippet gets the sections it names but does not hold; a whole file
# (whole) gets none.
check_block() {
	local name=$1 f=$2 whole=${3:-} s out rc
	sed -i -E -e "s#^(exec|on_dead) = /usr/local/libexec/.*#\1 = $HANDLERS/echo.sh#" \
		-e "s#^exec = [a-z_]*\.py\$#exec = $HANDLERS/echo.sh#" "$f"
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

finish
