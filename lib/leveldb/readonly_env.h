/* lib/leveldb/readonly_env.h - an Env that keeps every write in memory */
#ifndef READONLY_ENV_H
#define READONLY_ENV_H

#include <leveldb/env.h>

/* A new Env over base, to be deleted after the DB that uses it. */
leveldb::Env *readonly_env_new(leveldb::Env *base);
/* From now on, creating a file fails: for once the DB is open. */
void readonly_env_freeze(leveldb::Env *env);
#endif
