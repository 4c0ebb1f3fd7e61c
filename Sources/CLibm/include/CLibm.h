// libm (and C's heap, malloc/realloc/free) for the cores in an Embedded Swift build, where
// `import Glibc` does not exist: the cores that need sin/cos/log or a raw buffer write
// `#elseif hasFeature(Embedded) import CLibm`. The normal build imports Glibc for those, and this
// module only for `fencepost_prefetch` below.
#ifndef C_LIBM_H
#define C_LIBM_H
#include <math.h>
#include <stdlib.h>
// A hint that the cache line holding `p` will be read soon: no fault for any address, no effect
// on results (x86-64 PREFETCHT0, AArch64 PRFM PLDL1KEEP). Both builds import it for this; Swift
// has no prefetch of its own. The packed R-tree's walk asks for a node's lines when it pushes
// the node, so the lines of sibling nodes arrive together (IndexView.swift).
static inline void fencepost_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
#endif
