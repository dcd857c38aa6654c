/* The cluster description: TF_CONFIG and the "job=h:p,h:p;job2=..." form of tfq_tf_server_new()
 * (distributed-feeding.md 1.1, 1.3).
 *
 * The JSON text is parsed into a small tree by tf_json.c, which is then interpreted here: syntax
 * errors report the byte offset, meaning errors the key.  No TensorFlow here (see tf_cluster.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_cluster.h"
#ifdef TFQ_TF_BRIDGE
#include <tfq/tf.h> /* checks the declarations of tf_cluster.h against the public ones */
#endif

/* ---- the cluster ------------------------------------------------------------------------------
 */

typedef struct task {
  int index;
  char *target; /* "grpc://host:port"; the address is target + 7 */
} task;

typedef struct job {
  char *name;
  task *tasks; /* ascending index once the cluster is complete */
  int n, cap;
} job;

struct tfq_tf_cluster {
  job *jobs;
  int njobs, cap;
  char *task_type; /* NULL: no task */
  int task_index;
  char *session_master; /* NULL: not given */
  char *spec;           /* the spec string, NULL when a job has holes */
  char *hole_job;       /* the first job with holes (borrowed from jobs[]), or NULL */
  int hole_index;       /* its first missing index */
};

/* Echoed input is cut to 64 bytes in messages. */
#define SHOWN(n) ((int)((n) > 64 ? 64 : (n)))

#define SCHEME "grpc://"
#define SCHEME_LEN 7

static char *dup_n(const char *s, size_t n) {
  char *d = tfq_malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* INVALID_ARGUMENT with a one-line message: control characters coming from the input (decoded
 * JSON strings, the spec string) are shown as '?'. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static tfq_code
fail(tfq_status *st, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char *q = buf; *q; q++)
    if ((unsigned char)*q < 0x20 || *q == 0x7f) *q = '?';
  return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", buf);
}

static tfq_code oom(tfq_status *st) {
  return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
}

void tfq_tf_cluster_free(tfq_tf_cluster *c) {
  if (!c) return;
  for (int i = 0; i < c->njobs; i++) {
    for (int j = 0; j < c->jobs[i].n; j++) tfq_free(c->jobs[i].tasks[j].target);
    tfq_free(c->jobs[i].tasks);
    tfq_free(c->jobs[i].name);
  }
  tfq_free(c->jobs);
  tfq_free(c->task_type);
  tfq_free(c->session_master);
  tfq_free(c->spec);
  tfq_free(c);
}

static tfq_tf_cluster *cluster_new(void) {
  tfq_tf_cluster *c = tfq_malloc(sizeof *c);
  if (c) {
    memset(c, 0, sizeof *c);
    c->task_index = -1;
  }
  return c;
}

static const job *find_job_n(const tfq_tf_cluster *c, const char *name, size_t n) {
  for (int i = 0; i < c->njobs; i++)
    if (strlen(c->jobs[i].name) == n && memcmp(c->jobs[i].name, name, n) == 0) return &c->jobs[i];
  return NULL;
}

static const job *find_job(const tfq_tf_cluster *c, const char *name) {
  return c && name ? find_job_n(c, name, strlen(name)) : NULL;
}

static const task *find_task(const job *j, int index) {
  if (!j) return NULL;
  int lo = 0, hi = j->n; /* tasks are sorted by index */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (j->tasks[mid].index < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < j->n && j->tasks[lo].index == index ? &j->tasks[lo] : NULL;
}

/* TF's job names (DeviceNameUtils): [A-Za-z][A-Za-z0-9_]*. */
static int valid_job_name(const char *s, size_t n) {
  if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return 0;
  for (size_t i = 1; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_'))
      return 0;
  }
  return 1;
}

/* An address: non-empty, printable, without the separators of the spec string. */
static int valid_address(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch <= ' ' || ch == 0x7f || ch == ',' || ch == ';' || ch == '=') return 0;
  }
  return 1;
}

