/*
 * tests/unit/test_store_leveldb.c - what the LevelDB store keeps of a
 * cell, read by its raw keys: cell heads (codec.h) that perc show does
 * not print.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leveldb/c.h>

#include "buf.h"
#include "codec.h"
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
	leveldb_options_t *o = leveldb_options_create();
	leveldb_readoptions_t *r = leveldb_readoptions_create();
	perc_buf prefix = PERC_BUF_INIT;
	leveldb_iterator_t *it;
	char path[4200], *err = NULL;
	const char *k;
	size_t klen;
	leveldb_t *db;
	int n = 0;

	snprintf(path, sizeof(path), "%s/store", dir);
	if ((db = leveldb_open(o, path, &err)) == NULL) {
		printf("# %s\n", err);
		leveldb_free(err);
		n = -1;
		goto done;
	}
	codec_cell_prefix(&prefix, REGION_CELL, str(row), str("c"));
	it = leveldb_create_iterator(db, r);
	for (leveldb_iter_seek(it, prefix.data, prefix.len);
	    leveldb_iter_valid(it); leveldb_iter_next(it), n++) {
		k = leveldb_iter_key(it, &klen);
		if (klen < prefix.len || memcmp(k, prefix.data, prefix.len))
			break;
	}
	leveldb_iter_destroy(it);
	leveldb_close(db);
done:
	perc_buf_dispose(&prefix);
	leveldb_readoptions_destroy(r);
	leveldb_options_destroy(o);
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
