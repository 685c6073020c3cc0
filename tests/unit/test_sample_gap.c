// SPDX-License-Identifier: MIT
/* Sampled mode's gaps (sample_gap.c): geometric of mean N for every N the
 * option takes, N = 10^9 included, where ln(1 - 1/N) is about -1e-9 and
 * an error of 1e-6 in it used to guard allocations hundreds of times too
 * often.  Compared with libm's log1p and log, and by the mean and tail of
 * many draws from a fixed seed. */
#include "unit_lib.h"
#include "unit.h"

#include <math.h>
#include <stdint.h>

static const uint64_t means[] = { 2, 3, 10, 100, 5000, 65536, 1000000, 123456789, 1000000000 };
#define N_MEANS (sizeof means / sizeof means[0])

/* splitmix64: a fixed, well-mixed sequence for the statistical checks */
static uint64_t next_bits(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void scale_matches_libm(void)
{
    for (size_t i = 0; i < N_MEANS; i++) {
        double want = 1 / log1p(-1.0 / (double)means[i]);
        double got = md_gap_scale(means[i]);
        UNIT_CHECK(fabs(got - want) <= 1e-12 * fabs(want), "N=%llu: scale %.17g, libm %.17g",
                   (unsigned long long)means[i], got, want);
    }
    UNIT_CHECK(md_gap_scale(1) == 0 && md_gap_scale(0) == 0, "N <= 1 has no gap");
}

/* Each draw is 1 + floor(ln U * scale), give or take one where the
 * product lands next to an integer, for U near 1, near 0 and between. */
static void draws_match_libm(void)
{
    static const uint64_t fixed[] = { 0, 1ull << 11, 12345ull << 11, 1ull << 40, 1ull << 52, 1ull << 62,
                                      0x8000000000000000ull, 0xb504f333f9de6484ull, UINT64_MAX - (1ull << 20),
                                      UINT64_MAX - (1ull << 11), UINT64_MAX };
    uint64_t state = 7;
    for (size_t i = 0; i < N_MEANS; i++) {
        double scale = md_gap_scale(means[i]);
        for (int k = 0; k < 2000; k++) {
            uint64_t bits = k < (int)(sizeof fixed / sizeof fixed[0]) ? fixed[k] : next_bits(&state);
            double u = (double)((bits >> 11) + 1) / 9007199254740992.0;
            double want = floor(log(u) / log1p(-1.0 / (double)means[i])) + 1;
            uint64_t got = md_gap_draw(scale, bits);
            UNIT_CHECK(got >= 1 && fabs((double)got - want) <= 1 + 1e-9 * want,
                       "N=%llu bits %#llx: gap %llu, libm %.0f", (unsigned long long)means[i],
                       (unsigned long long)bits, (unsigned long long)got, want);
        }
    }
}

/* 200,000 draws: the mean is N within 1% (the standard error is 0.23%;
 * a countdown of 32 bits, which cut gaps at 2^32 - 1, made it 1.4% short
 * at N = 10^9), and the share of gaps at or below N/1000 is about 1/1000. */
static void mean_and_tail(void)
{
    enum { DRAWS = 200000 };
    for (size_t i = 0; i < N_MEANS; i++) {
        uint64_t n = means[i], state = 42 + i, short_gaps = 0;
        double scale = md_gap_scale(n), sum = 0;
        for (int k = 0; k < DRAWS; k++) {
            uint64_t g = md_gap_draw(scale, next_bits(&state));
            sum += g;
            if (n >= 1000000 && g <= n / 1000) short_gaps++;
        }
        double mean = sum / DRAWS;
        UNIT_CHECK(fabs(mean - (double)n) <= 0.01 * (double)n, "N=%llu: mean gap %.1f",
                   (unsigned long long)n, mean);
        UNIT_CHECK(short_gaps <= DRAWS / 1000 * 3 / 2, "N=%llu: %llu of %d gaps at or below N/1000",
                   (unsigned long long)n, (unsigned long long)short_gaps, DRAWS);
    }
}

const struct unit_case unit_sample_gap_cases[] = {
    { "sample gap: ln(1 - 1/N) as libm's log1p for N from 2 to 10^9", scale_matches_libm },
    { "sample gap: each draw is 1 + floor(ln U / ln(1 - 1/N)) as with libm", draws_match_libm },
    { "sample gap: mean N within 1% and few short gaps over 200,000 draws", mean_and_tail },
    { 0, 0 },
};
