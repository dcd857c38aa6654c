/* libFuzzer target: the cluster description of libtfq_tf (src/tf/tf_config.c and tf_json.c; no
 * TensorFlow needed).  The input, cut at its first NUL, is parsed as TF_CONFIG and as a
 * "job=h:p,...;..." spec string.  Each parse returns OK, INVALID_ARGUMENT (one line, starting
 * "TF_CONFIG: " or "Cluster spec: ", *out NULL) or RESOURCE_EXHAUSTED; a parsed cluster is
 * self-consistent (tasks ascending, address == target minus "grpc://", the task is a task of the
 * cluster or an evaluator), and its spec string, when it has one, parses back into the same jobs,
 * tasks and string; nothing leaks (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tf/tf_cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(tfq_code c, tfq_tf_cluster *out, tfq_status *st, const char *prefix) {
  FUZZ_CHECK(c == TFQ_INVALID_ARGUMENT || c == TFQ_RESOURCE_EXHAUSTED);
  FUZZ_CHECK(out == NULL);
  const char *m = tfq_status_message(st);
  FUZZ_CHECK(m[0] != 0 && strchr(m, '\n') == NULL);
  if (c == TFQ_INVALID_ARGUMENT) FUZZ_CHECK(strncmp(m, prefix, strlen(prefix)) == 0);
}

static void check_cluster(const tfq_tf_cluster *c, tfq_status *st) {
  int njobs = tfq_tf_cluster_num_jobs(c);
  FUZZ_CHECK(njobs >= 0 && tfq_tf_cluster_job(c, njobs) == NULL &&
             tfq_tf_cluster_job(c, -1) == NULL);
  for (int i = 0; i < njobs; i++) {
    const char *job = tfq_tf_cluster_job(c, i);
    FUZZ_CHECK(job && job[0]);
    int n = tfq_tf_cluster_num_tasks(c, job);
    FUZZ_CHECK(n >= 0 && tfq_tf_cluster_task_index(c, job, n) == -1);
    int prev = -1;
    for (int k = 0; k < n; k++) {
      int index = tfq_tf_cluster_task_index(c, job, k);
      FUZZ_CHECK(index > prev);
      prev = index;
      const char *a = tfq_tf_cluster_address(c, job, index);
      const char *t = tfq_tf_cluster_target(c, job, index);
      FUZZ_CHECK(a && t && a[0] && strncmp(t, "grpc://", 7) == 0 && strcmp(t + 7, a) == 0);
      FUZZ_CHECK(strpbrk(a, ",;= \t\n") == NULL);
    }
  }
  const char *type = NULL;
  int index = -2;
  tfq_tf_cluster_task(c, &type, &index);
  if (type)
    FUZZ_CHECK(index >= 0 && (tfq_tf_cluster_address(c, type, index) != NULL ||
                              strcmp(type, "evaluator") == 0 || njobs == 0));
  else
    FUZZ_CHECK(index == -1);
  FUZZ_CHECK(tfq_tf_cluster_master(c) != NULL);

  const char *spec = NULL;
  tfq_code code = tfq_tf_cluster_spec_string(c, &spec, st);
  if (code != TFQ_OK) {
    FUZZ_CHECK(code == TFQ_INVALID_ARGUMENT && spec == NULL);
    return;
  }
  tfq_tf_cluster *back = NULL;
  code = tfq_tf_cluster_from_spec_string(spec, &back, st);
  if (code == TFQ_RESOURCE_EXHAUSTED) return;
  FUZZ_CHECK(code == TFQ_OK);
  FUZZ_CHECK(tfq_tf_cluster_num_jobs(back) == njobs);
  for (int i = 0; i < njobs; i++) {
    const char *job = tfq_tf_cluster_job(c, i);
    FUZZ_CHECK(strcmp(job, tfq_tf_cluster_job(back, i)) == 0);
    int n = tfq_tf_cluster_num_tasks(c, job);
    FUZZ_CHECK(tfq_tf_cluster_num_tasks(back, job) == n);
    for (int k = 0; k < n; k++)
      FUZZ_CHECK(strcmp(tfq_tf_cluster_address(c, job, k), tfq_tf_cluster_address(back, job, k)) ==
                 0);
  }
  const char *spec2 = NULL;
  FUZZ_CHECK(tfq_tf_cluster_spec_string(back, &spec2, st) == TFQ_OK && strcmp(spec, spec2) == 0);
  tfq_tf_cluster_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  FUZZ_CHECK(text != NULL);
  if (size) memcpy(text, data, size);
  text[size] = 0;
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);

  tfq_tf_cluster *c = NULL;
  tfq_code code = tfq_tf_cluster_from_tf_config(text, &c, st);
  if (code == TFQ_OK) {
    FUZZ_CHECK(c != NULL);
    check_cluster(c, st);
    tfq_tf_cluster_free(c);
  } else {
    check_error(code, c, st, "TF_CONFIG: ");
  }

  c = NULL;
  code = tfq_tf_cluster_from_spec_string(text, &c, st);
  if (code == TFQ_OK) {
    FUZZ_CHECK(c != NULL);
    check_cluster(c, st);
    tfq_tf_cluster_free(c);
  } else {
    check_error(code, c, st, "Cluster spec: ");
  }

  tfq_status_free(st);
  free(text);
  return 0;
}
