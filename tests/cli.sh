#!/bin/bash
# The command line: --help and --version, --help on every command, and
# exit status 64 with a hint for whatever is not understood.  No command
# here may need the configuration or the database, so $JOBQ_CONFIG names
# a file that does not exist.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
export JOBQ_CONFIG=/nonexistent/jobq-cli-test.ini
COMMANDS="init check enqueue work status show failed release-stale workers prune"

# run CMD...: sets RC, OUT and ERR.
run() {
	local f
	f=$(mktemp)
	OUT=$("$@" 2>"$f")
	RC=$?
	ERR=$(cat "$f")
	rm -f "$f"
}

version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")

for opt in --help -h; do
	run "$JOBQ" $opt
	is "$RC" "0" "jobq $opt exits 0"
	like "$OUT" "^Usage: jobq \[-c FILE\] COMMAND" "jobq $opt prints the usage on stdout"
	is "$ERR" "" "jobq $opt prints nothing on stderr"
done
run "$JOBQ" --help
for cmd in $COMMANDS; do
	like "$OUT" "
  $cmd +[a-z]" "jobq --help lists $cmd with a summary"
done

for opt in --version -V; do
	run "$JOBQ" $opt
	is "$RC" "0" "jobq $opt exits 0"
	is "$OUT" "jobq $version" "jobq $opt prints 'jobq $version'"
done

for cmd in $COMMANDS; do
	run "$JOBQ" $cmd --help
	is "$RC" "0" "jobq $cmd --help exits 0 (without reading the configuration)"
	is "$(head -n 1 <<<"$OUT" | cut -d ' ' -f 1-3)" "Usage: jobq $cmd" "jobq $cmd --help prints its Usage line first"
	is "$ERR" "" "jobq $cmd --help prints nothing on stderr"
	run "$JOBQ" $cmd -h
	is "$RC" "0" "jobq $cmd -h exits 0"

	run "$JOBQ" $cmd --no-such-option
	is "$RC" "64" "jobq $cmd --no-such-option exits 64"
	like "$ERR" "no-such-option" "jobq $cmd --no-such-option names the option"
	like "$ERR" "Try 'jobq $cmd --help'" "jobq $cmd --no-such-option points to --help"
	is "$OUT" "" "jobq $cmd --no-such-option prints nothing on stdout"
done

run "$JOBQ"
is "$RC" "64" "jobq without a command exits 64"
like "$ERR" "Usage: jobq" "and prints the usage on stderr"
is "$OUT" "" "and nothing on stdout"

run "$JOBQ" frobnicate
is "$RC" "64" "an unknown command exits 64"
like "$ERR" "unknown command 'frobnicate'" "naming the command"
like "$ERR" "Try 'jobq --help'" "and pointing to --help"

run "$JOBQ" --no-such-option check
is "$RC" "64" "an unknown option before the command exits 64"
like "$ERR" "no-such-option" "naming the option"

run "$JOBQ" -c
is "$RC" "64" "-c without a file exits 64"

run "$JOBQ" check unexpected
is "$RC" "64" "an unexpected argument exits 64"
like "$ERR" "unexpected" "and says so"
finish
