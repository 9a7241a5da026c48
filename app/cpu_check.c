/* Sightline is built for x86-64-v3 (AVX2, BMI2, FMA) with PCLMUL. This file is built for the baseline and
 * runs before any other code, so an older CPU gets a message instead of an illegal instruction. */
#if defined(__x86_64__)
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor(101))) static void sightline_check_cpu(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("pclmul"))
    return;
  fputs("sightline: this CPU lacks AVX2/BMI2/FMA/PCLMUL (x86-64-v3), which this build of Sightline needs.\n"
        "Rebuild without -march=x86-64-v3 (see CMakeLists.txt) to run on it, more slowly.\n", stderr);
  exit(1);
}
#endif
