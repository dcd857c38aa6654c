/* A strict RFC 8259 JSON parser into a small tree, for TF_CONFIG (tf_config.c).  No dependency
 * and no TensorFlow: declarations in tf_cluster.h.  Strings are decoded (all escapes; \u
 * surrogate pairs to UTF-8; \u0000 refused, so every string is a C string); numbers are kept as
 * their validated literal; objects keep their members in order; nesting depth at most 64. */
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_cluster.h"

static char *dup_n(const char *s, size_t n) {
  char *d = tfq_malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = 0;
  return d;
}

typedef struct jparser {
  const char *s;
  size_t pos;
  int oom;
  const char *err; /* a syntax error: its message, at errpos */
  size_t errpos;
} jparser;

#define JSON_MAX_DEPTH 64

void tfq__json_free(tfq__json *j) {
  if (!j) return;
  for (size_t i = 0; i < j->n; i++) {
    tfq__json_free(j->items[i]);
    if (j->keys) tfq_free(j->keys[i]);
  }
  tfq_free(j->items);
  tfq_free(j->keys);
  tfq_free(j->str);
  tfq_free(j);
}

static tfq__json *jfail(jparser *p, const char *msg) {
  if (!p->err && !p->oom) {
    p->err = msg;
    p->errpos = p->pos;
  }
  return NULL;
}

static tfq__json *jnew(jparser *p, int type) {
  tfq__json *j = tfq_malloc(sizeof *j);
  if (!j) {
    p->oom = 1;
    return NULL;
  }
  memset(j, 0, sizeof *j);
  j->type = type;
  return j;
}

static void skip_ws(jparser *p) {
  for (;;) {
    char ch = p->s[p->pos];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
      p->pos++;
    else
      return;
  }
}

