/* tfq-cat's format by content (see cat_b.h, sniff_format): without -f, the first input's first
 * bytes decide between TFRecord (a length and its valid masked CRC32C), CSV (every one of the
 * first lines split into the same number of fields by one of , TAB ; | SPACE) and text lines,
 * over what its name says; a note on standard error says what was decided when the name said
 * otherwise (or nothing: standard input), and a binary file read as lines gets a hint. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "cat_app.h"
#include "cat_b.h"
#include "cat_stdin.h"

#define SNIFF_BYTES ((size_t)64 << 10)
#define SNIFF_LINES 20

static int tfrecord_head(const unsigned char *m, size_t n) {
  if (n < 12) return 0;
  uint32_t want =
      (uint32_t)m[8] | (uint32_t)m[9] << 8 | (uint32_t)m[10] << 16 | (uint32_t)m[11] << 24;
  return tfq_crc32c_mask(tfq_crc32c_extend(0, m, 8)) == want;
}

/* Fields of line s[0..n) split at d outside double quotes. */
static int64_t fields(const char *s, size_t n, char d) {
  int64_t k = 1;
  int q = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') q = !q;
    if (!q && s[i] == d) k++;
  }
  return k;
}

/* The delimiter that splits every whole line of the first SNIFF_LINES (at least `min_lines`
 * of them) into the same number (> 1) of fields, in the order , TAB ; | SPACE; 0: none.
 * *nf: that number. */
static char split_delim(const char *s, size_t n, int min_lines, int space, int64_t *nf) {
  static const char delims[] = {',', '\t', ';', '|', ' '};
  for (size_t d = 0; d < sizeof delims - !space; d++) {
    int64_t k = -1;
    int lines = 0, same = 1;
    for (size_t i = 0; i < n && lines < SNIFF_LINES;) {
      const char *nl = memchr(s + i, '\n', n - i);
      if (!nl) break;
      size_t len = (size_t)(nl - (s + i));
      if (len && s[i + len - 1] == '\r') len--;
      int64_t f = fields(s + i, len, delims[d]);
      /* a space: runs of them would make empty fields; not a space-separated table */
      if (delims[d] == ' ' && (memmem(s + i, len, "  ", 2) || (len && s[i] == ' '))) same = 0;
      if (k < 0) k = f;
      same &= f == k && f > 1;
      lines++;
      i += (size_t)(nl - (s + i)) + 1;
    }
    if (same && lines >= min_lines && k > 1) {
      *nf = k;
      return delims[d];
    }
  }
  return 0;
}

static const char *delim_name(char d) {
  return d == '\t' ? "TAB" : d == ' ' ? "SPACE" : d == ';' ? "';'" : d == '|' ? "'|'" : "','";
}

/* A CSV file that ',' does not split and TAB, ';' or '|' does (not SPACE: a column of names
 * would split): that delimiter, with a note. */
static void other_delim(options *o, const char *first, const char *m, size_t n) {
  int64_t nf;
  char d = split_delim(m, n, 1, 0, &nf);
  if (!d || d == ',') return;
  o->field_delim = d;
  o->field_delim_set = 1;
  if (!o->quiet)
    warnx_("%s: fields split at %s (%lld a line; --field-delim sets it)", first, delim_name(d),
           (long long)nf);
}

/* Bytes that text does not hold: NUL, and control bytes other than TAB, LF, CR, FF. */
static size_t binary_bytes(const unsigned char *m, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += m[i] == 0 ||
         (m[i] < 0x20 && m[i] != '\t' && m[i] != '\n' && m[i] != '\r' && m[i] != '\f') ||
         m[i] == 0x7f;
  return k;
}

/* Whether compressed bytes m[0..n) (a file's first ones) inflate to a TFRecord framing: the
 * library's tfq_record_count sniffs it from a memfd holding them (the cut stream's error after
 * the sniff is of no concern). */
static int compressed_tfrecord(const options *o, const unsigned char *m, size_t n) {
  int fd = memfd_create("tfq-cat-sniff", MFD_CLOEXEC);
  if (fd < 0) return 0;
  int is = 0;
  if (write_all(fd, (const char *)m, n) == 0) {
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    tfq_status *st = tfq_status_new();
    int64_t k;
    tfq_reader_kind kind = TFQ_READER_TEXT_LINE;
    tfq_compression c =
        o->compression == COMP_AUTO ? TFQ_COMPRESSION_AUTO : (tfq_compression)o->compression;
    if (st && tfq_record_count(path, c, (tfq_reader_kind)-1, 0, &k, &kind, st) != TFQ_OK) {
      /* a prefix cut inside a record: the kind was sniffed before */
    }
    is = kind == TFQ_READER_TFRECORD;
    tfq_status_free(st);
  }
  close(fd);
  return is;
}

/* The first bytes that gzip or zlib bytes m[0..n) (a stream's head, cut anywhere) inflate to,
 * into out[0..cap): their count, 0 when they do not inflate. */
