/* prom.c -- the Prometheus text exposition format (version 0.0.4): label
 * values, the HELP and TYPE lines, and the standard process metrics that
 * every exporter offers (process_cpu_seconds_total and its kin), so that
 * a worker's and the dashboard's /metrics say them the same way. */
#include "config.h"

#include <dirent.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "prom.h"

/* Appends v as a label value: backslash, double quote and newline
 * escaped, as the format requires; everything else as it is. */
void
prom_label(struct buf *b, const char *v)
{
	for (; *v != '\0'; v++)
		if (*v == '\\' || *v == '"')
			buf_addc(b, '\\'), buf_addc(b, *v);
		else if (*v == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *v);
}

/* Appends the HELP and TYPE lines of metric name (help: one line, no
 * backslash). */
void
prom_head(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Open descriptors of this process (the entries of /proc/self/fd, less
 * the one reading it); -1 when unknown. */
static long
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* Virtual and resident size in bytes, from /proc/self/statm; 0 when
 * unknown. */
static void
memory(unsigned long long *vsize, unsigned long long *rss)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long pages = (unsigned long long)sysconf(_SC_PAGESIZE);

	*vsize = *rss = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "%llu %llu", vsize, rss) != 2)
		*vsize = *rss = 0;
	fclose(f);
	*vsize *= pages;
	*rss *= pages;
}

/* When this process started, in seconds since the epoch: the boot time
 * plus field 22 of /proc/self/stat (clock ticks after boot); now when
 * /proc does not say.  Read on each call (one small file): no state
 * shared between the threads that serve /metrics. */
static double
start_time(void)
{
	char line[1024], *p;
	unsigned long long ticks;
	struct timespec up, now;
	double t;
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &now);
	t = (double)now.tv_sec + now.tv_nsec / 1e9;
	if ((f = fopen("/proc/self/stat", "r")) == NULL)
		return t;
	p = fgets(line, sizeof line, f);
	fclose(f);
	/* comm may hold spaces and parentheses: count from the last ')' */
	if (p == NULL || (p = strrchr(line, ')')) == NULL ||
	    sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
	        &ticks) != 1 ||
	    clock_gettime(CLOCK_BOOTTIME, &up) < 0)
		return t;
	t = t - ((double)up.tv_sec + up.tv_nsec / 1e9) + (double)ticks / (double)sysconf(_SC_CLK_TCK);
	return t;
}

/* Appends the standard process metrics of the calling process (every
 * thread's CPU time counts). */
void
prom_process(struct buf *b)
{
	struct rusage ru;
	struct rlimit rl;
	unsigned long long vsize, rss;
	long fds = open_fds();

	getrusage(RUSAGE_SELF, &ru);
	memory(&vsize, &rss);
	prom_head(b, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
	buf_printf(b, "process_cpu_seconds_total %.6f\n",
	    (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	prom_head(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	buf_printf(b, "process_resident_memory_bytes %llu\n", rss);
	prom_head(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	buf_printf(b, "process_virtual_memory_bytes %llu\n", vsize);
	prom_head(b, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
	buf_printf(b, "process_start_time_seconds %.3f\n", start_time());
	if (fds >= 0) {
		prom_head(b, "process_open_fds", "gauge", "Number of open file descriptors.");
		buf_printf(b, "process_open_fds %ld\n", fds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		prom_head(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		buf_printf(b, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
}

/* Whether an Authorization header (got, NULL when absent) carries the
 * bearer token want; any request passes when want is NULL.  Compared in
 * constant time: a scraper's token must not leak by timing. */
int
prom_token_ok(const char *want, const char *got)
{
	if (want == NULL)
		return 1;
	if (got == NULL || strncmp(got, "Bearer ", 7) != 0 || strlen(got + 7) != strlen(want))
		return 0;
	return sodium_memcmp(got + 7, want, strlen(want)) == 0;
}
