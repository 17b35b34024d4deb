/* job_defect.c -- unit tests of job_defect() (queue_claim.c): which
 * reserved rows, as another program may write them, are dead-lettered
 * without running, and the reason given.  Also db_col_u64/i64, the
 * NULL-safe column readers. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "queue.h"
#include "util.h"

#include "../tap.h"

/* The reason job_defect gives for payload p (len bytes) at attempt a,
 * or "" when the job may run. */
static const char *
defect(const char *p, size_t len, unsigned a)
{
	static char why[256];
	struct job j;

	memset(&j, 0, sizeof j);
	j.payload = (char *)p;
	j.payload_len = len;
	j.attempt = a;
	return job_defect(&j, why, sizeof why) ? why : "";
}

#define D(s, a) defect((s), sizeof(s) - 1, (a))

int
main(void)
{
	is_str(D("{}", 1), "", "an empty object runs");
	is_str(D(" {\"a\": [1, 2.5, null, \"x\"]}\n", 1), "", "JSON with white space around runs");
	is_str(D("\"just a string\"", 1), "", "any one JSON value runs");
	is_str(D("{}", 4294967294u), "", "attempt 4294967294 still runs");
	is_str(D("", 1), "payload is not valid JSON (at byte 0 of 0)", "an empty payload is not JSON");
	is_str(D("not json", 1), "payload is not valid JSON (at byte 0 of 8)", "text is not JSON");
	is_str(
	    D("{} {}", 1), "payload is not valid JSON (at byte 3 of 5)", "two values are not one JSON value");
	ok(strncmp(D("{\"a\":1", 1), "payload is not valid JSON (at byte ", 35) == 0, "a cut-off object");
	is_str(D("{}\0", 1), "payload is not valid JSON (it holds a NUL byte)", "a NUL byte after the JSON");
	is_str(D("{}", 4294967295u),
	    "attempts counter at its limit (4294967295): the row was changed outside jobq",
	    "the attempt counter at its ceiling cannot count another attempt");

	is_int((long long)db_col_u64(NULL, 7), 7, "db_col_u64: NULL gives the default");
	is_int((long long)db_col_u64("", 7), 7, "db_col_u64: empty gives the default");
	is_int((long long)db_col_u64("-1", 7), 7, "db_col_u64: a negative number gives the default");
	is_int((long long)db_col_u64("4294967295", 7), 4294967295LL, "db_col_u64: 4294967295");
	ok(db_col_u64("18446744073709551615", 7) == UINT64_MAX, "db_col_u64: the largest BIGINT UNSIGNED");
	is_int((long long)db_col_u64("99999999999999999999", 7), 7,
	    "db_col_u64: past 64 bits gives the default");
	is_int((long long)db_col_u64("12.5000", 7), 12, "db_col_u64: a DECIMAL SUM() keeps its whole part");
	is_int(db_col_i64(NULL, -1), -1, "db_col_i64: NULL gives the default");
	is_int(db_col_i64("-32768", 0), -32768, "db_col_i64: a negative number");
	is_int(db_col_i64("x", 3), 3, "db_col_i64: text gives the default");
	return done();
}
