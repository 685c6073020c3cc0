/* SPDX-License-Identifier: MIT */
/* Every layer's interface, for unit tests that reach into several layers
 * (the library's own files include only the layers below them). */
#ifndef MEMDBG_UNIT_LIB_H
#define MEMDBG_UNIT_LIB_H

#include "base/base.h"
#include "base/options.h"
#include "sys/sys.h"
#include "core/core.h"
#include "backend/backend.h"
#include "stack/stack.h"
#include "report/report.h"
#include "report/signals.h"
#include "lifecycle/lifecycle.h"
#include "alloc/alloc.h"
#include "leak/leak.h"

#endif
