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
 *    records as part of it (google/leveldb#1287), so store.c asks for
 *    it only when it knows the log ends whole;
 *  - a small write buffer bounds the log that each open replays;
 *  - a quiet info logger spares the rename of LOG to LOG.old and the
 *    new LOG file that every open would otherwise make (it only keeps
 *    the file a corruption is in, for the error);
 *  - a store perc may not write is opened over readonly_env.cc, which
 *    keeps LevelDB's own writes of the open in memory; any other over
 *    durable_env.cc, which adds the syncs a power cut needs.
 *
 * The handle returned is the C API's own, so everything else in perc
 * goes on using c.h.
 */
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include <leveldb/c.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "durable_env.h"
#include "readonly_env.h"

extern "C" {
#include "buf.h"
#include "leveldb.h"
}

/* The C API's handles, laid out exactly as leveldb's db/c.cc has them. */
struct leveldb_t {
	leveldb::DB *rep;
};
struct leveldb_writebatch_t {
	leveldb::WriteBatch rep;
};

namespace {

/*
 * Says nothing, but keeps the file named by recovery's last "dropping"
 * line: LevelDB's corruption status of a damaged log does not name it.
 */
class DroppedLogger : public leveldb::Logger {
public:
	void Logv(const char *format, std::va_list ap) override
	{
		char line[1024];

		if (std::strstr(format, "dropping") == nullptr)
			return;
		std::vsnprintf(line, sizeof(line), format, ap);
		const char *end = std::strstr(line, ": dropping");
		if (end == nullptr)
			return;
		const char *start = line;
		if (std::strncmp(start, "(ignoring error) ", 17) == 0)
			start += 17;
		std::lock_guard<std::mutex> l(mu_);
		file_.assign(start, end);
	}
	std::string take()
	{
		std::lock_guard<std::mutex> l(mu_);
		std::string f;

		f.swap(file_);
		return f;
	}

private:
	std::mutex  mu_;
	std::string file_;
};

DroppedLogger quiet;

/*
 * Nor does its corruption status of a damaged table: each thread keeps
 * the name of the file it read last, which is the one a block that
 * fails its checksum came from (LevelDB checks right after the read).
 */
thread_local char last_read[4096];    /* no heap: see NamedFile::Read */

class NamedFile : public leveldb::RandomAccessFile {
public:
	NamedFile(std::string name, leveldb::RandomAccessFile *target)
	    : name_(std::move(name)), target_(target) {}
	~NamedFile() override { delete target_; }
	leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice *result,
	    char *scratch) const override
	{
		/*
		 * Copied, not pointed to: a table that fails to open is
		 * deleted before the error is read.  And into a buffer of
		 * fixed size, not a string, which LevelDB's detached thread
		 * would leave on the heap at exit.
		 */
		size_t len = std::min(name_.size(), sizeof(last_read) - 1);

		std::memcpy(last_read, name_.data(), len);
		last_read[len] = '\0';
		return target_->Read(offset, n, result, scratch);
	}

private:
	std::string                name_;
	leveldb::RandomAccessFile *target_;
};

class NamingEnv : public leveldb::EnvWrapper {
public:
	NamingEnv() : EnvWrapper(leveldb::Env::Default()) {}
	leveldb::Status NewRandomAccessFile(const std::string &f,
	    leveldb::RandomAccessFile **r) override
	{
		leveldb::Status s = target()->NewRandomAccessFile(f, r);

		if (s.ok())
			*r = new NamedFile(f, *r);
		return s;
	}
};

NamingEnv naming;

/*
 * The file a corruption found by opening the store at path is in: the
 * log recovery dropped records of, else the manifest that CURRENT names
 * (LevelDB reads nothing else to open), else CURRENT itself.
 */
std::string
damaged_file(const char *path)
{
	std::string dropped = quiet.take();
	std::string current = std::string(path) + "/CURRENT", name;

	if (!dropped.empty())
		return dropped;
	if (leveldb::ReadFileToString(leveldb::Env::Default(), current,
	    &name).ok() && name.size() > 1 && name.back() == '\n' &&
	    name.find('/') == std::string::npos)
		return std::string(path) + "/" + name.substr(0, name.size() - 1);
	return current;
}

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
	 * memtable a table before it closes (store.c), so the next
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
	options.info_log = &quiet;
	/*
	 * Read-only, nothing is appended, so the last log may always be
	 * reused, torn or not, and a big write buffer lets it stay the
	 * memtable whatever its size rather than become tables.
	 */
	if (flags & STORE_READ_ONLY) {
		wrapped = readonly_env_new(&naming);
		options.reuse_logs = true;
		options.write_buffer_size = (size_t)1 << 30;
	} else
		wrapped = durable_env_new(&naming,
		    (flags & STORE_SIMULATE_CUTS) != 0);
	options.env = wrapped;
	quiet.take();
	leveldb::Status s = leveldb::DB::Open(options, path, &db);
	if (!s.ok()) {
		std::string err = s.ToString();

		delete wrapped;
		if (s.IsCorruption() && err.find(path) == std::string::npos)
			err += " in " + damaged_file(path);
		*errptr = strdup(err.c_str());
		return nullptr;
	}
	if (flags & STORE_READ_ONLY)
		readonly_env_freeze(wrapped);
	*env = wrapped;
	return new leveldb_t{ db };
}

/* The file this thread's last read of a table came from, or NULL. */
extern "C" const char *
store_last_read(void)
{
	return last_read[0] == '\0' ? nullptr : last_read;
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

/*
 * Get key's value into out: 0, 1 when there is none, or -1 with
 * LevelDB's status in *errptr.  leveldb_get would copy the value it
 * read into a string it allocated, then into another it returns: this
 * read, the store's commonest, reuses one string instead.
 */
extern "C" int
store_get(leveldb_t *db, perc_buf *out, const char *key, size_t klen,
    char **errptr)
{
	static thread_local std::string value;
	leveldb::ReadOptions options;

	options.verify_checksums = true;
	leveldb::Status s = db->rep->Get(options, leveldb::Slice(key, klen),
	    &value);
	if (s.IsNotFound())
		return 1;
	if (!s.ok()) {
		*errptr = strdup(s.ToString().c_str());
		return -1;
	}
	return buf_set(out, value.data(), value.size()) < 0 ? -1 : 0;
}

/* The bytes batch adds to the log, about. */
extern "C" size_t
store_batch_size(leveldb_writebatch_t *batch)
{
	return batch->rep.ApproximateSize();
}
