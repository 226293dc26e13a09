/*
 * lib/backend.c - the stores, by the scheme of a store URL, and what
 * one is handed from above when it is created or opened (store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "buf.h"
#include "error.h"
#include "journal.h"

static const struct backend backends[] = {
	{ "leveldb", NULL, store_leveldb_create, store_served_open },
	{ "redis", "redis://", store_redis_create, store_redis_open },
};

const char *
perc_store_name(size_t i)
{
	return i < sizeof(backends) / sizeof(backends[0]) ?
	    backends[i].name : NULL;
}

int
backend_of(const struct backend **out, const char *url)
{
	perc_buf shown = PERC_BUF_INIT;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		*out = &backends[i];
		if (url == NULL ? (*out)->scheme == NULL : (*out)->scheme !=
		    NULL && strncmp(url, (*out)->scheme,
		    strlen((*out)->scheme)) == 0)
			return 0;
	}
	if ((rc = store_url_public(&shown, url)) == 0)
		rc = error_set(PERC_EUSAGE, "bad store URL '%s': it should "
		    "read redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
		    "[/TABLE]", error_quote(buf_bytes(&shown)));
	perc_buf_dispose(&shown);
	return rc;
}

/*
 * PERC_FAILPOINT=NAME:power-cut (failpoint.c) asks for a power cut: the
 * store is told at open, to keep what one would lose (store.h).
 */
static int
power_cut_asked(void)
{
	const char *fp = getenv("PERC_FAILPOINT");

	return fp != NULL && strstr(fp, ":power-cut") != NULL;
}

void
backend_env_init(struct store_env *env, const char *dir, int64_t timeout_ms)
{
	const char *nosync = getenv("PERC_UNSAFE_NOSYNC");
	const char *serve = getenv("PERC_SERVE");

	env->dir = dir;
	env->timeout_ms = timeout_ms;
	env->power_cuts = power_cut_asked();
	env->nosync = nosync != NULL && strcmp(nosync, "1") == 0;
	env->owner_alive = journal_owner_alive;
	env->serve = serve == NULL || strcmp(serve, "0") != 0;
}
