#include <stdarg.h>
#include <string.h>

#include "core_internal.h"

tfq_status *tfq_status_new(void) {
  tfq_status *st = tfq_malloc(sizeof *st);
  if (st) {
    st->code = TFQ_OK;
    st->msg[0] = '\0';
  }
  return st;
}

void tfq_status_free(tfq_status *st) { tfq_free(st); }

tfq_code tfq_status_code(const tfq_status *st) { return st ? st->code : TFQ_OK; }

const char *tfq_status_message(const tfq_status *st) { return st ? st->msg : ""; }

tfq_code tfq_status_set(tfq_status *st, tfq_code code, const char *fmt, ...) {
  if (!st) return code;
  st->code = code;
  st->msg[0] = '\0';
  if (code != TFQ_OK && fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

void tfq_status_clear(tfq_status *st) {
  if (st) {
    st->code = TFQ_OK;
    st->msg[0] = '\0';
  }
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
