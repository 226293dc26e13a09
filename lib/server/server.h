/*
 * lib/server/server.h - a LevelDB data directory's store server
 * (perc-serve(1)): where it lives, starting and stopping one, and the
 * store that a process uses through it.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include "store.h"

/* DIR's files: the lock the server holds for its life (its process id
   inside, for people), and its socket. */
#define SERVER_LOCK   "serve.lock"
#define SERVER_SOCKET "serve.sock"

extern const char server_build[];

/*
 * The address of dir's socket, through a descriptor of dir (*dirfd,
 * opened here, close it): /proc/self/fd/N/serve.sock fits a socket
 * address whatever dir's length.
 */
int  server_address(char *out, size_t size, int *dirfd, const char *dir);
/* The running server's process id, or 0 when none runs; < 0: failed. */
int  server_running(pid_t *pid, const char *dir);

/*
 * Serve dir's LevelDB store until asked to stop (SIGINT, SIGTERM, a
 * STOP request), dir is gone, or, with idle_s > 0, no process has been
 * connected for idle_s seconds: 0, or 1 when another server runs
 * (*other its pid).  env is the store's (serve 0).  ready_fd, when not
 * -1, is where it tells its starter that it serves, or why it cannot
 * (spawn.c), and is closed then.
 */
int  server_run(const char *dir, const struct store_env *env, int idle_s,
                pid_t *other, int ready_fd);
/*
 * Start one in the background, in a session of its own, holding none
 * of this process's descriptors: 0 once it serves (or another does),
 * or why it could not (its store would not open, or stayed busy).
 */
int  server_spawn(const char *dir, const struct store_env *env, int idle_s,
                  int64_t deadline_ms);
/* Have the running one stop, and wait (to deadline_ms) until it has. */
int  server_stop(const char *dir, int64_t deadline_ms);
#endif
