/*
 * cmd/out.c - the one output layer of the commands that print rows
 * (get, scan, show, log, resolve-locks, scan-notify): a row is a list
 * of named fields, written as a TSV line (byte strings escaped as
 * perc(1) says, fields tab-separated), or, with --json, as one JSON
 * object a line (JSON Lines): a byte string as a JSON string when it
 * is valid UTF-8, else as {"base64": "..."}; a timestamp as a string of
 * its decimal digits, exact in every JSON parser; a count as a number;
 * a word (a kind, an op, an action) as a string.  The names are the
 * fields' names in each command's man page, in lower case.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int cmd_json;

/* Is b valid UTF-8: no overlong form, no surrogate, nothing past
   U+10FFFF? */
static int
is_utf8(perc_bytes b)
{
	const unsigned char *p = b.data;
	size_t i = 0, n, k;
	uint32_t c;

	while (i < b.len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (p[i] >= 0xc2 && p[i] <= 0xdf)
			n = 1, c = p[i] & 0x1f;
		else if (p[i] >= 0xe0 && p[i] <= 0xef)
			n = 2, c = p[i] & 0x0f;
		else if (p[i] >= 0xf0 && p[i] <= 0xf4)
			n = 3, c = p[i] & 0x07;
		else
			return 0;
		if (b.len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 2 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		    (n == 3 && (c < 0x10000 || c > 0x10ffff)))
			return 0;
		i += n + 1;
	}
	return 1;
}

/* A JSON string of UTF-8 text: quotes, backslashes and control
   characters escaped, everything else as it is. */
static void
json_string(perc_bytes b)
{
	const unsigned char *p = b.data;
	size_t i;

	putchar('"');
	for (i = 0; i < b.len; i++) {
		if (p[i] == '"' || p[i] == '\\')
			printf("\\%c", p[i]);
		else if (p[i] == '\n')
			fputs("\\n", stdout);
		else if (p[i] == '\t')
			fputs("\\t", stdout);
		else if (p[i] < 0x20)
			printf("\\u%04x", p[i]);
		else
			putchar(p[i]);
	}
	putchar('"');
}

static void
json_base64(perc_bytes b)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = b.data;
	uint32_t v;
	size_t i;

	fputs("{\"base64\":\"", stdout);
	for (i = 0; i + 2 < b.len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		printf("%c%c%c%c", digits[v >> 18], digits[v >> 12 & 63],
		    digits[v >> 6 & 63], digits[v & 63]);
	}
	if (b.len - i == 1) {
		v = (uint32_t)p[i] << 16;
		printf("%c%c==", digits[v >> 18], digits[v >> 12 & 63]);
	} else if (b.len - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		printf("%c%c%c=", digits[v >> 18], digits[v >> 12 & 63],
		    digits[v >> 6 & 63]);
	}
	fputs("\"}", stdout);
}

static int
json_value(const struct out_field *f)
{
	switch (f->type) {
	case OUT_BYTES:
		if (is_utf8(f->bytes))
			json_string(f->bytes);
		else
			json_base64(f->bytes);
		break;
	case OUT_NONE:
		fputs("null", stdout);
		break;
	case OUT_TS:
		printf("\"%" PRIu64 "\"", f->n);
		break;
	case OUT_COUNT:
		printf("%" PRIu64, f->n);
		break;
	case OUT_WORD:
		json_string((perc_bytes){ f->word, strlen(f->word) });
		break;
	}
	return 0;
}

static int
tsv_value(const struct out_field *f)
{
	switch (f->type) {
	case OUT_BYTES:
		return cmd_print_field(f->bytes);
	case OUT_NONE:
		fputs("\\N", stdout);   /* which escaping never makes */
		break;
	case OUT_TS:
	case OUT_COUNT:
		printf("%" PRIu64, f->n);
		break;
	case OUT_WORD:
		fputs(f->word, stdout);
		break;
	}
	return 0;
}

/* The members of f, JSON, with a comma before each but the first. */
static int
json_members(const struct out_field *f, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		printf("%s\"%s\":", i > 0 ? "," : "", f[i].name);
		rc = json_value(&f[i]);
	}
	return rc;
}

/*
 * One JSON object of the members f, and a member list: an array of
 * nrows objects, each of the width fields of rows that are its own
 * (status: its keys, and one object per observed column).
 */
int
cmd_out_object(const struct out_field *f, size_t n, const char *list,
    const struct out_field *rows, size_t nrows, size_t width)
{
	size_t i;
	int rc;

	putchar('{');
	rc = json_members(f, n);
	printf("%s\"%s\":[", n > 0 ? "," : "", list);
	for (i = 0; i < nrows && rc == 0; i++) {
		printf("%s{", i > 0 ? "," : "");
		rc = json_members(rows + i * width, width);
		putchar('}');
	}
	fputs("]}\n", stdout);
	return rc;
}

int
cmd_out_row(const struct out_field *f, size_t n)
{
	size_t i;
	int rc = 0;

	if (cmd_json) {
		putchar('{');
		rc = json_members(f, n);
		fputs("}\n", stdout);
		return rc;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if (i > 0)
			putchar('\t');
		rc = tsv_value(&f[i]);
	}
	putchar('\n');
	return rc;
}
