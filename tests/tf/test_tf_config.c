/* The cluster description of libtfq_tf: TF_CONFIG (distributed-feeding.md 1.1, 1.3) and the
 * "job=h:p,...;..." form.  Needs no TensorFlow: built from src/tf/tf_config.c and libtfq, so it
 * runs with or without the wheel.  Plain C program: exit 0 pass, 1 fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

#include "tf_cluster.h"

static int failures;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static int streq(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static tfq_tf_cluster *parse_ok(const char *json) {
  tfq_status *st = tfq_status_new();
  tfq_tf_cluster *c = NULL;
  tfq_code code = tfq_tf_cluster_from_tf_config(json, &c, st);
  CHECK(code == TFQ_OK && c, "parse of %s: %s %s", json, tfq_code_name(code),
        tfq_status_message(st));
  tfq_status_free(st);
  return c;
}

/* Parses `json`, expecting INVALID_ARGUMENT with every `want` fragment in the message. */
static void parse_bad(const char *json, const char *want, const char *want2) {
  tfq_status *st = tfq_status_new();
  tfq_tf_cluster *c = (tfq_tf_cluster *)&failures; /* must be reset to NULL */
  tfq_code code = tfq_tf_cluster_from_tf_config(json, &c, st);
  const char *m = tfq_status_message(st);
  CHECK(code == TFQ_INVALID_ARGUMENT, "%s: got %s '%s'", json, tfq_code_name(code), m);
  CHECK(c == NULL, "%s: *out not NULL on failure", json);
  CHECK(strncmp(m, "TF_CONFIG: ", 11) == 0, "%s: message '%s'", json, m);
  CHECK(strchr(m, '\n') == NULL, "%s: message on several lines '%s'", json, m);
  CHECK(strstr(m, want) != NULL, "%s: message '%s' lacks '%s'", json, m, want);
  if (want2) CHECK(strstr(m, want2) != NULL, "%s: message '%s' lacks '%s'", json, m, want2);
  printf("ok  %-60.60s -> %s\n", json ? json : "(getenv)", m);
  if (code == TFQ_OK) tfq_tf_cluster_free(c);
  tfq_status_free(st);
}

static void check_spec(const tfq_tf_cluster *c, const char *want) {
  tfq_status *st = tfq_status_new();
  const char *s = NULL;
  tfq_code code = tfq_tf_cluster_spec_string(c, &s, st);
  CHECK(code == TFQ_OK && streq(s, want), "spec string %s (%s), want %s", s ? s : "(null)",
        tfq_status_message(st), want);
  tfq_status_free(st);
}

/* distributed-feeding.md 1.1's example, verbatim. */
static void test_example(void) {
  const char *json =
      "{\"cluster\": {\"chief\": [\"h0:2222\"], \"worker\": [\"h1:2222\", \"h2:2222\"], "
      "\"ps\": [\"h3:2222\"]},\n \"task\": {\"type\": \"worker\", \"index\": 1},\n"
      " \"rpc_layer\": \"grpc\", \"session_master\": \"grpc://h1:2222\", \"environment\": "
      "\"cloud\"}";
  tfq_tf_cluster *c = parse_ok(json);
  if (!c) return;
  CHECK(tfq_tf_cluster_num_jobs(c) == 3, "jobs %d", tfq_tf_cluster_num_jobs(c));
  CHECK(streq(tfq_tf_cluster_job(c, 0), "chief"), "job 0");
  CHECK(streq(tfq_tf_cluster_job(c, 1), "worker"), "job 1");
  CHECK(streq(tfq_tf_cluster_job(c, 2), "ps"), "job 2");
  CHECK(tfq_tf_cluster_job(c, 3) == NULL && tfq_tf_cluster_job(c, -1) == NULL, "job 3");
  CHECK(tfq_tf_cluster_num_tasks(c, "worker") == 2, "workers");
  CHECK(tfq_tf_cluster_num_tasks(c, "chief") == 1, "chief");
  CHECK(tfq_tf_cluster_num_tasks(c, "evaluator") == 0, "evaluator");
  CHECK(tfq_tf_cluster_task_index(c, "worker", 1) == 1, "index");
  CHECK(tfq_tf_cluster_task_index(c, "worker", 2) == -1, "index 2");
  CHECK(streq(tfq_tf_cluster_address(c, "worker", 1), "h2:2222"), "address");
  CHECK(streq(tfq_tf_cluster_target(c, "ps", 0), "grpc://h3:2222"), "target");
  CHECK(tfq_tf_cluster_address(c, "worker", 2) == NULL, "no worker 2");
  CHECK(tfq_tf_cluster_target(c, "nope", 0) == NULL, "no job");
  const char *type;
  int index;
  tfq_tf_cluster_task(c, &type, &index);
  CHECK(streq(type, "worker") && index == 1, "task %s %d", type ? type : "(null)", index);
  CHECK(streq(tfq_tf_cluster_master(c), "grpc://h1:2222"), "master %s", tfq_tf_cluster_master(c));
  check_spec(c, "chief=h0:2222;worker=h1:2222,h2:2222;ps=h3:2222");
  tfq_tf_cluster_free(c);

  /* Without session_master, master() is this task's target. */
  c = parse_ok(
      "{\"cluster\": {\"worker\": [\"h1:2222\", \"h2:2222\"], \"ps\": [\"h3:2222\"]},"
      " \"task\": {\"type\": \"worker\", \"index\": \"1\"}}");
  if (c) {
    CHECK(streq(tfq_tf_cluster_master(c), "grpc://h2:2222"), "master %s", tfq_tf_cluster_master(c));
    tfq_tf_cluster_free(c);
  }
  /* One job with one task: master() is "" (TF's rule), as for no task. */
  c = parse_ok("{\"cluster\": {\"worker\": [\"h1:2222\"]}, \"task\": {\"type\": \"worker\"}}");
  if (c) {
    CHECK(streq(tfq_tf_cluster_master(c), ""), "master %s", tfq_tf_cluster_master(c));
    tfq_tf_cluster_task(c, &type, &index);
    CHECK(streq(type, "worker") && index == 0, "missing index is 0");
    tfq_tf_cluster_free(c);
  }
}

