/* tfq-feed's command line: tfq-cat's reading options (tfq_cat_args.c parses them, with the same
 * meaning and messages) without the printing ones, and the cluster options below.  Private to
 * tools/. */
#include "tfq_feed_args.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char feed_usage_text[] =
    "Usage: tfq-feed [OPTION]... FILE...\n"
    "       tfq-feed --serve SOCKET [--idle-ms MS]   (resident: units run by tfq-feed-via SOCKET)\n"
    "Feed a TensorFlow cluster's queues with the shuffled batches of a TF1 input pipeline\n"
    "(string_input_producer -> reader threads -> decode_csv -> RandomShuffleQueue), until the\n"
    "input ends; then close the queues (or leave that to the last of --feeders feeders).\n"
    "FILE '-' is standard input; a first line '#tfq unit=U units=N' there sets --unit and\n"
    "--feeders (one feeder unit per partition under Spark's RDD.pipe).\n"
    "\n"
    "Reading (as tfq-cat; see tfq-cat --help):\n"
    "  -f, --format=F, -z, --compression=C, --skip-header-lines=N, --record-bytes=N,\n"
    "  --header-bytes=N, --footer-bytes=N, --hop-bytes=N, -d, --record-defaults=SPEC,\n"
    "  --field-delim=C, --no-quote-delim, --na-value=S, --select-cols=I,J,...\n"
    "  --shuffle, --no-shuffle, --capacity=N, --min-after-dequeue=N (default 10000),\n"
    "  --seed=N, --num-epochs=N, -j, --threads=N\n"
    "  -b, --batch-size=N        rows per element (batches) or per enqueue (rows); default 1024\n"
    "      --max-bad-records=N   skip up to N bad records, each reported (default 0; -1: any)\n"
    "      --deterministic       with --seed, the batches are a function of the input, the\n"
    "                            options and the seed, with any number of readers\n"
    "\n"
    "Cluster:\n"
    "      --cluster=SPEC        'ps=h:p;worker=h:p,h:p' (default: the cluster of $TF_CONFIG)\n"
    "      --to=T                workers (default: one queue per worker task, on that task) or\n"
    "                            ps (one queue on /job:ps/task:0)\n"
    "      --elements=E          batches (default: an element is a batch, workers dequeue()) or\n"
    "                            rows (an element is a row, workers dequeue_many(n))\n"
    "      --queue=NAME          shared-name prefix (default tfq_feed): the ps queue is NAME,\n"
    "                            worker i's NAME_w<i>; the done set NAME_done\n"
    "      --queue-capacity=C    TF queue capacity (default 8 batches; rows: 8 * batch size)\n"
    "      --shard=I/N           read shard I of N: with N or more files the files k with\n"
    "                            k % N == I, else every file's records whose line (record)\n"
    "                            number % N == I\n"
    "      --feeders=N           feeder units in the job (default: N of --shard, else 1); the\n"
    "                            queues are closed when N units have finished\n"
    "      --unit=U              this feeder's unit in [0, N) (default: I of --shard)\n"
    "      --timeout-ms=MS       limit of every TensorFlow call (default 60000)\n"
    "      --acks                at least once: keep every batch until a worker's training step\n"
    "                            acknowledges it (NAME_acked on the ps), probe the workers every\n"
    "                            0.5 s, re-send a lost worker's batches to the others, finish\n"
    "                            when all is acknowledged (workers/batches only)\n"
    "      --attempt=A           this run is attempt A of its unit (a retry: what attempts\n"
    "                            before it had acknowledged is counted as duplicates)\n"
    "      --checkpoint=DIR      with --acks: keep this unit's pipeline state in DIR (the\n"
    "                            newest whose earlier batches are all acknowledged); a unit run\n"
    "                            again resumes from it and re-sends only the rest\n"
    "      --checkpoint-every=M  save the state every M batches (default 1)\n"
    "      --stats               rows, batches per queue and throughput at the end\n"
    "  -q, --quiet               no notes on standard error\n"
    "  -h, --help                display this help and exit\n"
    "  -V, --version             output version information and exit\n"
    "\n"
    "Exit status: 0 success, 1 data, I/O or cluster error, 2 usage error (or a bad TF_CONFIG),\n"
    "128+N on signal N.\n"
    "Example: tfq-feed --cluster 'ps=h0:2222;worker=h1:2222,h2:2222' --shard 0/2 part-*.csv\n";

enum {
  OPT_CLUSTER = OPT_EXTRA,
  OPT_TO,
  OPT_ELEMENTS,
  OPT_QUEUE,
  OPT_QCAP,
  OPT_SHARD,
  OPT_FEEDERS,
  OPT_UNIT,
  OPT_TIMEOUT,
  OPT_ACKS,
  OPT_ATTEMPT,
  OPT_MAX_BAD,
  OPT_DETERMINISTIC,
  OPT_CHECKPOINT,
  OPT_CHECKPOINT_EVERY
};

