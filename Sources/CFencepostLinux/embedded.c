// Shims for the Embedded Swift build (and harmless in the normal one): C's errno is a macro and
// open/fcntl are variadic, which Embedded Swift cannot use; CommandLine is not in its stdlib.
// `_swift_stdlib_strtod_clocale` is what Embedded Swift's `Double(String)` calls; the normal
// stdlib brings its own, so it is compiled only with FENCEPOST_EMBEDDED (board/toolset-*.json).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdlib.h>
#include "CFencepostLinux.h"

int cfl_errno(void) { return errno; }
void cfl_set_errno(int value) { errno = value; }
int cfl_open(const char *path, int flags, unsigned int mode) { return open(path, flags, (mode_t)mode); }
int cfl_fcntl(int fd, int command, int argument) { return fcntl(fd, command, argument); }

static int saved_argc;
static char **saved_argv;

// glibc calls the constructors in .init_array with (argc, argv, envp).
__attribute__((constructor)) static void cfl_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

int cfl_argc(void) { return saved_argc; }
char **cfl_argv(void) { return saved_argv; }

#ifdef FENCEPOST_EMBEDDED
// Parses a double in the C locale; returns where parsing stopped (NULL when nothing was read).
const char *_swift_stdlib_strtod_clocale(const char *nptr, double *outResult) {
    static locale_t c_locale;
    if (!c_locale) c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    char *end = 0;
    *outResult = strtod_l(nptr, &end, c_locale);
    return end == nptr ? 0 : end;
}
#endif
