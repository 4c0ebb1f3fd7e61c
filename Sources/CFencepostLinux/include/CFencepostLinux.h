// The Linux headers the Glibc module does not export (epoll, timerfd, signalfd), and shims for
// the few calls and types glibc declares only under _GNU_SOURCE or _XOPEN_SOURCE.
// FencepostLinux is the only user; nothing here has logic.
#ifndef C_FENCEPOST_LINUX_H
#define C_FENCEPOST_LINUX_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <signal.h>

/// `struct ucred` (SO_PEERCRED), which glibc declares only under _GNU_SOURCE.
struct cfl_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// `accept4` (a GNU extension in glibc's headers).
int cfl_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);

/// `posix_openpt`, `grantpt`, `unlockpt`, `ptsname_r` (XSI in glibc's headers).
int cfl_posix_openpt(int flags);
int cfl_grantpt(int fd);
int cfl_unlockpt(int fd);
int cfl_ptsname_r(int fd, char *buf, size_t buflen);

/// 1 when the kernel says the clock is synchronised (NTP: `ntp_adjtime` returns TIME_OK and
/// STA_UNSYNC is clear), 0 when not, -1 with errno on failure.
int cfl_clock_synchronized(void);

/// `malloc_trim(0)`: gives the heap's free pages back to the kernel (malloc.h is not in Glibc's module).
int cfl_malloc_trim(void);

/// libgps, loaded at first use (libgps_loader.c). `cfl_gps_load` returns NULL when loaded, else
/// why not (dlerror's text); the other calls are gps_open, gps_stream, gps_read, gps_close and
/// gps_errstr, valid only after a successful load. `FENCEPOST_LIBGPS` names another file to load.
struct gps_data_t;
const char *cfl_gps_soname(void);
const char *cfl_gps_load(void);
int cfl_gps_open(const char *host, const char *port, struct gps_data_t *data);
int cfl_gps_stream(struct gps_data_t *data, unsigned int flags);
int cfl_gps_read(struct gps_data_t *data, char *message, int length);
int cfl_gps_close(struct gps_data_t *data);
const char *cfl_gps_errstr(int code);

#endif
