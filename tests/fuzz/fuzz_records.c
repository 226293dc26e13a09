/*
 * tests/fuzz/fuzz_records.c - libFuzzer target: cell heads (lock
 * records among them) and write records read from the store.  A record
 * that decodes must encode back to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	perc_buf enc = PERC_BUF_INIT;
	struct cell_head head;
	struct lock_rec lock;
	struct write_rec w;

	memset(&lock, 0, sizeof(lock));
	memset(&head, 0, sizeof(head));
	if (codec_head_decode(&head, &lock, data, size) == 0 &&
	    (codec_head_encode(&enc, &head, head.locked ? &lock : NULL) != 0 ||
	    enc.len != size || memcmp(enc.data, data, size) != 0))
		abort();
	if (codec_write_decode(&w, data, size) == 0 &&
	    (codec_write_encode(&enc, &w) != 0 || enc.len != size ||
	    memcmp(enc.data, data, size) != 0))
		abort();
	codec_lock_dispose(&lock);
	perc_buf_dispose(&enc);
	return 0;
}
