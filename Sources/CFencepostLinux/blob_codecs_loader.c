// SHA-256 (libcrypto) and gzip (zlib) for blobs sent through the fleet's broker, loaded at first
// use (dlopen) as libgps is: a board without a fleet link maps neither. libcrypto is the one
// libmosquitto already maps (OpenSSL 3 on Debian 12, 1.1 on older systems); zlib (Debian
// zlib1g, soname libz.so.1) is on every Debian system. The prototypes are declared here from the
// libraries' stable ABIs (EVP_Digest*, gz*), so no build needs their headers.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include "CFencepostLinux.h"

static struct {
    void *(*md_ctx_new)(void);
    void (*md_ctx_free)(void *);
    const void *(*sha256)(void);
    int (*digest_init_ex)(void *, const void *, void *);
    int (*digest_update)(void *, const void *, size_t);
    int (*digest_final_ex)(void *, unsigned char *, unsigned int *);
} crypto;
static void *crypto_handle;

static struct {
    void *(*open)(const char *, const char *);
    int (*read)(void *, void *, unsigned);
    int (*write)(void *, const void *, unsigned);
    int (*close)(void *);
    int (*direct)(void *);
    const char *(*error)(void *, int *);
} gz;
static void *zlib_handle;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

const char *cfl_crypto_load(void) {
    pthread_mutex_lock(&load_lock);
    const char *why = NULL;
    if (!crypto_handle) {
        const char *names[] = {getenv("FENCEPOST_LIBCRYPTO"), "libcrypto.so.3", "libcrypto.so.1.1"};
        void *h = NULL;
        for (size_t i = 0; i < 3 && !h; i++) {
            if (names[i] && *names[i]) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        }
        if (!h) {
            why = "neither libcrypto.so.3 nor libcrypto.so.1.1 could be loaded (Debian: libssl3)";
        } else {
            crypto.md_ctx_new = (void *(*)(void))dlsym(h, "EVP_MD_CTX_new");
            crypto.md_ctx_free = (void (*)(void *))dlsym(h, "EVP_MD_CTX_free");
            crypto.sha256 = (const void *(*)(void))dlsym(h, "EVP_sha256");
            crypto.digest_init_ex = (int (*)(void *, const void *, void *))dlsym(h, "EVP_DigestInit_ex");
            crypto.digest_update = (int (*)(void *, const void *, size_t))dlsym(h, "EVP_DigestUpdate");
            crypto.digest_final_ex = (int (*)(void *, unsigned char *, unsigned int *))dlsym(h, "EVP_DigestFinal_ex");
            if (!crypto.md_ctx_new || !crypto.md_ctx_free || !crypto.sha256 || !crypto.digest_init_ex
                || !crypto.digest_update || !crypto.digest_final_ex) {
                dlclose(h);
                why = "libcrypto has no EVP_MD_CTX_new, EVP_sha256 or EVP_Digest{Init_ex,Update,Final_ex}";
            } else {
                crypto_handle = h;
            }
        }
    }
    pthread_mutex_unlock(&load_lock);
    return why;
}

void *cfl_sha256_new(void) {
    void *ctx = crypto.md_ctx_new();
    if (ctx && crypto.digest_init_ex(ctx, crypto.sha256(), NULL) != 1) {
        crypto.md_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

int cfl_sha256_update(void *ctx, const void *bytes, size_t count) {
    return crypto.digest_update(ctx, bytes, count) == 1 ? 0 : -1;
}

int cfl_sha256_final(void *ctx, unsigned char *digest32) {
    unsigned int length = 0;
    if (crypto.digest_final_ex(ctx, digest32, &length) != 1 || length != 32) return -1;
    return crypto.digest_init_ex(ctx, crypto.sha256(), NULL) == 1 ? 0 : -1;
}

void cfl_sha256_free(void *ctx) { if (ctx) crypto.md_ctx_free(ctx); }

const char *cfl_zlib_load(void) {
    pthread_mutex_lock(&load_lock);
    const char *why = NULL;
    if (!zlib_handle) {
        const char *override = getenv("FENCEPOST_LIBZ");
        void *h = dlopen(override && *override ? override : "libz.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            why = "libz.so.1 could not be loaded (Debian: zlib1g)";
        } else {
            gz.open = (void *(*)(const char *, const char *))dlsym(h, "gzopen");
            gz.read = (int (*)(void *, void *, unsigned))dlsym(h, "gzread");
            gz.write = (int (*)(void *, const void *, unsigned))dlsym(h, "gzwrite");
            gz.close = (int (*)(void *))dlsym(h, "gzclose");
            gz.direct = (int (*)(void *))dlsym(h, "gzdirect");
            gz.error = (const char *(*)(void *, int *))dlsym(h, "gzerror");
            if (!gz.open || !gz.read || !gz.write || !gz.close || !gz.direct || !gz.error) {
                dlclose(h);
                why = "libz has no gzopen, gzread, gzwrite, gzclose, gzdirect or gzerror";
            } else {
                zlib_handle = h;
            }
        }
    }
    pthread_mutex_unlock(&load_lock);
    return why;
}

void *cfl_gz_open(const char *path, const char *mode) { return gz.open(path, mode); }
int cfl_gz_read(void *file, void *buffer, unsigned count) { return gz.read(file, buffer, count); }
int cfl_gz_write(void *file, const void *buffer, unsigned count) { return gz.write(file, buffer, count); }
int cfl_gz_close(void *file) { return gz.close(file); }
int cfl_gz_direct(void *file) { return gz.direct(file); }
const char *cfl_gz_error(void *file, int *code) { return gz.error(file, code); }
