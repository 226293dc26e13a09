/*
 * lib/config.h - DIR/config, whose presence makes DIR a data directory,
 * and the observed-column sets it names
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>
#include <sys/stat.h>

#include "perc.h"

/* The observed columns of DIR/config, each list in the order named:
   by init --observe (strong) and by init --observe-weak (weak). */
struct observed {
	perc_buf *strong;
	size_t    nstrong;
	perc_buf *weak;
	size_t    nweak;
};

/* Read DIR/config: its observed columns, store URL, file and format. */
int  config_read(struct observed *o, char **store, const char *dir,
                 struct stat *st, int *version);
/* Replace DIR/config atomically, durably, with a config of format. */
int  config_write(const char *dir, const char *store,
                  const struct observed *o, int format);
/* The format a config of store (NULL: LevelDB) and o names. */
int  config_format(const char *store, const struct observed *o,
                   int indexed);
/* PERC_ENOTDB: path is no data directory, saying how to name one. */
int  config_not_a_db(const char *path);

/* Is col one of the n columns cols? */
int  observed_has(const perc_buf *cols, size_t n, perc_bytes col);
/* Add to o the columns it lacks; PERC_EUSAGE for one named both ways. */
int  observed_add(struct observed *o, const perc_bytes *strong, size_t n,
                  const perc_bytes *weak, size_t nweak, int *changed);
/* Free o's columns and empty it. */
void observed_free(struct observed *o);
#endif