static int hex4(const char *s, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char ch = s[i];
    v <<= 4;
    if (ch >= '0' && ch <= '9')
      v |= (unsigned)(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
      v |= (unsigned)(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
      v |= (unsigned)(ch - 'A' + 10);
    else
      return 0;
  }
  *out = v;
  return 1;
}

/* Parses a string starting at the '"'; *out gets the decoded bytes (caller frees). */
static int parse_string(jparser *p, char **out, size_t *outlen) {
  *out = NULL;
  size_t start = ++p->pos; /* after the quote */
  /* Decoded text is never longer than the source, so one pass sizes the buffer. */
  size_t end = start;
  while (p->s[end] && p->s[end] != '"') end += (p->s[end] == '\\' && p->s[end + 1]) ? 2 : 1;
  char *buf = tfq_malloc(end - start + 1);
  if (!buf) {
    p->oom = 1;
    return 0;
  }
  size_t n = 0;
  for (;;) {
    unsigned char ch = (unsigned char)p->s[p->pos];
    if (ch == 0) {
      tfq_free(buf);
      jfail(p, "unterminated string");
      return 0;
    }
    if (ch == '"') {
      p->pos++;
      break;
    }
    if (ch < 0x20) {
      tfq_free(buf);
      jfail(p, "control character in string");
      return 0;
    }
    if (ch != '\\') {
      buf[n++] = (char)ch;
      p->pos++;
      continue;
    }
    char e = p->s[p->pos + 1];
    unsigned cp = 0;
    switch (e) {
      case '"': buf[n++] = '"'; break;
      case '\\': buf[n++] = '\\'; break;
      case '/': buf[n++] = '/'; break;
      case 'b': buf[n++] = '\b'; break;
      case 'f': buf[n++] = '\f'; break;
      case 'n': buf[n++] = '\n'; break;
      case 'r': buf[n++] = '\r'; break;
      case 't': buf[n++] = '\t'; break;
      case 'u': {
        if (!hex4(p->s + p->pos + 2, &cp)) {
          tfq_free(buf);
          jfail(p, "bad \\u escape");
          return 0;
        }
        size_t used = 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned lo;
          if (p->s[p->pos + 6] == '\\' && p->s[p->pos + 7] == 'u' && hex4(p->s + p->pos + 8, &lo) &&
              lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            used = 12;
          } else {
            tfq_free(buf);
            jfail(p, "unpaired UTF-16 surrogate in \\u escape");
            return 0;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          tfq_free(buf);
          jfail(p, "unpaired UTF-16 surrogate in \\u escape");
          return 0;
        }
        if (cp == 0) {
          tfq_free(buf);
          jfail(p, "\\u0000 in string");
          return 0;
        }
        /* UTF-8 is at most 4 bytes, the escape at least 6: fits in place. */
        if (cp < 0x80) {
          buf[n++] = (char)cp;
        } else if (cp < 0x800) {
          buf[n++] = (char)(0xC0 | (cp >> 6));
          buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          buf[n++] = (char)(0xE0 | (cp >> 12));
          buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
          buf[n++] = (char)(0xF0 | (cp >> 18));
          buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
          buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          buf[n++] = (char)(0x80 | (cp & 0x3F));
        }
        p->pos += used;
        continue;
      }
      default:
        tfq_free(buf);
        jfail(p, "bad escape in string");
        return 0;
    }
    p->pos += 2;
  }
  buf[n] = 0;
  *out = buf;
  *outlen = n;
  return 1;
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static tfq__json *parse_value(jparser *p, int depth);

static tfq__json *parse_number(jparser *p) {
  size_t start = p->pos;
  const char *s = p->s;
  size_t i = start;
  if (s[i] == '-') i++;
  if (s[i] == '0') {
    i++;
  } else if (is_digit(s[i])) {
    while (is_digit(s[i])) i++;
  } else {
    p->pos = i;
    return jfail(p, "bad number");
  }
  if (s[i] == '.') {
    i++;
    if (!is_digit(s[i])) {
      p->pos = i;
      return jfail(p, "bad number: digits expected after '.'");
    }
    while (is_digit(s[i])) i++;
  }
  if (s[i] == 'e' || s[i] == 'E') {
    i++;
    if (s[i] == '+' || s[i] == '-') i++;
    if (!is_digit(s[i])) {
      p->pos = i;
      return jfail(p, "bad number: digits expected in the exponent");
    }
    while (is_digit(s[i])) i++;
  }
  tfq__json *j = jnew(p, TFQ__J_NUMBER);
  if (!j) return NULL;
  if (!(j->str = dup_n(s + start, i - start))) {
    p->oom = 1;
    tfq__json_free(j);
    return NULL;
  }
  j->len = i - start;
  p->pos = i;
  return j;
}

static int push_item(jparser *p, tfq__json *parent, char *key, tfq__json *item) {
  if (parent->n == parent->cap) {
    size_t cap = parent->cap ? 2 * parent->cap : 4;
    tfq__json **items = tfq_realloc(parent->items, cap * sizeof *items);
    if (!items) goto fail;
    parent->items = items;
    if (parent->type == TFQ__J_OBJECT) {
      char **keys = tfq_realloc(parent->keys, cap * sizeof *keys);
      if (!keys) goto fail;
      parent->keys = keys;
    }
    parent->cap = cap;
  }
  parent->items[parent->n] = item;
  if (parent->type == TFQ__J_OBJECT) parent->keys[parent->n] = key;
  parent->n++;
  return 1;
fail:
  p->oom = 1;
  tfq_free(key);
  tfq__json_free(item);
  return 0;
}

static tfq__json *parse_container(jparser *p, int depth) {
  int obj = p->s[p->pos] == '{';
  char close = obj ? '}' : ']';
  if (depth >= JSON_MAX_DEPTH) return jfail(p, "nesting deeper than 64");
  tfq__json *j = jnew(p, obj ? TFQ__J_OBJECT : TFQ__J_ARRAY);
  if (!j) return NULL;
  p->pos++;
  skip_ws(p);
  if (p->s[p->pos] == close) {
    p->pos++;
    return j;
  }
  for (;;) {
    char *key = NULL;
    if (obj) {
      skip_ws(p);
      size_t klen;
      if (p->s[p->pos] != '"') {
        jfail(p, "expected a string key");
        goto fail;
      }
      if (!parse_string(p, &key, &klen)) goto fail;
      skip_ws(p);
      if (p->s[p->pos] != ':') {
        tfq_free(key);
        jfail(p, "expected ':'");
        goto fail;
      }
      p->pos++;
    }
    tfq__json *v = parse_value(p, depth + 1);
    if (!v) {
      tfq_free(key);
      goto fail;
    }
    if (!push_item(p, j, key, v)) goto fail;
    skip_ws(p);
    char ch = p->s[p->pos];
    if (ch == ',') {
      p->pos++;
      continue;
    }
    if (ch == close) {
      p->pos++;
      return j;
    }
    jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    goto fail;
  }
fail:
  tfq__json_free(j);
  return NULL;
}

static tfq__json *parse_literal(jparser *p, const char *word, int type) {
  size_t n = strlen(word);
  if (strncmp(p->s + p->pos, word, n) != 0) return jfail(p, "unexpected character");
  p->pos += n;
  return jnew(p, type);
}

static tfq__json *parse_value(jparser *p, int depth) {
  skip_ws(p);
  char ch = p->s[p->pos];
  switch (ch) {
    case '{':
    case '[': return parse_container(p, depth);
    case '"': {
      tfq__json *j = jnew(p, TFQ__J_STRING);
      if (!j) return NULL;
      if (!parse_string(p, &j->str, &j->len)) {
        tfq__json_free(j);
        return NULL;
      }
      return j;
    }
    case 't': return parse_literal(p, "true", TFQ__J_TRUE);
    case 'f': return parse_literal(p, "false", TFQ__J_FALSE);
    case 'n': return parse_literal(p, "null", TFQ__J_NULL);
    case 0: return jfail(p, "unexpected end of input");
    default:
      if (ch == '-' || is_digit(ch)) return parse_number(p);
      return jfail(p, "unexpected character");
  }
}

/* The last member named `key` (Python's json keeps the last of duplicate keys); JSON null counts
 * as absent. */
const tfq__json *tfq__json_member(const tfq__json *obj, const char *key) {
  for (size_t i = obj->n; i-- > 0;)
    if (strcmp(obj->keys[i], key) == 0)
      return obj->items[i]->type == TFQ__J_NULL ? NULL : obj->items[i];
  return NULL;
}

const char *tfq__json_type_name(const tfq__json *j) {
  static const char *const names[] = {"null",     "false",  "true",     "a number",
                                      "a string", "a list", "an object"};
  return names[j->type];
}

tfq_code tfq__json_parse(const char *text, tfq__json **out, size_t *errpos, const char **errmsg) {
  jparser p = {.s = text, .pos = 0};
  *out = NULL;
  *errpos = 0;
  *errmsg = NULL;
  tfq__json *root = parse_value(&p, 0);
  if (root) {
    skip_ws(&p);
    if (p.s[p.pos]) {
      tfq__json_free(root);
      root = NULL;
      jfail(&p, "trailing characters after the JSON value");
    }
  }
  if (!root) {
    if (p.oom) return TFQ_RESOURCE_EXHAUSTED;
    *errpos = p.errpos;
    *errmsg = p.err ? p.err : "unexpected input";
    return TFQ_INVALID_ARGUMENT;
  }
  *out = root;
  return TFQ_OK;
}
