/*
 * tests/fuzz/fuzz_escape.c - libFuzzer target: the escaped form that
 * command-line arguments (-e), shell requests and config lines are read
 * in.  Unescaping must accept or refuse any text, and escaping any
 * bytes must read back as the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "escape.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	perc_buf out = PERC_BUF_INIT, esc = PERC_BUF_INIT, back = PERC_BUF_INIT;

	unescape_field(&out, (const char *)data, size);
	if (escape_field(&esc, bytes_of(data, size)) != 0 || (esc.len > 0 &&
	    (memchr(esc.data, '\t', esc.len) || memchr(esc.data, '\n', esc.len))) ||
	    unescape_field(&back, esc.data, esc.len) != 0 ||
	    !bytes_eq(buf_bytes(&back), bytes_of(data, size)))
		abort();
	perc_buf_dispose(&out);
	perc_buf_dispose(&esc);
	perc_buf_dispose(&back);
	return 0;
}
