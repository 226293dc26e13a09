/*
 * lib/backend.h - the stores, by the scheme of a store URL, and what
 * one is handed from above
 */
#ifndef BACKEND_H
#define BACKEND_H

#include <stdint.h>

#include "store.h"

/*
 * The stores, by the scheme of the store URL in the config: a data
 * directory without one keeps its cells in LevelDB, inside it.
 */
struct backend {
	const char *name;       /* as the store's ops->name */
	const char *scheme;     /* its URLs' beginning; NULL: no URL */
	int       (*create)(const char *url, const struct store_env *env);
	int       (*open)(struct store **out, const char *url,
	                  const struct store_env *env);
};

/* The store of url (NULL: LevelDB), or PERC_EUSAGE for a bad URL. */
int  backend_of(const struct backend **out, const char *url);
/* What a store of data directory dir is handed from above (store.h). */
void backend_env_init(struct store_env *env, const char *dir,
                      int64_t timeout_ms);
#endif