static void test_sparse(void) {
  tfq_tf_cluster *c = parse_ok(
      "{\"cluster\": {\"ps\": [\"p:1\"], \"worker\": {\"3\": \"w3:1\", \"1\": \"w1:1\"}},"
      " \"task\": {\"type\": \"worker\", \"index\": 3}}");
  if (!c) return;
  CHECK(tfq_tf_cluster_num_tasks(c, "worker") == 2, "sparse count");
  CHECK(tfq_tf_cluster_task_index(c, "worker", 0) == 1, "first index");
  CHECK(tfq_tf_cluster_task_index(c, "worker", 1) == 3, "second index");
  CHECK(streq(tfq_tf_cluster_address(c, "worker", 3), "w3:1"), "w3");
  CHECK(streq(tfq_tf_cluster_target(c, "worker", 1), "grpc://w1:1"), "w1");
  CHECK(tfq_tf_cluster_address(c, "worker", 0) == NULL, "hole 0");
  CHECK(tfq_tf_cluster_address(c, "worker", 2) == NULL, "hole 2");
  CHECK(streq(tfq_tf_cluster_master(c), "grpc://w3:1"), "master");
  tfq_status *st = tfq_status_new();
  const char *s = "x";
  tfq_code code = tfq_tf_cluster_spec_string(c, &s, st);
  CHECK(code == TFQ_INVALID_ARGUMENT && s == NULL, "holes: %s", tfq_code_name(code));
  CHECK(strstr(tfq_status_message(st), "'worker'") && strstr(tfq_status_message(st), "task 0"),
        "holes message '%s'", tfq_status_message(st));
  printf("ok  sparse with holes -> %s\n", tfq_status_message(st));
  tfq_status_free(st);
  tfq_tf_cluster_free(c);

  /* Sparse without holes has a spec string. */
  c = parse_ok("{\"cluster\": {\"worker\": {\"1\": \"b:1\", \"0\": \"a:1\"}}}");
  if (c) {
    check_spec(c, "worker=a:1,b:1");
    tfq_tf_cluster_free(c);
  }
}

