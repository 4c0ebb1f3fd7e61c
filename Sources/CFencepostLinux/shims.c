// One-line forwarders to glibc calls declared only under _GNU_SOURCE / _XOPEN_SOURCE.
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/socket.h>
#include "CFencepostLinux.h"

_Static_assert(sizeof(struct cfl_ucred) == sizeof(struct ucred), "struct ucred layout");

int cfl_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags) { return accept4(fd, addr, addrlen, flags); }
int cfl_posix_openpt(int flags) { return posix_openpt(flags); }
int cfl_grantpt(int fd) { return grantpt(fd); }
int cfl_unlockpt(int fd) { return unlockpt(fd); }
int cfl_ptsname_r(int fd, char *buf, size_t buflen) { return ptsname_r(fd, buf, buflen); }

#include <sys/timex.h>

int cfl_clock_synchronized(void) {
    struct timex tx = {0};
    int state = ntp_adjtime(&tx);
    if (state == -1) return -1;
    return (state != TIME_ERROR && !(tx.status & STA_UNSYNC)) ? 1 : 0;
}

#include <errno.h>
#include <fcntl.h>

int cfl_lock_whole_file(int fd, int *holder) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    *holder = 0;
    if (fcntl(fd, F_SETLK, &lock) == 0) return 0;
    int saved = errno;
    if (saved == EACCES || saved == EAGAIN) {
        struct flock probe = {0};
        probe.l_type = F_WRLCK;
        probe.l_whence = SEEK_SET;
        if (fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK) *holder = probe.l_pid;
    }
    errno = saved;
    return -1;
}

#include <malloc.h>

int cfl_malloc_trim(void) { return malloc_trim(0); }
int cfl_malloc_one_arena(void) { return mallopt(M_ARENA_MAX, 1); }
int cfl_write_out_range(int fd, long long offset, long long count) {
    return sync_file_range(fd, (off_t)offset, (off_t)count,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}

#include <spawn.h>

int cfl_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
