/* tfq_queue_options: the attributes of tfq_queue_new() (capacity, names, RandomShuffleQueue's
 * min_after_dequeue, seeds and order). */
#include "queue_internal.h"

tfq_code tfq_queue_options_new(tfq_queue_options **out, tfq_status *st) {
  tfq_queue_options *o = tfq__calloc(1, sizeof *o);
  *out = o;
  if (!o) return TFQ__OOM(st);
  o->capacity = -1;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_queue_options_free(tfq_queue_options *o) {
  if (!o) return;
  tfq_free(o->name);
  tfq_free(o->shared_name);
  tfq_free(o->container);
  tfq_free(o);
}

void tfq_queue_options_set_capacity(tfq_queue_options *o, int64_t capacity) {
  o->capacity = capacity;
}

static tfq_code set_str(char **dst, const char *v, tfq_status *st) {
  char *copy = NULL;
  if (v && !(copy = tfq__strdup(v))) return TFQ__OOM(st);
  tfq_free(*dst);
  *dst = copy;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_queue_options_set_name(tfq_queue_options *o, const char *name, tfq_status *st) {
  return set_str(&o->name, name, st);
}
tfq_code tfq_queue_options_set_shared_name(tfq_queue_options *o, const char *v, tfq_status *st) {
  return set_str(&o->shared_name, v, st);
}
tfq_code tfq_queue_options_set_container(tfq_queue_options *o, const char *v, tfq_status *st) {
  return set_str(&o->container, v, st);
}
void tfq_queue_options_set_min_after_dequeue(tfq_queue_options *o, int64_t m) {
  o->min_after_dequeue = m;
}
void tfq_queue_options_set_seeds(tfq_queue_options *o, int64_t seed, int64_t seed2) {
  o->seed = seed;
  o->seed2 = seed2;
}
void tfq_queue_options_set_tf_exact_order(tfq_queue_options *o, int on) { o->tf_exact = on != 0; }
