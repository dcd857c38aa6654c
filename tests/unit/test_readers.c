#include <criterion/criterion.h>
#include <tfq/tfq.h>
Test(readers, header_compiles) { cr_assert_eq(TFQ_OK, 0); }
