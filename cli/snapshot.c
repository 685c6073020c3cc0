/* SPDX-License-Identifier: MIT */
/* Snapshot of a process: its /proc/PID/maps, RSS, and, when libmemdbg.so is
 * loaded, the heap counters the library exports through memdbg_stats
 * (memdbg/stats_export.h), read with /proc/PID/mem.  Nothing is written to
 * the process: reading needs the same permission as ptrace (same user, or
 * root). */
#define _GNU_SOURCE
#include "snapshot.h"
#include "../memdbg/report/stats_export.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole of a /proc file (their size is unknown until read). */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);

			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

struct vma {
	uintptr_t lo, hi;
	unsigned long long off;
	unsigned long inode;
	const char *path;	/* points into the line; "" for none */
};

/* Parses one maps line in place (the path is NUL-terminated). */
static int parse_vma(char *line, struct vma *v)
{
	int pos = 0;
	char perms[8];

	if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %*s %lu %n", &v->lo, &v->hi, perms,
		   &v->off, &v->inode, &pos) < 5)
		return -1;
	v->path = pos ? line + pos : "";
	return 0;
}

static int is_allocator_vma(const struct vma *v)
{
	return !*v->path || !strcmp(v->path, "[heap]") || !strncmp(v->path, "/memfd:", 7) ||
	       !strncmp(v->path, "[anon:", 6);
}

int count_maps(pid_t pid, struct maps_count *c)
{
	char path[64], *buf, *line, *next;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	buf = slurp(path, &len);
	c->lines = c->anon = -1;
	if (!buf)
		return -1;
	c->lines = c->anon = 0;
	for (line = buf; *line; line = next) {
		struct vma v;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		else
			next = line + strlen(line);
		if (parse_vma(line, &v))
			continue;
		c->lines++;
		c->anon += is_allocator_vma(&v);
	}
	free(buf);
	return 0;
}

static long status_kb(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* st_value of a dynamic symbol of an ELF64 file, 0 if absent. */
static uint64_t dynsym_value(const char *file, const char *name)
{
	size_t len;
	char *img = slurp(file, &len);
	uint64_t found = 0;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	if (!img)
		return 0;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		goto out;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum && !found; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > len || str->sh_offset + str->sh_size > len)
			continue;
		Elf64_Sym *sym = (Elf64_Sym *)(img + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*sym);
		for (size_t k = 0; k < n; k++) {
			if (sym[k].st_name < str->sh_size && sym[k].st_shndx != SHN_UNDEF &&
			    !strcmp(img + str->sh_offset + sym[k].st_name, name)) {
				found = sym[k].st_value;
				break;
			}
		}
	}
out:
	free(img);
	return found;
}

