// libgps (gpsd 3.22 on Debian 12) for FencepostLinux's gpsd client: its types only. The library is
// not linked but loaded at first use (CFencepostLinux/libgps_loader.c).
#ifndef FENCEPOST_CGPS_SHIM_H
#define FENCEPOST_CGPS_SHIM_H
#include <gps.h>

// The WATCH flags as plain unsigned ints (macros with a `u` suffix).
static const unsigned int fencepost_gps_watch_enable = WATCH_ENABLE;
static const unsigned int fencepost_gps_watch_disable = WATCH_DISABLE;
static const unsigned int fencepost_gps_watch_json = WATCH_JSON;

// The socket descriptor (a union member on some builds).
static inline int fencepost_gps_fd(const struct gps_data_t *data) { return (int)data->gps_fd; }
#endif