/* Appends an empty job (name already checked). */
static job *add_job(tfq_tf_cluster *c, const char *name, size_t n) {
  if (c->njobs == c->cap) {
    int cap = c->cap ? 2 * c->cap : 4;
    job *p = tfq_realloc(c->jobs, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    c->jobs = p;
    c->cap = cap;
  }
  job *j = &c->jobs[c->njobs];
  memset(j, 0, sizeof *j);
  if (!(j->name = dup_n(name, n))) return NULL;
  c->njobs++;
  return j;
}

static int add_task(job *j, int index, const char *addr, size_t n) {
  if (j->n == j->cap) {
    int cap = j->cap ? 2 * j->cap : 4;
    task *p = tfq_realloc(j->tasks, (size_t)cap * sizeof *p);
    if (!p) return 0;
    j->tasks = p;
    j->cap = cap;
  }
  char *t = tfq_malloc(SCHEME_LEN + n + 1);
  if (!t) return 0;
  memcpy(t, SCHEME, SCHEME_LEN);
  memcpy(t + SCHEME_LEN, addr, n);
  t[SCHEME_LEN + n] = 0;
  j->tasks[j->n].index = index;
  j->tasks[j->n].target = t;
  j->n++;
  return 1;
}

static int cmp_task(const void *a, const void *b) {
  int x = ((const task *)a)->index, y = ((const task *)b)->index;
  return (x > y) - (x < y);
}

/* Sorts the tasks, refuses duplicate indices, builds the spec string. */
static tfq_code finish(tfq_tf_cluster *c, const char *what, tfq_status *st) {
  size_t len = 1;
  for (int i = 0; i < c->njobs; i++) {
    job *j = &c->jobs[i];
    if (j->n > 1) qsort(j->tasks, (size_t)j->n, sizeof *j->tasks, cmp_task);
    for (int k = 0; k < j->n; k++) {
      if (k > 0 && j->tasks[k].index == j->tasks[k - 1].index)
        return fail(st, "%s: job '%s' has task %d twice", what, j->name, j->tasks[k].index);
      if (j->tasks[k].index != k && !c->hole_job) {
        c->hole_job = j->name;
        c->hole_index = k;
      }
      len += strlen(j->tasks[k].target) - SCHEME_LEN + 1;
    }
    len += strlen(j->name) + 2;
  }
  if (c->hole_job) return TFQ_OK;
  char *s = tfq_malloc(len);
  if (!s) return oom(st);
  size_t n = 0;
  for (int i = 0; i < c->njobs; i++) {
    job *j = &c->jobs[i];
    if (i) s[n++] = ';';
    size_t l = strlen(j->name);
    memcpy(s + n, j->name, l);
    n += l;
    s[n++] = '=';
    for (int k = 0; k < j->n; k++) {
      if (k) s[n++] = ',';
      l = strlen(j->tasks[k].target) - SCHEME_LEN;
      memcpy(s + n, j->tasks[k].target + SCHEME_LEN, l);
      n += l;
    }
  }
  s[n] = 0;
  c->spec = s;
  return TFQ_OK;
}

/* The task checks shared by TF_CONFIG and set_task. */
static tfq_code check_task(const tfq_tf_cluster *c, const char *type, int index, const char *what,
                           tfq_status *st) {
  if (!valid_job_name(type, strlen(type)))
    return fail(st, "%s: task type '%s' is not a valid job name", what, type);
  if (index < 0) return fail(st, "%s: task index %d out of range", what, index);
  const job *j = find_job(c, type);
  if (j) {
    if (!find_task(j, index))
      return fail(st, "%s: task index %d out of range: job '%s' has no task %d", what, index, type,
                  index);
  } else if (c->njobs > 0 && strcmp(type, "evaluator") != 0) {
    return fail(st, "%s: task type '%s' is not a job of the cluster", what, type);
  }
  return TFQ_OK;
}

tfq_code tfq_tf_cluster_set_task(tfq_tf_cluster *c, const char *type, int index, tfq_status *st) {
  if (!type) {
    tfq_free(c->task_type);
    c->task_type = NULL;
    c->task_index = -1;
    tfq_status_clear(st);
    return TFQ_OK;
  }
  tfq_code code = check_task(c, type, index, "Task", st);
  if (code) return code;
  char *t = dup_n(type, strlen(type));
  if (!t) return oom(st);
  tfq_free(c->task_type);
  c->task_type = t;
  c->task_index = index;
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- accessors ---------------------------------------------------------------------------- */

tfq_code tfq_tf_cluster_spec_string(const tfq_tf_cluster *c, const char **out, tfq_status *st) {
  if (!c->spec) {
    *out = NULL;
    return fail(st, "Job '%s' has no task %d: a sparse job with holes has no spec string",
                c->hole_job, c->hole_index);
  }
  *out = c->spec;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_tf_cluster_task(const tfq_tf_cluster *c, const char **type, int *index) {
  if (type) *type = c->task_type;
  if (index) *index = c->task_type ? c->task_index : -1;
}

int tfq_tf_cluster_num_jobs(const tfq_tf_cluster *c) { return c->njobs; }

const char *tfq_tf_cluster_job(const tfq_tf_cluster *c, int i) {
  return i >= 0 && i < c->njobs ? c->jobs[i].name : NULL;
}

int tfq_tf_cluster_num_tasks(const tfq_tf_cluster *c, const char *job_name) {
  const job *j = find_job(c, job_name);
  return j ? j->n : 0;
}

int tfq_tf_cluster_task_index(const tfq_tf_cluster *c, const char *job_name, int i) {
  const job *j = find_job(c, job_name);
  return j && i >= 0 && i < j->n ? j->tasks[i].index : -1;
}

const char *tfq_tf_cluster_target(const tfq_tf_cluster *c, const char *job_name, int index) {
  const task *t = find_task(find_job(c, job_name), index);
  return t ? t->target : NULL;
}

const char *tfq_tf_cluster_address(const tfq_tf_cluster *c, const char *job_name, int index) {
  const char *t = tfq_tf_cluster_target(c, job_name, index);
  return t ? t + SCHEME_LEN : NULL;
}

const char *tfq_tf_cluster_master(const tfq_tf_cluster *c) {
  if (c->session_master) return c->session_master;
  if (c->njobs == 0 || (c->njobs == 1 && c->jobs[0].n == 1) || !c->task_type) return "";
  const char *t = tfq_tf_cluster_target(c, c->task_type, c->task_index);
  return t ? t : "";
}

/* ---- the spec string ------------------------------------------------------------------------
 */

tfq_code tfq_tf_cluster_from_spec_string(const char *spec, tfq_tf_cluster **out, tfq_status *st) {
  *out = NULL;
  tfq_tf_cluster *c = cluster_new();
  if (!c) return oom(st);
  tfq_code code = TFQ_OK;
  const char *p = spec;
  while (*p && code == TFQ_OK) {
    const char *end = strchr(p, ';');
    if (!end) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    size_t nl = eq ? (size_t)(eq - p) : 0;
    if (!eq) {
      code = fail(st, "Cluster spec: job '%.*s' has no '=' (expected job=host:port,...)",
                  SHOWN(end - p), p);
    } else if (!valid_job_name(p, nl)) {
      code = fail(st, "Cluster spec: bad job name '%.*s' (expected [A-Za-z][A-Za-z0-9_]*)",
                  SHOWN(nl), p);
    } else {
      if (find_job_n(c, p, nl)) {
        code = fail(st, "Cluster spec: job '%.*s' given twice", SHOWN(nl), p);
        break;
      }
      job *j = add_job(c, p, nl);
      if (!j) {
        code = oom(st);
        break;
      }
      const char *a = eq + 1;
      int idx = 0;
      while (a < end) {
        const char *comma = memchr(a, ',', (size_t)(end - a));
        if (!comma) comma = end;
        if (!valid_address(a, (size_t)(comma - a))) {
          code = fail(st, "Cluster spec: job '%.64s' task %d: bad address '%.*s'", j->name, idx,
                      SHOWN(comma - a), a);
          break;
        }
        if (!add_task(j, idx, a, (size_t)(comma - a))) {
          code = oom(st);
          break;
        }
        idx++;
        a = comma + 1;
        if (comma < end && a == end) {
          code = fail(st, "Cluster spec: job '%.64s' ends with ','", j->name);
          break;
        }
      }
    }
    p = *end ? end + 1 : end;
  }
  if (code == TFQ_OK) code = finish(c, "Cluster spec", st);
  if (code) {
    tfq_tf_cluster_free(c);
    return code;
  }
  *out = c;
  tfq_status_clear(st);
  return TFQ_OK;
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* A decimal integer text (optional sign when `sign`) in [0, INT_MAX]: 1; a negative or too large
 * integer: -1 (out of range); not an integer: 0. */
static int parse_index(const char *s, int sign, int *out) {
  const char *q = s;
  int neg = 0;
  if (sign && (*q == '-' || *q == '+')) neg = *q++ == '-';
  if (!is_digit(*q)) return 0;
  long long v = 0;
  int big = 0;
  for (; is_digit(*q); q++) {
    v = v * 10 + (*q - '0');
    if (v > INT_MAX) {
      big = 1;
      v = INT_MAX;
    }
  }
  if (*q) return 0;
  if (big || (neg && v != 0)) return -1;
  *out = (int)v;
  return 1;
}

static tfq_code read_job(tfq_tf_cluster *c, const char *name, const tfq__json *v, tfq_status *st) {
  if (!valid_job_name(name, strlen(name)))
    return fail(st, "TF_CONFIG: cluster: bad job name '%s' (expected [A-Za-z][A-Za-z0-9_]*)", name);
  if (find_job(c, name)) return fail(st, "TF_CONFIG: cluster.%s: job given twice", name);
  if (v->type != TFQ__J_ARRAY && v->type != TFQ__J_OBJECT)
    return fail(st, "TF_CONFIG: cluster.%s: a job must be a list or an object, not %s", name,
                tfq__json_type_name(v));
  job *j = add_job(c, name, strlen(name));
  if (!j) return oom(st);
  for (size_t i = 0; i < v->n; i++) {
    const tfq__json *a = v->items[i];
    int index = (int)i;
    char where[64];
    if (v->type == TFQ__J_OBJECT) {
      int r = parse_index(v->keys[i], 1, &index);
      if (r == 0)
        return fail(st, "TF_CONFIG: cluster.%s: task index '%s' is not an integer", name,
                    v->keys[i]);
      if (r < 0)
        return fail(st, "TF_CONFIG: cluster.%s: task index '%s' out of range", name, v->keys[i]);
      snprintf(where, sizeof where, "\"%d\"", index);
    } else {
      if (i > INT_MAX - 1) return fail(st, "TF_CONFIG: cluster.%s: too many tasks", name);
      snprintf(where, sizeof where, "[%d]", index);
    }
    if (a->type != TFQ__J_STRING)
      return fail(st, "TF_CONFIG: cluster.%s%s: the address must be a string, not %s", name, where,
                  tfq__json_type_name(a));
    if (!valid_address(a->str, a->len))
      return fail(st,
                  "TF_CONFIG: cluster.%s%s: bad address '%s' (empty, or holds "
                  "whitespace, ',', ';' or '=')",
                  name, where, a->str);
    if (!add_task(j, index, a->str, a->len)) return oom(st);
  }
  return TFQ_OK;
}

static tfq_code interpret(tfq_tf_cluster *c, const tfq__json *root, tfq_status *st) {
  if (root->type != TFQ__J_OBJECT)
    return fail(st, "TF_CONFIG: the top level must be an object, not %s",
                tfq__json_type_name(root));
  tfq_code code;
  const tfq__json *cl = tfq__json_member(root, "cluster");
  if (cl) {
    if (cl->type != TFQ__J_OBJECT)
      return fail(st, "TF_CONFIG: cluster must be an object, not %s", tfq__json_type_name(cl));
    for (size_t i = 0; i < cl->n; i++) {
      if (cl->items[i]->type == TFQ__J_NULL) continue;
      if ((code = read_job(c, cl->keys[i], cl->items[i], st))) return code;
    }
  }
  if ((code = finish(c, "TF_CONFIG: cluster", st))) return code;
  const job *chief = find_job(c, "chief");
  if (chief && chief->n > 1)
    return fail(st, "TF_CONFIG: cluster.chief: %d chiefs, at most one is allowed", chief->n);

  const tfq__json *rpc = tfq__json_member(root, "rpc_layer");
  if (rpc && rpc->type != TFQ__J_STRING)
    return fail(st, "TF_CONFIG: rpc_layer must be \"grpc\", not %s", tfq__json_type_name(rpc));
  if (rpc && strcmp(rpc->str, "grpc") != 0)
    return fail(st, "TF_CONFIG: rpc_layer \"%s\" is not supported (only \"grpc\")", rpc->str);

  const tfq__json *sm = tfq__json_member(root, "session_master");
  if (sm) {
    if (sm->type != TFQ__J_STRING)
      return fail(st, "TF_CONFIG: session_master must be a string, not %s",
                  tfq__json_type_name(sm));
    if (!(c->session_master = dup_n(sm->str, sm->len))) return oom(st);
  }

  const tfq__json *t = tfq__json_member(root, "task");
  if (t) {
    if (t->type != TFQ__J_OBJECT)
      return fail(st, "TF_CONFIG: task must be an object, not %s", tfq__json_type_name(t));
    const tfq__json *ty = tfq__json_member(t, "type"), *ix = tfq__json_member(t, "index");
    if (ty) {
      if (ty->type != TFQ__J_STRING)
        return fail(st, "TF_CONFIG: task.type must be a string, not %s", tfq__json_type_name(ty));
      int index = 0;
      if (ix) {
        int r = ix->type == TFQ__J_NUMBER || ix->type == TFQ__J_STRING
                    ? parse_index(ix->str, 1, &index)
                    : 0;
        if (r == 0 && ix->type == TFQ__J_NUMBER)
          return fail(st, "TF_CONFIG: task.index %s is not an integer", ix->str);
        if (r == 0 && ix->type == TFQ__J_STRING)
          return fail(st, "TF_CONFIG: task.index \"%s\" is not an integer", ix->str);
        if (r == 0)
          return fail(st, "TF_CONFIG: task.index %s is not an integer", tfq__json_type_name(ix));
        if (r < 0) return fail(st, "TF_CONFIG: task.index %s out of range", ix->str);
      }
      if ((code = check_task(c, ty->str, index, "TF_CONFIG: task", st))) return code;
      if (!(c->task_type = dup_n(ty->str, ty->len))) return oom(st);
      c->task_index = index;
    }
  }
  return TFQ_OK;
}

tfq_code tfq_tf_cluster_from_tf_config(const char *json, tfq_tf_cluster **out, tfq_status *st) {
  *out = NULL;
  if (!json) json = getenv("TF_CONFIG");
  tfq_tf_cluster *c = cluster_new();
  if (!c) return oom(st);
  tfq_code code = TFQ_OK;
  /* Unset or blank: the empty cluster (TF's json.loads(os.environ.get("TF_CONFIG", "{}"))
   * treats only an unset one so; a blank one is a JSONDecodeError in Python, but no feeder
   * gains from that distinction). */
  const char *text = json ? json : "";
  size_t i = 0;
  while (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') i++;
  if (text[i]) {
    tfq__json *root = NULL;
    size_t errpos = 0;
    const char *err = NULL;
    code = tfq__json_parse(text, &root, &errpos, &err);
    if (code == TFQ_RESOURCE_EXHAUSTED)
      code = oom(st);
    else if (code)
      code = fail(st, "TF_CONFIG: malformed JSON at byte %zu: %s", errpos, err);
    else
      code = interpret(c, root, st);
    tfq__json_free(root);
  } else {
    code = finish(c, "TF_CONFIG", st);
  }
  if (code) {
    tfq_tf_cluster_free(c);
    return code;
  }
  *out = c;
  tfq_status_clear(st);
  return TFQ_OK;
}
