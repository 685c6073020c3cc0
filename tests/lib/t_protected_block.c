/* A live block whose first page the program made inaccessible (a
 * coroutine stack with its guard page inside a malloc'd buffer): the leak
 * scan and the padding check at exit must skip it, not fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *coroutine_stack;
static void *lost;

int main(void)
{
    void *stk;
    if (posix_memalign(&stk, 4096, 16 * 4096) != 0) return 2;
    memset(stk, 0, 16 * 4096);
    if (mprotect(stk, 4096, PROT_NONE) != 0) return 3;
    coroutine_stack = stk;
    lost = malloc(48);   /* a real leak, reported as usual */
    lost = NULL;
    puts("done");
    return 0;
}
