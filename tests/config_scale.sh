#!/bin/bash
# A large jobq.ini loads in time that grows with its size, not with its
# square: the duplicate checks (sections, keys, queue names) and the
# lookups of queues and handlers by name were walks through everything
# read before, so 20,000 sections took 5 s to load and 100,000 over two
# minutes.  Not a benchmark: the test compares a file with 8 times the
# sections of another and wants well under 64 times the time, the
# square's (the best of three runs each, so a busy machine does not
# decide it).  Needs no
# database: the configuration points at a socket nobody listens on.
. "$top_srcdir/tests/lib.sh"
one_build normal "a scale test"
setup config_scale

# big N: $T/big-N.ini, N/2 queues and N/2 handlers (each with keys, its
# own queue and, every other one, an on_success to the next).
big() {
	awk -v n="$1" -v e="$HANDLERS/echo.sh" -v sock="$T/none.sock" 'BEGIN {
		printf "[database]\nsocket = %s\n\n[worker]\nconcurrency = 2\n", sock
		for (i = 0; i < n / 2; i++)
			printf "[queue q%d]\ndescription = queue %d\nmax_wait = 5m\n", i, i
		for (i = 0; i < n / 2; i++) {
			printf "[handler h%d]\nexec = %s\nqueue = q%d\nenv.N = %d\ntimeout = 5m\n", i, e, i, i
			if (i % 2 == 0)
				printf "on_success = h%d\n", i + 1
		}
	}' >"$T/big-$1.ini"
}

# best N: the shortest of three loads of $T/big-N.ini, in ms.
best() {
	local i t0 t1 min=
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$JOBQ" -c "$T/big-$1.ini" check >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$(((t1 - t0) / 1000000))
		[ -z "$min" ] || [ "$t" -lt "$min" ] && min=$t
	done
	echo "$min"
}

big 5000
big 40000
small=$(best 5000)
run "$JOBQ" -c "$T/big-5000.ini" check
is "$RC" "69" "5,000 sections: loaded (then no database: 69)"
like "$OUT" "ok \(2500 queues, 2500 handlers" "5,000 sections: all read"
large=$(best 40000)
run "$JOBQ" -c "$T/big-40000.ini" check
is "$RC" "69" "40,000 sections: loaded (then no database: 69)"
like "$OUT" "ok \(20000 queues, 20000 handlers" "40,000 sections: all read"
diag "5,000 sections: ${small} ms; 40,000 sections: ${large} ms"
[ "$large" -lt $((20 * (small > 20 ? small : 20))) ]
ok $? "8 times the sections take less than 20 times the time (linear: 8, quadratic: 64)"

# the checks still find what they are for, at the end of a large file
cp "$T/big-40000.ini" "$T/big-dup.ini"
printf '[queue q7]\n[handler h19999]\nexec = %s\nqueue = q19999\nqueue = q1\n' "$HANDLERS/echo.sh" >>"$T/big-dup.ini"
run "$JOBQ" -c "$T/big-dup.ini" check
is "$RC" "78" "a large file with duplicates: exits 78"
like "$ERR" "big-dup\.ini:[0-9]+: duplicate section \[queue q7\] \(first at line 27\)" "the duplicate queue, naming the first"
like "$ERR" "big-dup\.ini:[0-9]+: duplicate section \[handler h19999\]" "the duplicate handler"
is "$NERR" "2" "one line each"
finish
