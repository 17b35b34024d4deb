/* cron_describe.c -- an expression in English, as `jobq cron`, `jobq
 * schedule --list` and the dashboard show it: "at 09:30 on Monday
 * through Friday", "every 15 minutes during hours 9 through 17".  Reads
 * the parsed fields through cron.c's accessors; "never" comes from
 * cron_next.c. */
#include "config.h"

#include <stdlib.h>

#include "cron.h"
#include "cron_int.h"
#include "util.h"

/* ---- English descriptions ---- */

static const char *const long_months[] = { "", "January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December" };
static const char *const long_days[] = { "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday" };

static int
count_bits(uint64_t b)
{
	int n = 0;

	for (; b != 0; b &= b - 1)
		n++;
	return n;
}

static uint64_t
range_bits(int lo, int hi)
{
	uint64_t b = 0;
	int v;

	for (v = lo; v <= hi; v++)
		b |= 1ULL << v;
	return b;
}

static const char *
ordinal_suffix(int n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	switch (n % 10) {
	case 1:
		return "st";
	case 2:
		return "nd";
	case 3:
		return "rd";
	default:
		return "th";
	}
}

/* The step N when bits are lo, lo+N, lo+2N ... up to hi (N >= 2, three
 * values at least); else 0. */
static int
step_of(uint64_t bits, int lo, int hi)
{
	int step = 0, v, first = -1, last = -1;

	if (!((bits >> lo) & 1) || count_bits(bits) < 2)
		return 0;
	for (v = lo + 1; v <= hi; v++)
		if ((bits >> v) & 1) {
			step = v - lo;
			break;
		}
	if (step < 2)
		return 0;
	for (v = lo; v <= hi; v++) {
		int want = (v - lo) % step == 0;

		if ((int)((bits >> v) & 1) != want)
			return 0;
		if (want)
			last = v, first = first < 0 ? v : first;
	}
	if (last + step <= hi)
		return 0;
	/* two values are "every N" only when N divides the field: 0,30 is
	 * every 30 minutes, 0,45 is not every 45 */
	return count_bits(bits) > 2 || (hi - lo + 1) % step == 0 ? step : 0;
}

/* Names one value of a field. */
static void
add_value(struct buf *b, int field, int v)
{
	if (field == F_MON)
		buf_adds(b, long_months[v]);
	else if (field == F_WDAY)
		buf_adds(b, long_days[v]);
	else
		buf_printf(b, "%d", v);
}

/* "1, 3 through 5 and 9": runs of three or more become ranges; last
 * joins the last two parts (" and ", " or "). */
static void
add_set_joined(struct buf *b, int field, uint64_t bits, int lo, int hi, const char *last)
{
	struct buf part[64];
	int v = lo, n = 0, i;

	while (v <= hi) {
		int end;

		if (!((bits >> v) & 1)) {
			v++;
			continue;
		}
		for (end = v; end + 1 <= hi && ((bits >> (end + 1)) & 1); end++)
			;
		if (end - v < 2)
			end = v; /* two in a row are listed, not joined */
		buf_init(&part[n]);
		add_value(&part[n], field, v);
		if (end > v) {
			buf_adds(&part[n], " through ");
			add_value(&part[n], field, end);
		}
		n++;
		v = end + 1;
	}
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_adds(b, i + 1 == n ? last : ", ");
		buf_adds(b, part[i].data);
		buf_free(&part[i]);
	}
}

static void
add_set(struct buf *b, int field, uint64_t bits, int lo, int hi)
{
	add_set_joined(b, field, bits, lo, hi, " and ");
}

/* "at 09:30, 11:30 and 13:30" */
static void
add_times(struct buf *b, const struct cron *c)
{
	uint64_t hours = cron_field(c, F_HOUR), mins = cron_field(c, F_MIN);
	int h, m, n = 0, total = count_bits(hours) * count_bits(mins);

	buf_adds(b, "at ");
	for (h = 0; h < 24; h++)
		for (m = 0; m < 60; m++)
			if (((hours >> h) & 1) && ((mins >> m) & 1)) {
				if (n > 0)
					buf_adds(b, n + 1 == total ? " and " : ", ");
				buf_printf(b, "%02d:%02d", h, m);
				n++;
			}
}

