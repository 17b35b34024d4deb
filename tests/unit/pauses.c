/* pauses.c -- the random pauses differ between processes (issue 8, from
 * defect 13: rand() was never seeded, so every process paused alike
 * after a deadlock and the two sides of it collided again in lockstep).
 *
 * The test runs itself twice as fresh processes ("draw" mode), each
 * printing 16 deadlock-retry pauses and 16 backoff delays, and compares
 * what they drew: two processes must not draw the same sequences. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "db.h"
#include "util.h"

#include "../tap.h"

#define DRAWS 16

static int
draw(void)
{
	struct backoff b;
	int i;

	backoff_default(&b);
	b.jitter = 0.5;
	for (i = 0; i < DRAWS; i++)
		printf("%lld ", (long long)db_retry_pause_ms(1));
	putchar('\n');
	for (i = 0; i < DRAWS; i++)
		printf("%lld ", (long long)backoff_delay(&b, 3));
	putchar('\n');
	return 0;
}

/* Runs this program in draw mode; returns its two lines. */
static void
run_draw(const char *self, char *pauses, char *delays, size_t len)
{
	char *cmd = xasprintf("'%s' draw", self);
	FILE *f = popen(cmd, "r");

	pauses[0] = delays[0] = '\0';
	if (f == NULL || fgets(pauses, (int)len, f) == NULL || fgets(delays, (int)len, f) == NULL)
		printf("# %s: no output\n", cmd);
	if (f != NULL)
		pclose(f);
	free(cmd);
}

static int
in_range(const char *line, long long lo, long long hi)
{
	char *end;
	const char *p = line;
	int n = 0;

	for (;;) {
		long long v = strtoll(p, &end, 10);

		if (end == p)
			break;
		if (v < lo || v > hi)
			return 0;
		n++;
		p = end;
	}
	return n == DRAWS;
}

int
main(int argc, char **argv)
{
	char p1[512], d1[512], p2[512], d2[512];

	if (argc > 1 && strcmp(argv[1], "draw") == 0)
		return draw();
	run_draw(argv[0], p1, d1, sizeof p1);
	run_draw(argv[0], p2, d2, sizeof p2);
	ok(in_range(p1, 1, 10) && in_range(p2, 1, 10), "deadlock-retry pauses are 1..10 ms on attempt 1");
	ok(in_range(d1, 20000, 40000) && in_range(d2, 20000, 40000),
	    "backoff delays after attempt 3 are 20..40 s (40 s less up to 50%% jitter)");
	is_str(strcmp(p1, p2) != 0 ? "different" : p1, "different",
	    "two processes draw different deadlock-retry pauses");
	is_str(strcmp(d1, d2) != 0 ? "different" : d1, "different",
	    "two processes draw different backoff delays");
	(void)is_int;
	return done();
}
