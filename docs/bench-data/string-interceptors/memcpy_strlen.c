/* SPDX-License-Identifier: MIT */
/* ns per memcpy(32 bytes) + strlen(63 bytes) pair on heap blocks; built with gcc -O2 -fno-builtin */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int main(void){
  char *a = malloc(64), *b = malloc(64); memset(a, 'x', 63); a[63] = 0;
  struct timespec t0, t1; size_t sum = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < 5000000; i++) { memcpy(b, a, 32); sum += strlen(a); }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("ns_per_memcpy_plus_strlen=%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 5e6);
  return (int)(sum & 1);
}
