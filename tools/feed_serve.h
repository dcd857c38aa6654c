/* tfq-feed's resident mode (tools/ only): `tfq-feed --serve SOCKET` and its client tfq-feed-via.
 *
 * A resident tfq-feed is one process per machine that has loaded TensorFlow's libraries (the
 * 0.12-0.19 CPU-s every tfq-feed pays before main) and listens on a Unix socket.  A unit (a Spark
 * RDD.pipe partition) runs `tfq-feed-via SOCKET ARGS...`, a small program linked to libc only,
 * which hands the server its standard input, output and error (SCM_RIGHTS), its arguments and its
 * environment.  The server forks; the child is an ordinary tfq-feed run of those arguments with
 * those three descriptors and that environment, so it reads the partition straight from the
 * pipe Spark writes, and its exit status goes back to tfq-feed-via, which exits with it.
 *
 * The wire, one request per connection (client -> server): a uint32 length L sent with the
 * three descriptors 0, 1, 2 as SCM_RIGHTS, then L bytes: uint32 argc, uint32 envc, then argc +
 * envc NUL-terminated strings (argv[0] first).  The reply (server -> client): an int32, the
 * unit's wait status (waitpid).  A connection that closes without a reply means the server died:
 * the unit fails.  A client that goes away (Spark killed its task) makes the server SIGTERM the
 * unit, which then marks itself failed as any stopped tfq-feed does. */
#ifndef TFQ_TOOLS_FEED_SERVE_H
#define TFQ_TOOLS_FEED_SERVE_H

#include <stdint.h>

/* The most a request may carry (arguments and environment), bytes. */
#define FEED_SERVE_MAX_REQUEST (8u << 20)

/* `tfq-feed --serve SOCKET [--idle-ms MS]` (argv[1] is "--serve"): listens on SOCKET and serves
 * units until it has been idle (no unit running) for MS milliseconds (default 10,000; 0: for
 * ever).  Returns only in a forked child, with *argc and *argv the unit's, descriptors 0-2 the
 * unit's and environ the unit's: the caller runs the unit as an ordinary tfq-feed.  The server
 * itself exits (0 when idle, 1 on an error, named on standard error).  Not thread-safe: called
 * first thing in main, before any thread exists. */
void feed_serve(int *argc, char ***argv);

#endif
