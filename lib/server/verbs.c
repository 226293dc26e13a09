/* lib/server/verbs.c - the table of verbs.h, and this build's name. */
#include "perc.h"
#include "server.h"
#include "verbs.h"

const struct server_verb_layout server_verbs[SERVER_NVERBS] = {
#define SERVER_VERB_ROW(name, req, reqrec, out, rec) \
	{ #name, req, reqrec, out, rec },
	SERVER_VERBS(SERVER_VERB_ROW)
#undef SERVER_VERB_ROW
};

/*
 * What the handshake compares: a server of another build, even of the
 * same version, may read or write the store otherwise (a perc built
 * anew while an old server idles), so the build's time is in it.
 */
const char server_build[] = PERC_VERSION " built " __DATE__ " " __TIME__;
