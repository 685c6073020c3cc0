// SPDX-License-Identifier: GPL-2.0
/*
 * The reverse index of nonlinear vmas (mm/nonlinear_index.c) must not
 * outlive what it describes:
 *
 *   - every process that lays pages out nonlinearly and faults them in
 *     builds an index; when it exits (after a fork, an mremap() move and
 *     an mprotect() split), the index must be freed: radix_tree_node
 *     objects (xarray nodes) and the memory.current of the cgroup the
 *     processes ran in go back to where they were;
 *   - a fault that fails (the offset is beyond EOF) maps nothing and must
 *     leave nothing in the index, or a loop of failed faults grows kernel
 *     memory that no limit sees.
 *
 * The offsets are sparse (a stride of 64 pages), so that each indexed page
 * costs an xarray node of its own: a leak shows in thousands of nodes and
 * megabytes, far above the noise of the rest of the system.
 */
#include <sys/utsname.h>
#include <sys/wait.h>

#include "nonlinear_util.h"

#define PAGES 2048	/* pages laid out per process */
#define STRIDE 64	/* file pages between two offsets shown */
#define RUNS 6		/* short-lived processes */
#define NODE_SLACK 200	/* radix_tree_node objects of noise */
#define MEMCG_SLACK (1L << 20)	/* bytes of noise in memory.current */

/* The number a file such as memory.current holds; -1 if unreadable */
static long long read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * The layout of one short-lived process: PAGES pages at a stride of STRIDE
 * file pages, in reverse, all faulted in; a child that faults them in too
 * and exits; the mapping moved by mremap() and split by mprotect(); then
 * exit with everything still mapped.  Returns an exit status.
 */
