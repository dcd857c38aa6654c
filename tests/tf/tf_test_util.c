#include "tf_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int tft_free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(s >= 0, "socket");
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0, "bind");
  socklen_t l = sizeof a;
  CHECK(getsockname(s, (struct sockaddr *)&a, &l) == 0, "getsockname");
  close(s);
  return ntohs(a.sin_port);
}

static TF_Operation *finish(TF_OperationDescription *d) {
  TF_Status *s = TF_NewStatus();
  TF_Operation *op = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteStatus(s);
  return op;
}

TF_Operation *tft_placeholder(TF_Graph *g, const char *name, TF_DataType dt, const int64_t *dims,
                              int rank) {
  TF_OperationDescription *d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", dt);
  if (rank >= 0) TF_SetAttrShape(d, "shape", dims, rank);
  return finish(d);
}

TF_Operation *tft_sum0(TF_Graph *g, const char *name, TF_Output in) {
  char cname[128];
  snprintf(cname, sizeof cname, "%s_axis", name);
  TF_OperationDescription *d = TF_NewOperation(g, "Const", cname);
  TF_Tensor *axis = TF_AllocateTensor(TF_INT32, NULL, 0, 4);
  *(int32_t *)TF_TensorData(axis) = 0;
  TF_Status *s = TF_NewStatus();
  TF_SetAttrTensor(d, "value", axis, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteStatus(s);
  TF_DeleteTensor(axis);
  TF_SetAttrType(d, "dtype", TF_INT32);
  TF_Operation *c = finish(d);
  d = TF_NewOperation(g, "Sum", name);
  TF_AddInput(d, in);
  TF_AddInput(d, (TF_Output){c, 0});
  TF_SetAttrBool(d, "keep_dims", 0);
  return finish(d);
}

TF_Operation *tft_unary(TF_Graph *g, const char *type, const char *name, TF_Output in) {
  TF_OperationDescription *d = TF_NewOperation(g, type, name);
  TF_AddInput(d, in);
  return finish(d);
}
