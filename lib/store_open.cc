/*
 * lib/store_open.cc - open LevelDB with the options its C API leaves
 * out.  Every perc command opens the store afresh, so the open must
 * stay cheap however long the store has been used:
 *
 *  - reuse_logs keeps appending to the last log and manifest instead of
 *    turning each process's few writes into a new level-0 table file
 *    (with the C API, 1,000 commands left 1,000 tiny tables and an open
 *    three times slower).  Only after a clean close, though: LevelDB
 *    would append after a torn last record and later read the new
 *    records as part of it (google/leveldb#1287), so store_leveldb.c asks for
 *    it only when it knows the log ends whole;
 *  - a small write buffer bounds the log that each open replays;
 *  - a silent info logger spares the rename of LOG to LOG.old and the
 *    new LOG file that every open would otherwise make;
 *  - a store perc may not write is opened over readonly_env.cc, which
 *    keeps LevelDB's own writes of the open in memory; any other over
 *    durable_env.cc, which adds the syncs a power cut needs.
 *
 * The handle returned is the C API's own, so everything else in perc
 * goes on using leveldb/c.h.
 */
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include <leveldb/c.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "durable_env.h"
#include "readonly_env.h"

extern "C" {
#include "store_leveldb.h"
}

/* The C API's handles, laid out exactly as leveldb's db/c.cc has them. */
struct leveldb_t {
	leveldb::DB *rep;
};
struct leveldb_writebatch_t {
	leveldb::WriteBatch rep;
};

namespace {

class SilentLogger : public leveldb::Logger {
public:
	void Logv(const char *, std::va_list) override {}
};

SilentLogger silent;

} // namespace

extern "C" leveldb_t *
store_open_tuned(const char *path, unsigned flags, void **env,
    char **errptr)
{
	leveldb::Options options;
	leveldb::DB *db = nullptr;
	leveldb::Env *wrapped;

	options.create_if_missing = (flags & STORE_CREATE) != 0;
	options.paranoid_checks = true;
	options.reuse_logs = (flags & STORE_REUSE_LOGS) != 0;
	options.write_buffer_size = 64 << 10;
	/*
	 * A bulk writer's memtables become tables of a useful size, not
	 * hundreds of small ones (keys loaded in order go straight to
	 * level 2, where LevelDB never merges them): it makes its last
	 * memtable a table before it closes (store_leveldb.c), so the next
	 * open still replays an empty log.  And a process that opens the
	 * store between a big writer's batches replays the writer's log
	 * of up to some MB: LevelDB turns a log it replays into a level-0
	 * table each time the memtable outgrows the write buffer, so with
	 * 64 KB such a reader wrote dozens of small tables, syncing each,
	 * while the writer waited, and filled level 0 towards LevelDB's
	 * write stop.
	 */
	if (flags & STORE_BIG_BUFFER)
		options.write_buffer_size = (size_t)8 << 20;
	options.info_log = &silent;
	/*
	 * Read-only, nothing is appended, so the last log may always be
	 * reused, torn or not, and a big write buffer lets it stay the
	 * memtable whatever its size rather than become tables.
	 */
	if (flags & STORE_READ_ONLY) {
		wrapped = readonly_env_new(leveldb::Env::Default());
		options.reuse_logs = true;
		options.write_buffer_size = (size_t)1 << 30;
	} else
		wrapped = durable_env_new(leveldb::Env::Default(),
		    (flags & STORE_SIMULATE_CUTS) != 0);
	options.env = wrapped;
	leveldb::Status s = leveldb::DB::Open(options, path, &db);
	if (!s.ok()) {
		delete wrapped;
		*errptr = strdup(s.ToString().c_str());
		return nullptr;
	}
	if (flags & STORE_READ_ONLY)
		readonly_env_freeze(wrapped);
	*env = wrapped;
	return new leveldb_t{ db };
}

/* Close what store_open_tuned opened: the DB first, then its Env. */
extern "C" void
store_close_tuned(leveldb_t *db, void *env, int read_only)
{
	if (!read_only)
		durable_env_closing(static_cast<leveldb::Env *>(env));
	leveldb_close(db);
	delete static_cast<leveldb::Env *>(env);
}

/* The power cut of PERC_FAILPOINT=NAME:power-cut: see durable_env.cc. */
extern "C" void
store_cut_power(void *env)
{
	durable_env_power_cut(static_cast<leveldb::Env *>(env));
}

/* The bytes batch adds to the log, about. */
extern "C" size_t
store_batch_size(leveldb_writebatch_t *batch)
{
	return batch->rep.ApproximateSize();
}
