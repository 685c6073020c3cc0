// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded random-argument run of remap_file_pages() on the memdbg
 * kernel, with an oracle: for every call the expected result (0 or one
 * errno) is computed from the arguments and the target mapping, following
 * the order of the checks in mm/mmap.c (SYSCALL_DEFINE5(remap_file_pages)
 * and remap_file_pages_nonlinear()) and docs/remap_file_pages.2.md:
 *
 *   1. MAP_CHGPROT: prot bits outside PROT_READ|WRITE|EXEC -> EINVAL;
 *      without it, prot != 0 -> EINVAL
 *   2. start and size rounded down to pages; size 0 or start + size
 *      wrapping -> EINVAL; pgoff + pages wrapping -> EINVAL
 *   3. MAP_CHGPROT on a VM_MAYSHARE VMA asking for more than VM_MAY* ->
 *      EACCES
 *   4. no VMA at start, or no VM_SHARED -> EINVAL
 *   0. flag bits above MAP_CHGPROT -> EINVAL; all zero but MAP_CHGPROT
 *      (the feature query) -> 0.  MAP_VECTOR (the bit above MAP_CHGPROT)
 *      with no higher bit is not generated, with or without MAP_CHGPROT:
 *      its first argument is a pointer to entries (nonlinear_vector_test
 *      covers it); with higher bits it is EINVAL like any other bit
 *   5. range past the VMA's end -> EINVAL (into a hole or another file);
 *      last offset not encodable in an entry (>= 2^47 pages on x86_64,
 *      less with L1TF) -> emulated (not generated), EINVAL with MAP_CHGPROT
 *   6. mseal()ed VMA -> EPERM
 *   7. MAP_CHGPROT with a prot neither PROT_NONE nor the VMA's -> EINVAL
 *   8. success: guards (MAP_CHGPROT, PROT_NONE) or file pages pgoff...
 *
 * (ENOMEM, page tables, and EINTR, a fatal signal, are documented but
 * cannot happen here; emulated, non-shmem targets are not fuzzed: their
 * do_mmap() has its own error set.)  Targets: a memfd MAP_SHARED mapping, a
 * MAP_SHARED|MAP_ANONYMOUS one, a write-sealed memfd mapped read-only,
 * a file on a tmpfs mounted noexec (no VM_MAYEXEC; guest only, else a
 * /dev/shm file), an mseal()ed memfd mapping, a MAP_PRIVATE memfd mapping, private
 * anonymous memory, a read-only shared mapping of a /dev/shm file opened
 * O_RDONLY and one of this program's own file; plus unmapped holes next to
 * them, NULL, kernel addresses and random addresses in no mapping.  Sizes
 * odd, zero, huge, wrapping; prot every value 0..7 and random bits; pgoff in
 * the file, beyond EOF, around 2^47 and near ULONG_MAX; flags every single
 * bit and random words.
 *
 * Every call must give the oracle's answer; what each successful call did
 * is modelled (guard, file page, SIGBUS beyond EOF) and every page of every
 * target is checked against the model every 10,000 calls and at the end.
 * The guest's kernel log must stay clean (vm-run.sh fails the run on any
 * WARNING or BUG).
 *
 *   RFP_FUZZ_SEED (default: time ^ pid, printed), RFP_FUZZ_CALLS (default
 *   200000)
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/uio.h>

#include "nonlinear_util.h" /* includes kselftest_harness.h */

#ifndef __NR_mseal
#define __NR_mseal 462
#endif

#define GUARD (~1ULL)
#define UNKNOWN (~2ULL) /* a page with a per-page protection of a newer kernel: not checked */
#define TPAGES 64		   /* pages of each target */
#define PGOFF_LIMIT (1ULL << 47) /* first page offset a pte cannot hold (x86_64) */

struct target {
	const char *name;
	char *base;
	size_t pages;
	/* The VMA's flags, as smaps shows them. */
	bool shared, mayshare, mayread, maywrite, mayexec, msealed;
	unsigned long prot; /* PROT_* of the VMA */
	bool modelled;	    /* shmem and VM_SHARED: successful calls change it */
	size_t file_pages;  /* size of the object behind it */
	uint64_t want[TPAGES];
	long ok, errs[4];
};

