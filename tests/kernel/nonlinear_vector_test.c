// SPDX-License-Identifier: GPL-2.0
/*
 * remap_file_pages(MAP_VECTOR): many (addr, size, pgoff, prot) entries in
 * one call.  Checks what the pages show after the call (stamps), the
 * guards it installs (SIGSEGV with SEGV_ACCERR), the count returned on a
 * partial failure, errno for the argument errors, the feature query and a
 * vector of the maximum length (1024 entries) in one VMA.
 */
#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef SEGV_ACCERR
#define SEGV_ACCERR 2
#endif

#define VEC_MAX 1024
#define N 1100	/* pages of the mapping and of the file */

FIXTURE(vec)
{
	int fd;
	char *map;
	size_t page;
	uint64_t want[N];
	struct nl_vec_entry e[VEC_MAX + 1];
};

FIXTURE_SETUP(vec)
{
	self->page = nl_pagesize();
	self->fd = nl_memfd("nl_vec", N, true);
	ASSERT_LE(0, self->fd);
	self->map = nl_map_with_hole(N * self->page, self->fd);
	ASSERT_NE(MAP_FAILED, self->map);
	for (size_t i = 0; i < N; i++)
		self->want[i] = NL_STAMP(i, 0);
}

FIXTURE_TEARDOWN(vec)
{
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, N * self->page);
	if (self->fd >= 0)
		close(self->fd);
}

static void set(struct nl_vec_entry *e, char *addr, size_t size, size_t pgoff, unsigned int prot)
{
	e->addr = (uintptr_t)addr;
	e->size = size;
	e->pgoff = pgoff;
	e->prot = prot;
	e->flags = 0;
}

/* The query knows the flag; a zero-count vector does not pass for it. */
TEST_F(vec, query)
{
	EXPECT_EQ(0, syscall(__NR_remap_file_pages, 0, 0, 0, 0, MAP_CHGPROT | MAP_VECTOR));
	errno = 0;
	EXPECT_EQ(-1, syscall(__NR_remap_file_pages, 0, 0, 0, 0, MAP_VECTOR));
	EXPECT_EQ(EINVAL, errno);
}

/* Pages reversed, some guards and a read-only page, in one call. */
TEST_F(vec, contents_and_guards)
{
	size_t p = self->page;
	uint64_t v;
	int i;

	for (i = 0; i < 8; i++)
		set(&self->e[i], self->map + i * p, p, 7 - i, PROT_READ | PROT_WRITE);
	set(&self->e[2], self->map + 2 * p, p, 0, PROT_NONE);
	set(&self->e[5], self->map + 5 * p, p, 0, PROT_NONE);
	set(&self->e[6], self->map + 6 * p, p, 1, PROT_READ);
	set(&self->e[8], self->map + 8 * p, 2 * p, 20, PROT_READ | PROT_WRITE);
	ASSERT_EQ(9, nl_remap_vec(self->e, 9, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * p));
	for (i = 0; i < 8; i++) {
		if (i == 2 || i == 5) {
			EXPECT_EQ(SIGSEGV, nl_probe(self->map + i * p, NULL, false, 0));
			EXPECT_EQ(SEGV_ACCERR, nl_code);
			EXPECT_EQ(self->map + i * p, nl_fault_addr);
			continue;
		}
		v = 0;
		EXPECT_EQ(0, nl_probe(self->map + i * p, &v, false, 0));
		EXPECT_EQ(NL_STAMP(7 - i, 0), v);
	}
	EXPECT_EQ(SIGSEGV, nl_probe(self->map + 6 * p, NULL, true, 1));
	EXPECT_EQ(SEGV_ACCERR, nl_code);
	EXPECT_EQ(0, nl_probe(self->map + 8 * p, &v, false, 0));
	EXPECT_EQ(NL_STAMP(20, 0), v);
	EXPECT_EQ(0, nl_probe(self->map + 9 * p + p - 8, &v, false, 0));
	EXPECT_EQ(NL_STAMP(21, 0), v);
	/* a write shows in the file page named, not the linear one */
	EXPECT_EQ(0, nl_probe(self->map, NULL, true, 0x1234));
	EXPECT_EQ(0x1234ULL, nl_file_word(self->fd, 7));
	/* without MAP_NONBLOCK (populated): the guard stays one */
	set(&self->e[0], self->map + 2 * p, p, 2, PROT_READ | PROT_WRITE);
	set(&self->e[1], self->map + 3 * p, p, 0, PROT_NONE);
	ASSERT_EQ(2, nl_remap_vec(self->e, 2, MAP_CHGPROT));
	EXPECT_EQ(0, nl_probe(self->map + 2 * p, &v, false, 0));
	EXPECT_EQ(NL_STAMP(2, 0), v);
	EXPECT_EQ(SIGSEGV, nl_probe(self->map + 3 * p, NULL, false, 0));
}

