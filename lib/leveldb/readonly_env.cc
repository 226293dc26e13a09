/*
 * lib/leveldb/readonly_env.cc - a LevelDB Env that never writes to the disk,
 * for reading a data directory that perc may not write.
 *
 * LevelDB cannot open a store read-only: the open takes a LOCK file,
 * may turn logs into tables, write a new manifest and log, and delete
 * what they replace.  This Env lets all of that happen in memory.
 * Files it creates live in memory and are read back from there; files
 * it deletes or renames away are only hidden; every other file is read
 * from the disk as it is.  The store's content is the same as with a
 * writable open, and nothing of what the open did outlives the process.
 *
 * Most of that work is avoided: the last log and the manifest are
 * "appended to" by a writer that drops everything, so with reuse_logs
 * the log stays the memtable and no table or manifest is made at all
 * (nothing is ever appended: perc's own writes are refused before they
 * reach LevelDB).  Once the store is open, readonly_env_freeze makes
 * new files fail, so that a compaction LevelDB starts while reading
 * fails at once and is not retried, instead of rewriting tables in
 * memory.  The LOCK file is not taken: DIR/store.lock, which perc
 * flocks through a read-only descriptor, keeps other perc processes out.
 */
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <cstring>

#include <leveldb/env.h>

#include "readonly_env.h"

namespace {

using leveldb::Slice;
using leveldb::Status;

/* One file created in memory.  Its writer may append while LevelDB's
 * other thread reads another file, so each file has its own mutex. */
struct MemFile {
	std::mutex  mu;
	std::string data;
};

using MemFilePtr = std::shared_ptr<MemFile>;

/* What an append to a file on the disk goes to: nowhere. */
class DiscardWritable : public leveldb::WritableFile {
public:
	Status Append(const Slice &) override { return Status::OK(); }
	Status Close() override { return Status::OK(); }
	Status Flush() override { return Status::OK(); }
	Status Sync() override { return Status::OK(); }
};

class MemWritable : public leveldb::WritableFile {
public:
	explicit MemWritable(MemFilePtr f) : file_(std::move(f)) {}
	Status Append(const Slice &s) override
	{
		std::lock_guard<std::mutex> g(file_->mu);
		file_->data.append(s.data(), s.size());
		return Status::OK();
	}
	Status Close() override { return Status::OK(); }
	Status Flush() override { return Status::OK(); }
	Status Sync() override { return Status::OK(); }

private:
	MemFilePtr file_;
};

/* Copy up to n bytes at offset into scratch; how many in *result. */
static void
mem_read(MemFile &f, uint64_t offset, size_t n, Slice *result, char *scratch)
{
	std::lock_guard<std::mutex> g(f.mu);
	size_t avail = offset < f.data.size() ? f.data.size() - offset : 0;

	if (n > avail)
		n = avail;
	if (n > 0)
		std::memcpy(scratch, f.data.data() + offset, n);
	*result = Slice(scratch, n);
}

class MemSequential : public leveldb::SequentialFile {
public:
	explicit MemSequential(MemFilePtr f) : file_(std::move(f)) {}
	Status Read(size_t n, Slice *result, char *scratch) override
	{
		mem_read(*file_, pos_, n, result, scratch);
		pos_ += result->size();
		return Status::OK();
	}
	Status Skip(uint64_t n) override
	{
		pos_ += n;
		return Status::OK();
	}

private:
	MemFilePtr file_;
	uint64_t   pos_ = 0;
};

class MemRandomAccess : public leveldb::RandomAccessFile {
public:
	explicit MemRandomAccess(MemFilePtr f) : file_(std::move(f)) {}
	Status Read(uint64_t offset, size_t n, Slice *result,
	    char *scratch) const override
	{
		mem_read(*file_, offset, n, result, scratch);
		return Status::OK();
	}

private:
	MemFilePtr file_;
};

class NoLock : public leveldb::FileLock {};

class ReadOnlyEnv : public leveldb::EnvWrapper {
public:
	explicit ReadOnlyEnv(leveldb::Env *base) : EnvWrapper(base) {}

	Status NewSequentialFile(const std::string &f,
	    leveldb::SequentialFile **r) override
	{
		Status s;

		if (open_in_memory<MemSequential>(f, r, &s))
			return s;
		return target()->NewSequentialFile(f, r);
	}

	Status NewRandomAccessFile(const std::string &f,
	    leveldb::RandomAccessFile **r) override
	{
		Status s;

		if (open_in_memory<MemRandomAccess>(f, r, &s))
			return s;
		return target()->NewRandomAccessFile(f, r);
	}

