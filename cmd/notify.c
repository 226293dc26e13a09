/* cmd/notify.c - perc notify: a weak notification, buffered or alone */
#include "cmd.h"

static const char usage[] =
    "usage: perc notify [-e] [-t TXN] ROW COLUMN\n"
    "    -e, --escaped        ROW and COLUMN in the escaped form scan prints\n"
    "    -t, --txn TXN        write it with TXN's commit (else: commit it "
    "alone)\n";

int
cmd_notify(int argc, char **argv, struct perc_ctx *ctx)
{
	static const struct cmd_cell_verb notify = { perc_weak_notify,
	    perc_txn_notify };

	return cmd_write_cell(argc, argv, ctx, usage, &notify);
}
