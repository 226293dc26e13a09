/* lib/runners.h - the observer runners on this machine, as perc wait counts them */
#ifndef RUNNERS_H
#define RUNNERS_H

#include <sys/types.h>

#include "perc.h"

/* The byte of DIR/observer.lock that stands for a row (observe.c). */
off_t runners_row_byte(perc_bytes row);

/* A new open file description of DIR/observer.lock, made if need be:
   its fd, or a negative PERC_E* code. */
int   runners_lock_open(const char *dir);

/*
 * How many runners of the columns (of every observed column, when n is
 * 0) live on this machine; 0 when that cannot be told.
 */
unsigned runners_seen(const char *dir, const perc_bytes *columns, size_t n);
#endif
