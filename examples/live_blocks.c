// SPDX-License-Identifier: GPL-2.0
/*
 * live_blocks: keep N heap blocks alive at once and report how many lines
 * /proc/self/maps has then.  Run under a page-guard debugger (memdbg,
 * Electric Fence, DUMA) it shows what each one costs in VMAs: two per block
 * for the classic ones, which die near vm.max_map_count, and a constant
 * number for memdbg on a nonlinear or guard-region kernel.
 *
 *   live_blocks BLOCKS [SIZE] [--wait] [--keep]    (SIZE defaults to 24 bytes)
 *
 * Prints one line: blocks=N size=S maps_lines=M ns_per_malloc=T
 * --wait: then waits for a signal (SIGTERM, SIGINT...) with the blocks
 * live, for `memdbg maps PID`; --keep: leaves them allocated at exit, so a
 * snapshot at exit (`memdbg maps -- live_blocks N --keep`) sees them.
 * Exit status: 0 when every block was allocated and kept its contents.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long maps_lines(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	long lines = 0;
	int c;

	if (!maps)
		return -1;
	while ((c = getc(maps)) != EOF)
		lines += c == '\n';
	fclose(maps);
	return lines;
}

static long parse(const char *arg, long min, long max)
{
	char *end;
	long v = strtol(arg, &end, 10);

	return *arg && !*end && v >= min && v <= max ? v : -1;
}

int main(int argc, char **argv)
{
	long blocks, size = 24, i, bad = 0;
	int wait = 0, keep = 0;
	struct timespec t0, t1;
	unsigned char **block;

	while (argc > 2 && (!strcmp(argv[argc - 1], "--wait") || !strcmp(argv[argc - 1], "--keep"))) {
		wait |= !strcmp(argv[argc - 1], "--wait");
		keep |= !strcmp(argv[argc - 1], "--keep");
		argc--;
	}
	if (argc < 2 || argc > 3 || (blocks = parse(argv[1], 1, 100000000)) < 0 ||
	    (argc == 3 && (size = parse(argv[2], 1, 1 << 20)) < 0)) {
		fprintf(stderr, "usage: %s BLOCKS [SIZE] [--wait] [--keep]\n", argv[0]);
		return 2;
	}
	/* The pointer array itself comes from the debugged heap too. */
	block = calloc(blocks, sizeof(*block));
	if (!block) {
		printf("blocks=0 size=%ld maps_lines=%ld error=calloc\n", size, maps_lines());
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < blocks; i++) {
		block[i] = malloc(size);
		if (!block[i]) {
			printf("blocks=%ld size=%ld maps_lines=%ld error=malloc\n", i, size, maps_lines());
			return 1;
		}
		memset(block[i], (int)(i & 0xff), size);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("blocks=%ld size=%ld maps_lines=%ld ns_per_malloc=%ld\n", blocks, size,
	       maps_lines(),
	       ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec)) / blocks);
	fflush(stdout);
	if (wait)
		pause();
	if (keep)
		return 0;
	for (i = 0; i < blocks; i++) {
		bad += block[i][0] != (unsigned char)(i & 0xff) ||
		       block[i][size - 1] != (unsigned char)(i & 0xff);
		free(block[i]);
	}
	free(block);
	return bad ? 1 : 0;
}