	Status NewWritableFile(const std::string &f,
	    leveldb::WritableFile **r) override
	{
		std::lock_guard<std::mutex> g(mu_);

		*r = nullptr;
		if (frozen_)
			return Status::IOError(f, "read-only store");
		MemFilePtr m = std::make_shared<MemFile>();

		files_[f] = m;
		hidden_.erase(f);
		*r = new MemWritable(m);
		return Status::OK();
	}

	Status NewAppendableFile(const std::string &f,
	    leveldb::WritableFile **r) override
	{
		MemFilePtr m;

		*r = nullptr;
		if (!lookup(f, &m))
			*r = new DiscardWritable;
		else if (m == nullptr)
			return gone(f);
		else
			*r = new MemWritable(m);
		return Status::OK();
	}

	bool FileExists(const std::string &f) override
	{
		MemFilePtr m;

		if (lookup(f, &m))
			return m != nullptr;
		return target()->FileExists(f);
	}

	Status GetChildren(const std::string &dir,
	    std::vector<std::string> *r) override
	{
		std::vector<std::string> disk;
		std::set<std::string> names;
		std::string prefix = dir + "/";
		Status s = target()->GetChildren(dir, &disk);

		if (!s.ok())
			return s;
		std::lock_guard<std::mutex> g(mu_);
		for (const std::string &name : disk)
			if (hidden_.count(prefix + name) == 0)
				names.insert(name);
		for (const auto &kv : files_)
			if (kv.first.compare(0, prefix.size(), prefix) == 0 &&
			    kv.first.find('/', prefix.size()) ==
			    std::string::npos)
				names.insert(kv.first.substr(prefix.size()));
		r->assign(names.begin(), names.end());
		return Status::OK();
	}

	Status RemoveFile(const std::string &f) override
	{
		if (!FileExists(f))
			return gone(f);
		std::lock_guard<std::mutex> g(mu_);
		files_.erase(f);
		hidden_.insert(f);
		return Status::OK();
	}

	Status CreateDir(const std::string &) override { return Status::OK(); }
	Status RemoveDir(const std::string &) override { return Status::OK(); }

	Status GetFileSize(const std::string &f, uint64_t *size) override
	{
		MemFilePtr m;

		if (lookup(f, &m)) {
			if (m == nullptr)
				return gone(f);
			std::lock_guard<std::mutex> g(m->mu);
			*size = m->data.size();
			return Status::OK();
		}
		return target()->GetFileSize(f, size);
	}

	/* LevelDB renames only files it made (CURRENT's temp file), but a
	 * file on the disk is copied into memory all the same. */
	Status RenameFile(const std::string &from, const std::string &to)
	    override
	{
		MemFilePtr m;

		if (!lookup(from, &m)) {
			m = std::make_shared<MemFile>();
			Status s = leveldb::ReadFileToString(target(), from,
			    &m->data);
			if (!s.ok())
				return s;
		} else if (m == nullptr) {
			return gone(from);
		}
		std::lock_guard<std::mutex> g(mu_);
		files_.erase(from);
		hidden_.insert(from);
		files_[to] = m;
		hidden_.erase(to);
		return Status::OK();
	}

	Status LockFile(const std::string &, leveldb::FileLock **l) override
	{
		*l = new NoLock;
		return Status::OK();
	}

	Status UnlockFile(leveldb::FileLock *l) override
	{
		delete l;
		return Status::OK();
	}

	void Freeze()
	{
		std::lock_guard<std::mutex> g(mu_);
		frozen_ = true;
	}

private:
	/*
	 * Open f as a Mem if it was made or hidden here (true, the result
	 * in *s); false when it is the disk's to open.
	 */
	template <class Mem, class File>
	bool open_in_memory(const std::string &f, File **r, Status *s)
	{
		MemFilePtr m;

		if (!lookup(f, &m))
			return false;
		if (m == nullptr) {
			*s = gone(f);
		} else {
			*r = new Mem(m);
			*s = Status::OK();
		}
		return true;
	}

	/* Is f made or hidden here?  Then *m is its memory, or null. */
	bool lookup(const std::string &f, MemFilePtr *m)
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = files_.find(f);

		*m = nullptr;
		if (it != files_.end()) {
			*m = it->second;
			return true;
		}
		return hidden_.count(f) != 0;
	}

	static Status gone(const std::string &f)
	{
		return Status::NotFound(f, "removed in a read-only open");
	}

	std::mutex                        mu_;
	std::map<std::string, MemFilePtr> files_;
	std::set<std::string>             hidden_;
	bool                              frozen_ = false;
};

} // namespace

leveldb::Env *
readonly_env_new(leveldb::Env *base)
{
	return new ReadOnlyEnv(base);
}

void
readonly_env_freeze(leveldb::Env *env)
{
	static_cast<ReadOnlyEnv *>(env)->Freeze();
}