static void test_syntax(void) {
  /* Escapes, unknown keys at every level, nulls, whitespace. */
  tfq_tf_cluster *c = parse_ok(
      " {\"environment\": \"cloud\", \"x\": [1, -2.5e+3, true, false, null, {\"a\": [[]]}],"
      " \"cluster\": {\"w\\u006fr\\u006Ber\": [\"h\\u0031:1\", \"a\\/b:2\"], \"ps\": null,"
      " \"\\ud83d\\ude00\": null},"
      " \"task\": {\"type\": \"worker\", \"index\": 0, \"extra\": {}}, \"session_master\": null,"
      " \"rpc_layer\": \"grpc\", \"s\": \"\\\"\\\\\\b\\f\\n\\r\\t\\u00e9\\u20ac\"} \n\t");
  if (c) {
    CHECK(tfq_tf_cluster_num_jobs(c) == 1, "null jobs skipped: %d", tfq_tf_cluster_num_jobs(c));
    CHECK(streq(tfq_tf_cluster_address(c, "worker", 0), "h1:1"), "\\u escape");
    CHECK(streq(tfq_tf_cluster_address(c, "worker", 1), "a/b:2"), "\\/ escape");
    CHECK(streq(tfq_tf_cluster_master(c), "grpc://h1:1"), "master");
    tfq_tf_cluster_free(c);
  }
  /* Duplicate top-level keys: the last one wins (Python's json). */
  c = parse_ok(
      "{\"task\": {\"type\": \"ps\"}, \"cluster\": {\"ps\": [\"a:1\"]},"
      " \"task\": {\"type\": \"ps\", \"index\": 0}}");
  if (c) tfq_tf_cluster_free(c);
  /* Empty input and the empty object: the empty cluster. */
  const char *empties[] = {"", "  \n", "{}", "{\"cluster\": {}}", "{\"task\": {}}"};
  for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
    c = parse_ok(empties[i]);
    if (!c) continue;
    const char *type = "x";
    int index = 0;
    tfq_tf_cluster_task(c, &type, &index);
    CHECK(type == NULL && index == -1, "no task in '%s'", empties[i]);
    CHECK(tfq_tf_cluster_num_jobs(c) == 0, "no job");
    CHECK(streq(tfq_tf_cluster_master(c), ""), "master");
    check_spec(c, "");
    tfq_tf_cluster_free(c);
  }
  /* A feeder without a task in a non-empty cluster. */
  c = parse_ok("{\"cluster\": {\"ps\": [\"a:1\"], \"worker\": [\"b:1\"]}}");
  if (c) {
    CHECK(streq(tfq_tf_cluster_master(c), ""), "master without task");
    tfq_tf_cluster_free(c);
  }
}

static void test_env(void) {
  setenv("TF_CONFIG", "{\"cluster\": {\"ps\": [\"e:1\"]}, \"task\": {\"type\": \"ps\"}}", 1);
  tfq_tf_cluster *c = parse_ok(NULL);
  if (c) {
    CHECK(streq(tfq_tf_cluster_address(c, "ps", 0), "e:1"), "from the environment");
    tfq_tf_cluster_free(c);
  }
  unsetenv("TF_CONFIG");
  c = parse_ok(NULL);
  if (c) {
    CHECK(tfq_tf_cluster_num_jobs(c) == 0, "unset TF_CONFIG: empty cluster");
    tfq_tf_cluster_free(c);
  }
  setenv("TF_CONFIG", "{\"cluster\": [", 1);
  parse_bad(NULL, "malformed JSON", NULL);
  unsetenv("TF_CONFIG");
}

