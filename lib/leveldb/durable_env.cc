/*
 * lib/leveldb/durable_env.cc - the Env under a writable store: LevelDB's own,
 * plus the two syncs that a power cut needs and LevelDB leaves out.
 *
 * A synced write makes durable what came before it only in its own log
 * file.  LevelDB switches logs when the memtable fills, closing the old
 * one without a sync; until the old memtable is a table, its data lives
 * only in that unsynced log.  A transaction's prewrites can land there
 * and its synced commit point in the next log, and a power cut then
 * keeps the commit record without the data.  So:
 *
 *  - a log let go with unsynced appends is synced first, unless the DB
 *    is shutting down (durable_env_closing): that costs one fsync per
 *    memtable switch, not one per process, and the unsynced tail of a
 *    clean shutdown is vouched for by store.clean instead (store.c).
 *    LevelDB 1.23 lets the log go by deleting it, so a failure of that
 *    sync cannot be returned there: it fails every later sync of the
 *    Env instead, and so the commit point that would stand on it;
 *  - a new log's directory entry is synced before its first sync
 *    returns (LevelDB syncs the directory only with the manifest, which
 *    covers its tables but not a log made since): else the synced
 *    commit point can sit in a log that the power cut unlinks.
 *
 * With simulate_cuts (PERC_FAILPOINT=NAME:power-cut, for tests), the
 * Env also remembers each file's size at its last sync and whether its
 * directory entry was synced, so durable_env_power_cut can put the store
 * back to exactly what a power cut at that moment would leave, as
 * LevelDB's own fault_injection_test does.  It then also holds LevelDB's
 * background work back until the store closes, so that a switched
 * memtable is never made into a table before the cut: the worst case,
 * every time.  (A second switch would wait for the first table: tests
 * keep to one.)
 */
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <leveldb/env.h>

#include "disk.h"
#include "durable_env.h"

namespace {

using leveldb::Slice;
using leveldb::Status;

struct FileState {
	uint64_t size = 0;
	uint64_t synced_size = 0;
	bool     entry_synced = false;
};

class DurableEnv;

class DurableWritable : public leveldb::WritableFile {
public:
	DurableWritable(DurableEnv *env, std::string name,
	    leveldb::WritableFile *target, bool is_log, bool created)
	    : env_(env), name_(std::move(name)), target_(target),
	      is_log_(is_log), entry_unsynced_(created && is_log) {}
	~DurableWritable() override
	{
		sync_if_switched();
		delete target_;
	}

	Status Append(const Slice &data) override;
	Status Close() override;
	Status Flush() override { return target_->Flush(); }
	Status Sync() override;

private:
	void sync_if_switched();

	DurableEnv            *env_;
	std::string            name_;
	leveldb::WritableFile *target_;
	bool                   is_log_;
	bool                   entry_unsynced_;
	bool                   dirty_ = false;
};

class DurableEnv : public leveldb::EnvWrapper {
public:
	DurableEnv(leveldb::Env *base, bool simulate)
	    : EnvWrapper(base), simulate_(simulate) {}

	Status NewWritableFile(const std::string &f,
	    leveldb::WritableFile **r) override
	{
		return wrap(f, target()->NewWritableFile(f, r), r, true);
	}
	Status NewAppendableFile(const std::string &f,
	    leveldb::WritableFile **r) override
	{
		uint64_t size = 0;

		if (simulate_ && target()->GetFileSize(f, &size).ok())
			track(f, size, true);
		return wrap(f, target()->NewAppendableFile(f, r), r, false);
	}
	void Schedule(void (*fn)(void *), void *arg) override
	{
		if (!simulate_) {
			target()->Schedule(fn, arg);
			return;
		}
		std::lock_guard<std::mutex> l(mu_);
		held_.emplace_back(fn, arg);
	}
	/* Let the held background work run: the DB waits for it to close. */
	void release_held()
	{
		std::lock_guard<std::mutex> l(mu_);
		for (auto &w : held_)
			target()->Schedule(w.first, w.second);
		held_.clear();
	}

	/* The first failed sync of a switched log, for every later sync. */
	void switch_failed(const Status &s)
	{
		std::lock_guard<std::mutex> l(mu_);
		if (switch_error_.ok())
			switch_error_ = s;
	}
	Status switch_error()
	{
		std::lock_guard<std::mutex> l(mu_);
		return switch_error_;
	}

