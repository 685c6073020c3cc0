/* SPDX-License-Identifier: MIT */
/* The gap between guarded allocations in sampled mode: a geometric
 * variate of mean N, 1 + floor(ln U / ln(1 - 1/N)) for U uniform in
 * (0, 1], computed without libm (the library does not link it).
 *
 * Both logarithms need their relative error small, not only their
 * absolute one: ln(1 - 1/N) is about -1/N, so an absolute error of 1e-6
 * turns N = 10^9 into a mean gap of a few million.  ln(1 - p) therefore
 * comes from its own series in p, and ln U from a mantissa reduced to
 * [sqrt(1/2), sqrt(2)), where the atanh series' first term already has
 * the result's magnitude. */

#include "alloc/alloc.h"
#include <string.h>

/* ln(x) for x > 0 with a relative error below 1e-10: x = m * 2^e with
 * m in [sqrt(1/2), sqrt(2)), ln(m) = 2 atanh(t), t = (m - 1) / (m + 1),
 * |t| < 0.172; m - 1 is exact there, so x near 1 keeps its precision. */
static double ln_positive(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    double t = (m - 1) / (m + 1), t2 = t * t;
    double series = t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 * (1.0 / 9 + t2 / 11)))));
    return e * 0.6931471805599453 + 2 * series;
}

/* ln(1 - p) = -(p + p^2/2 + p^3/3 + ...) for 0 < p <= 1/2, summed until
 * the terms no longer change the sum. */
static double ln_one_minus(double p)
{
    double sum = 0, power = p;
    for (int k = 1; k < 200; k++) {
        double term = power / k;
        if (sum + term == sum) break;
        sum += term;
        power *= p;
    }
    return -sum;
}

double md_gap_scale(uint64_t mean)
{
    return mean > 1 ? 1 / ln_one_minus(1.0 / (double)mean) : 0;
}

/* At most about 36.8 N (U >= 2^-53), so the 64-bit countdown never cuts
 * a gap short and the mean stays N; the cap only guards against a scale
 * that is not finite. */
uint64_t md_gap_draw(double scale, uint64_t random_bits)
{
    double u = (double)((random_bits >> 11) + 1) * (1.0 / 9007199254740992.0);   /* (0, 1] */
    double g = ln_positive(u) * scale;   /* >= 0: both factors are <= 0 */
    if (!(g > 0)) return 1;
    return g >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)g + 1;
}
