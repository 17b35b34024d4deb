/* replay.c -- run a fuzz target over its kept inputs, without libFuzzer.
 *
 * Built once per target by `make check` (FUZZ_NAME names it): every file
 * of tests/fuzz/seeds/NAME and tests/fuzz/regress/NAME (under
 * $top_srcdir) is fed to the target's LLVMFuzzerTestOneInput in a child
 * process, one TAP line each, so a crash once found stays fixed. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "tap.h"
#include "util.h"

/* Reads all of path; NULL if it cannot be read. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	struct buf b;
	char chunk[4096];
	size_t n;

	if (fp == NULL)
		return NULL;
	buf_init(&b);
	buf_reserve(&b, 0);
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_add(&b, chunk, n);
	fclose(fp);
	*len = b.len;
	return (uint8_t *)buf_steal(&b);
}

/* Feeds one file to the target in a child; true if the child ended well. */
static int
replay_one(const char *path)
{
	size_t len = 0;
	uint8_t *data = slurp(path, &len);
	pid_t pid;
	int status;

	if (data == NULL) {
		printf("# %s: %s\n", path, strerror(errno));
		return 0;
	}
	fflush(stdout);
	if ((pid = fork()) < 0)
		fatal("fork: %s", strerror(errno));
	/* exit, not _exit: LeakSanitizer (sanitizer builds) checks at exit. */
	if (pid == 0)
		exit(LLVMFuzzerTestOneInput(data, len) == 0 ? 0 : 1);
	free(data);
	if (waitpid(pid, &status, 0) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		printf("# %s: killed by signal %d\n", path, WTERMSIG(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays every regular file in dir; returns how many there were. */
static int
replay_dir(const char *dir)
{
	struct dirent **names;
	int n, i, count = 0;

	if ((n = scandir(dir, &names, NULL, by_name)) < 0)
		return 0; /* no such folder: nothing kept yet */
	for (i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name);
		struct stat st;

		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			ok(replay_one(path), "%s %s", FUZZ_NAME, path);
			count++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return count;
}

int
main(void)
{
	const char *top = getenv("top_srcdir");
	char *seeds, *regress;
	int n;

	(void)is_str, (void)is_int; /* tap.h's helpers this program does not need */
	if (top == NULL || *top == '\0')
		top = ".";
	seeds = xasprintf("%s/tests/fuzz/seeds/%s", top, FUZZ_NAME);
	regress = xasprintf("%s/tests/fuzz/regress/%s", top, FUZZ_NAME);
	n = replay_dir(seeds);
	ok(n > 0, "%s has seeds in %s", FUZZ_NAME, seeds);
	replay_dir(regress);
	free(seeds);
	free(regress);
	return done();
}
