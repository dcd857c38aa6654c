#include "base.h"

unsigned tfq_version_number(void) { return TFQ_VERSION_NUMBER; }

const char *tfq_version_string(void) { return TFQ_VERSION_STRING; }