static void test_errors(void) {
  /* Malformed JSON, with the byte offset. */
  parse_bad("{\"cluster\": }", "malformed JSON at byte 12", NULL);
  parse_bad("{\"cluster\" {}}", "at byte 11", "expected ':'");
  parse_bad("{\"cluster\": {}", "at byte 14", "expected ',' or '}'");
  parse_bad("{\"a\": [1, 2,]}", "at byte 12", NULL);
  parse_bad("{\"a\": \"x}", "unterminated string", NULL);
  parse_bad("{\"a\": \"\\q\"}", "bad escape", NULL);
  parse_bad("{\"a\": \"\\u12G4\"}", "bad \\u escape", NULL);
  parse_bad("{\"a\": \"\\ud800\"}", "surrogate", NULL);
  parse_bad("{\"a\": \"\\udc00\\ud800\"}", "surrogate", NULL);
  parse_bad("{\"a\": \"\\u0000\"}", "\\u0000", NULL);
  parse_bad("{\"a\": \"tab\there\"}", "control character", NULL);
  parse_bad("{\"a\": 01}", "at byte 7", NULL);
  parse_bad("{\"a\": 1.}", "digits expected", NULL);
  parse_bad("{\"a\": -}", "bad number", NULL);
  parse_bad("{\"a\": tru}", "unexpected character", NULL);
  parse_bad("{\"a\": 1} x", "trailing characters", NULL);
  parse_bad("{a: 1}", "expected a string key", NULL);
  parse_bad("{\"a\": 1", "at byte 7", NULL);
  char deep[200];
  memset(deep, '[', 65);
  deep[65] = 0;
  parse_bad(deep, "nesting deeper than 64", NULL);
  /* Meaning. */
  parse_bad("[1]", "top level must be an object", NULL);
  parse_bad("{\"cluster\": [\"a:1\"]}", "cluster must be an object", NULL);
  parse_bad("{\"cluster\": {\"worker\": \"h:1\"}}", "cluster.worker",
            "must be a list or an object");
  parse_bad("{\"cluster\": {\"worker\": 3}}", "cluster.worker", "a number");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1\", 2]}}", "cluster.worker[1]", "must be a string");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1\", \"\"]}}", "cluster.worker[1]", "bad address");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1,b:2\"]}}", "cluster.worker[0]", "bad address");
  parse_bad("{\"cluster\": {\"worker\": {\"x\": \"a:1\"}}}", "cluster.worker",
            "'x' is not an integer");
  parse_bad("{\"cluster\": {\"worker\": {\"-1\": \"a:1\"}}}", "cluster.worker",
            "'-1' out of range");
  parse_bad("{\"cluster\": {\"worker\": {\"4294967296\": \"a:1\"}}}", "cluster.worker",
            "out of range");
  parse_bad("{\"cluster\": {\"worker\": {\"1\": \"a:1\", \"01\": \"b:1\"}}}", "job 'worker'",
            "task 1 twice");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1\"], \"worker\": [\"b:1\"]}}", "cluster.worker",
            "twice");
  parse_bad("{\"cluster\": {\"job:x\": [\"a:1\"]}}", "bad job name 'job:x'", NULL);
  parse_bad("{\"cluster\": {\"chief\": [\"a:1\", \"b:1\"]}}", "cluster.chief",
            "at most one is allowed");
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "1.5}}",
      "task.index 1.5", "not an integer");
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "\"one\"}}",
      "task.index \"one\"", "not an integer");
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "true}}",
      "task.index true", "not an integer");
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "1}}",
      "task index 1 out of range", "no task 1");
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "-1}}",
      "task.index -1 out of range", NULL);
  parse_bad(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": "
      "99999999999}}",
      "out of range", NULL);
  parse_bad("{\"cluster\": {\"worker\": {\"1\": \"a:1\"}}, \"task\": {\"type\": \"worker\"}}",
            "out of range", "no task 0");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"ps\"}}",
            "task type 'ps'", "not a job of the cluster");
  parse_bad("{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": 1}}", "task.type",
            "must be a string");
  parse_bad("{\"task\": [\"worker\", 0]}", "task must be an object", NULL);
  parse_bad("{\"rpc_layer\": \"grpc+verbs\"}", "rpc_layer \"grpc+verbs\"", "only \"grpc\"");
  parse_bad("{\"rpc_layer\": 1}", "rpc_layer", NULL);
  parse_bad("{\"session_master\": 1}", "session_master", NULL);

  /* An evaluator need not be listed. */
  tfq_tf_cluster *c = parse_ok(
      "{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"evaluator\", \"index\": 0}}");
  if (c) tfq_tf_cluster_free(c);
}

