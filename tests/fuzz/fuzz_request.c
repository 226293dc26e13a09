/*
 * tests/fuzz/fuzz_request.c - libFuzzer target: perc shell's request
 * language.  Any line is parsed or refused with a one-line message; a
 * parsed one has its verb's operands, and a second parse into the same
 * request (the shell reuses it) gives the same answer.
 */
#include <stdlib.h>
#include <string.h>

#include "request.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct request r;
	size_t nargs;
	int rc;

	request_init(&r);
	rc = request_parse(&r, (const char *)data, size);
	if (rc != 0 && (rc != PERC_EUSAGE || strchr(perc_errmsg(), '\n')))
		abort();
	nargs = r.nargs;
	if (rc == 0 && (nargs > 3 || ((r.given & REQ_TXN) && r.txn == NULL)))
		abort();
	if (request_parse(&r, (const char *)data, size) != rc ||
	    (rc == 0 && r.nargs != nargs))
		abort();
	request_dispose(&r);
	return 0;
}
