/*
 * tests/fuzz/fuzz_journal.c - libFuzzer target: journal files.  Any
 * contents must load as a write set or be refused as damaged, and an
 * append after them must not crash.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journal.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const perc_bytes none = { "", 0 };
	struct writeset ws;
	struct journal j;

	memset(&j, 0, sizeof(j));
	j.fd = memfd_create("journal", 0);
	if (j.fd < 0 || write(j.fd, data, size) != (ssize_t)size)
		abort();
	j.path = strdup("fuzz-journal");
	strcpy(j.handle, "7");
	j.start_ts = 7;
	j.token = 1;            /* no flock games on a memfd */
	if (journal_load(&ws, &j) == 0) {
		if (ws.n > 0 && ws.primary >= ws.n)
			abort();
		writeset_dispose(&ws);
	}
	journal_append(&j, 'P', none, none, none, 0);
	journal_close(&j);
	return 0;
}
