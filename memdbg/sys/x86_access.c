// SPDX-License-Identifier: MIT
/* The size of the access that faulted, read from the instruction at the
 * faulting pc (the SIGSEGV handler's "READ of size N"). */
#include "sys/sys.h"

/* Width of the memory operand of common x86-64 loads and stores, from the
 * instruction bytes; 0 if not recognised.  This is what "READ of size N"
 * reports: the page-fault error code only says read or write. */
int md_decode_access_size(const unsigned char *pc)
{
#if defined(__x86_64__)
    int opsize = 4, rep = 0, op66 = 0;
    const unsigned char *p = pc;
    for (int i = 0; i < 8; i++, p++) {
        if (*p == 0x66) { op66 = 1; opsize = 2; }
        else if (*p == 0xf2 || *p == 0xf3) rep = *p;
        else if (*p == 0x2e || *p == 0x3e || *p == 0x26 || *p == 0x36 || *p == 0x64 || *p == 0x65 || *p == 0xf0) { }
        else break;
    }
    if ((*p & 0xf0) == 0x40) { if (*p & 8) opsize = 8; p++; }
    unsigned char op = *p;
    if (op == 0x62) {                               /* EVEX: AVX-512 moves (glibc's *-evex) */
        if ((p[1] & 3) != 1) return 0;              /* map 0F only */
        int ll = (p[3] >> 5) & 3;
        int vlen = ll == 0 ? 16 : ll == 1 ? 32 : 64;
        switch (p[4]) {
        case 0x10: case 0x11: {
            int pp = p[2] & 3;
            return pp == 2 ? 4 : pp == 3 ? 8 : vlen;
        }
        case 0x28: case 0x29: case 0x6f: case 0x7f: case 0xe7: case 0x74: case 0x75: case 0x76:
        case 0xda: case 0xde: case 0xeb: case 0xef: case 0xf8:
            return vlen;
        default: return 0;
        }
    }
    if (op == 0xc5 || op == 0xc4) {                 /* VEX: AVX moves */
        int L = op == 0xc5 ? (p[1] >> 2) & 1 : (p[2] >> 2) & 1;
        unsigned char vop = op == 0xc5 ? p[2] : p[3];
        if (op == 0xc4 && (p[1] & 0x1f) != 1) return 0;
        switch (vop) {
        case 0x10: case 0x11: {
            int pp = (op == 0xc5 ? p[1] : p[2]) & 3;
            return pp == 2 ? 4 : pp == 3 ? 8 : (L ? 32 : 16);
        }
        case 0x28: case 0x29: case 0x6f: case 0x7f: case 0xe7: return L ? 32 : 16;
        case 0x74: case 0x75: case 0x76: case 0xda: case 0xde: case 0xeb: case 0xef: case 0xf8: return L ? 32 : 16;
        default: return 0;
        }
    }
    switch (op) {
    case 0x88: case 0x8a: case 0xc6: case 0x80: case 0xf6: case 0xfe: case 0xa4: case 0xaa: case 0xac: case 0xa6: case 0xae:
        return 1;
    case 0x89: case 0x8b: case 0xc7: case 0x81: case 0x83: case 0xf7: case 0xff: case 0xa5: case 0xab: case 0xad:
    case 0x85: case 0x87: case 0x01: case 0x03: case 0x09: case 0x0b: case 0x21: case 0x23: case 0x29: case 0x2b:
    case 0x31: case 0x33: case 0x39: case 0x3b: case 0x11: case 0x13: case 0x19: case 0x1b:
        return opsize;
    case 0x84: case 0x86: case 0x00: case 0x02: case 0x08: case 0x0a: case 0x20: case 0x22: case 0x28: case 0x2a:
    case 0x30: case 0x32: case 0x38: case 0x3a: case 0x10: case 0x12: case 0x18: case 0x1a:
        return 1;
    case 0x63: return 4;
    case 0x0f:
        switch (p[1]) {
        case 0xb6: case 0xbe: return 1;
        case 0xb7: case 0xbf: return 2;
        case 0x10: case 0x11: return rep == 0xf3 ? 4 : rep == 0xf2 ? 8 : 16;
        case 0x28: case 0x29: case 0x6f: case 0x7f: case 0xe7: case 0x2b: return 16;
        case 0x12: case 0x13: case 0x16: case 0x17: return 8;
        case 0xd6: return 8;
        case 0x6e: case 0x7e: return rep == 0xf3 ? 8 : (opsize == 8 ? 8 : 4);
        case 0x74: case 0x75: case 0x76: case 0xda: case 0xde: case 0xeb: case 0xef: case 0xf8: return op66 ? 16 : 8;
        default: return 0;
        }
    default: return 0;
    }
#else
    (void)pc;
    return 0;
#endif
}
