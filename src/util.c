/* util.c -- memory, strings, growable buffers, clocks and error text. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Reports an impossible state or exhausted memory and aborts: these are
 * the failures no caller can sensibly recover from. */
void
fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("jobq: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		fatal("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		fatal("out of memory allocating %zu bytes", n);
	return q;
}

/* The capacity xgrow keeps for n elements: the power of two at or above
 * n (0 for 0). */
static size_t
grown_cap(size_t n)
{
	size_t cap = 1;

	if (n == 0)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			fatal("out of memory: %zu elements", n);
		cap *= 2;
	}
	return cap;
}

/* Returns p, an array of n elements of size bytes that only xgrow has
 * (re)allocated (NULL when n is 0), made to hold n + more: reallocated
 * only when that passes the power of two at or above n, to the one at
 * or above n + more.  So adding one element at a time copies O(n) bytes
 * in all, not O(n^2): glibc's realloc often hides the square by moving
 * pages, but the sanitizers' copies every time (a 40,000-section
 * jobq.ini took minutes to load under ASan). */
void *
xgrow(void *p, size_t n, size_t more, size_t size)
{
	size_t need = n + more, cap = grown_cap(need);

	if (need < n || (size != 0 && cap > SIZE_MAX / size))
		fatal("out of memory: %zu elements of %zu bytes", need, size);
	if (p != NULL && need <= grown_cap(n))
		return p;
	return xrealloc(p, cap * size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* A copy of s, or NULL when s is NULL (a NULL column). */
char *
xstrdup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* A copy of s, or "" when s is NULL. */
char *
xstrdup_or_empty(const char *s)
{
	return xstrdup(s != NULL ? s : "");
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	buf_init(&b);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_steal(&b);
}

/* Fills a caller-owned ERRSZ buffer; a NULL buffer discards the text. */
void
errf(char *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(err, ERRSZ, fmt, ap);
	va_end(ap);
}

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Makes room for extra more bytes plus the terminating NUL. */
void
buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->data = xrealloc(b->data, b->cap);
}

void
buf_add(struct buf *b, const void *data, size_t len)
{
	buf_reserve(b, len);
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		fatal("vsnprintf failed for format \"%s\"", fmt);
	buf_reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

/* Appends "1,2,3": the n ids of v, for an SQL IN list. */
void
buf_add_ids(struct buf *b, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* Hands the buffer's memory to the caller (never NULL) and empties it. */
char *
buf_steal(struct buf *b)
{
	char *p;

	if (b->data == NULL)
		buf_reserve(b, 0), b->data[0] = '\0';
	p = b->data;
	buf_init(b);
	return p;
}

/* Milliseconds on the monotonic clock: for timeouts and durations only,
 * never compared with the database's time. */
int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The same in microseconds, for short latencies (the metrics'). */
int64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The local wall clock as 2026-01-02T03:04:05.678Z, for log lines. */
void
wall_iso8601(char *out, size_t outlen)
{
	struct timespec ts;
	struct tm tm;
	char tmp[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outlen, "%s.%03ldZ", tmp, ts.tv_nsec / 1000000);
}

/* SIGSEGV-style name of a signal, or "signal N". */
const char *
signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" },
		{ SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" },
		{ SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" },
		{ SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" },
		{ SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" },
		{ SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" },
		{ SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" },
		{ SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" },
		{ SIGCHLD, "SIGCHLD" },
		{ SIGXCPU, "SIGXCPU" },
		{ SIGXFSZ, "SIGXFSZ" },
		{ SIGSYS, "SIGSYS" },
	};
	static char other[32];
	size_t i;

	for (i = 0; i < ARRAY_LEN(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	snprintf(other, sizeof other, "signal %d", sig);
	return other;
}

/* Parses a whole decimal integer in [min, max]; 0 on success. */
int
str_to_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Parses a byte count: 4096, 64K, 64KiB, 1M, 1MiB, 1G (powers of 1024). */
int
size_parse(const char *s, size_t *out, char *err)
{
	char *end;
	unsigned long long v, mult = 1;

	if (s == NULL || !isdigit((unsigned char)*s)) {
		errf(err, "bad size '%s' (expected a byte count like 4096, 64K or 1M)", s ? s : "");
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == 0) {
		if (*end == 'k' || *end == 'K')
			mult = 1024ULL, end++;
		else if (*end == 'm' || *end == 'M')
			mult = 1024ULL * 1024, end++;
		else if (*end == 'g' || *end == 'G')
			mult = 1024ULL * 1024 * 1024, end++;
		if (mult > 1 && strcmp(end, "iB") == 0)
			end += 2;
		else if (mult > 1 && (*end == 'B' || *end == 'b'))
			end++;
		else if (mult == 1 && (*end == 'B' || *end == 'b'))
			end++;
	}
	if (errno != 0 || *end != '\0' || v > (unsigned long long)SIZE_MAX / mult) {
		errf(err, "bad size '%s' (expected a byte count like 4096, 64K or 1M)", s);
		return -1;
	}
	*out = (size_t)(v * mult);
	return 0;
}

void
strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

size_t
strv_len(char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

/* Strips leading and trailing white space in place. */
char *
str_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Splits "a, b ,c" on commas into a NULL-terminated vector of trimmed
 * items; returns the count (0 for a blank string), or -1 when an item is
 * empty ("a,,b"). */
int
split_list(const char *s, char ***out)
{
	char *copy = xstrdup(s), *p = copy, *item;
	char **v = xcalloc(1, sizeof *v);
	int n = 0, bad = 0;

	for (;;) {
		char *comma = strchr(p, ',');

		if (comma != NULL)
			*comma = '\0';
		item = str_trim(p);
		if (*item == '\0')
			bad = 1;
		else {
			v = xrealloc(v, (size_t)(n + 2) * sizeof *v);
			v[n++] = xstrdup(item);
			v[n] = NULL;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	free(copy);
	if (bad && s[strspn(s, " \t")] != '\0') {
		strv_free(v);
		*out = NULL;
		return -1;
	}
	*out = v;
	return n;
}

/* Writes 2*nbytes random hex digits and a NUL into out. */
void
random_hex(char *out, size_t nbytes)
{
	unsigned char raw[64];
	size_t i, got = 0;

	if (nbytes > sizeof raw)
		fatal("random_hex: %zu bytes asked, at most %zu", nbytes, sizeof raw);
	while (got < nbytes) {
		ssize_t n = getrandom(raw + got, nbytes - got, 0);

		if (n < 0 && errno != EINTR)
			fatal("getrandom: %s", strerror(errno));
		if (n > 0)
			got += (size_t)n;
	}
	for (i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* A random number for pauses and jitter (not for secrets).  It comes
 * from the kernel; where getrandom is refused (an old kernel, a seccomp
 * filter) from a generator seeded once per thread with the time, the
 * pid and an address, so that two processes never draw alike (the state
 * is the thread's own: the writers of a batch draw at once). */
uint32_t
random_u32(void)
{
	static _Thread_local uint64_t state;
	uint32_t r;

	if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
		return r;
	if (state == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		state = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
		    ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r;
		if (state == 0)
			state = 0x9e3779b97f4a7c15u;
	}
	/* xorshift64* */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (uint32_t)((state * 0x2545f4914f6cdd1du) >> 32);
}