static int read_mem(int memfd, uint64_t addr, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(memfd, (char *)buf + done, n - done, (off_t)(addr + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

#define FIELD(type, base, off) (*(const type *)((const char *)(base) + (off)))

/* The memdbg part of the snapshot: heap counters and a walk of the slot
 * table for guard pages and quarantined blocks. */
static void write_memdbg(pid_t pid, FILE *out, const char *lib, const uintptr_t *bias, int nbias,
			 char *maps, const char *smaps)
{
	char path[64];
	struct memdbg_stats_v1 st;
	uint64_t sym;
	int memfd;
	char *heap = NULL;

	fprintf(out, "memdbg_lib=%s\n", lib);
	sym = dynsym_value(lib, "memdbg_stats");
	if (!sym) {
		fprintf(out, "memdbg=no-stats (the library has no memdbg_stats symbol: older than the memdbg command)\n");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (memfd < 0) {
		fprintf(out, "memdbg=unreadable (%s: %s)\n", path, strerror(errno));
		return;
	}
	/* The file may be mapped more than once at offset 0 (libdw maps it
	 * to symbolize a report): the load address is the one where the table
	 * is and its heap address (relocated at load; a plain file mapping
	 * holds the unrelocated value) can be read. */
	int k;
	const char *why = "bad magic";
	int err = 0;
	for (k = 0; k < nbias; k++) {
		errno = 0;
		if (read_mem(memfd, bias[k] + sym, &st, sizeof(st)) || memcmp(st.magic, MEMDBG_STATS_MAGIC, 8)) {
			why = "memdbg_stats";
			err = errno;
			continue;
		}
		if (st.version != MEMDBG_STATS_VERSION || st.size < sizeof(st)) {
			fprintf(out, "memdbg=unreadable (memdbg_stats version %u, this tool reads %d)\n", st.version,
				MEMDBG_STATS_VERSION);
			goto out;
		}
		free(heap);
		heap = malloc(st.heap_bytes);
		if (!heap) {
			why = "heap state";
			err = ENOMEM;
			break;
		}
		if (!read_mem(memfd, st.heap_addr, heap, st.heap_bytes))
			break;
		why = "heap state";
		err = errno;
	}
	if (k >= nbias || !heap) {
		fprintf(out, "memdbg=unreadable (%s: %s)\n", why, err ? strerror(err) : "bad magic");
		goto out;
	}
	if (!FIELD(int, heap, st.off_initialized)) {
		fprintf(out, "memdbg=idle (loaded, no allocation yet)\n");
		goto out;
	}
	fprintf(out, "memdbg=yes\n");

	uint64_t backend = FIELD(uint64_t, heap, st.off_backend), name_ptr = 0;
	char name[32] = "?";
	if (backend && !read_mem(memfd, backend + st.backend_name_off, &name_ptr, sizeof(name_ptr)) &&
	    name_ptr && !read_mem(memfd, name_ptr, name, sizeof(name) - 1))
		name[sizeof(name) - 1] = 0;
	else
		strcpy(name, "?");
	uintptr_t base = FIELD(uintptr_t, heap, st.off_base);
	size_t size = FIELD(size_t, heap, st.off_size);
	fprintf(out, "memdbg_backend=%s\n", name);
	fprintf(out, "heap_start=0x%" PRIxPTR "\nheap_end=0x%" PRIxPTR "\n", base, base + size);

	/* The heap's VMAs and their resident memory. */
	long heap_vmas = 0, heap_rss = 0;
	for (char *line = maps; *line;) {
		struct vma v;
		char *next = strchr(line, '\n');

		if (next)
			*next = 0;
		if (!parse_vma(line, &v) && v.lo < base + size && v.hi > base)
			heap_vmas++;
		if (next)
			*next++ = '\n';
		line = next ? next : line + strlen(line);
	}
	int in_heap = 0;
	for (const char *line = smaps; line && *line;) {
		char *end;
		/* Not sscanf: it measures the whole rest of the buffer on
		 * every call (quadratic in a large smaps). */
		uintptr_t lo = strtoull(line, &end, 16), hi;

		if (end != line && *end == '-') {
			hi = strtoull(end + 1, NULL, 16);
			in_heap = lo < base + size && hi > base;
		} else if (in_heap && !strncmp(line, "Rss:", 4))
			heap_rss += strtol(line + 4, NULL, 10);
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	fprintf(out, "heap_vmas=%ld\n", heap_vmas);
	if (smaps)
		fprintf(out, "heap_rss_kb=%ld\n", heap_rss);
	fprintf(out, "live_blocks=%zu\nlive_bytes=%zu\n", FIELD(size_t, heap, st.off_live_blocks),
		FIELD(size_t, heap, st.off_live_bytes));
	fprintf(out, "peak_live_blocks=%zu\npeak_live_bytes=%zu\n", FIELD(size_t, heap, st.off_peak_live_blocks),
		FIELD(size_t, heap, st.off_peak_live_bytes));
	fprintf(out, "allocs=%zu\nfrees=%zu\nerrors=%zu\n", FIELD(size_t, heap, st.off_total_allocs),
		FIELD(size_t, heap, st.off_total_frees), FIELD(size_t, heap, st.off_errors_reported));
	fprintf(out, "quarantine_bytes=%zu\n", FIELD(size_t, heap, st.off_q_bytes));

	/* Slots: guard pages are the used arena pages no block can reach. */
	uint32_t nslots = FIELD(uint32_t, heap, st.off_nslots);
	uint32_t bump = FIELD(uint32_t, heap, st.off_bump_page);
	uint32_t frontier = FIELD(uint32_t, heap, st.off_guarded_frontier);
	uint64_t slots = FIELD(uint64_t, heap, st.off_slots);
	uint64_t used = bump > frontier ? bump : frontier, open_pages = 0, quarantined = 0;
	enum { CHUNK = 4096 };
	char *chunk = malloc((size_t)CHUNK * st.slot_bytes);
	int walked = chunk != NULL;
	for (uint32_t id = 1; walked && id <= nslots; id += CHUNK) {
		uint32_t n = nslots - id + 1 < CHUNK ? nslots - id + 1 : CHUNK;

		if (read_mem(memfd, slots + (uint64_t)id * st.slot_bytes, chunk, (size_t)n * st.slot_bytes)) {
			walked = 0;
			break;
		}
		for (uint32_t k = 0; k < n; k++) {
			const char *s = chunk + (size_t)k * st.slot_bytes;
			uint8_t state = FIELD(uint8_t, s, st.slot_off_state);

			if (state == st.state_live || state == st.state_ready)
				open_pages += FIELD(uint32_t, s, st.slot_off_data_pages);
			else if (state == st.state_quarantined)
				quarantined++;
		}
	}
	free(chunk);
	fprintf(out, "slots=%u\narena_pages_used=%" PRIu64 "\n", nslots, used);
	if (walked)
		fprintf(out, "guard_pages=%" PRIu64 "\nquarantined_blocks=%" PRIu64 "\n",
			used > open_pages ? used - open_pages : 0, quarantined);
out:
	free(heap);
	close(memfd);
}

void write_snapshot(pid_t pid, const char *when, FILE *out, const char *maps_copy)
{
	char path[64], lib[4096] = "";
	size_t len, slen;
	char *maps, *status, *smaps;
	uintptr_t bias[8];
	int nbias = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = slurp(path, &len);
	fprintf(out, "pid=%d\nwhen=%s\n", (int)pid, when);
	if (!maps) {
		fprintf(out, "error=cannot read %s: %s\n", path, strerror(errno));
		return;
	}
	if (maps_copy) {
		FILE *f = fopen(maps_copy, "w");

		if (f) {
			fwrite(maps, 1, len, f);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status = slurp(path, &slen);
	if (status) {
		const char *name = strstr(status, "Name:");
		char comm[64] = "?";

		if (name)
			sscanf(name + 5, " %63[^\n]", comm);
		fprintf(out, "comm=%s\nrss_kb=%ld\nhwm_kb=%ld\n", comm, status_kb(status, "VmRSS:"),
			status_kb(status, "VmHWM:"));
		free(status);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t elen = readlink(path, lib, sizeof(lib) - 1);
	if (elen > 0) {
		lib[elen] = 0;
		fprintf(out, "exe=%s\n", lib);
	}
	lib[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	smaps = slurp(path, &slen);

	/* Lines, and where libmemdbg.so is loaded (its mapping at offset 0). */
	long lines = 0;
	for (char *line = maps; *line;) {
		struct vma v;
		char *next = strchr(line, '\n');

		if (next)
			*next = 0;
		if (!parse_vma(line, &v)) {
			const char *base = strrchr(v.path, '/');

			lines++;
			base = base ? base + 1 : v.path;
			if (v.off == 0 && !strncmp(base, "libmemdbg", 9) && strstr(base, ".so") && nbias < 8 &&
			    (!*lib || !strcmp(lib, v.path))) {
				/* A deleted file is still readable through map_files. */
				if (!*lib && strstr(v.path, " (deleted)"))
					snprintf(lib, sizeof(lib), "/proc/%d/map_files/%" PRIxPTR "-%" PRIxPTR,
						 (int)pid, v.lo, v.hi);
				else if (!*lib)
					snprintf(lib, sizeof(lib), "%s", v.path);
				bias[nbias++] = v.lo;
			}
		}
		if (next)
			*next++ = '\n';
		line = next ? next : line + strlen(line);
	}
	fprintf(out, "maps_lines=%ld\n", lines);
	if (*lib)
		write_memdbg(pid, out, lib, bias, nbias, maps, smaps);
	else
		fprintf(out, "memdbg=no\n");
	free(smaps);
	free(maps);
}