/* Entry 2 of 4 is bad: 2 are done, the rest untouched; retried from there
 * the call reports the entry's errno. */
TEST_F(vec, partial_failure)
{
	size_t p = self->page;

	set(&self->e[0], self->map, p, 3, PROT_READ | PROT_WRITE);
	set(&self->e[1], self->map + p, p, 0, PROT_NONE);
	set(&self->e[2], self->map + 2 * p, p, 0, PROT_WRITE);	/* EINVAL */
	set(&self->e[3], self->map + 3 * p, p, 0, PROT_NONE);
	ASSERT_EQ(2, nl_remap_vec(self->e, 4, MAP_CHGPROT | MAP_NONBLOCK));
	self->want[0] = NL_STAMP(3, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, 1, self->want, false));
	EXPECT_EQ(SIGSEGV, nl_probe(self->map + p, NULL, false, 0));
	EXPECT_EQ(0, nl_check_pages(self->map + 2 * p, 2, self->want + 2, false));
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(self->e + 2, 2, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map + 2 * p, 2, self->want + 2, false));
}

/*
 * The first entry fails: -1 with its errno, nothing installed (the pages
 * keep their linear layout) and nothing populated.
 */
TEST_F(vec, partial_failure_first)
{
	size_t p = self->page;

	set(&self->e[0], self->map, p, 5, PROT_READ | PROT_WRITE);
	self->e[0].flags = 1;				/* EINVAL */
	set(&self->e[1], self->map + p, p, 6, PROT_READ | PROT_WRITE);
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(self->e, 2, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_count_present(self->map, 2));
	EXPECT_EQ(0, nl_check_pages(self->map, 2, self->want, false));
}

/*
 * The last of 4 entries fails: 3 returned, the 3 installed and (without
 * MAP_NONBLOCK) populated, the last neither; retried alone it gives its
 * errno and still changes nothing.
 */
TEST_F(vec, partial_failure_last)
{
	size_t p = self->page;
	uint64_t want[4] = { NL_STAMP(10, 0), NL_STAMP(11, 0), NL_STAMP(12, 0),
			     NL_STAMP(3, 0) };

	for (int i = 0; i < 3; i++)
		set(&self->e[i], self->map + i * p, p, 10 + i, PROT_READ | PROT_WRITE);
	/* crosses the end of the mapping: EINVAL */
	set(&self->e[3], self->map + 3 * p, N * p, 13, PROT_READ | PROT_WRITE);
	ASSERT_EQ(3, nl_remap_vec(self->e, 4, MAP_CHGPROT));
	for (int i = 0; i < 3; i++)
		EXPECT_NE(0ULL, nl_pagemap(self->map + i * p) & PM_PRESENT);
	EXPECT_EQ(0ULL, nl_pagemap(self->map + 3 * p) & PM_PRESENT);
	EXPECT_EQ(0, nl_check_pages(self->map, 4, want, false));
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(self->e + 3, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, 4, want, false));
}

/*
 * A middle entry fails with another error than EINVAL (the file offset
 * wraps): the count says where, entries before it are in, the failing one
 * and those after it are untouched, guards included.
 */
