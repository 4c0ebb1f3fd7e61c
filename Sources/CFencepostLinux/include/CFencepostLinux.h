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

#endif
