/* SPDX-License-Identifier: MIT */
/* memdbg's address space under a limit (RLIMIT_AS, `ulimit -v`).  The
 * arena and the reservations that follow its size (internal pool, stack
 * depot, per-page metadata) are address space, counted against the limit
 * although they cost no memory until used.  The default 64 GiB arena
 * does not fit under a limit of a few GiB, so when the user did not set
 * arena_size, it is sized so that memdbg takes at most three quarters of
 * the room left under the limit: the program's blocks are in the arena,
 * and the program keeps the rest (at least 128 MiB) for its stacks,
 * libraries and own mappings.  Under a limit memdbg's own reservations
 * (internal pool, stack depot) take smaller minimums, so that most of
 * that share is arena.  When it does not fit even so, or the user's
 * arena_size does not, the error names the limit and what fits. */
#include "base/base.h"
#include "base/options.h"
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define MIN_ARENA (16 * MIB)

/* Address space mapped now (first field of /proc/self/statm, in pages);
 * 0 when unknown. */
static size_t mapped_now(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    size_t pages = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) pages = pages * 10 + (size_t)(buf[i] - '0');
    return pages * MD_PAGE;
}

size_t md_as_room(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
    size_t limit = (size_t)rl.rlim_cur, used = mapped_now();
    return used < limit ? limit - used : 0;
}

/* What memdbg may take of room: three quarters, leaving the program at
 * least 128 MiB. */
static size_t budget_of(size_t room)
{
    size_t keep = room / 4 > 128 * MIB ? room / 4 : 128 * MIB;
    return room > keep ? room - keep : 0;
}

static size_t clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Whether an address-space limit is in force: memdbg's own reservations
 * then take smaller minimums, so that the arena, which holds the
 * program's blocks, gets the room. */
static bool as_limited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* The internal pool (libunwind, the symbolizer, the leak check's work
 * lists): a 16th of the arena up to 4 GiB, at least 256 MiB, or 32 MiB
 * under a limit (a report then has room to symbolize a few large
 * modules; what does not fit is printed as module+offset). */
size_t md_pool_bytes(size_t arena)
{
    return clamp(arena / 16, as_limited() ? 32 * MIB : 256 * MIB, 4096 * MIB);
}

/* The stack depot's store: a 64th of the arena up to 1 GiB, at least
 * 64 MiB, or 16 MiB under a limit (some 100,000 distinct 16-frame
 * stacks; past that, new blocks are recorded without a stack). */
size_t md_depot_bytes(size_t arena)
{
    return clamp(arena / 64, as_limited() ? 16 * MIB : 64 * MIB, 1024 * MIB);
}

/* An upper bound of the address space memdbg reserves with an arena of
 * `arena` bytes: the arena; the internal pool and the stack depot (above)
 * and 4 MiB of depot buckets; per arena page at most 96 bytes of metadata
 * (page map, slot table, free pool, compact pages, fork maps); and 64 MiB
 * of fixed regions (report stack and buffer, module table, guard pages). */
size_t md_reservations_for(size_t arena)
{
    return arena + md_pool_bytes(arena) + md_depot_bytes(arena) + (arena >> MD_PAGE_SHIFT) * 96 + 68 * MIB;
}

/* The largest arena (a multiple of 16 MiB) whose reservations fit in
 * budget bytes; 0 when not even the smallest does. */
static size_t arena_fitting(size_t budget)
{
    if (md_reservations_for(MIN_ARENA) > budget) return 0;
    size_t lo = MIN_ARENA, hi = budget;
    while (hi - lo > MIN_ARENA) {
        size_t mid = lo + (hi - lo) / 2;
        if (md_reservations_for(mid) <= budget) lo = mid;
        else hi = mid;
    }
    return lo & ~(MIN_ARENA - 1);
}

static void put_num(char *out, size_t cap, size_t *at, size_t v)
{
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10); while ((v /= 10) && n < 24);
    while (n > 0 && *at + 1 < cap) out[(*at)++] = digits[--n];
    out[*at] = 0;
}

static void put_mib(char *out, size_t cap, size_t *at, size_t v)
{
    put_num(out, cap, at, v / MIB);
}

static void put_str(char *out, size_t cap, size_t *at, const char *s)
{
    while (*s && *at + 1 < cap) out[(*at)++] = *s++;
    out[*at] = 0;
}

/* The room under the limit that the smallest arena needs: its
 * reservations within budget_of(room). */
static size_t room_needed(void)
{
    size_t need = md_reservations_for(MIN_ARENA);
    return need + 128 * MIB >= need * 4 / 3 ? need + 128 * MIB : (need * 4 + 2) / 3;
}

const char *md_as_limit_hint(void)
{
    static char hint[256];
    size_t at = 0, room = md_as_room();
    if (room == SIZE_MAX) {
        put_str(hint, sizeof hint, &at, " (try a smaller arena_size, e.g. MEMDBG_OPTIONS=arena_size=8G)");
        return hint;
    }
    size_t fit = arena_fitting(budget_of(room));
    put_str(hint, sizeof hint, &at, " (the address-space limit, ulimit -v, leaves ");
    put_mib(hint, sizeof hint, &at, room);
    put_str(hint, sizeof hint, &at, " MiB; ");
    if (fit) {
        put_str(hint, sizeof hint, &at, "MEMDBG_OPTIONS=arena_size=");
        put_mib(hint, sizeof hint, &at, fit);
        put_str(hint, sizeof hint, &at, "M fits, or leave arena_size unset to size it from the limit)");
    } else {
        /* what is mapped already stays: the limit must cover it too */
        struct rlimit rl;
        getrlimit(RLIMIT_AS, &rl);
        size_t limit = (size_t)rl.rlim_cur, used = limit > room ? limit - room : 0;
        put_str(hint, sizeof hint, &at, "memdbg and the program need ");
        put_mib(hint, sizeof hint, &at, room_needed() + MIB - 1);
        put_str(hint, sizeof hint, &at, " MiB: raise it to ulimit -v ");
        put_num(hint, sizeof hint, &at, ((used + room_needed() + 64 * MIB) & ~(64 * MIB - 1)) / 1024);
        put_str(hint, sizeof hint, &at, " or more)");
    }
    return hint;
}

void md_fit_arena_to_limit(void)
{
    size_t room = md_as_room();
    if (room == SIZE_MAX || md_option_given(MD_OPTION_ID_arena_size)) return;
    if (md_reservations_for(md_opt.arena_size) <= budget_of(room)) return;
    size_t fit = arena_fitting(budget_of(room));
    if (!fit) md_die_msg("memdbg: cannot start", md_as_limit_hint(), "");
    md_opt.arena_size = fit;
}
