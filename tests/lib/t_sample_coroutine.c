/* SPDX-License-Identifier: MIT */
/* Sampled mode routes a free by its address: a glibc block freed from
 * code that runs on a coroutine's stack, itself a heap block below it,
 * goes to glibc and is no bad free.  (The check that catches a free of a
 * local variable must look at the thread's own stack only.) */

// TEST: sampled mode: free of a glibc block from a coroutine on a heap stack
// RUN: %memdbg -o sample_rate=1000000000 %t
// EXIT: 0
// CHECK-OUT: ^coroutine freed the block$
// CHECK-OUT: ^done$
// CHECK-NOT: ERROR: memdbg

#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { STACK_SIZE = 64 * 1024, BLOCK_SIZE = 70000 };

static ucontext_t main_ctx, co_ctx;
static char *block;

static void coroutine(void)
{
    free(block);
    puts("coroutine freed the block");
}

int main(void)
{
    /* both too big for glibc's bins: carved in order from the top of its
     * heap, so the block lies above the coroutine's stack */
    char *stack = malloc(STACK_SIZE);
    block = malloc(BLOCK_SIZE);
    if (!stack || !block || block < stack + STACK_SIZE) {
        puts("layout: the block is not above the stack");
        return 3;
    }
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = STACK_SIZE;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    if (swapcontext(&main_ctx, &co_ctx) != 0) return 4;
    free(stack);
    puts("done");
    return 0;
}