/* The minute part alone: "every minute", "every 15 minutes", "at minute 5". */
static void
add_minutes(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 0, 59);

	if (bits == range_bits(0, 59))
		buf_adds(b, "every minute");
	else if (step > 0)
		buf_printf(b, "every %d minutes", step);
	else {
		buf_adds(b, count_bits(bits) == 1 ? "at minute " : "at minutes ");
		add_set(b, F_MIN, bits, 0, 59);
	}
}

static void
add_time_part(struct buf *b, const struct cron *c)
{
	uint64_t hours = cron_field(c, F_HOUR), mins = cron_field(c, F_MIN);
	int hstep = step_of(hours, 0, 23);

	if (hours == range_bits(0, 23)) {
		if (mins == 1) {
			buf_adds(b, "every hour");
			return;
		}
		add_minutes(b, mins);
		if (mins != range_bits(0, 59) && step_of(mins, 0, 59) == 0)
			buf_adds(b, " of every hour");
		return;
	}
	if (count_bits(mins) * count_bits(hours) <= 8) {
		add_times(b, c);
		return;
	}
	add_minutes(b, mins);
	if (hstep > 0)
		buf_printf(b, " of every %d%s hour", hstep, ordinal_suffix(hstep));
	else {
		buf_adds(b, count_bits(hours) == 1 ? " during hour " : " during hours ");
		add_set(b, F_HOUR, hours, 0, 23);
	}
}

static void
add_months(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 1, 12);

	if (bits == range_bits(1, 12))
		buf_adds(b, "the month");
	else if (step > 0)
		buf_printf(b, "every %d%s month", step, ordinal_suffix(step));
	else
		add_set(b, F_MON, bits, 1, 12);
}

static void
add_mdays(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 1, 31);

	if (step > 0)
		buf_printf(b, "every %d%s day", step, ordinal_suffix(step));
	else {
		buf_adds(b, count_bits(bits) == 1 ? "day " : "days ");
		add_set(b, F_MDAY, bits, 1, 31);
	}
}

/* "Monday through Friday", else prefix and the days joined by last:
 * "on Monday and Friday", "every Monday and Friday" (beside days of the
 * month: the "either" rule), "a Monday or Friday" (after "if it is"). */
static void
add_wdays(struct buf *b, uint64_t bits, const char *prefix, const char *last)
{
	int lo = 0, hi = 6;

	while (!((bits >> lo) & 1))
		lo++;
	while (!((bits >> hi) & 1))
		hi--;
	if (hi - lo >= 2 && bits == range_bits(lo, hi)) {
		add_set(b, F_WDAY, bits, 0, 6);
		return;
	}
	buf_adds(b, prefix);
	add_set_joined(b, F_WDAY, bits, 0, 6, last);
}

static void
add_day_part(struct buf *b, const struct cron *c)
{
	uint64_t dom = cron_field(c, F_MDAY), dow = cron_field(c, F_WDAY), mon = cron_field(c, F_MON);
	int all_dom = dom == range_bits(1, 31), all_dow = dow == range_bits(0, 6);
	int either = !cron_field_star(c, F_MDAY) && !cron_field_star(c, F_WDAY);

	if (either && (all_dom || all_dow))
		all_dom = all_dow = 1; /* "1-31 or Monday" is every day */
	if (!all_dom) {
		buf_adds(b, " on ");
		add_mdays(b, dom);
		buf_adds(b, " of ");
		add_months(b, mon);
		if (!all_dow && either) {
			/* Vixie's rule: the days of the month and the weekdays
			 * both fire, each within the months given */
			buf_adds(b, " and ");
			add_wdays(b, dow, "every ", " and ");
			if (mon != range_bits(1, 12)) {
				buf_adds(b, " in ");
				add_months(b, mon);
			}
		} else if (!all_dow) {
			buf_adds(b, ", if it is ");
			add_wdays(b, dow, "a ", " or ");
		}
		return;
	}
	if (!all_dow) {
		buf_adds(b, ", ");
		add_wdays(b, dow, "on ", " and ");
	}
	if (mon != range_bits(1, 12)) {
		buf_adds(b, all_dow ? " in " : ", in ");
		add_months(b, mon);
	}
}

/* An English sentence for the expression, as `jobq cron` and `jobq
 * schedule --list` print it; "never" when no day matches.  The caller
 * frees it. */
char *
cron_describe(const struct cron *c)
{
	struct buf b;

	if (cron_never(c))
		return xstrdup("never (no such day)");
	buf_init(&b);
	add_time_part(&b, c);
	add_day_part(&b, c);
	return buf_steal(&b);
}