static const struct option feed_opts[] = {
    {"cluster", required_argument, NULL, OPT_CLUSTER},
    {"to", required_argument, NULL, OPT_TO},
    {"elements", required_argument, NULL, OPT_ELEMENTS},
    {"queue", required_argument, NULL, OPT_QUEUE},
    {"queue-capacity", required_argument, NULL, OPT_QCAP},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"feeders", required_argument, NULL, OPT_FEEDERS},
    {"unit", required_argument, NULL, OPT_UNIT},
    {"acks", no_argument, NULL, OPT_ACKS},
    {"attempt", required_argument, NULL, OPT_ATTEMPT},
    {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
    {"max-bad-records", required_argument, NULL, OPT_MAX_BAD},
    {"deterministic", no_argument, NULL, OPT_DETERMINISTIC},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {NULL, 0, NULL, 0}};

static feed_more g_more;

const feed_more *feed_more_options(void) { return &g_more; }

/* tfq-cat's options that print batches. */
static const char *const dropped[] = {"batches", "output", "keys", "drop-remainder", NULL};

static void feed_defaults(options *o) {
  o->batch_size = 1024;
  o->batches = 0;
  o->output = OUT_NONE;
  o->min_after_dequeue = 10000;
  o->queue = "tfq_feed";
  o->shard_n = 1;
  o->timeout_ms = 60000;
  o->unit = -1;
  g_more.max_bad_records = 0;
  g_more.deterministic = 0;
  g_more.checkpoint = NULL;
  g_more.checkpoint_every = 1;
}

static int feed_extra(int c, const char *arg, options *o) {
  switch (c) {
    case OPT_CLUSTER: o->cluster = arg; return 1;
    case OPT_TO:
      if (strcmp(arg, "ps") && strcmp(arg, "workers"))
        args_usage_error("invalid --to '%s' (expected workers or ps)", arg);
      o->to_ps = strcmp(arg, "ps") == 0;
      return 1;
    case OPT_ELEMENTS:
      if (strcmp(arg, "rows") && strcmp(arg, "batches"))
        args_usage_error("invalid --elements '%s' (expected batches or rows)", arg);
      o->rows = strcmp(arg, "rows") == 0;
      return 1;
    case OPT_QUEUE:
      if (!*arg) args_usage_error("--queue: an empty shared name");
      o->queue = arg;
      return 1;
    case OPT_QCAP: o->queue_capacity = args_count("--queue-capacity", arg, 1); return 1;
    case OPT_SHARD: {
      char *end;
      long long i = strtoll(arg, &end, 10), n = 0;
      if (end != arg && *end == '/') {
        const char *p = end + 1;
        n = strtoll(p, &end, 10);
        if (end == p) n = 0;
      }
      if (*end || n < 1 || i < 0 || i >= n || n > 1000000)
        args_usage_error("invalid --shard '%s' (expected I/N with 0 <= I < N)", arg);
      o->shard_i = i;
      o->shard_n = n;
      return 1;
    }
    case OPT_FEEDERS: o->feeders = args_count("--feeders", arg, 1); return 1;
    case OPT_UNIT:
      o->unit = args_count("--unit", arg, 0);
      o->unit_set = 1;
      return 1;
    case OPT_TIMEOUT: o->timeout_ms = args_count("--timeout-ms", arg, 1); return 1;
    case OPT_ACKS: o->acks = 1; return 1;
    case OPT_ATTEMPT:
      o->attempt = args_count("--attempt", arg, 0);
      if (o->attempt > 255) args_usage_error("--attempt: at most 255");
      return 1;
    case OPT_MAX_BAD:
      g_more.max_bad_records =
          strcmp(arg, "-1") == 0 ? -1 : args_count("--max-bad-records", arg, 0);
      return 1;
    case OPT_DETERMINISTIC: g_more.deterministic = 1; return 1;
    case OPT_CHECKPOINT:
      if (!*arg) args_usage_error("--checkpoint: an empty directory name");
      g_more.checkpoint = arg;
      return 1;
    case OPT_CHECKPOINT_EVERY:
      g_more.checkpoint_every = args_count("--checkpoint-every", arg, 1);
      return 1;
    default: return 0;
  }
}

static const args_mode feed_mode = {":f:z:d:b:j:qhV", dropped, feed_opts, feed_defaults,
                                    feed_extra};

cat_args_status feed_parse_options(int argc, char **argv, options *o, int *first_operand,
                                   char **msg) {
  cat_args_status s = args_parse(argc, argv, &feed_mode, o, first_operand, msg);
  if (s != CAT_ARGS_OK) return s;
  if (o->feeders == 0) o->feeders = o->shard_n;
  if (o->unit < 0) o->unit = o->shard_n > 1 ? o->shard_i : 0;
  const char *why = NULL;
  if (o->feeders > 1 && o->shard_n == 1 && o->unit == 0 && !o->unit_set)
    why = "--feeders=N needs --shard=I/N or --unit=U (each feeder's unit)";
  else if (o->unit >= o->feeders)
    why = "--unit must be below --feeders";
  else if (o->acks && (o->to_ps || o->rows))
    why =
        "--acks needs --to workers --elements batches (a lost worker's batches are known only "
        "when each worker has its own queue)";
  else if (o->acks && o->unit >= 65536)
    why = "--acks: at most 65536 units";
  else if (g_more.checkpoint && !o->acks)
    why = "--checkpoint needs --acks (a state is kept once the batches before it are acknowledged)";
  if (why) {
    cat_options_free(o);
    if (msg && !(*msg = strdup(why))) return CAT_ARGS_NOMEM;
    return CAT_ARGS_USAGE;
  }
  return s;
}
