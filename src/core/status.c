#include <stdarg.h>
#include <string.h>

#include "base.h"

tfq_status *tfq_status_new(void) {
  tfq_status *st = tfq_malloc(sizeof *st);
  if (st) {
    tfq__status_ok(st);
  }
  return st;
}

void tfq_status_free(tfq_status *st) { tfq_free(st); }

tfq_code tfq_status_code(const tfq_status *st) { return st ? st->code : TFQ_OK; }

const char *tfq_status_message(const tfq_status *st) { return st ? st->msg : ""; }

tfq_code tfq_status_set(tfq_status *st, tfq_code code, const char *fmt, ...) {
  if (!st) return code;
  tfq__status_ok(st);
  st->code = code;
  if (code != TFQ_OK && fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

void tfq_status_clear(tfq_status *st) {
  if (st) tfq__status_ok(st);
}

const char *tfq_status_file(const tfq_status *st) { return st ? st->file : ""; }
int64_t tfq_status_offset(const tfq_status *st) { return st ? st->offset : -1; }
int64_t tfq_status_line(const tfq_status *st) { return st ? st->line : -1; }
int64_t tfq_status_record(const tfq_status *st) { return st ? st->record : -1; }
const char *tfq_status_reason(const tfq_status *st) { return st ? st->msg + st->reason : ""; }

void tfq_status_set_location(tfq_status *st, const char *file, size_t file_len, int64_t offset,
                             int64_t line) {
  if (!st) return;
  if (file) {
    if (file_len >= sizeof st->file) file_len = sizeof st->file - 1;
    memcpy(st->file, file, file_len);
    st->file[file_len] = '\0';
  }
  if (offset >= 0) st->offset = offset;
  if (line >= 0) st->line = line;
}

void tfq__status_set_record(tfq_status *st, int64_t record) {
  if (st && record >= 0) st->record = record;
}

void tfq__status_names_file(tfq_status *st) {
  if (st) st->named = 1;
}

void tfq__status_prefix(tfq_status *st, const char *fmt, ...) {
  if (!st || st->reason || !st->msg[0]) return;
  char prefix[TFQ__FILE_CAP + 64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n <= 0 || (size_t)n >= sizeof prefix || (size_t)n >= sizeof st->msg - 1) return;
  size_t len = strlen(st->msg), keep = sizeof st->msg - 1 - (size_t)n;
  if (len > keep) len = keep;
  memmove(st->msg + n, st->msg, len);
  st->msg[(size_t)n + len] = '\0';
  memcpy(st->msg, prefix, (size_t)n);
  st->reason = (size_t)n;
}

static const char *const code_names[] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

static const char *const code_texts[] = {
    "ok",        "cancelled",      "unknown error",     "invalid argument",   "deadline exceeded",
    "not found", "already exists", "permission denied", "resource exhausted", "failed precondition",
    "aborted",   "out of range",   "unimplemented",     "internal error",     "unavailable",
    "data loss", "unauthenticated"};

const char *tfq_code_name(tfq_code code) {
  unsigned c = (unsigned)code;
  return c < sizeof code_names / sizeof *code_names ? code_names[c] : "UNKNOWN_CODE";
}

const char *tfq_strerror(tfq_code code) {
  unsigned c = (unsigned)code;
  return c < sizeof code_texts / sizeof *code_texts ? code_texts[c] : "unknown code";
}
