/* CPU_RELAX(): the spin-wait hint (x86 PAUSE, ARM YIELD, else nothing).  Private: used by the
 * queue engine's spin and by the benchmarks (bench/bench_util.h), never installed. */
#ifndef TFQ_CORE_CPU_RELAX_H
#define TFQ_CORE_CPU_RELAX_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

#endif