static void test_spec_string(void) {
  tfq_status *st = tfq_status_new();
  tfq_tf_cluster *c = NULL;
  CHECK(tfq_tf_cluster_from_spec_string("ps=h:1;worker=h:2,h:3", &c, st) == TFQ_OK, "%s",
        tfq_status_message(st));
  tfq_tf_cluster *j =
      parse_ok("{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"h:2\", \"h:3\"]}}");
  if (c && j) {
    /* The flag and TF_CONFIG give the same object. */
    CHECK(tfq_tf_cluster_num_jobs(c) == tfq_tf_cluster_num_jobs(j), "jobs");
    for (int i = 0; i < tfq_tf_cluster_num_jobs(c); i++) {
      const char *name = tfq_tf_cluster_job(c, i);
      CHECK(streq(name, tfq_tf_cluster_job(j, i)), "job %d", i);
      CHECK(tfq_tf_cluster_num_tasks(c, name) == tfq_tf_cluster_num_tasks(j, name), "tasks");
      for (int t = 0; t < tfq_tf_cluster_num_tasks(c, name); t++)
        CHECK(streq(tfq_tf_cluster_target(c, name, t), tfq_tf_cluster_target(j, name, t)),
              "target %s %d", name, t);
    }
    check_spec(c, "ps=h:1;worker=h:2,h:3");
    check_spec(j, "ps=h:1;worker=h:2,h:3");
    const char *type;
    tfq_tf_cluster_task(c, &type, NULL);
    CHECK(type == NULL, "no task from a spec string");
    /* set_task, as a --task flag. */
    CHECK(tfq_tf_cluster_set_task(c, "worker", 1, st) == TFQ_OK, "%s", tfq_status_message(st));
    int index;
    tfq_tf_cluster_task(c, &type, &index);
    CHECK(streq(type, "worker") && index == 1, "set task");
    CHECK(streq(tfq_tf_cluster_master(c), "grpc://h:3"), "master");
    CHECK(tfq_tf_cluster_set_task(c, "worker", 2, st) == TFQ_INVALID_ARGUMENT, "task 2");
    CHECK(strstr(tfq_status_message(st), "out of range"), "%s", tfq_status_message(st));
    CHECK(tfq_tf_cluster_set_task(c, "chief", 0, st) == TFQ_INVALID_ARGUMENT, "chief");
    tfq_tf_cluster_task(c, &type, &index);
    CHECK(streq(type, "worker") && index == 1, "unchanged after a refused set_task");
    CHECK(tfq_tf_cluster_set_task(c, NULL, 0, st) == TFQ_OK, "clear");
    tfq_tf_cluster_task(c, &type, &index);
    CHECK(type == NULL && index == -1, "cleared");
  }
  tfq_tf_cluster_free(c);
  tfq_tf_cluster_free(j);

  const char *good[][2] = {{"", ""}, {"ps=a:1;", "ps=a:1"}, {"ps=", "ps="}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    c = NULL;
    CHECK(tfq_tf_cluster_from_spec_string(good[i][0], &c, st) == TFQ_OK, "'%s': %s", good[i][0],
          tfq_status_message(st));
    if (c) check_spec(c, good[i][1]);
    tfq_tf_cluster_free(c);
  }
  const char *bad[][2] = {{"ps", "no '='"},
                          {"=a:1", "bad job name"},
                          {"ps=a:1;ps=b:1", "given twice"},
                          {"ps=a:1,,b:1", "bad address"},
                          {"ps=a:1,", "ends with ','"},
                          {"ps=a :1", "bad address"},
                          {"ps=a:1;;", "no '='"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    c = (tfq_tf_cluster *)st;
    tfq_code code = tfq_tf_cluster_from_spec_string(bad[i][0], &c, st);
    CHECK(code == TFQ_INVALID_ARGUMENT && c == NULL, "'%s': %s", bad[i][0], tfq_code_name(code));
    CHECK(strstr(tfq_status_message(st), bad[i][1]) &&
              strncmp(tfq_status_message(st), "Cluster spec: ", 14) == 0,
          "'%s': '%s'", bad[i][0], tfq_status_message(st));
    printf("ok  spec '%s' -> %s\n", bad[i][0], tfq_status_message(st));
  }
  tfq_status_free(st);
}

/* Every prefix of a valid TF_CONFIG parses or fails cleanly (INVALID_ARGUMENT, one line, the
 * byte offset within the text). */
static void test_prefixes(void) {
  const char *json =
      "{\"cluster\": {\"chief\": [\"h0:2222\"], \"worker\": {\"1\": \"h\\u0031:2\"}},"
      " \"task\": {\"type\": \"worker\", \"index\": \"1\"}, \"x\": [1.5e-3, null]}";
  size_t n = strlen(json);
  char buf[256];
  tfq_status *st = tfq_status_new();
  for (size_t len = 0; len < n; len++) {
    memcpy(buf, json, len);
    buf[len] = 0;
    tfq_tf_cluster *c = NULL;
    tfq_code code = tfq_tf_cluster_from_tf_config(buf, &c, st);
    const char *m = tfq_status_message(st);
    if (len == 0) {
      CHECK(code == TFQ_OK, "empty prefix");
    } else {
      unsigned long at = 0;
      CHECK(code == TFQ_INVALID_ARGUMENT && c == NULL, "prefix %zu: %s", len, tfq_code_name(code));
      CHECK(sscanf(m, "TF_CONFIG: malformed JSON at byte %lu", &at) == 1 && at <= len,
            "prefix %zu: '%s'", len, m);
    }
    tfq_tf_cluster_free(c);
  }
  tfq_status_free(st);
}

int main(void) {
  test_prefixes();
  test_example();
  test_sparse();
  test_syntax();
  test_env();
  test_errors();
  test_spec_string();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all TF_CONFIG checks passed\n");
  return 0;
}
