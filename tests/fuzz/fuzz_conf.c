/* fuzz_conf.c -- conf_load on any bytes written to a configuration file.
 *
 * The file lives in a private folder made for each call (and removed),
 * so relative paths in it (password_file, exec) resolve there.  Flags 0: no check that
 * handler programs exist, so the result does not depend on the machine.
 * Properties: no crash, leak or undefined behaviour; a refused file
 * leaves at least one message, each line of which names the file. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "fuzz.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/jobq-fuzz-conf.XXXXXX", tmp && *tmp ? tmp : "/tmp"), *path;
	struct buf errors, warnings;
	struct conf *c;
	FILE *fp;

	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp %s: %s", dir, strerror(errno));
	path = xasprintf("%s/jobq.ini", dir);
	if ((fp = fopen(path, "w")) == NULL)
		fatal("fopen %s: %s", path, strerror(errno));
	if (fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		fatal("write %s: %s", path, strerror(errno));
	buf_init(&errors);
	buf_init(&warnings);
	c = conf_load(path, 0, &errors, &warnings);
	if (c == NULL) {
		FUZZ_ASSERT(errors.len > 0);
		FUZZ_ASSERT(strncmp(errors.data, path, strlen(path)) == 0);
	} else
		conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
	return 0;
}
