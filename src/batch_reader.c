/* batch_reader.c -- the input of `jobq enqueue --batch`, line by line:
 * each line bounded in length (a longer one is skipped, so memory stays
 * bounded), every byte hashed (so a resumed batch can tell its input
 * changed), and optionally copied (pass 1 of a pipe spools it for pass
 * 2); and that spool, and the rewind for pass 2.  See enqueue_batch.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_reader.h"
#include "cli.h"

#define BLOCK (64 * 1024)

/* A reader of in with a block of its own; copy (or NULL) gets every
 * byte read, and lines longer than max are skipped. */
void
reader_init(struct reader *r, FILE *in, FILE *copy, size_t max)
{
	memset(r, 0, sizeof *r);
	r->in = in;
	r->copy = copy;
	r->max = max;
	r->block = xmalloc(BLOCK);
	r->hash = 14695981039346656037ULL;
	buf_init(&r->line);
}

/* Frees what reader_init took (not the files). */
void
reader_free(struct reader *r)
{
	free(r->block);
	buf_free(&r->line);
}

/* Reads the next block; 0 at the end of the input or on an error. */
static int
fill(struct reader *r)
{
	size_t n = fread(r->block, 1, BLOCK, r->in), i;

	if (n == 0) {
		if (ferror(r->in)) {
			r->error = errno ? errno : EIO;
			r->read_error = 1;
		}
		return 0;
	}
	for (i = 0; i + 8 <= n; i += 8) { /* FNV-1a over 8-byte words: a change detector, not a MAC */
		uint64_t w;

		memcpy(&w, r->block + i, 8);
		r->hash = (r->hash ^ w) * 1099511628211ULL;
		r->hash ^= r->hash >> 29;
	}
	for (; i < n; i++)
		r->hash = (r->hash ^ (unsigned char)r->block[i]) * 1099511628211ULL;
	if (r->copy != NULL && fwrite(r->block, 1, n, r->copy) != n)
		r->error = errno ? errno : EIO;
	r->pos = 0;
	r->end = n;
	return r->error == 0;
}

/* The next line without its newline (any bytes, NUL included), in
 * r->line; 0 at the end of the input.  A line longer than r->max is
 * returned empty with too_long set, so memory stays bounded. */
int
reader_line(struct reader *r)
{
	int any = 0;

	buf_reset(&r->line);
	r->too_long = 0;
	for (;;) {
		char *p, *nl;
		size_t n;

		if (r->pos == r->end && !fill(r))
			break;
		p = r->block + r->pos;
		nl = memchr(p, '\n', r->end - r->pos);
		n = nl != NULL ? (size_t)(nl - p) : r->end - r->pos;
		any = 1;
		if (!r->too_long && r->line.len + n > r->max) {
			r->too_long = 1;
			buf_reset(&r->line);
		}
		if (!r->too_long)
			buf_add(&r->line, p, n);
		r->pos += n + (nl != NULL);
		if (nl != NULL)
			break;
	}
	if (!any || r->error)
		return 0;
	r->lineno++;
	return 1;
}

/* The current line without surrounding blanks (and a CR before the
 * newline); *len 0 for a blank line. */
const char *
reader_trimmed(const struct reader *r, size_t *len)
{
	const char *s = r->line.len ? r->line.data : "";
	size_t l = r->line.len;

	while (l > 0 && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
		l--;
	while (l > 0 && (*s == ' ' || *s == '\t'))
		s++, l--;
	*len = l;
	return s;
}

/* Where pass 2 reads from: stdin rewound if it is a regular file, else
 * an unlinked temporary file that pass 1 fills (*spool).  Returns 0 or
 * the exit status, said. */
int
reader_spool_open(FILE **spool, off_t *start)
{
	struct stat st;
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	*spool = NULL;
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) && (*start = ftello(stdin)) >= 0)
		return 0;
	path = xasprintf("%s/jobq-batch.XXXXXX", dir != NULL && *dir != '\0' ? dir : "/tmp");
	if ((fd = mkstemp(path)) < 0 || unlink(path) < 0 || (*spool = fdopen(fd, "w+")) == NULL) {
		cli_error("enqueue: create a temporary file %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return EXIT_FAIL;
	}
	free(path);
	return 0;
}

/* Points *in at the start of the input again for pass 2.  Returns 0 or
 * the exit status, said. */
int
reader_rewind(FILE *spool, off_t start, FILE **in)
{
	*in = spool != NULL ? spool : stdin;
	if ((spool != NULL && fflush(spool) != 0) || fseeko(*in, spool != NULL ? 0 : start, SEEK_SET) != 0) {
		cli_error("enqueue: rewind the input: %s", strerror(errno));
		return EXIT_FAIL;
	}
	clearerr(*in);
	return 0;
}