enum { T_MEMFD, T_ANON, T_SEALED, T_NOEXEC, T_MSEALED, T_PRIVATE, T_PRIV_ANON, T_RO_SHM, T_RO_FILE, T_COUNT };

/* Mappings that exist and are not ours: random addresses must avoid them. */
static struct range {
	uintptr_t lo, hi;
} others[512];
static int n_others;

static uint64_t rng;

/*
 * Per-page protections other than PROT_NONE (read-only pages in a
 * read-write VMA) are being added to the kernel: when a probe shows this
 * kernel accepts one, a MAP_CHGPROT call with a proper subset of the
 * VMA's protection may succeed or fail with EINVAL, and its pages are not
 * checked afterwards (their exact rules belong to that work's tests).
 */
static bool subset_prot_supported;
/*
 * Offsets an entry may not hold are emulated (a VMA of their own, which
 * the model does not follow): such calls are not made.  With the L1TF
 * mitigation the limit depends on the CPU: every offset from 2^22 pages
 * (the limit for 36 physical address bits) is left out then.
 */
static bool l1tf_limited;
static uint64_t pgoff_limit = PGOFF_LIMIT;
#define EMULATED (-2)

static uint64_t r64(void)
{
	/* xorshift64*: reproducible from the printed seed. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t rn(uint64_t n)
{
	return n ? r64() % n : 0;
}

static size_t pg(void)
{
	return nl_pagesize();
}

/* Fill in the VmFlags-derived fields of @t. */
static int read_flags(struct target *t)
{
	t->shared = nl_has_vmflag(t->base, "sh");
	t->mayshare = nl_has_vmflag(t->base, "ms");
	t->mayread = nl_has_vmflag(t->base, "mr");
	t->maywrite = nl_has_vmflag(t->base, "mw");
	t->mayexec = nl_has_vmflag(t->base, "me");
	t->prot = (nl_has_vmflag(t->base, "rd") ? PROT_READ : 0) | (nl_has_vmflag(t->base, "wr") ? PROT_WRITE : 0) |
		  (nl_has_vmflag(t->base, "ex") ? PROT_EXEC : 0);
	return t->mayread ? 0 : -1;
}

/* A private mapping surrounded by unmapped pages (nl_map_with_hole is for shared ones). */
static char *map_private_with_hole(size_t len, int fd, int prot)
{
	char *r = mmap(NULL, len + 2 * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	m = mmap(r + pg(), len, prot, MAP_PRIVATE | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	munmap(r, pg());
	munmap(r + pg() + len, pg());
	return m;
}

/* The same, shared, with a protection of our choice. */
static char *map_shared_with_hole(size_t len, int fd, int prot)
{
	char *r = mmap(NULL, len + 2 * pg(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m;

	if (r == MAP_FAILED)
		return MAP_FAILED;
	m = mmap(r + pg(), len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	munmap(r, pg());
	munmap(r + pg() + len, pg());
	return m;
}

static void snapshot_others(struct target *t)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	n_others = 0;
	while (f && fgets(line, sizeof(line), f) && n_others < 512) {
		uintptr_t lo, hi;
		bool mine = false;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2)
			continue;
		for (int i = 0; i < T_COUNT; i++)
			mine |= lo < (uintptr_t)t[i].base + t[i].pages * pg() && hi > (uintptr_t)t[i].base;
		if (!mine)
			others[n_others++] = (struct range){ lo, hi };
	}
	if (f)
		fclose(f);
}

static bool in_others(uintptr_t a)
{
	for (int i = 0; i < n_others; i++)
		if (a >= others[i].lo && a < others[i].hi)
			return true;
	return false;
}

/* The target whose VMA holds @a, or NULL. */
static struct target *find(struct target *t, uintptr_t a)
{
	for (int i = 0; i < T_COUNT; i++)
		if (a >= (uintptr_t)t[i].base && a < (uintptr_t)t[i].base + t[i].pages * pg())
			return &t[i];
	return NULL;
}

/*
 * The oracle: 0 or the errno the call must fail with (see the top of the
 * file); -1: 0 or EINVAL (a subset protection, see subset_prot_supported).
 */
static int expect(struct target *t, uintptr_t start, uint64_t size, uint64_t prot, uint64_t pgoff, uint64_t flags,
		  struct target **hit)
{
	uint64_t pages, may = 0;
	struct target *v;

	*hit = NULL;
	if (flags & ~(uint64_t)(MAP_CHGPROT | (MAP_CHGPROT - 1)))
		return EINVAL;
	if (!start && !size && !prot && !pgoff && (flags & MAP_CHGPROT))
		return 0; /* the feature query */
	if (flags & MAP_CHGPROT) {
		if (prot & ~(uint64_t)(PROT_READ | PROT_WRITE | PROT_EXEC))
			return EINVAL;
	} else if (prot) {
		return EINVAL;
	}
	start &= ~(uintptr_t)(pg() - 1);
	size &= ~(uint64_t)(pg() - 1);
	if (start + size <= start)
		return EINVAL;
	pages = size / pg();
	if (pgoff + pages < pgoff)
		return EINVAL;
	v = find(t, start);
	if (v) {
		may = (v->mayread ? PROT_READ : 0) | (v->maywrite ? PROT_WRITE : 0) | (v->mayexec ? PROT_EXEC : 0);
		if ((flags & MAP_CHGPROT) && v->mayshare && (prot & ~may))
			return EACCES;
	}
	if (!v || !v->shared)
		return EINVAL;
	if (start + size > (uintptr_t)v->base + v->pages * pg())
		return EINVAL;
	if (pgoff + pages - 1 >= pgoff_limit)
		return (flags & MAP_CHGPROT) && !l1tf_limited ? EINVAL : EMULATED;
	if (v->msealed)
		return EPERM;
	*hit = v;
	if ((flags & MAP_CHGPROT) && prot && prot != v->prot)
		return subset_prot_supported && !(prot & ~v->prot) ? -1 : EINVAL;
	return 0;
}

/* Record what a successful call did to its target. */
static void apply(struct target *v, uintptr_t start, uint64_t size, uint64_t prot, uint64_t pgoff, uint64_t flags)
{
	size_t first = (start & ~(uintptr_t)(pg() - 1)) - (uintptr_t)v->base, n = (size & ~(uint64_t)(pg() - 1)) / pg();

	first /= pg();
	for (size_t k = 0; k < n; k++) {
		uint64_t off = pgoff + k;

		if ((flags & MAP_CHGPROT) && !prot)
			v->want[first + k] = GUARD;
		else if ((flags & MAP_CHGPROT) && prot != v->prot)
			v->want[first + k] = UNKNOWN;
		else
			v->want[first + k] = off < v->file_pages ? NL_STAMP(off, 0) : NL_WANT_SIGBUS;
	}
}

/* Check every page of a modelled target; guards by a read fault with SEGV_ACCERR. */
static long check_target(struct target *v)
{
	long bad = 0;

	for (size_t i = 0; i < v->pages; i++) {
		char *p = v->base + i * pg();

		if (v->want[i] == UNKNOWN)
			continue;
		if (v->want[i] == GUARD) {
			int sig = nl_probe(p + 8 * (i % 17), NULL, false, 0);

			if (sig != SIGSEGV || nl_code != SEGV_ACCERR || nl_fault_addr != p + 8 * (i % 17)) {
				fprintf(stderr, "#   %s page %zu: want a guard, got signal %d code %d\n", v->name, i, sig,
					(int)nl_code);
				bad++;
			}
		} else if (nl_check_pages(p, 1, &v->want[i], false)) {
			fprintf(stderr, "#   (%s page %zu)\n", v->name, i);
			bad++;
		}
	}
	return bad;
}

static const uint64_t odd_prots[] = { 0x8, 0x10, 0x20, 0x01000000 /* PROT_GROWSDOWN */, 0x02000000, 0x80000000,
				      1ULL << 32, ~0ULL };

/* One random call's arguments. */
static void gen_args(struct target *t, uintptr_t *start, uint64_t *size, uint64_t *prot, uint64_t *pgoff,
		     uint64_t *flags)
{
	struct target *v = &t[rn(8) < 5 ? rn(T_NOEXEC + 1) : rn(T_COUNT)]; /* mostly the modelled ones */
	uint64_t r = rn(100), fp = v->file_pages;
	uintptr_t end = (uintptr_t)v->base + v->pages * pg();

	/* start */
	if (r < 60)
		*start = (uintptr_t)v->base + (rn(v->pages + 2) - 1) * pg() + (rn(4) ? 0 : rn(pg()));
	else if (r < 75)
		*start = end - (1 + rn(4)) * pg() + (rn(4) ? 0 : rn(pg()));
	else if (r < 83)
		*start = rn(2) ? 0xffff800000000000ULL + rn(1ULL << 46) : 0xffffffffff600000ULL + rn(4096);
	else if (r < 88)
		*start = rn(65536);
	else
		do
			*start = (uintptr_t)r64() & ((1ULL << 47) - 1);
		while (in_others(*start) || find(t, *start));

	/* size */
	r = rn(100);
	if (r < 50)
		*size = (1 + rn(8)) * pg() + (rn(3) ? 0 : rn(pg()));
	else if (r < 58)
		*size = rn(pg());
	else if (r < 70)
		*size = end > *start ? end - *start + (rn(2) ? 0 : pg()) : pg();
	else if (r < 82)
		*size = rn(2) ? ~0ULL - rn(2 * pg()) : (1ULL << (40 + rn(24))) + rn(3) * pg();
	else
		*size = r64() >> rn(64);

	/* prot */
	r = rn(100);
	*prot = r < 40 ? 0 : r < 70 ? rn(8) : r < 80 ? v->prot : r < 90 ? odd_prots[rn(8)] : r64();

	/* pgoff */
	r = rn(100);
	if (r < 35)
		*pgoff = rn(fp);
	else if (r < 55)
		*pgoff = *start >= (uintptr_t)v->base && *start < end ? (*start - (uintptr_t)v->base) / pg() : rn(fp);
	else if (r < 65)
		*pgoff = fp + rn(16);
	else if (r < 77)
		*pgoff = PGOFF_LIMIT - rn(12);
	else if (r < 87)
		*pgoff = ~0ULL - rn(16);
	else
		*pgoff = r64() >> rn(64);

	/* flags: every single bit, the two that mean something, random words */
	r = rn(100);
	if (r < 25)
		*flags = 0;
	else if (r < 40)
		*flags = MAP_NONBLOCK;
	else if (r < 65)
		*flags = MAP_CHGPROT | (rn(2) ? MAP_NONBLOCK : 0);
	else if (r < 85)
		*flags = (1ULL << rn(64)) | (rn(2) ? MAP_CHGPROT : 0);
	else
		*flags = r64();
	/* A vectored call reads entries at *start: not this model's (see 0.) */
	if ((*flags & MAP_VECTOR) && !(*flags & ~(uint64_t)(2 * MAP_VECTOR - 1)))
		*flags &= ~(uint64_t)MAP_VECTOR;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

/* Set up target @i; returns 0 or -1 (then the test fails). */
static int setup_target(struct target *t, int i, int memfd)
{
	struct target *v = &t[i];
	size_t len = TPAGES * pg();
	char path[64];
	int fd = -1, ro;

	v->pages = TPAGES;
	v->file_pages = TPAGES;
	switch (i) {
	case T_MEMFD:
		v->name = "memfd";
		v->file_pages = 2 * TPAGES;
		v->base = nl_map_with_hole(len, memfd);
		break;
	case T_ANON:
		v->name = "shared_anon";
		v->base = nl_map_with_hole(len, -1);
		if (v->base != MAP_FAILED)
			for (size_t j = 0; j < TPAGES; j++)
				nl_stamp_mem(v->base + j * pg(), j, 0, true);
		break;
	case T_SEALED:
		v->name = "write_sealed_memfd";
		fd = memfd_create("rfp_fuzz_sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0 || ftruncate(fd, (off_t)len) || nl_stamp_fd(fd, 0, TPAGES, 0, true) ||
		    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE))
			return -1;
		v->base = map_shared_with_hole(len, fd, PROT_READ);
		break;
	case T_NOEXEC: {
		/*
		 * A file on a noexec tmpfs (no VM_MAYEXEC: PROT_EXEC is EACCES),
		 * in a private mount namespace; a /dev/shm file where mounting
		 * is not possible (then it is one more ordinary target).
		 */
		static char dir[] = "/tmp/rfp_fuzz.XXXXXX";

		v->name = "noexec_tmpfs_file";
		snprintf(path, sizeof(path), "/dev/shm/rfp_fuzz_nx.%d", getpid());
		if (getenv("MEMDBG_GUEST") && mkdtemp(dir) && !unshare(CLONE_NEWNS) &&
		    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
		    !mount("rfp_fuzz", dir, "tmpfs", MS_NOEXEC, "size=1m"))
			snprintf(path, sizeof(path), "%s/f", dir);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		unlink(path);
		if (ftruncate(fd, (off_t)len) || nl_stamp_fd(fd, 0, TPAGES, 0, true))
			return -1;
		v->base = nl_map_with_hole(len, fd);
		break;
	}
	case T_MSEALED:
		v->name = "msealed_memfd";
		fd = nl_memfd("rfp_fuzz_msealed", TPAGES, true);
		if (fd < 0)
			return -1;
		v->base = nl_map_with_hole(len, fd);
		if (v->base != MAP_FAILED)
			v->msealed = !syscall(__NR_mseal, v->base, len, 0);
		break;
	case T_PRIVATE:
		v->name = "private_memfd";
		v->base = map_private_with_hole(len, memfd, PROT_READ | PROT_WRITE);
		break;
	case T_PRIV_ANON:
		v->name = "private_anon";
		v->base = map_private_with_hole(len, -1, PROT_READ | PROT_WRITE);
		break;
	case T_RO_SHM:
		v->name = "readonly_shm_file";
		snprintf(path, sizeof(path), "/dev/shm/rfp_fuzz.%d", getpid());
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		unlink(path);
		if (ftruncate(fd, (off_t)len) || nl_stamp_fd(fd, 0, TPAGES, 0, true))
			return -1;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY | O_CLOEXEC);
		close(fd);
		fd = ro;
		v->base = map_shared_with_hole(len, fd, PROT_READ);
		break;
	case T_RO_FILE: {
		struct stat st;

		v->name = "readonly_own_binary";
		fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			return -1;
		v->pages = v->file_pages = (size_t)st.st_size / pg() < TPAGES ? (size_t)st.st_size / pg() : TPAGES;
		v->base = map_shared_with_hole(v->pages * pg(), fd, PROT_READ);
		break;
	}
	}
	if (fd >= 0)
		close(fd); /* the mappings keep their files */
	if (v->base == MAP_FAILED || read_flags(v))
		return -1;
	/* Only shmem VM_SHARED mappings change; the rest must stay as they are. */
	v->modelled = v->shared && !v->msealed;
	for (size_t j = 0; j < v->pages; j++)
		v->want[j] = i == T_PRIV_ANON ? NL_WANT_ZERO : NL_STAMP(j, 0);
	return 0;
}

static const int errnos[4] = { EINVAL, EACCES, EPERM, ENOMEM };

/* Only for TEST_F_TIMEOUT: the harness has no plain TEST with a timeout. */
FIXTURE(fuzz)
{
	int memfd;
};

FIXTURE_SETUP(fuzz)
{
	self->memfd = nl_memfd("rfp_fuzz", 2 * TPAGES, true);
	ASSERT_LE(0, self->memfd);
}

FIXTURE_TEARDOWN(fuzz)
{
	close(self->memfd);
}

TEST_F_TIMEOUT(fuzz, random_calls, 240)
{
	static struct target t[T_COUNT];
	long calls = env_long("RFP_FUZZ_CALLS", 200000), mismatches = 0, unchanged_bad = 0, ok = 0, bad;
	uint64_t seed = (uint64_t)env_long("RFP_FUZZ_SEED", (long)(time(NULL) ^ (getpid() << 16)));
	long by_errno[4] = { 0, 0, 0, 0 }, other_errno = 0, enomem = 0;
	double t0;

	for (int i = 0; i < T_COUNT; i++) {
		ASSERT_EQ(0, setup_target(t, i, self->memfd)) TH_LOG("target %d: %s", i, strerror(errno));
	}
	/* A read-only page in the read-write memfd mapping: accepted by this kernel? */
	subset_prot_supported = !nl_remap(t[T_MEMFD].base, pg(), PROT_READ, 0, MAP_CHGPROT);
	if (subset_prot_supported) {
		ASSERT_EQ(0, nl_remap(t[T_MEMFD].base, pg(), PROT_READ | PROT_WRITE, 0, MAP_CHGPROT));
		TH_LOG("this kernel accepts read-only pages: subset protections are not checked");
	}
	if (!t[T_MSEALED].msealed)
		TH_LOG("mseal() unavailable: the msealed target is an ordinary memfd mapping");
	snapshot_others(t);
	rng = seed ? seed : 1;
	printf("# seed %" PRIu64 " (RFP_FUZZ_SEED), %ld calls (RFP_FUZZ_CALLS)\n", seed, calls);
	for (int i = 0; i < T_COUNT; i++)
		printf("# target %-20s %p %3zu pages prot %lu sh=%d ms=%d mw=%d me=%d mseal=%d\n", t[i].name,
		       (void *)t[i].base, t[i].pages, t[i].prot, t[i].shared, t[i].mayshare, t[i].maywrite,
		       t[i].mayexec, t[i].msealed);
	fflush(stdout);

	{
		char buf[64] = "";
		FILE *f = fopen("/sys/devices/system/cpu/vulnerabilities/l1tf", "r");

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		l1tf_limited = !strncmp(buf, "Mitigation", 10);
		if (l1tf_limited)
			pgoff_limit = 1ULL << 22;
	}
	t0 = nl_now();
	for (long c = 0; c < calls; c++) {
		uintptr_t start;
		uint64_t size, prot, pgoff, flags;
		struct target *hit;
		int want, got;
		long ret;

		do {
			gen_args(t, &start, &size, &prot, &pgoff, &flags);
			want = expect(t, start, size, prot, pgoff, flags, &hit);
		} while (want == EMULATED);
		errno = 0;
		ret = syscall(__NR_remap_file_pages, start, size, prot, pgoff, flags);
		got = ret == 0 ? 0 : errno;
		if (ret && ret != -1)
			got = -1000; /* neither 0 nor -1: never */
		if (got == 0) {
			ok++;
		} else {
			int k;

			for (k = 0; k < 4 && errnos[k] != got; k++)
				;
			if (k < 4)
				by_errno[k]++;
			else
				other_errno++;
			enomem += got == ENOMEM;
		}
		if (want == -1 && (got == 0 || got == EINVAL))
			want = got;
		if (got != want) {
			if (mismatches++ < 10)
				fprintf(stderr,
					"#   call %ld: remap_file_pages(%#" PRIxPTR ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64
					", %#" PRIx64 ") = %s, expected %s\n",
					c, start, size, prot, pgoff, flags, got ? strerror(got) : "0",
					want ? strerror(want) : "0");
		}
		if (got == 0 && hit)
			apply(hit, start, size, prot, pgoff, flags);
		if (hit)
			hit->ok += got == 0;
		if ((c + 1) % 10000 == 0 || c + 1 == calls) {
			for (int i = 0; i < T_COUNT; i++) {
				if (i == T_RO_FILE)
					continue; /* not stamped; its errors are checked, not its contents */
				bad = check_target(&t[i]);
				if (bad && unchanged_bad++ < 5)
					fprintf(stderr, "#   after call %ld: %ld wrong pages in %s\n", c, bad, t[i].name);
			}
		}
	}
	printf("# %ld calls in %.1f s: %ld ok, EINVAL %ld, EACCES %ld, EPERM %ld, ENOMEM %ld, other %ld\n", calls,
	       nl_now() - t0, ok, by_errno[0], by_errno[1], by_errno[2], by_errno[3], other_errno);
	for (int i = 0; i < T_COUNT; i++)
		printf("#   %-20s %ld successful calls, VMAs %ld%s\n", t[i].name, t[i].ok,
		       nl_count_vmas(t[i].base, t[i].pages * pg()), nl_has_vmflag(t[i].base, "nl") ? " (nl)" : "");
	fflush(stdout);
	EXPECT_EQ(0, mismatches) TH_LOG("calls whose result differs from the documented one");
	EXPECT_EQ(0, unchanged_bad) TH_LOG("checks that found wrong pages");
	EXPECT_EQ(0, other_errno);
	EXPECT_EQ(0, enomem);
	EXPECT_LE(100000, calls) TH_LOG("the issue asks for at least 100,000 calls");
	EXPECT_LT(calls / 50, ok) TH_LOG("too few successful calls to exercise the nonlinear paths");
	for (int i = 0; i < T_COUNT; i++) {
		EXPECT_EQ(1, nl_count_vmas(t[i].base, t[i].pages * pg())) TH_LOG("%s: no VMA may be created", t[i].name);
	}
}

NL_HARNESS_MAIN
