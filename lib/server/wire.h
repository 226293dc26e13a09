/*
 * lib/server/wire.h - the messages between a perc process and its data
 * directory's store server (server.c), built and read from the one
 * table of verbs (verbs.h), whose layouts are strings of the letters
 * below: both ends pack and unpack a verb's fields from the same
 * string, so a message is defined once.
 *
 * A message is a frame: its length (uint32_t), then its bytes.  A
 * request is the verb (one byte), then its fields; a reply is its
 * head (WIRE_RESULT), then the records of a walk, each after a tag byte
 * (WIRE_RECORD, or WIRE_PASSED for the locks a scan read past) and
 * ended by WIRE_END, then the verb's out fields.  Both ends are the
 * same build (the handshake makes sure), so numbers go as the machine
 * keeps them.
 *
 *   b  perc_bytes            (pack: the value; unpack: perc_bytes *,
 *                             pointing into the message)
 *   o  const perc_bytes *    (may be NULL; unpack: perc_bytes *, and
 *                             const perc_bytes ** set to it or NULL)
 *   t  perc_ts               (unpack: perc_ts *)
 *   u  unsigned              (unpack: unsigned *)
 *   i  int                   (unpack: int *)
 *   z  size_t                (unpack: size_t *)
 *   l  const struct lock_rec *  (unpack: struct lock_rec *, whose
 *                             buffers the caller disposes)
 *   f  const struct lock_fate * (may be NULL; unpack: struct lock_fate
 *                             *, and const struct lock_fate ** to it
 *                             or NULL)
 *   w  const struct write *  (unpack: struct write *, its buffers
 *                             pointing into the message: not disposed)
 */
#ifndef SERVER_WIRE_H
#define SERVER_WIRE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "perc.h"

/*
 * A reply's head: the verb's result and its failure's message, then
 * the server's store as the verb left it: read_only and failed (struct
 * store's), which the process's view of the store takes on, as when
 * the process holds the store itself.
 */
#define WIRE_RESULT "ibii"

#define WIRE_END    0
#define WIRE_RECORD 1
#define WIRE_PASSED 2

/* The longest frame either end takes: a bigger one is garbage. */
#define WIRE_MAX_FRAME ((uint32_t)1 << 31)

/* A frame being read: the bytes after its length, and a cursor. */
struct wire_in {
	const char *p, *end;
	int         bad;        /* read past the end, or a bad field */
};

/* Start a frame in out (its length filled by wire_end). */
int  wire_begin(perc_buf *out);
void wire_end(perc_buf *out, size_t start);
int  wire_pack(perc_buf *out, const char *layout, ...);
int  wire_vpack(perc_buf *out, const char *layout, va_list ap);
/* 0, or -1 when the frame is short or a field is bad (in->bad). */
int  wire_unpack(struct wire_in *in, const char *layout, ...);
int  wire_vunpack(struct wire_in *in, const char *layout, va_list ap);
int  wire_u8(struct wire_in *in, int *out);
/*
 * The length of the frame at the start of the len bytes at p: 0 and
 * *frame the frame's bytes when it is whole; 1 when more must come;
 * -1 when it is longer than WIRE_MAX_FRAME.
 */
int  wire_frame(const char *p, size_t len, struct wire_in *frame,
                size_t *used);
#endif
