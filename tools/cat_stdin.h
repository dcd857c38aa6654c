/* tfq-cat's standard input (tools/ only).  A pipe cannot be opened twice nor peeked, so the first
 * bytes are read here (to detect the compression and infer the types), kept in a memfd for
 * inference, and a pump thread feeds them and the rest of standard input into a pipe that the
 * reader opens as /dev/fd/N.  A regular file on standard input is read as /dev/stdin. */
#ifndef TFQ_TOOLS_CAT_STDIN_H
#define TFQ_TOOLS_CAT_STDIN_H

#include "cat_app.h"

/* Fills f->path, f->comp and (need_sample: the first INFER_ROWS records after the header lines)
 * f->sample_path; starts the pump thread for a pipe.  Exits on error (usage: --num-epochs > 1 on
 * a pipe). */
void setup_stdin(input_file *f, const options *o, in_format fmt, int need_sample);

/* tfq-feed under Spark's RDD.pipe: reads standard input's first line if it is a header
 * "#tfq key=value ..." (into line, without the newline; returns 1).  Anything else read is data
 * that setup_stdin() gives back to the pipeline (returns 0).  Call before setup_stdin(). */
int stdin_header(char *line, size_t cap);

/* After a header: standard input must end with a trailer line '#tfq end rows=N' (N: the data
 * lines before it), which the pump takes out of the data.  Call before setup_stdin(). */
void stdin_want_trailer(void);
/* When the trailer was wanted: why the input is incomplete (no trailer, another count, data after
 * it), or NULL.  Meaningful once the reader has seen the end of standard input. */
const char *stdin_trailer_error(void);

/* Standard input's first bytes, at most `want`: fewer at its end, or when nothing more arrives
 * within 200 ms once some came.  Nothing is consumed: a pipe's bytes are kept and given to the
 * pipeline by setup_stdin(), a regular file is read with pread.  *p is valid until
 * setup_stdin().  Call before setup_stdin(). */
size_t stdin_peek(size_t want, const char **p);

/* Ends the reader's blocking read() on the pump's pipe: its write end becomes /dev/null.  Call
 * after the pipeline was asked to stop.  Thread-safe; nothing when there is no pump. */
void pump_detach_reader(void);

#endif
