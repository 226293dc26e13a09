/*
 * lib/redis/url.c - the Redis Cluster client's reading of a seed list
 * (cluster.h): its hosts and ports, the user and password it may
 * hold, and the URL without that password, which every message shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "escape.h"
#include "cluster.h"

#define MAX_SEEDS      64

/* Are the n bytes at s all of chars? */
static int
all_of(const char *s, size_t n, const char *chars)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(chars, s[i]) == NULL)
			return 0;
	return 1;
}

/*
 * The host of seed item, an IPv6 address in brackets: *host, *hostlen
 * its address, *rest what follows the ']'.
 */
static int
ipv6_host(const char **host, size_t *hostlen, const char **rest,
    perc_bytes item)
{
	const char *close = memchr(item.data, ']', item.len);

	if (close == NULL)
		return error_set(PERC_EUSAGE, "redis seed '%s': an "
		    "IPv6 address in '[' lacks its ']'", error_quote(item));
	*host = (const char *)item.data + 1;
	*hostlen = (size_t)(close - *host);
	*rest = close + 1;
	if (!all_of(*host, *hostlen, "0123456789abcdefABCDEF:.") ||
	    memchr(*host, ':', *hostlen) == NULL)
		return error_set(PERC_EUSAGE, "redis seed '%s': not an "
		    "IPv6 address in its brackets", error_quote(item));
	return 0;
}