static int lay_out_and_exit(void)
{
	size_t page = nl_pagesize(), len = PAGES * page, i;
	int fd = nl_memfd("nl_leak", PAGES * STRIDE, false), status;
	char *map, *moved;
	pid_t pid;

	if (fd < 0)
		return 10;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 11;
	for (i = 0; i < PAGES; i++)
		if (nl_remap(map + i * page, page, 0, (PAGES - 1 - i) * STRIDE, 0))
			return 12;
	for (i = 0; i < PAGES; i++)
		map[i * page] = 1;
	pid = fork();
	if (pid < 0)
		return 13;
	if (pid == 0) {
		for (i = 0; i < PAGES; i++)
			map[i * page + 1] = 2;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 14;
	moved = mremap(map, len, len, MREMAP_MAYMOVE);
	if (moved == MAP_FAILED)
		return 15;
	if (mprotect(moved + len / 2, page, PROT_READ))
		return 16;
	for (i = 0; i < PAGES; i++)
		if (moved[i * page] != 1)
			return 17;
	return 0;
}

/* Runs RUNS processes of lay_out_and_exit() one after another */
static int run_processes(void)
{
	int status;

	for (int r = 0; r < RUNS; r++) {
		pid_t pid = fork();

		if (pid < 0)
			return 20;
		if (pid == 0)
			_exit(lay_out_and_exit());
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			return 21;
		if (WEXITSTATUS(status))
			return WEXITSTATUS(status);
	}
	return 0;
}

/* The debug flavour's release ends in "-debug" (kernel/scripts/build-kernel.sh) */
static bool debug_kernel(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-debug");
}

FIXTURE(leak)
{
	int unused;
};

FIXTURE_SETUP(leak)
{
	if (!nonlinear_supported())
		SKIP(return, "no nonlinear remap_file_pages() on this kernel");
	if (debug_kernel())
		SKIP(return, "KASAN keeps freed objects in its quarantine, so slab counts do not fall");
	if (nl_radix_nodes() < 0 || access(NL_RADIX_SLAB_DIR "/shrink", W_OK))
		SKIP(return, "needs /proc/slabinfo and " NL_RADIX_SLAB_DIR "/shrink (root, SLUB)");
}

FIXTURE_TEARDOWN(leak)
{
}

/*
 * Faults beyond EOF fail with SIGBUS and map nothing: they must leave no
 * slot (and no xarray node) in the index of the live mapping.  First, so
 * that no node of another test's processes is still on its way out.
 */
TEST_F(leak, failed_faults_leave_no_slot)
{
	size_t page = nl_pagesize(), len = PAGES * page, i;
	int fd = nl_memfd("nl_failed", PAGES * STRIDE, false);
	long before, after, gone, sigbus = 0;
	char *map;

	ASSERT_LE(0, fd);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* MAP_NONBLOCK: nothing faulted in, nothing indexed yet */
	for (i = 0; i < PAGES; i++)
		ASSERT_EQ(0, nl_remap(map + i * page, page, 0, (PAGES - 1 - i) * STRIDE, MAP_NONBLOCK));
	ASSERT_EQ(0, ftruncate(fd, 0));
	before = nl_radix_nodes();
	for (int round = 0; round < 3; round++)
		for (i = 0; i < PAGES; i++)
			sigbus += nl_probe(map + i * page, NULL, false, 0) == SIGBUS;
	after = nl_radix_nodes();
	munmap(map, len);
	gone = nl_radix_nodes();
	printf("# radix_tree_node objects: %ld before, %ld after %ld failed faults, %ld after munmap\n",
	       before, after, sigbus, gone);
	EXPECT_EQ(3 * PAGES, sigbus);
	EXPECT_GT(before + NODE_SLACK, after)
		TH_LOG("%ld xarray nodes kept for faults that mapped nothing", after - before);
	/* What munmap() frees was kept by the index of the mapping */
	EXPECT_GT(gone + NODE_SLACK, after)
		TH_LOG("munmap() freed %ld xarray nodes kept for failed faults", after - gone);
	close(fd);
}

/*
 * Short-lived processes leave no xarray node behind: exit frees the index
 * of every vma, those of the fork child, the mremap() copy and the split
 * halves included.
 */
TEST_F(leak, exit_frees_index_nodes)
{
	long before, after;

	ASSERT_EQ(0, run_processes());	/* warm up the caches */
	before = nl_radix_nodes();
	ASSERT_EQ(0, run_processes());
	after = nl_radix_nodes();
	printf("# radix_tree_node objects: %ld before, %ld after %d processes\n",
	       before, after, RUNS);
	EXPECT_GT(before + NODE_SLACK, after)
		TH_LOG("%ld xarray nodes left behind by processes that exited", after - before);
}

/*
 * The same processes in a memory cgroup: once they are gone, what they
 * charged is gone too (the index is charged to the cgroup of the task
 * that faulted the page in).
 */
TEST_F(leak, exit_uncharges_memcg)
{
	const char *why = nl_memcg_unavailable();
	char cg[128], path[300];
	long long current;
	int status;
	pid_t pid;

	if (why)
		SKIP(return, "%s", why);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Only this process and its children run in the cgroup */
		if (nl_memcg_enter("nl_leak", "max", cg, sizeof(cg)))
			_exit(30);
		_exit(run_processes());
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	snprintf(cg, sizeof(cg), NL_CG_ROOT "/nl_leak.%d", pid);
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	/* Freed objects are uncharged through RCU and per-CPU stocks */
	for (int i = 0; i < 20; i++) {
		nl_radix_nodes();
		current = read_number(path);
		if (current >= 0 && current < MEMCG_SLACK)
			break;
		usleep(100000);
	}
	printf("# memory.current of the cgroup after its %d processes exited: %lld bytes\n",
	       RUNS, current);
	EXPECT_LE(0, current);
	EXPECT_GT(MEMCG_SLACK, current)
		TH_LOG("%lld bytes still charged to a cgroup with no task left", current);
	rmdir(cg);
}

NL_HARNESS_MAIN
