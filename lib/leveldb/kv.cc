/*
 * lib/leveldb/kv.cc - kv.h over LevelDB's C++ API.
 *
 * kv_open opens LevelDB with the options perc needs.  Every perc
 * command opens the store afresh, so the open must stay cheap however
 * long the store has been used:
 *
 *  - reuse_logs keeps appending to the last log and manifest instead of
 *    turning each process's few writes into a new level-0 table file
 *    (without it, 1,000 commands left 1,000 tiny tables and an open
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
 * The rest are thin calls, as cheap as LevelDB's own C API: an
 * iterator is LevelDB's, its key and value point into it, and a get
 * copies the value into the caller's buffer once.
 */
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "durable_env.h"
#include "readonly_env.h"

extern "C" {
#include "buf.h"
#include "kv.h"
}

struct kv {
	leveldb::DB  *db;
	leveldb::Env *env;       /* ours, deleted after the DB */
	bool          read_only;
};
struct kv_batch {
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


namespace {

/* The status's message into *err, as kv.h says. */
void
save_error(const leveldb::Status &s, char **err)
{
	*err = strdup(s.ToString().c_str());
}

leveldb::Options
open_options(unsigned flags)
{
	leveldb::Options options;

	options.create_if_missing = (flags & KV_CREATE) != 0;
	options.paranoid_checks = true;
	options.reuse_logs = (flags & KV_REUSE_LOGS) != 0;
	options.write_buffer_size = 64 << 10;
	/*
	 * A bulk writer's memtables become tables of a useful size, not
	 * hundreds of small ones (keys loaded in order go straight to
	 * level 2, where LevelDB never merges them): it makes its last
	 * memtable a table before it closes (settle.c), so the next
	 * open still replays an empty log.  And a process that opens the
	 * store between a big writer's batches replays the writer's log
	 * of up to some MB: LevelDB turns a log it replays into a level-0
	 * table each time the memtable outgrows the write buffer, so with
	 * 64 KB such a reader wrote dozens of small tables, syncing each,
	 * while the writer waited, and filled level 0 towards LevelDB's
	 * write stop.  Not bigger than 4 MB: four level-0 tables and level
	 * 1 are merged in one unit of background work that a writer with
	 * others waiting must finish within its pause (settle.c), and with
	 * tables of 8 MB that unit took most of a second here.
	 */
	if (flags & KV_BIG_BUFFER)
		options.write_buffer_size = (size_t)4 << 20;
	/*
	 * The store server keeps it open, and every writer's writes go
	 * through its one thread: with 64 KB its level 0 grew faster than
	 * LevelDB compacted it, up to the write stop, which held every
	 * reader too (0.6 s beside a 400,000-cell load here; 0.2 s with 1 MB).
	 * Not bigger: a server stopped by a failed write leaves its log
	 * to the next, whose open makes it a table, and on a disk that
	 * was full the space freed must hold that table.
	 */
	else if (flags & KV_KEPT_OPEN)
		options.write_buffer_size = (size_t)1 << 20;
	options.info_log = &quiet;
	/*
	 * Read-only, nothing is appended, so the last log may always be
	 * reused, torn or not, and a big write buffer lets it stay the
	 * memtable whatever its size rather than become tables.
	 */
	if (flags & KV_READ_ONLY) {
		options.env = readonly_env_new(&naming);
		options.reuse_logs = true;
		options.write_buffer_size = (size_t)1 << 30;
	} else
		options.env = durable_env_new(&naming,
		    (flags & KV_SIMULATE_CUTS) != 0);
	return options;
}

leveldb::ReadOptions
read_options()
{
	leveldb::ReadOptions options;

	options.verify_checksums = true;
	return options;
}

} // namespace

/*
 * An iterator, and what its last seek found: no key lies from that
 * seek's target up to where it stopped (to the end, when not valid).
 * Another seek to a target in that stretch would stop where it is, so
 * it is not made: the checks of a commit of new rows in order, a load
 * of them, seek every level once, not once a cell.  A step forgets it.
 */
struct kv_iter {
	leveldb::Iterator *it;
	std::string        target;     // of the last seek
	bool               landed;     // not moved since
};

namespace {

leveldb::Iterator *
rep(struct kv_iter *it)
{
	return it->it;
}

const leveldb::Iterator *
rep(const struct kv_iter *it)
{
	return it->it;
}

} // namespace

extern "C" struct kv *
kv_open(const char *path, unsigned flags, char **err)
{
	leveldb::Options options = open_options(flags);
	leveldb::DB *db = nullptr;

	quiet.take();
	leveldb::Status s = leveldb::DB::Open(options, path, &db);
	if (!s.ok()) {
		std::string text = s.ToString();

		delete options.env;
		if (s.IsCorruption() && text.find(path) == std::string::npos)
			text += " in " + damaged_file(path);
		*err = strdup(text.c_str());
		return nullptr;
	}
	if (flags & KV_READ_ONLY)
		readonly_env_freeze(options.env);
	return new kv{ db, options.env, (flags & KV_READ_ONLY) != 0 };
}

extern "C" const char *
kv_last_read(void)
{
	return last_read[0] == '\0' ? nullptr : last_read;
}

/* The DB first, then its Env; a DB perc writes tells its Env first. */
extern "C" void
kv_close(struct kv *db)
{
	if (!db->read_only)
		durable_env_closing(db->env);
	delete db->db;
	delete db->env;
	delete db;
}

extern "C" void
kv_cut_power(struct kv *db)
{
	durable_env_power_cut(db->env);
}

/*
 * The store's commonest read.  LevelDB's C API would copy the value
 * into a string it allocated, then into another it returns: this
 * reuses one string, and copies once more, into out.
 */
extern "C" int
kv_get(struct kv *db, perc_buf *out, const char *key, size_t klen,
    char **err)
{
	static thread_local std::string value;
	leveldb::Status s = db->db->Get(read_options(),
	    leveldb::Slice(key, klen), &value);

	if (s.IsNotFound())
		return 1;
	if (!s.ok()) {
		save_error(s, err);
		return -1;
	}
	return buf_set(out, value.data(), value.size()) < 0 ? -1 : 0;
}

extern "C" int
kv_write(struct kv *db, struct kv_batch *batch, int sync, char **err)
{
	leveldb::WriteOptions options;

	options.sync = sync != 0;
	leveldb::Status s = db->db->Write(options, &batch->rep);
	if (!s.ok()) {
		save_error(s, err);
		return -1;
	}
	return 0;
}

extern "C" char *
kv_property(struct kv *db, const char *name)
{
	std::string value;

	if (!db->db->GetProperty(name, &value))
		return nullptr;
	return strdup(value.c_str());
}

extern "C" void
kv_compact(struct kv *db, const char *lo, size_t lolen, const char *hi,
    size_t hilen)
{
	leveldb::Slice from(lo, lolen), to(hi, hilen);

	db->db->CompactRange(lo != nullptr ? &from : nullptr,
	    hi != nullptr ? &to : nullptr);
}

extern "C" struct kv_batch *
kv_batch_new(void)
{
	return new kv_batch;
}

extern "C" void
kv_batch_free(struct kv_batch *b)
{
	delete b;
}

extern "C" void
kv_batch_put(struct kv_batch *b, const char *k, size_t klen, const char *v,
    size_t vlen)
{
	b->rep.Put(leveldb::Slice(k, klen), leveldb::Slice(v, vlen));
}

extern "C" void
kv_batch_delete(struct kv_batch *b, const char *k, size_t klen)
{
	b->rep.Delete(leveldb::Slice(k, klen));
}

extern "C" void
kv_batch_clear(struct kv_batch *b)
{
	b->rep.Clear();
}

extern "C" void
kv_batch_append(struct kv_batch *b, const struct kv_batch *from)
{
	b->rep.Append(from->rep);
}

extern "C" size_t
kv_batch_size(const struct kv_batch *b)
{
	return b->rep.ApproximateSize();
}

extern "C" void
kv_batch_each(const struct kv_batch *b, void *arg,
    void (*put)(void *arg, const char *k, size_t klen, const char *v,
    size_t vlen), void (*del)(void *arg, const char *k, size_t klen))
{
	class Caller : public leveldb::WriteBatch::Handler {
	public:
		void *arg;
		void (*put)(void *, const char *, size_t, const char *,
		    size_t);
		void (*del)(void *, const char *, size_t);

		void Put(const leveldb::Slice &k,
		    const leveldb::Slice &v) override
		{
			put(arg, k.data(), k.size(), v.data(), v.size());
		}
		void Delete(const leveldb::Slice &k) override
		{
			del(arg, k.data(), k.size());
		}
	} caller;

	caller.arg = arg;
	caller.put = put;
	caller.del = del;
	(void)b->rep.Iterate(&caller);     /* a batch made here is whole */
}

extern "C" struct kv_iter *
kv_iter_new(struct kv *db)
{
	return new kv_iter{db->db->NewIterator(read_options()), std::string(),
	    false};
}

extern "C" void
kv_iter_free(struct kv_iter *it)
{
	delete it->it;
	delete it;
}

extern "C" void
kv_iter_seek(struct kv_iter *it, const char *k, size_t klen)
{
	leveldb::Slice target(k, klen);

	if (it->landed && it->it->status().ok() &&
	    target.compare(it->target) >= 0 &&
	    (!it->it->Valid() || target.compare(it->it->key()) <= 0))
		return;
	it->it->Seek(target);
	it->landed = false;
	try {
		it->target.assign(k, klen);
		it->landed = true;
	} catch (const std::bad_alloc &) {
		/* the next seek is made */
	}
}

extern "C" void
kv_iter_seek_first(struct kv_iter *it)
{
	it->landed = false;
	rep(it)->SeekToFirst();
}

extern "C" void
kv_iter_seek_last(struct kv_iter *it)
{
	it->landed = false;
	rep(it)->SeekToLast();
}

extern "C" void
kv_iter_next(struct kv_iter *it)
{
	it->landed = false;
	rep(it)->Next();
}

extern "C" int
kv_iter_valid(const struct kv_iter *it)
{
	return rep(it)->Valid();
}

extern "C" const char *
kv_iter_key(const struct kv_iter *it, size_t *len)
{
	leveldb::Slice k = rep(it)->key();

	*len = k.size();
	return k.data();
}

extern "C" const char *
kv_iter_value(const struct kv_iter *it, size_t *len)
{
	leveldb::Slice v = rep(it)->value();

	*len = v.size();
	return v.data();
}

extern "C" int
kv_iter_error(const struct kv_iter *it, char **err)
{
	leveldb::Status s = rep(it)->status();

	if (s.ok())
		return 0;
	save_error(s, err);
	return -1;
}
