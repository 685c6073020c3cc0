/* SPDX-License-Identifier: MIT */
/* The one symbol of libmemdbg-sym.so (symcore.h): its functions, for
 * libmemdbg.so to find with dlsym once it has loaded the library. */
#include "symcore.h"

__attribute__((visibility("default"))) const struct md_sym_ops md_sym_ops = {
    .open = md_sym_open,
    .frame_lines = md_sym_frame_lines,
    .frame_fields = md_sym_frame_fields,
    .location = md_sym_location,
};
