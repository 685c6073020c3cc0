// SPDX-License-Identifier: GPL-2.0
/*
 * remap_reverse: map N pages of a memfd with one MAP_SHARED mmap, then use
 * remap_file_pages() to put them in reverse order, one page per call, and
 * report how many VMAs the mapping ended up with.
 *
 * On a stock kernel remap_file_pages() is emulated with one mmap() per
 * call, so every call adds a VMA and the run stops with ENOMEM near
 * vm.max_map_count.  With memdbg's nonlinear kernel the mapping stays one
 * VMA.  Every page carries its own file offset, checked after the remaps.
 *
 *   remap_reverse PAGES [--quiet]
 *
 * Prints one line of key=value pairs for scripts, e.g.
 *   pages=1024 calls_ok=1024 vmas_before=1 vmas_after=1024 error=none \
 *   verified=1024 mismatched=0 kernel=6.12.118-stock
 * Exit status: 0 when every call succeeded and every page was where
 * expected, 1 when a call failed or a page was wrong, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Number of /proc/self/maps lines that overlap [start, end). */
static long count_vmas(uintptr_t start, uintptr_t end)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	long count = 0;

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 &&
		    lo < end && hi > start)
			count++;
	}
	fclose(maps);
	return count;
}

static int parse_pages(const char *arg, long *pages)
{
	char *end;

	errno = 0;
	*pages = strtol(arg, &end, 10);
	return errno || *end || *pages < 1 || *pages > (1L << 24) ? -1 : 0;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), pages, i, calls_ok = 0;
	long vmas_before, vmas_after, verified = 0, mismatched = 0;
	const char *error = "none";
	struct utsname uts;
	char *map;
	int fd;

	if (argc < 2 || argc > 3 || parse_pages(argv[1], &pages) ||
	    (argc == 3 && strcmp(argv[2], "--quiet"))) {
		fprintf(stderr, "usage: %s PAGES [--quiet]   (1 <= PAGES <= 16777216)\n", argv[0]);
		return 2;
	}
	fd = memfd_create("remap_reverse", 0);
	if (fd < 0 || ftruncate(fd, pages * page)) {
		perror("remap_reverse: memfd");
		return 1;
	}
	map = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("remap_reverse: mmap");
		return 1;
	}
	for (i = 0; i < pages; i++)
		*(long *)(map + i * page) = i;
	vmas_before = count_vmas((uintptr_t)map, (uintptr_t)map + pages * page);

	for (i = 0; i < pages; i++) {
		if (remap_file_pages(map + i * page, page, 0, pages - 1 - i, 0)) {
			error = errno == ENOMEM ? "ENOMEM" : strerrorname_np(errno);
			break;
		}
		calls_ok++;
	}
	vmas_after = count_vmas((uintptr_t)map, (uintptr_t)map + pages * page);

	/*
	 * Addresses that were remapped show the mirrored page; after a failed
	 * call the rest still show their own page of the original mapping.
	 */
	for (i = 0; i < pages; i++) {
		long want = i < calls_ok ? pages - 1 - i : i;

		if (*(long *)(map + i * page) == want)
			verified++;
		else
			mismatched++;
	}
	if (uname(&uts))
		strcpy(uts.release, "unknown");
	printf("pages=%ld calls_ok=%ld vmas_before=%ld vmas_after=%ld error=%s verified=%ld mismatched=%ld kernel=%s\n",
	       pages, calls_ok, vmas_before, vmas_after, error, verified, mismatched,
	       uts.release);
	return calls_ok == pages && !mismatched ? 0 : 1;
}
