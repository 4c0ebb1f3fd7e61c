// The Linux headers the Glibc module does not export (epoll, timerfd, signalfd), and shims for
// the few calls and types glibc declares only under _GNU_SOURCE or _XOPEN_SOURCE.
// FencepostLinux is the only user; nothing here has logic.
#ifndef C_FENCEPOST_LINUX_H
#define C_FENCEPOST_LINUX_H

#include <sys/types.h>
#include <sys/socket.h>
// The rest of libc FencepostLinux uses. The normal build gets these through Glibc as well; the
// Embedded Swift build has no Glibc module and sees libc only through this header.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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

/// 1 when this build's `swift_bridgeObjectRetain` returns its argument unchanged, as the compiler
/// assumes (embedded.c replaces the Embedded runtime's, which masks the tag bits off); always 1 in
/// the normal build, whose runtime keeps the promise.
int cfl_bridge_object_retain_keeps_bits(void);

/// 1 when the kernel says the clock is synchronised (NTP: `ntp_adjtime` returns TIME_OK and
/// STA_UNSYNC is clear), 0 when not, -1 with errno on failure.
int cfl_clock_synchronized(void);

/// `malloc_trim(0)`: gives the heap's free pages back to the kernel (malloc.h is not in Glibc's module).
int cfl_malloc_trim(void);
/// `mallopt(M_ARENA_MAX, 1)`: every thread allocates from the main heap.
int cfl_malloc_one_arena(void);

/// `sync_file_range(fd, offset, count, WAIT_BEFORE | WRITE | WAIT_AFTER)`: writes that range of the
/// file to the disk and waits for it (a _GNU_SOURCE call). Returns 0, or -1 with errno.
int cfl_write_out_range(int fd, long long offset, long long count);
/// A write lock on the whole file `fd` (`fcntl(F_SETLK)`, a POSIX record lock, released when the
/// process ends). Returns 0 when taken; else -1 with errno, and when another process holds it
/// (EACCES/EAGAIN) `*holder` is that process's pid (`F_GETLK`), else 0.
int cfl_lock_whole_file(int fd, int *holder);
/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34, _GNU_SOURCE): close every descriptor from
/// `from` on in the child.
int cfl_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

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


/// For the Embedded Swift build, which cannot import C's `errno` macro or call variadic functions:
/// the thread's errno, read and set; `open` with a mode; `fcntl` with an int argument; the
/// process's arguments (saved by a constructor at start, as glibc passes them to it).
int cfl_errno(void);
/// `offsetof(struct sockaddr_un, sun_path)` (a key path in Swift, which Embedded Swift lacks).
static const int cfl_sun_path_offset = __builtin_offsetof(struct sockaddr_un, sun_path);
void cfl_set_errno(int value);
int cfl_open(const char *path, int flags, unsigned int mode);
int cfl_fcntl(int fd, int command, int argument);
int cfl_argc(void);
char **cfl_argv(void);

/// SHA-256 (libcrypto) and gzip files (zlib), loaded at first use (blob_codecs_loader.c). Each
/// `…_load` returns NULL when loaded, else why not; the other calls are valid only after it.
/// `FENCEPOST_LIBCRYPTO` and `FENCEPOST_LIBZ` name other files to load.
const char *cfl_crypto_load(void);
/// An EVP_MD_CTX set up for SHA-256, or NULL.
void *cfl_sha256_new(void);
/// EVP_DigestUpdate; 0 or -1.
int cfl_sha256_update(void *ctx, const void *bytes, size_t count);
/// EVP_DigestFinal_ex into 32 bytes, then EVP_DigestInit_ex again (the context is reusable); 0 or -1.
int cfl_sha256_final(void *ctx, unsigned char *digest32);
void cfl_sha256_free(void *ctx);
const char *cfl_zlib_load(void);
/// gzopen, gzread, gzwrite, gzclose, gzdirect, gzerror.
void *cfl_gz_open(const char *path, const char *mode);
int cfl_gz_read(void *file, void *buffer, unsigned count);
int cfl_gz_write(void *file, const void *buffer, unsigned count);
int cfl_gz_close(void *file);
int cfl_gz_direct(void *file);
const char *cfl_gz_error(void *file, int *code);

#endif