static size_t inflate_head(const unsigned char *m, size_t n, char *out, size_t cap) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return 0; /* 15 + 32: gzip or zlib, by the header */
  z.next_in = (Bytef *)(uintptr_t)m;
  z.avail_in = (uInt)n;
  z.next_out = (Bytef *)out;
  z.avail_out = (uInt)cap;
  int r = inflate(&z, Z_SYNC_FLUSH);
  size_t got = cap - z.avail_out;
  inflateEnd(&z);
  return r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR ? got : 0;
}

/* Lines that one delimiter splits alike: CSV, with a note (and the delimiter set when it is
 * not ','); else nothing is changed. */
static void csv_by_lines(options *o, const char *first, const char *m, size_t n, const char *what) {
  int64_t nf;
  char d = split_delim(m, n, 2, 1, &nf);
  if (!d) return;
  o->format = FMT_CSV;
  if (d != ',') {
    o->field_delim = d;
    o->field_delim_set = 1;
  }
  if (!o->quiet)
    warnx_("%s: read as %sCSV, %lld fields split at %s (-f text reads lines)", first, what,
           (long long)nf, delim_name(d));
}

static void binary_hint(const options *o, const char *first, size_t bin, size_t n) {
  if (!o->quiet)
    warnx_("%s: binary file? %zu of its first %zu bytes are not text (-f tfrecord, -f fixed?)",
           first, bin, n);
}

void sniff_format(options *o, const char *first) {
  int by_name = strcmp(first, "-") != 0;
  if (o->format != FMT_AUTO) {
    if (o->format != FMT_CSV || o->field_delim_set) return;
  } else if (o->record_defaults || o->features || o->nselect || o->field_delim_set) {
    return; /* they imply their format (cat_resolve) */
  }
  const char *m;
  size_t n = 0;
  static char *fbuf;
  if (!by_name) {
    n = stdin_peek(SNIFF_BYTES, &m);
  } else {
    int fd = open(first, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return; /* check_files reports it */
    fbuf = xmalloc(SNIFF_BYTES);
    ssize_t r = pread(fd, fbuf, SNIFF_BYTES, 0);
    close(fd);
    n = r > 0 ? (size_t)r : 0;
    m = fbuf;
  }
  const unsigned char *u = (const unsigned char *)m;
  int tsv = 0;
  in_format named = by_name ? format_from_name(first, &tsv) : FMT_AUTO;
  int compressed = o->compression > 0 || (o->compression == COMP_AUTO &&
                                          tfq_compression_detect(u, n, by_name ? first : NULL, 1) !=
                                              TFQ_COMPRESSION_NONE);
  if (n == 0) goto done;
  if (compressed) { /* TFRecord inside? (the library inflates the first bytes) */
    if (named != FMT_TFRECORD && compressed_tfrecord(o, u, n)) {
      o->format = FMT_TFRECORD;
      if (!o->quiet)
        warnx_("%s: compressed TFRecord records (by their framing; -f text reads lines)", first);
    } else if (named != FMT_TFRECORD) {
      /* the lines inside, as a plain file's: CSV on standard input or under a name that says
       * nothing, another delimiter in a .csv.gz (or with -f csv) */
      char *z = xmalloc(SNIFF_BYTES);
      size_t zn = inflate_head(u, n, z, SNIFF_BYTES);
      if (zn && !binary_bytes((const unsigned char *)z, zn)) {
        if (o->format == FMT_CSV || (named == FMT_CSV && o->format == FMT_AUTO)) {
          if (!tsv) other_delim(o, first, z, zn);
        } else if ((named == FMT_TEXT || named == FMT_AUTO) && o->format == FMT_AUTO) {
          csv_by_lines(o, first, z, zn, "compressed ");
        }
      }
      free(z);
    }
    goto done; /* else the name decides */
  }
  size_t bin = binary_bytes(u, n);
  if (o->format == FMT_CSV) {
    /* -f csv without --field-delim: a ',' that does not split the lines, another that does */
    if (bin) binary_hint(o, first, bin, n);
    if (!tsv && !bin) other_delim(o, first, m, n);
    goto done;
  }
  if (tfrecord_head(u, n)) {
    if (named != FMT_TFRECORD) {
      o->format = FMT_TFRECORD;
      if (!o->quiet) warnx_("%s: TFRecord records (by their framing; -f text reads lines)", first);
    }
    goto done;
  }
  if (named == FMT_TFRECORD) goto done; /* the reader says what is wrong */
  if (bin) {
    binary_hint(o, first, bin, n);
    goto done;
  }
  if (named == FMT_CSV && !tsv) { /* data.csv split at ';': delimiter detection */
    other_delim(o, first, m, n);
    goto done;
  }
  if (named == FMT_TEXT || named == FMT_AUTO) /* standard input, or a name that says nothing */
    csv_by_lines(o, first, m, n, "");
done:
  free(fbuf);
  fbuf = NULL;
}
