// GEOS's C API (libgeos-dev; `board/install-deps --benchmarks`), for the baseline in
// PolygonBenchmarks only: the product never links GEOS.
#include <geos_c.h>