/* The host of seed item, a name or an IPv4 address, as ipv6_host. */
static int
plain_host(const char **host, size_t *hostlen, const char **rest,
    perc_bytes item)
{
	const char *s = item.data, *end = s + item.len;

	*host = s;
	if ((*rest = memchr(s, ':', item.len)) == NULL)
		*rest = end;
	*hostlen = (size_t)(*rest - s);
	if (*rest < end && memchr(*rest + 1, ':', (size_t)(end - *rest - 1))
	    != NULL)
		return error_set(PERC_EUSAGE, "redis seed '%s': an IPv6 "
		    "address goes in brackets, [ADDRESS]:PORT",
		    error_quote(item));
	if (!all_of(*host, *hostlen, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"))
		return error_set(PERC_EUSAGE, "redis seed '%s': host "
		    "must be an IPv4 address, a name or an IPv6 "
		    "address in brackets", error_quote(item));
	return 0;
}

/* The port of ":PORT" from rest to end, or -1 when it is not a number. */
static long
parse_port(const char *rest, const char *end)
{
	long port = 0;

	if (*rest != ':' || rest + 1 == end ||
	    !all_of(rest + 1, (size_t)(end - rest - 1), "0123456789"))
		return -1;
	for (rest++; rest < end && port <= 65535; rest++)
		port = port * 10 + (*rest - '0');
	return port;
}

/*
 * One seed, HOST[:PORT] or [IPV6][:PORT], as Redis users write them;
 * the port is 6379 when left out.
 */
static int
parse_addr(rc_addr *a, const char *s, size_t len)
{
	perc_bytes item = { s, len };
	const char *end = s + len, *host = s, *rest = end;
	size_t hostlen = 0;
	long port = 6379;
	int rc;

	if (len == 0)
		return error_set(PERC_EUSAGE, "empty entry in the redis seed "
		    "list; want host[:port][,host[:port]]...");
	rc = *s == '[' ? ipv6_host(&host, &hostlen, &rest, item) :
	    plain_host(&host, &hostlen, &rest, item);
	if (rc < 0)
		return rc;
	if (hostlen == 0)
		return error_set(PERC_EUSAGE, "redis seed '%s' has no host",
		    error_quote(item));
	if (hostlen >= sizeof(a->host))
		return error_set(PERC_EUSAGE, "redis seed '%s': host name "
		    "too long", error_quote(item));
	if (rest < end && ((port = parse_port(rest, end)) < 1 ||
	    port > 65535))
		return error_set(PERC_EUSAGE, "redis seed '%s': port "
		    "must be a number from 1 to 65535", error_quote(item));
	memcpy(a->host, host, hostlen);
	a->host[hostlen] = '\0';
	a->port = (int)port;
	return 0;
}

/* The seed list of list: after "redis://" and USER:PASSWORD@, if any. */
static const char *
seeds_of(const char *list)
{
	const char *at;

	if (strncmp(list, "redis://", 8) == 0)
		list += 8;
	/* No host holds an '@', so the last one ends a password. */
	return (at = strrchr(list, '@')) != NULL ? at + 1 : list;
}

int
rc_parse_seeds(rc_addr **out, size_t *n, const char *list)
{
	const char *p, *comma;
	size_t count = 1, i = 0;
	rc_addr *addrs;
	int rc;

	*out = NULL;
	*n = 0;
	list = seeds_of(list != NULL ? list : "");
	if (*list == '\0')
		return error_set(PERC_EUSAGE, "empty redis seed list; "
		    "want host[:port][,host[:port]]...");
	for (p = list; (p = strchr(p, ',')) != NULL; p++)
		count++;
	if (count > MAX_SEEDS)
		return error_set(PERC_EUSAGE, "more than %d redis seeds",
		    MAX_SEEDS);
	if ((addrs = calloc(count, sizeof(*addrs))) == NULL)
		return error_set(PERC_EIO, "out of memory");
	for (p = list;; p = comma + 1) {
		comma = strchr(p, ',');
		rc = parse_addr(&addrs[i++], p,
		    comma ? (size_t)(comma - p) : strlen(p));
		if (rc < 0) {
			free(addrs);
			return rc;
		}
		if (comma == NULL)
			break;
	}
	*out = addrs;
	*n = count;
	return 0;
}

/* The n bytes at s with each %XX decoded, NUL-terminated; NULL: bad. */
static char *
percent_decode(const char *s, size_t n)
{
	char *out, *o;
	size_t i;
	int hi, lo;

	if ((o = out = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= n)
			goto bad;
		hi = escape_hex_value((unsigned char)s[i + 1]);
		lo = escape_hex_value((unsigned char)s[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			goto bad;
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/*
 * The credentials of USER:PASSWORD@ or :PASSWORD@ in list, decoded.
 * No message ever quotes them.
 */
int
rc_parse_auth(char **user, char **pass, const char *list)
{
	const char *hosts, *colon;

	*user = *pass = NULL;
	if (strncmp(list, "redis://", 8) == 0)
		list += 8;
	if ((hosts = seeds_of(list)) == list)
		return 0;
	colon = memchr(list, ':', (size_t)(hosts - 1 - list));
	if (colon == NULL || colon + 1 == hosts - 1)
		return error_set(PERC_EUSAGE, "the redis URL has a user but no "
		    "password; write redis://USER:PASSWORD@HOST:PORT, or "
		    "redis://:PASSWORD@HOST:PORT for a server's requirepass");
	if ((colon > list && (*user = percent_decode(list,
	    (size_t)(colon - list))) == NULL) ||
	    (*pass = percent_decode(colon + 1, (size_t)(hosts - 2 -
	    colon))) == NULL) {
		free(*user);
		*user = NULL;
		return error_set(PERC_EUSAGE, "the redis URL's user or password "
		    "has a '%%' that is not followed by two hex digits (not "
		    "00); write a '%%' as %%25");
	}
	return 0;
}

int
rc_public_url(perc_buf *out, const char *url)
{
	const char *p = url, *hosts, *colon;
	int rc;

	out->len = 0;
	if (strncmp(p, "redis://", 8) == 0)
		p += 8;
	if ((hosts = seeds_of(p)) == p)
		return buf_set(out, url, strlen(url));
	colon = memchr(p, ':', (size_t)(hosts - 1 - p));
	if (colon == NULL)
		colon = hosts - 1;
	if ((rc = buf_set(out, url, (size_t)(p - url))) == 0 &&
	    colon > p && (rc = buf_add(out, p, (size_t)(colon - p))) == 0)
		rc = buf_add(out, "@", 1);
	if (rc == 0)
		rc = buf_add(out, hosts, strlen(hosts));
	return rc;
}
