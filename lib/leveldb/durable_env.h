/* lib/leveldb/durable_env.h - a LevelDB Env with the syncs a power cut needs */
#ifndef DURABLE_ENV_H
#define DURABLE_ENV_H

#include <leveldb/env.h>

/*
 * A new Env over base, to be deleted after the DB that uses it.  With
 * simulate_cuts, it also keeps what durable_env_power_cut needs, and
 * holds LevelDB's background work back (see durable_env.cc).
 */
leveldb::Env *durable_env_new(leveldb::Env *base, bool simulate_cuts);
/* Put every file back to what it held at its last sync; see the .cc. */
void durable_env_power_cut(leveldb::Env *env);
/*
 * Just before the DB closes: its log needs no sync now, and background
 * work simulate_cuts held back may run (the close waits for it).
 */
void durable_env_closing(leveldb::Env *env);
#endif