TEST_F(vec, partial_failure_middle)
{
	size_t p = self->page;
	uint64_t v;

	set(&self->e[0], self->map, p, 0, PROT_NONE);
	set(&self->e[1], self->map + p, p, 9, PROT_READ);
	set(&self->e[2], self->map + 2 * p, 2 * p, ~0ULL, PROT_READ | PROT_WRITE);
	set(&self->e[3], self->map + 4 * p, p, 0, PROT_NONE);
	ASSERT_EQ(2, nl_remap_vec(self->e, 4, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(SIGSEGV, nl_probe(self->map, NULL, false, 0));
	EXPECT_EQ(0, nl_probe(self->map + p, &v, false, 0));
	EXPECT_EQ(NL_STAMP(9, 0), v);
	EXPECT_EQ(SIGSEGV, nl_probe(self->map + p, NULL, true, 1));
	EXPECT_EQ(0, nl_check_pages(self->map + 2 * p, 3, self->want + 2, false));
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(self->e + 2, 2, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map + 2 * p, 3, self->want + 2, false));
}

/* Argument errors. */
TEST_F(vec, errors)
{
	size_t p = self->page;
	struct nl_vec_entry *e = self->e;

	set(&e[0], self->map, p, 1, PROT_READ | PROT_WRITE);
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(e, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(e, VEC_MAX + 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;	/* prot and pgoff of the call must be 0 */
	EXPECT_EQ(-1, syscall(__NR_remap_file_pages, e, 1, PROT_READ, 0, MAP_VECTOR | MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, syscall(__NR_remap_file_pages, e, 1, 0, 1, MAP_VECTOR | MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;	/* unreadable array */
	EXPECT_EQ(-1, nl_remap_vec((struct nl_vec_entry *)8, 1, MAP_CHGPROT));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;	/* array running into the hole after the mapping */
	EXPECT_EQ(-1, nl_remap_vec((struct nl_vec_entry *)(self->map + N * p - sizeof(*e)), 2, MAP_CHGPROT));
	EXPECT_EQ(EFAULT, errno);
	e[0].flags = 1;
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], self->map, p, 1, PROT_READ | PROT_WRITE);
	errno = 0;	/* prot without MAP_CHGPROT */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], self->map, 0, 1, PROT_NONE);
	errno = 0;	/* size 0 */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], self->map + (N - 1) * p, 2 * p, 1, PROT_NONE);
	errno = 0;	/* past the end of the vma */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], self->map, p, ~0UL, PROT_NONE);
	errno = 0;	/* pgoff wraps */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], self->map, p, 0, 0x100);
	errno = 0;	/* unknown prot bit */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	set(&e[0], (char *)8192, p, 0, PROT_NONE);
	errno = 0;	/* not in a mapping */
	EXPECT_EQ(-1, nl_remap_vec(e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * p));
}

/* A private mapping cannot be nonlinear. */
TEST_F(vec, private_einval)
{
	char *m = mmap(NULL, 4 * self->page, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);

	ASSERT_NE(MAP_FAILED, m);
	set(&self->e[0], m, self->page, 2, PROT_READ | PROT_WRITE);
	errno = 0;
	EXPECT_EQ(-1, nl_remap_vec(self->e, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	munmap(m, 4 * self->page);
}

/* 1024 entries: every page i < 1024 shows file page 1099 - i, every
 * fourth one a guard; then back with a second vector. */
TEST_F(vec, thousand_entries)
{
	size_t p = self->page, i;
	long bad = 0;

	for (i = 0; i < VEC_MAX; i++) {
		bool guard = i % 4 == 3;

		set(&self->e[i], self->map + i * p, p, guard ? 0 : N - 1 - i,
		    guard ? PROT_NONE : PROT_READ | PROT_WRITE);
	}
	ASSERT_EQ(VEC_MAX, nl_remap_vec(self->e, VEC_MAX, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * p));
	for (i = 0; i < VEC_MAX; i++) {
		uint64_t v = 0;
		int sig = nl_probe(self->map + i * p, &v, false, 0);

		if (i % 4 == 3)
			bad += sig != SIGSEGV || nl_code != SEGV_ACCERR;
		else
			bad += sig != 0 || v != NL_STAMP(N - 1 - i, 0);
	}
	EXPECT_EQ(0, bad);
	for (i = 0; i < VEC_MAX; i++)
		set(&self->e[i], self->map + i * p, p, i, PROT_READ | PROT_WRITE);
	ASSERT_EQ(VEC_MAX, nl_remap_vec(self->e, VEC_MAX, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
}

TEST_HARNESS_MAIN
