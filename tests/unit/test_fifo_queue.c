#include <criterion/criterion.h>
#include <tfq/tfq.h>
Test(fifo, builds){ cr_assert_eq(1,1); }
