/* tfq-mkrecords: writes each line of standard input (without its "\n") as one TFRecord.
 * A test helper for tfq-cat (never installed).
 *
 *   tfq-mkrecords [-z none|gzip|zlib] OUT.tfrecord < lines */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

int main(int argc, char **argv) {
  tfq_compression comp = TFQ_COMPRESSION_NONE;
  int i = 1;
  if (argc > 2 && strcmp(argv[1], "-z") == 0) {
    comp = strcmp(argv[2], "gzip") == 0   ? TFQ_COMPRESSION_GZIP
           : strcmp(argv[2], "zlib") == 0 ? TFQ_COMPRESSION_ZLIB
                                          : TFQ_COMPRESSION_NONE;
    i = 3;
  }
  if (i + 1 != argc) {
    fputs("usage: tfq-mkrecords [-z none|gzip|zlib] OUT < lines\n", stderr);
    return 2;
  }
  tfq_status *st = tfq_status_new();
  tfq_tfrecord_writer *w;
  if (!st || tfq_tfrecord_writer_new(argv[i], comp, &w, st)) {
    fprintf(stderr, "tfq-mkrecords: %s\n", tfq_status_message(st));
    return 1;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, stdin)) >= 0) {
    if (n > 0 && line[n - 1] == '\n') n--;
    if (tfq_tfrecord_writer_write(w, line, (size_t)n, st)) {
      fprintf(stderr, "tfq-mkrecords: %s\n", tfq_status_message(st));
      return 1;
    }
  }
  free(line);
  if (tfq_tfrecord_writer_close(w, st)) {
    fprintf(stderr, "tfq-mkrecords: %s\n", tfq_status_message(st));
    return 1;
  }
  tfq_tfrecord_writer_free(w);
  tfq_status_free(st);
  return 0;
}
