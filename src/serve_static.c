/* serve_static.c -- the dashboard's HTML, CSS and JavaScript, compiled
 * into the binary (serve_www.c).  Every page address gets the same
 * index.html; its module app.js reads the address, draws that page with
 * the page's module (jobs.js, ...) and asks the JSON API. */
#include "config.h"

#include <string.h>

#include "serve_http.h"
#include "serve_static.h"
#include "serve_www.h"

static const struct www_file *
find(const char *path)
{
	size_t i;

	for (i = 0; i < www_nfiles; i++)
		if (strcmp(www_files[i].path, path) == 0)
			return &www_files[i];
	return NULL;
}

/* GET /static/FILE */
MHD_RESULT
serve_static(struct req *r)
{
	const struct www_file *f = find(r->url);

	if (f == NULL)
		return serve_error(r, 404, "no such file");
	return serve_respond(r, 200, f->type, f->data, f->len, NULL);
}

/* GET / and every page address */
MHD_RESULT
serve_page(struct req *r)
{
	const struct www_file *f = find("/static/index.html");

	return serve_respond(r, 200, f->type, f->data, f->len, NULL);
}
