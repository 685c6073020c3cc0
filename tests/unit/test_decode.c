// SPDX-License-Identifier: MIT
/* The x86-64 access-size decoder (fault.c, md_decode_access_size): the
 * bytes of real instructions (as GNU as encodes them) and the width of
 * their memory operand.  Then the fault path as a whole: instructions run
 * against a guarded page of a fabricated heap, through fault.c's handler,
 * whose report says READ or WRITE (from the page fault's error code) and
 * the size (from the decoder). */
#include "unit_lib.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct insn {
    const char *text;          /* AT&T syntax, as objdump shows it */
    unsigned char bytes[12];
    int size;                  /* 0: not recognised, or no memory access */
};

static const struct insn insns[] = {
    /* plain moves, each operand size */
    { "mov (%rax),%cl", { 0x8a, 0x08 }, 1 },
    { "mov %cl,(%rax)", { 0x88, 0x08 }, 1 },
    { "mov (%rax),%cx", { 0x66, 0x8b, 0x08 }, 2 },
    { "mov %cx,0x8(%rdi)", { 0x66, 0x89, 0x4f, 0x08 }, 2 },
    { "mov (%rax),%ecx", { 0x8b, 0x08 }, 4 },
    { "mov %ecx,(%rax,%rbx,4)", { 0x89, 0x0c, 0x98 }, 4 },
    { "mov (%rax),%rcx", { 0x48, 0x8b, 0x08 }, 8 },
    { "mov %rcx,-0x8(%rbp)", { 0x48, 0x89, 0x4d, 0xf8 }, 8 },
    { "movb $0x1,(%rax)", { 0xc6, 0x00, 0x01 }, 1 },
    { "movw $0x1,(%rax)", { 0x66, 0xc7, 0x00, 0x01, 0x00 }, 2 },
    { "movl $0x1,(%rax)", { 0xc7, 0x00, 0x01, 0x00, 0x00, 0x00 }, 4 },
    { "movq $0x1,(%rax)", { 0x48, 0xc7, 0x00, 0x01, 0x00, 0x00, 0x00 }, 8 },
    /* widening loads */
    { "movzbl (%rax),%ecx", { 0x0f, 0xb6, 0x08 }, 1 },
    { "movzwl (%rax),%ecx", { 0x0f, 0xb7, 0x08 }, 2 },
    { "movsbq (%rax),%rcx", { 0x48, 0x0f, 0xbe, 0x08 }, 1 },
    { "movswq (%rax),%rcx", { 0x48, 0x0f, 0xbf, 0x08 }, 2 },
    { "movslq (%rax),%rcx", { 0x48, 0x63, 0x08 }, 4 },
    /* arithmetic with a memory operand */
    { "cmpb $0x0,(%rax)", { 0x80, 0x38, 0x00 }, 1 },
    { "cmpl $0x5,(%rax)", { 0x83, 0x38, 0x05 }, 4 },
    { "cmp %rcx,(%rax)", { 0x48, 0x39, 0x08 }, 8 },
    { "add %ecx,(%rax)", { 0x01, 0x08 }, 4 },
    { "add (%rax),%rcx", { 0x48, 0x03, 0x08 }, 8 },
    { "sub %rcx,(%rax)", { 0x48, 0x29, 0x08 }, 8 },
    { "xor (%rax),%ecx", { 0x33, 0x08 }, 4 },
    { "or %cl,(%rax)", { 0x08, 0x08 }, 1 },
    { "and (%rax),%rcx", { 0x48, 0x23, 0x08 }, 8 },
    { "incl (%rax)", { 0xff, 0x00 }, 4 },
    { "incb (%rax)", { 0xfe, 0x00 }, 1 },
    { "testb $0x1,(%rax)", { 0xf6, 0x00, 0x01 }, 1 },
    { "test %ecx,(%rax)", { 0x85, 0x08 }, 4 },
    { "xchg %rcx,(%rax)", { 0x48, 0x87, 0x08 }, 8 },
    /* prefixes: lock, segment */
    { "lock add %ecx,(%rax)", { 0xf0, 0x01, 0x08 }, 4 },
    { "mov %fs:(%rax),%ecx", { 0x64, 0x8b, 0x08 }, 4 },
    /* string instructions */
    { "rep movsb", { 0xf3, 0xa4 }, 1 },
    { "rep movsq", { 0xf3, 0x48, 0xa5 }, 8 },
    { "rep stos %al", { 0xf3, 0xaa }, 1 },
    { "rep stos %rax", { 0xf3, 0x48, 0xab }, 8 },
    { "repnz scas %al", { 0xf2, 0xae }, 1 },
    { "lods %al", { 0xac }, 1 },
    /* SSE */
    { "movdqu (%rax),%xmm0", { 0xf3, 0x0f, 0x6f, 0x00 }, 16 },
    { "movdqa %xmm0,(%rax)", { 0x66, 0x0f, 0x7f, 0x00 }, 16 },
    { "movups (%rax),%xmm1", { 0x0f, 0x10, 0x08 }, 16 },
    { "movaps %xmm1,(%rax)", { 0x0f, 0x29, 0x08 }, 16 },
    { "movss (%rax),%xmm0", { 0xf3, 0x0f, 0x10, 0x00 }, 4 },
    { "movsd %xmm0,(%rax)", { 0xf2, 0x0f, 0x11, 0x00 }, 8 },
    { "movq (%rax),%xmm0", { 0xf3, 0x0f, 0x7e, 0x00 }, 8 },
    { "movq %xmm0,(%rax)", { 0x66, 0x0f, 0xd6, 0x00 }, 8 },
    { "movd (%rax),%xmm0", { 0x66, 0x0f, 0x6e, 0x00 }, 4 },
    { "movhps (%rax),%xmm0", { 0x0f, 0x16, 0x00 }, 8 },
    { "movlps %xmm0,(%rax)", { 0x0f, 0x13, 0x00 }, 8 },
    { "pcmpeqb (%rax),%xmm0", { 0x66, 0x0f, 0x74, 0x00 }, 16 },
    { "pxor (%rax),%xmm1", { 0x66, 0x0f, 0xef, 0x08 }, 16 },
    { "movntdq %xmm0,(%rax)", { 0x66, 0x0f, 0xe7, 0x00 }, 16 },
    /* AVX (VEX) */
    { "vmovdqu (%rax),%ymm0", { 0xc5, 0xfe, 0x6f, 0x00 }, 32 },
    { "vmovdqu %xmm0,(%rax)", { 0xc5, 0xfa, 0x7f, 0x00 }, 16 },
    { "vmovdqa %ymm1,(%rax)", { 0xc5, 0xfd, 0x7f, 0x08 }, 32 },
    { "vmovups (%rax),%ymm2", { 0xc5, 0xfc, 0x10, 0x10 }, 32 },
    { "vmovss (%rax),%xmm0", { 0xc5, 0xfa, 0x10, 0x00 }, 4 },
    { "vmovsd %xmm0,(%rax)", { 0xc5, 0xfb, 0x11, 0x00 }, 8 },
    { "vpcmpeqb (%rax),%ymm0,%ymm1", { 0xc5, 0xfd, 0x74, 0x08 }, 32 },
    { "vpminub (%rax),%ymm0,%ymm1", { 0xc5, 0xfd, 0xda, 0x08 }, 32 },
    { "vmovdqu (%r8),%ymm0", { 0xc4, 0xc1, 0x7e, 0x6f, 0x00 }, 32 },
    /* AVX-512 (EVEX) */
    { "vmovdqu64 (%rax),%zmm16", { 0x62, 0xe1, 0xfe, 0x48, 0x6f, 0x00 }, 64 },
    { "vmovdqu8 (%rax),%ymm16", { 0x62, 0xe1, 0x7f, 0x28, 0x6f, 0x00 }, 32 },
    { "vmovdqu64 %xmm16,(%rax)", { 0x62, 0xe1, 0xfe, 0x08, 0x7f, 0x00 }, 16 },
    { "vpcmpeqb (%rax),%zmm16,%k1", { 0x62, 0xf1, 0x7d, 0x40, 0x74, 0x08 }, 64 },
    { "vmovss (%rax),%xmm16", { 0x62, 0xe1, 0x7e, 0x08, 0x10, 0x00 }, 4 },
    { "vmovsd %xmm16,(%rax)", { 0x62, 0xe1, 0xff, 0x08, 0x11, 0x00 }, 8 },
    /* no memory operand, or not decoded: "of unknown size" */
    { "nop", { 0x90 }, 0 },
    { "lea (%rax),%rcx", { 0x48, 0x8d, 0x08 }, 0 },
    { "vpshufb (%rax),%ymm0,%ymm1 (VEX map 0F38)", { 0xc4, 0xe2, 0x7d, 0x00, 0x08 }, 0 },
};

