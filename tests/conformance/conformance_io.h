/* conformance_io: the canonical text encoding shared by the conformance drivers
 * (conformance_tfq.c, conformance_coord.c) and run_conformance.py.
 *
 * Tensor token:   <dtype>/<dims>/<vals>   dims "_" (scalar), "*" (unknown rank) or "2x3" ("?" an
 *                 unknown dim); vals comma-separated ("-" when empty): ints in decimal,
 *                 float/double as the hex of their bits, strings "x<hex>", bool 0/1.
 * Error token:    "ERR <code> x<hex message>".
 * Public tfq headers only. */
#ifndef CONFORMANCE_IO_H
#define CONFORMANCE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

#define MAX_TOK 4096

/* Prints "conformance: <what>" on stderr and exits 2. */
void die(const char *what);
void *xmalloc(size_t n);
/* Decodes "x<hex>" into a new NUL-terminated buffer; *len receives its length. */
char *unhex(const char *tok, size_t *len);
void puthex(FILE *f, const char *b, size_t n);
/* "ERR <code> x<hex message>" of `st`. */
void print_err(FILE *f, tfq_status *st);
/* Splits a line in place at spaces; returns the number of tokens. */
int split(char *line, char **tok, int max);
/* The next line (without its '\n') in a static buffer, or NULL at the end. */
char *read_line(FILE *in);
tfq_dtype parse_dtype(const char *s, size_t n);
/* dims: "_" scalar, "*" unknown rank, else "AxBx?"; returns the rank. */
int parse_dims(const char *s, size_t n, int64_t *dims);
/* Parses a tensor token "<dtype>/<dims>/<vals>" into a new tensor. */
tfq_tensor *parse_tensor(const char *tok);
void print_tensor(FILE *f, const tfq_tensor *t);
/* " <tensor>" for every component. */
void print_tuple(FILE *f, const tfq_tuple *t);

#endif
