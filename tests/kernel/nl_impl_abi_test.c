// SPDX-License-Identifier: GPL-2.0
/*
 * Implementation checks of documented corner cases of the nonlinear
 * remap_file_pages() (docs/remap_file_pages.2.md): a sealed mapping gives
 * EPERM and stays as it was; a mapping registered with userfaultfd keeps
 * the emulation; the largest encodable offset is accepted, the next one
 * emulated; mincore() looks up the page a nonlinear entry names.  Written by the kernel series' author.
 */
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef __NR_mseal
#define __NR_mseal 462
#endif

#define N 8

NL_MEMFD_FIXTURE(abi2, "nl_impl_abi", N)

TEST_F(abi2, sealed_vma_eperm)
{
	if (syscall(__NR_mseal, self->map, N * self->page, 0))
		SKIP(return, "mseal: %s", strerror(errno));
	errno = 0;
	EXPECT_EQ(-1, nl_remap(self->map, self->page, 0, 3, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_FALSE(nl_has_vmflag(self->map, "nl"));
}

TEST_F(abi2, userfaultfd_registered_vma_uses_emulation)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	reg.range.start = (uintptr_t)self->map;
	reg.range.len = N * self->page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	EXPECT_EQ(0, nl_remap(self->map + 2 * self->page, self->page, 0, 5, 0));
	self->want[2] = NL_STAMP(5, 0);
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_FALSE(nl_has_vmflag(self->map, "nl"));
	EXPECT_LT(1, nl_count_vmas(self->map, N * self->page));
	close(uffd);
	munmap(self->map, N * self->page);
}

/*
 * The largest offset an entry holds (2^47 - 1 on x86_64) stays nonlinear;
 * the next one is emulated (a VMA of its own), as in 4.0-6.12.  On a CPU
 * with the L1TF mitigation the limit is lower (nl_review_test checks it).
 */
TEST_F(abi2, largest_offset)
{
	const size_t max = (1UL << 47) - 1;
	char buf[64] = "";
	FILE *f = fopen("/sys/devices/system/cpu/vulnerabilities/l1tf", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	if (!strncmp(buf, "Mitigation", 10))
		SKIP(return, "L1TF mitigation: offsets are limited to MAX_PA/2");
	EXPECT_EQ(0, nl_remap(self->map, self->page, 0, max, MAP_NONBLOCK));
	EXPECT_EQ(1, nl_count_vmas(self->map, N * self->page));
	EXPECT_EQ(0, nl_remap(self->map + 2 * self->page, self->page, 0, max + 1, MAP_NONBLOCK));
	EXPECT_EQ(3, nl_count_vmas(self->map, N * self->page));
	self->want[0] = NL_WANT_SIGBUS;
	self->want[2] = NL_WANT_SIGBUS;
	EXPECT_EQ(0, nl_check_pages(self->map, N, self->want, false));
	EXPECT_TRUE(nl_has_vmflag(self->map, "nl"));
	munmap(self->map, N * self->page);
}

/* mincore() of a nonlinear entry reports the file page it names. */
TEST_F(abi2, mincore_follows_entries)
{
	unsigned char vec[N];

	/* Page 6 is in the page cache (stamped), N + 1 is beyond EOF. */
	ASSERT_EQ(0, nl_remap(self->map + 1 * self->page, self->page, 0, 6, MAP_NONBLOCK));
	ASSERT_EQ(0, nl_remap(self->map + 2 * self->page, self->page, 0, N + 1, MAP_NONBLOCK));
	ASSERT_EQ(0, mincore(self->map, N * self->page, vec));
	EXPECT_EQ(1, vec[1] & 1);
	EXPECT_EQ(0, vec[2] & 1);
	/* After punching page 6 out of the file, not resident any more. */
	ASSERT_EQ(0, fallocate(self->fd, 0x03 /* PUNCH_HOLE | KEEP_SIZE */, 6 * self->page,
			       self->page));
	ASSERT_EQ(0, mincore(self->map, N * self->page, vec));
	EXPECT_EQ(0, vec[1] & 1);
	EXPECT_TRUE(nl_has_vmflag(self->map, "nl"));
	munmap(self->map, N * self->page);
}

NL_HARNESS_MAIN
