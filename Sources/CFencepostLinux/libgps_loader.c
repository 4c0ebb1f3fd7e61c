// libgps, loaded when the agent first talks to gpsd (dlopen) instead of linked: a configuration
// without gpsd does not map libgps and what it pulls in (libdbus, libsystemd, libgcrypt, liblzma,
// libzstd, liblz4, libcap: ~1 MB resident). Only the soname of the API the headers describe is
// loaded, so gps_data_t's layout is the one this code was compiled against.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gps.h>
#include <stddef.h>
#include <stdlib.h>
#include "CFencepostLinux.h"

#if GPSD_API_MAJOR_VERSION == 11
#define CFL_LIBGPS_SONAME "libgps.so.28"   /* gpsd 3.22 (Debian 12) */
#else
#error "libgps is loaded by its soname: add the soname of this GPSD_API_MAJOR_VERSION"
#endif

static void *handle;
static int (*p_open)(const char *, const char *, struct gps_data_t *);
static int (*p_stream)(struct gps_data_t *, unsigned int, void *);
static int (*p_read)(struct gps_data_t *, char *, int);
static int (*p_close)(struct gps_data_t *);
static const char *(*p_errstr)(const int);

const char *cfl_gps_soname(void) {
    const char *override = getenv("FENCEPOST_LIBGPS");
    return override && *override ? override : CFL_LIBGPS_SONAME;
}

const char *cfl_gps_load(void) {
    if (handle) return NULL;
    void *h = dlopen(cfl_gps_soname(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return dlerror();
    void *o = dlsym(h, "gps_open"), *s = dlsym(h, "gps_stream"), *r = dlsym(h, "gps_read");
    void *c = dlsym(h, "gps_close"), *e = dlsym(h, "gps_errstr");
    if (!o || !s || !r || !c || !e) {
        dlclose(h);
        return "the library has no gps_open, gps_stream, gps_read, gps_close or gps_errstr";
    }
    p_open = (int (*)(const char *, const char *, struct gps_data_t *))o;
    p_stream = (int (*)(struct gps_data_t *, unsigned int, void *))s;
    p_read = (int (*)(struct gps_data_t *, char *, int))r;
    p_close = (int (*)(struct gps_data_t *))c;
    p_errstr = (const char *(*)(const int))e;
    handle = h;
    return NULL;
}

int cfl_gps_open(const char *host, const char *port, struct gps_data_t *data) { return p_open(host, port, data); }
int cfl_gps_stream(struct gps_data_t *data, unsigned int flags) { return p_stream(data, flags, NULL); }
int cfl_gps_read(struct gps_data_t *data, char *message, int length) { return p_read(data, message, length); }
int cfl_gps_close(struct gps_data_t *data) { return p_close(data); }
const char *cfl_gps_errstr(int code) { return p_errstr ? p_errstr(code) : "libgps is not loaded"; }
