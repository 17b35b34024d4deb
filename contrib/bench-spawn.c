/* bench-spawn.c -- the spawn-only ceiling for contrib/bench: how many
 * times a second this machine can posix_spawn and reap /bin/true, with
 * up to INFLIGHT children at once.  No database, no pipes, no payload:
 * what a fork/exec-per-job queue can never beat.
 *
 *   bench-spawn COUNT INFLIGHT      prints spawns per second */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* Starts one /bin/true; exits the program when it cannot. */
static void
spawn_one(void)
{
	char *argv[] = { "/bin/true", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);

	if (rc != 0) {
		fprintf(stderr, "bench-spawn: posix_spawn %s: %s\n", argv[0], strerror(rc));
		exit(1);
	}
}

/* Reaps one child; exits the program when there is none to reap. */
static void
reap_one(void)
{
	int status;

	while (waitpid(-1, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench-spawn: waitpid: %s\n", strerror(errno));
			exit(1);
		}
	}
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	long count, inflight, started = 0, running = 0;
	double secs;

	if (argc != 3 || (count = atol(argv[1])) <= 0 || (inflight = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: bench-spawn COUNT INFLIGHT\n");
		return 64;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (started < count || running > 0) {
		if (started < count && running < inflight) {
			spawn_one();
			started++;
			running++;
		} else {
			reap_one();
			running--;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%.0f\n", (double)count / secs);
	return 0;
}