	void set_closing() { closing_ = true; }
	bool closing() const { return closing_; }

	/* Bookkeeping for simulate_cuts; no-ops otherwise. */
	void track(const std::string &f, uint64_t size, bool entry_synced)
	{
		if (!simulate_)
			return;
		std::lock_guard<std::mutex> l(mu_);
		FileState &st = files_[f];
		st.size = st.synced_size = size;
		st.entry_synced = entry_synced;
	}
	void appended(const std::string &f, size_t n)
	{
		if (!simulate_)
			return;
		std::lock_guard<std::mutex> l(mu_);
		files_[f].size += n;
	}
	void synced(const std::string &f)
	{
		if (!simulate_)
			return;
		std::lock_guard<std::mutex> l(mu_);
		FileState &st = files_[f];
		st.synced_size = st.size;
	}
	/* Every entry in the directory is durable now. */
	void dir_synced()
	{
		if (!simulate_)
			return;
		std::lock_guard<std::mutex> l(mu_);
		for (auto &f : files_)
			f.second.entry_synced = true;
	}
	Status sync_dir_of(const std::string &f)
	{
		std::string dir = f.substr(0, f.rfind('/'));

		if (disk_sync_dir(dir.c_str()) != 0)
			return Status::IOError(dir, "cannot sync the directory");
		dir_synced();
		return Status::OK();
	}
	void power_cut()
	{
		std::lock_guard<std::mutex> l(mu_);
		for (auto &f : files_) {
			if (!f.second.entry_synced)
				unlink(f.first.c_str());
			else if (truncate(f.first.c_str(),
			    (off_t)f.second.synced_size) != 0)
				continue; /* removed by LevelDB: nothing to cut */
		}
	}

private:
	Status wrap(const std::string &f, Status s, leveldb::WritableFile **r,
	    bool created)
	{
		if (!s.ok())
			return s;
		if (created)
			track(f, 0, false);
		bool is_log = f.size() > 4 &&
		    f.compare(f.size() - 4, 4, ".log") == 0;
		*r = new DurableWritable(this, f, *r, is_log, created);
		return s;
	}

	bool                             simulate_;
	std::atomic<bool>                closing_{ false };
	std::mutex                       mu_;
	std::map<std::string, FileState> files_;
	std::vector<std::pair<void (*)(void *), void *>> held_;
	Status                           switch_error_;
};

Status
DurableWritable::Append(const Slice &data)
{
	Status s = target_->Append(data);

	if (s.ok()) {
		dirty_ = true;
		env_->appended(name_, data.size());
	}
	return s;
}

Status
DurableWritable::Sync()
{
	Status s = env_->switch_error();

	if (!s.ok())
		return s;
	if (entry_unsynced_) {
		if (!(s = env_->sync_dir_of(name_)).ok())
			return s;
		entry_unsynced_ = false;
	}
	if (!(s = target_->Sync()).ok())
		return s;
	dirty_ = false;
	env_->synced(name_);
	/* LevelDB's own sync of a manifest syncs its directory too. */
	if (name_.find("/MANIFEST-") != std::string::npos)
		env_->dir_synced();
	return s;
}

/*
 * LevelDB lets a log go at a memtable switch (1.23 deletes it, later
 * versions close it first) and at shutdown: see the top of the file.
 */
void
DurableWritable::sync_if_switched()
{
	if (!is_log_ || !dirty_ || env_->closing())
		return;
	Status s = Sync();
	if (!s.ok())
		env_->switch_failed(Status::IOError(name_, "a log let go "
		    "unsynced at a memtable switch: " + s.ToString()));
}

Status
DurableWritable::Close()
{
	sync_if_switched();
	return target_->Close();
}

} // namespace

leveldb::Env *
durable_env_new(leveldb::Env *base, bool simulate_cuts)
{
	return new DurableEnv(base, simulate_cuts);
}

void
durable_env_power_cut(leveldb::Env *env)
{
	static_cast<DurableEnv *>(env)->power_cut();
}

void
durable_env_closing(leveldb::Env *env)
{
	static_cast<DurableEnv *>(env)->set_closing();
	static_cast<DurableEnv *>(env)->release_held();
}
