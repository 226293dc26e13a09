/*
 * tests/fuzz/fuzz_key.c - libFuzzer target: store keys.  Any bytes must
 * either parse or be refused as corruption; a key that parses must
 * encode back to exactly the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	perc_buf enc = PERC_BUF_INIT;
	struct key k;

	memset(&k, 0, sizeof(k));
	if (codec_parse_key(&k, data, size) == 0 && k.region == REGION_CELL &&
	    k.kind != KIND_NOTIFY) {
		if (codec_key(&enc, k.region, buf_bytes(&k.row),
		    buf_bytes(&k.col), k.kind, k.ts) != 0 || enc.len != size ||
		    memcmp(enc.data, data, size) != 0)
			abort();
	}
	codec_key_dispose(&k);
	perc_buf_dispose(&enc);
	return 0;
}
