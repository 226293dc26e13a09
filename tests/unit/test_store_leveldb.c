/*
 * tests/unit/test_store_leveldb.c - what the LevelDB store keeps of a
 * cell, read by its raw keys: cell heads (codec.h) that perc show does
 * not print.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "leveldb/kv.h"
#include "perc.h"
#include "unit.h"

static perc_bytes
str(const char *s)
{
	return bytes_of(s, strlen(s));
}

/* How many keys of cell (row, "c") the store in dir holds. */
static int
raw_keys(const char *dir, const char *row)
{
	perc_buf prefix = PERC_BUF_INIT;
	struct kv_iter *it;
	char path[4200], *err = NULL;
	const char *k;
	size_t klen;
	struct kv *db;
	int n = 0;

	snprintf(path, sizeof(path), "%s/store", dir);
	if ((db = kv_open(path, 0, &err)) == NULL) {
		printf("# %s\n", err);
		free(err);
		return -1;
	}
	codec_cell_prefix(&prefix, REGION_CELL, str(row), str("c"));
	it = kv_iter_new(db);
	for (kv_iter_seek(it, prefix.data, prefix.len); kv_iter_valid(it);
	    kv_iter_next(it), n++) {
		k = kv_iter_key(it, &klen);
		if (klen < prefix.len || memcmp(k, prefix.data, prefix.len))
			break;
	}
	kv_iter_free(it);
	kv_close(db);
	perc_buf_dispose(&prefix);
	return n;
}

/*
 * A deleted cell, once gc passes its delete, leaves no key behind; its
 * head went with it.  A cell with a value keeps its head, its write
 * record and its data.
 */
static void
test_gc_drops_deleted_cells(const char *tmp)
{
	char dir[4200];
	uint64_t removed;
	perc_ts ts, sp;
	perc_db *db;

	snprintf(dir, sizeof(dir), "%s/db", tmp);
	CHECK(perc_db_init(dir, NULL, 0) == 0);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_set(&ts, db, str("gone"), str("c"), str("v")) == 0);
	CHECK(perc_set(&ts, db, str("kept"), str("c"), str("v")) == 0);
	CHECK(perc_del(&ts, db, str("gone"), str("c")) == 0);
	perc_db_close(db);
	/* Head, two write records, one data key. */
	CHECK(raw_keys(dir, "gone") == 4);
	CHECK(perc_db_open(&db, dir) == 0);
	CHECK(perc_gc(&sp, &removed, db, 0, 0) == 0);
	CHECK(removed == 2);
	perc_db_close(db);
	CHECK(raw_keys(dir, "gone") == 0);
	CHECK(raw_keys(dir, "kept") == 3);
}

const struct unit_test store_leveldb_tests[] = {
	{ "leveldb store: gc leaves no key of a deleted cell, head and all",
	    test_gc_drops_deleted_cells },
	{ NULL, NULL }
};