static void sizes(void)
{
    for (size_t i = 0; i < sizeof insns / sizeof *insns; i++) {
        int got = md_decode_access_size(insns[i].bytes);
        UNIT_CHECK(got == insns[i].size, "%s: size %d, expected %d", insns[i].text, got, insns[i].size);
    }
}

/* ---- real faults ----
 * The fabricated heap: 8 pages, all PROT_NONE; slot 1 covers pages 2-3,
 * its 32-byte block ends at the end of page 2.  State LIVE: page 2 is
 * readable and page 3 is the guard; state QUARANTINED: both guard. */
static char *arena;
#define BLOCK_SIZE 32

static uintptr_t block_start(void) { return (uintptr_t)arena + 3 * 4096 - BLOCK_SIZE; }

static void fake_heap(int state)
{
    unsetenv("MEMDBG_OPTIONS");
    md_options_init();
    md_internal_init();
    md_depot_init();
    md_modules_refresh();
    arena = mmap(0, 8 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    md_heap.base = (uintptr_t)arena;
    md_heap.size = 8 * 4096;
    md_heap.page_slot = calloc(8, sizeof *md_heap.page_slot);
    md_heap.slots = calloc(2, sizeof *md_heap.slots);
    md_heap.page_slot[2] = md_heap.page_slot[3] = 1;
    struct md_slot *s = &md_heap.slots[1];
    s->first_page = 2;
    s->pages = 2;
    s->data_pages = 1;
    s->user = block_start();
    s->size = BLOCK_SIZE;
    s->state = (uint8_t)state;
    if (state == MD_SLOT_LIVE) mprotect(arena + 2 * 4096, 4096, PROT_READ | PROT_WRITE);
    md_heap.initialized = 1;
    md_fault_init();
}

/* Each runs one instruction on the address in rax. */
#define INSN(name, text) \
    __attribute__((noinline)) static void name(void *p) \
    { __asm__ volatile(text : : "a"(p) : "rcx", "xmm0", "memory"); }
INSN(read1, "movb (%%rax), %%cl")
INSN(write1, "movb %%cl, (%%rax)")
INSN(read2, "movw (%%rax), %%cx")
INSN(write4, "movl $1, (%%rax)")
INSN(read8, "movq (%%rax), %%rcx")
INSN(write8, "movq %%rcx, (%%rax)")
INSN(rmw4, "incl (%%rax)")
INSN(read16, "movdqu (%%rax), %%xmm0")
INSN(write16, "movdqu %%xmm0, (%%rax)")
INSN(read32, "vmovdqu (%%rax), %%ymm0")
INSN(write64, "vmovdqu64 %%zmm0, (%%rax)")

struct fault_case {
    const char *name;
    void (*run)(void *);
    const char *access;   /* READ or WRITE */
    int size;
    const char *cpu;      /* a feature it needs, NULL: any x86-64 */
};

static const struct fault_case faults[] = {
    { "read1", read1, "READ", 1, NULL },
    { "write1", write1, "WRITE", 1, NULL },
    { "read2", read2, "READ", 2, NULL },
    { "write4", write4, "WRITE", 4, NULL },
    { "read8", read8, "READ", 8, NULL },
    { "write8", write8, "WRITE", 8, NULL },
    { "rmw4", rmw4, "WRITE", 4, NULL },          /* read-modify-write faults as a write */
    { "read16", read16, "READ", 16, NULL },
    { "write16", write16, "WRITE", 16, NULL },
    { "read32", read32, "READ", 32, "avx" },
    { "write64", write64, "WRITE", 64, "avx512f" },
};

struct fault_run { const struct fault_case *c; int state; uintptr_t offset; };

static void fault_child(void *arg)
{
    const struct fault_run *r = arg;
    fake_heap(r->state);
    r->c->run((void *)(block_start() + r->offset));
    printf("survived\n");
}

static bool cpu_has(const char *feature)
{
    if (!feature) return true;
    __builtin_cpu_init();
    if (strcmp(feature, "avx") == 0) return __builtin_cpu_supports("avx");
    return __builtin_cpu_supports("avx512f");
}

/* One instruction against the freed block (offset 5: inside it) or past a
 * live one (offset 32: the guard page); the report's first lines. */
static void run_faults(int state, uintptr_t offset, const char *kind, const char *where)
{
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        const struct fault_case *c = &faults[i];
        if (!cpu_has(c->cpu)) { printf("# %s: no %s on this CPU\n", c->name, c->cpu); continue; }
        struct fault_run r = { c, state, offset };
        char *out, re[256];
        int status = unit_capture(fault_child, &r, &out);
        UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status %#x, expected exit 1", c->name, status);
        snprintf(re, sizeof re, "^==[0-9]+==ERROR: memdbg: %s on address 0x[0-9a-f]+ at pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+$", kind);
        UNIT_CHECK(unit_match(unit_line(out, 1), re), "%s: line 2 '%s'", c->name, unit_line(out, 1));
        snprintf(re, sizeof re, "^%s of size %d at 0x[0-9a-f]+ thread T0$", c->access, c->size);
        UNIT_CHECK(unit_match(unit_line(out, 2), re), "%s: line 3 '%s', expected /%s/", c->name, unit_line(out, 2), re);
        snprintf(re, sizeof re, "^    #0 0x[0-9a-f]+ in %s [^ ]*tests/unit/test_decode\\.c:[0-9]+$", c->name);
        UNIT_CHECK(unit_match(unit_line(out, 4), re), "%s: line 5 '%s'", c->name, unit_line(out, 4));
        UNIT_CHECK(unit_match(unit_line(out, 6), where), "%s: line 7 '%s', expected /%s/", c->name, unit_line(out, 6),
                   where);
        UNIT_CHECK(strstr(out, "ABORTING\n") && !strstr(out, "survived"), "%s: no ABORTING, or it went on", c->name);
        free(out);
    }
}

static void faults_freed(void)
{
    run_faults(MD_SLOT_QUARANTINED, 5, "heap-use-after-free", "^0x[0-9a-f]+ is located 5 bytes inside of 32-byte region");
}

static void faults_overflow(void)
{
    run_faults(MD_SLOT_LIVE, BLOCK_SIZE, "heap-buffer-overflow", "^0x[0-9a-f]+ is located 0 bytes after 32-byte region");
}

const struct unit_case unit_decode_cases[] = {
    { "access-size decoder: real instructions' bytes -> operand width", sizes },
    { "fault path: READ/WRITE and size of real faulting instructions (use-after-free)", faults_freed },
    { "fault path: READ/WRITE and size of real faulting instructions (overflow onto the guard)", faults_overflow },
    { 0, 0 },
};
