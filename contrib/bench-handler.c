/* bench-handler.c -- the no-op handler of contrib/bench's features part:
 * as cheap to start as /bin/true, and, given an argument, it saves a
 * checkpoint on the control channel first, as a long job does between
 * steps.  Both sides of the comparison start this same program, so the
 * difference measured is the queue's, not the handler's.
 *
 *   bench-handler              reads nothing, writes nothing, exits 0
 *   bench-handler checkpoint   writes {"checkpoint":{"step":1}} to the
 *                              descriptor in JOBQ_CONTROL_FD, exits 0
 *   bench-handler sleep MS     sleeps MS milliseconds, exits 0: a job
 *                              that waits on something, as most real
 *                              ones do, without taking a core */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	static const char line[] = "{\"checkpoint\":{\"step\":1}}\n";
	const char *fd = getenv("JOBQ_CONTROL_FD");

	if (argc > 2 && strcmp(argv[1], "sleep") == 0) {
		long ms = atol(argv[2]);
		struct timespec t = {ms / 1000, ms % 1000 * 1000000L};

		while (nanosleep(&t, &t) != 0 && errno == EINTR)
			;
		return 0;
	}
	if (argc < 2 || fd == NULL)
		return 0;
	/* One write of a short line into a pipe is whole or fails: a
	 * failure is the worker's to report as a missing checkpoint. */
	if (write(atoi(fd), line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
		return 1;
	return 0;
}
