// Shims for the Embedded Swift build (and harmless in the normal one): C's errno is a macro and
// open/fcntl are variadic, which Embedded Swift cannot use; CommandLine is not in its stdlib.
// `_swift_stdlib_strtod_clocale` is what Embedded Swift's `Double(String)` calls; the normal
// stdlib brings its own, so it is compiled only with FENCEPOST_EMBEDDED (board/toolset-*.json).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdint.h>
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

// The BridgeObject retain of the Embedded runtime, corrected (64-bit targets: 32-bit ones have no
// BridgeObject words). The compiler treats `swift_bridgeObjectRetain(x)` as returning `x` itself
// and may use the result in place of its argument, as the normal runtime promises. This
// toolchain's Embedded runtime returns the pointer with its tag bits masked off instead
// (swiftlang/swift#91151 fixes it upstream): a small string's second word, 0xE9…74 for
// "GPS input", comes back as 0x89…70, a "large string" whose storage is at address 0x70, and the
// next append to it faults. That happens where the optimiser keeps the result rather than the
// argument (aarch64, where both live in x0), so it shows up or not with unrelated code changes.
// The runtime's definitions are weak; these strong ones replace them in the link. The mask is
// the runtime's BridgeObject-to-plain-object mask on 64-bit Linux: the tag bits 60–62 and the
// low three spare bits off, the immortal bit 63 kept (swift_retain_n ignores such objects).
#if defined(FENCEPOST_EMBEDDED) && UINTPTR_MAX > 0xffffffffu
void *swift_retain_n(void *object, uint32_t n);

void *swift_bridgeObjectRetain_n(void *object, uint32_t n) {
    (void)swift_retain_n((void *)((uintptr_t)object & UINT64_C(0x8ffffffffffffff8)), n);
    return object;
}

void *swift_bridgeObjectRetain(void *object) { return swift_bridgeObjectRetain_n(object, 1); }

int cfl_bridge_object_retain_keeps_bits(void) {
    // A small ASCII string's second word ("GPS input"): tagged, immortal, nothing to count.
    void *word = (void *)(uintptr_t)UINT64_C(0xe900000000000074);
    return swift_bridgeObjectRetain(word) == word;
}
#else
int cfl_bridge_object_retain_keeps_bits(void) { return 1; }
#endif
