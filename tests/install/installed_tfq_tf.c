/* Compiled by install_prefix.sh against an installed libtfq_tf (tfq_tf.pc: the prefix's headers
 * and TensorFlow's from the recorded wheel): hands a tfq tensor to TensorFlow and reads it back
 * through TensorFlow's own C API. */
#include <stdio.h>
#include <tfq/tf.h>
#include <tfq/tfq.h>

static int fail(const char *what, tfq_status *st) {
  fprintf(stderr, "installed_tfq_tf: %s: %s\n", what, st ? tfq_status_message(st) : "no status");
  return 1;
}

int main(void) {
  tfq_status *st = tfq_status_new();
  int64_t dims[2] = {2, 3};
  tfq_tensor *t;
  if (!st || tfq_tensor_new(TFQ_FLOAT, dims, 2, &t, st)) return fail("tensor", st);
  float *v = tfq_tensor_data(t);
  for (int i = 0; i < 6; i++) v[i] = 0.5f * (float)i - 1.0f;
  TF_Tensor *tt;
  if (tfq_tf_tensor_to_tf(t, &tt, st)) return fail("to_tf", st);
  const float *w = TF_TensorData(tt);
  printf("tf tensor dtype %d dims %lld %lld:", (int)TF_TensorType(tt), (long long)TF_Dim(tt, 0),
         (long long)TF_Dim(tt, 1));
  for (int i = 0; i < 6; i++) printf(" %g", (double)w[i]);
  printf("\n");
  TF_DeleteTensor(tt);
  tfq_tensor_free(t);
  printf("tensorflow %s %s\n", TF_Version(), tfq_tf_version());
  printf("library %s\n", tfq_version_string());
  tfq_status_free(st);
  return 0;
}
