/* bench-handler.c -- the no-op handler of contrib/bench's features part:
 * as cheap to start as /bin/true, and, given an argument, it saves a
 * checkpoint on the control channel first, as a long job does between
 * steps.  Both sides of the comparison start this same program, so the
 * difference measured is the queue's, not the handler's.
 *
 *   bench-handler              reads nothing, writes nothing, exits 0
 *   bench-handler checkpoint   writes {"checkpoint":{"step":1}} to the
 *                              descriptor in JOBQ_CONTROL_FD, exits 0 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	static const char line[] = "{\"checkpoint\":{\"step\":1}}\n";
	const char *fd = getenv("JOBQ_CONTROL_FD");

	if (argc < 2 || fd == NULL)
		return 0;
	/* One write of a short line into a pipe is whole or fails: a
	 * failure is the worker's to report as a missing checkpoint. */
	if (write(atoi(fd), line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
		return 1;
	return 0;
}
