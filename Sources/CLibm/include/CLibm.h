// libm (and C's heap, malloc/realloc/free) for the cores in an Embedded Swift build, where
// `import Glibc` does not exist: the cores that need sin/cos/log or a raw buffer write
// `#elseif hasFeature(Embedded) import CLibm`. The normal build imports Glibc and never this module.
#ifndef C_LIBM_H
#define C_LIBM_H
#include <math.h>
#include <stdlib.h>
#endif
