/*
 * tests/unit/test_durable_env.cc - the Env under a writable store: a log
 * that LevelDB lets go at a memtable switch and that cannot be synced
 * must fail the commit point written after it (lib/durable_env.cc).
 */
#include <cstring>
#include <string>
#include <utility>

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/options.h>

extern "C" {
#include "unit.h"
}
#include "leveldb/durable_env.h"

namespace {

using leveldb::Slice;
using leveldb::Status;

/* A log's syncs fail once a newer log exists: the disk failed it. */
class FailingEnv : public leveldb::EnvWrapper {
public:
	FailingEnv() : EnvWrapper(leveldb::Env::Default()) {}

	Status NewWritableFile(const std::string &f,
	    leveldb::WritableFile **r) override
	{
		Status s = target()->NewWritableFile(f, r);

		if (s.ok() && f.size() > 4 &&
		    f.compare(f.size() - 4, 4, ".log") == 0) {
			newest_log_ = f;
			logs_++;
			*r = new File(this, f, *r);
		}
		return s;
	}

	std::string newest_log_;
	int         logs_ = 0;
	int         failed_syncs_ = 0;

private:
	class File : public leveldb::WritableFile {
	public:
		File(FailingEnv *env, std::string name,
		    leveldb::WritableFile *target)
		    : env_(env), name_(std::move(name)), target_(target) {}
		~File() override { delete target_; }
		Status Append(const Slice &d) override
		{
			return target_->Append(d);
		}
		Status Close() override { return target_->Close(); }
		Status Flush() override { return target_->Flush(); }
		Status Sync() override
		{
			if (name_ != env_->newest_log_) {
				env_->failed_syncs_++;
				return Status::IOError(name_, "injected EIO");
			}
			return target_->Sync();
		}

	private:
		FailingEnv            *env_;
		std::string            name_;
		leveldb::WritableFile *target_;
	};
};

void
test_switch_sync_fails_commit_point(const char *dir)
{
	FailingEnv failing;
	leveldb::Env *env = durable_env_new(&failing, false);
	leveldb::Options options;
	leveldb::WriteOptions nosync, sync;
	leveldb::DB *db = nullptr;
	std::string value(1000, 'v');
	int i;

	options.create_if_missing = true;
	options.write_buffer_size = 64 << 10;
	options.env = env;
	sync.sync = true;
	CHECK(leveldb::DB::Open(options, std::string(dir) + "/store",
	    &db).ok());
	if (db == nullptr) {
		delete env;
		return;
	}
	/* Prewrites, unsynced, until LevelDB has switched to a new log. */
	int first = failing.logs_;
	for (i = 0; i < 1000 && failing.logs_ == first; i++)
		CHECK(db->Put(nosync, "prewrite" + std::to_string(i),
		    value).ok());
	CHECK(failing.logs_ > first);
	CHECK(failing.failed_syncs_ == 1);
	/* The commit point, synced in the new log, must not stand. */
	Status s = db->Put(sync, "commit-point", "x");
	CHECK(!s.ok());
	CHECK(s.ToString().find("memtable switch") != std::string::npos);
	durable_env_closing(env);
	delete db;
	delete env;
}

} // namespace

extern "C" const struct unit_test durable_env_tests[] = {
	{ "durable env: a switched log that cannot be synced fails the "
	    "next commit point", test_switch_sync_fails_commit_point },
	{ nullptr, nullptr },
};
