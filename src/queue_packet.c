/* queue_packet.c -- whether the handlers' output limits fit the
 * server's max_allowed_packet (queue.h): the statements of an outcome
 * (queue_outcome.c) must, or its texts are cut. */
#include "config.h"

#include <stdio.h>

#include "capture.h"
#include "queue.h"
#include "queue_packet.h"

/* "16.0 MiB", "640 KiB" */
static const char *
size_words(size_t n, char *out, size_t outlen)
{
	if (n >= 1024 * 1024)
		snprintf(out, outlen, "%.1f MiB", (double)n / (1024 * 1024));
	else
		snprintf(out, outlen, "%zu KiB", n / 1024);
	return out;
}

/* The longest statement one outcome of a handler with these output
 * limits can need before anything is cut: stderr is stored twice
 * (last_error or the dead-letter's exception, and the run's error),
 * stdout once, each at up to three bytes per byte kept. */
size_t
queue_outcome_worst(size_t stdout_limit, size_t stderr_limit)
{
	return OUTCOME_FIXED_MAX + capture_stored_max(stdout_limit) + 2 * capture_stored_max(stderr_limit);
}

/* Whether every handler's outcome fits, uncut, in one transaction of at
 * most max_packet bytes (the server's max_allowed_packet).  If one does
 * not, err says which handler, what it needs and what to change, and -1
 * is returned.  queue_write would still cut the texts to fit; this check
 * exists so that limits the server cannot honour are refused at start
 * instead of silently kept short. */
int
queue_check_limits(const struct conf *c, size_t max_packet, char *err)
{
	size_t room = max_packet > PACKET_SLACK + 64 ? max_packet - PACKET_SLACK - 64 : 0, i;
	char a[32], b[32], d[32], e[32], f[32];
	int line;

	for (i = 0; i < c->nhandlers; i++) {
		const struct handler *h = c->handlers[i];
		size_t need = queue_outcome_worst(h->stdout_limit, h->stderr_limit), most;

		if (need <= room)
			continue;
		most = room > queue_outcome_worst(0, 0) ? (room - queue_outcome_worst(0, 0)) / 3 : 0;
		/* at the line of the key that asks the most (stderr counts
		 * twice), in [handler] or [worker]; the header's when neither
		 * is set */
		if (h->stderr_limit_line > 0 && (2 * h->stderr_limit >= h->stdout_limit || h->stdout_limit_line == 0))
			line = h->stderr_limit_line;
		else if (h->stdout_limit_line > 0)
			line = h->stdout_limit_line;
		else
			line = h->line;
		errf(err,
		    "%s:%d: [handler %s]: stdout_limit %s + 2 x stderr_limit %s can take %s once stored"
		    " (invalid UTF-8 triples, stderr is kept twice), more than the server's"
		    " max_allowed_packet of %s: keep stdout_limit + 2 x stderr_limit under %s, or raise"
		    " max_allowed_packet",
		    c->path, line, h->type, size_words(h->stdout_limit, a, sizeof a),
		    size_words(h->stderr_limit, b, sizeof b), size_words(need, d, sizeof d),
		    size_words(max_packet, e, sizeof e), size_words(most, f, sizeof f));
		return -1;
	}
	return 0;
}
