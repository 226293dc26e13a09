/* cmd/del.c - perc del: delete a cell, buffered or as its own transaction */
#include "cmd.h"

static const char usage[] =
    "usage: perc del [-e] [-t TXN] ROW COLUMN\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    "    -t, --txn TXN        buffer it in TXN (else: commit it alone)\n";

int
cmd_del(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct cmd_cell_verb del = { perc_del, perc_txn_del };

	return cmd_write_cell(argc, argv, ctx, usage, &del);
}
