/* Test interposer: FAKE_PHYS_PAGES=N makes sysconf(_SC_PHYS_PAGES) answer N;
 * FAKE_UDMABUF=1 makes open("/dev/udmabuf") open /dev/null instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
long sysconf(int name) {
    static long (*real)(int); if (!real) real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    const char *f = getenv("FAKE_PHYS_PAGES");
    if (name == _SC_PHYS_PAGES && f) return atol(f);
    return real(name);
}
static const char *swap(const char *p) { return (p && !strcmp(p, "/dev/udmabuf") && getenv("FAKE_UDMABUF")) ? "/dev/null" : p; }
int open(const char *p, int fl, ...) {
    static int (*real)(const char *, int, ...); if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list ap; va_start(ap, fl); int mode = va_arg(ap, int); va_end(ap);
    return real(swap(p), fl, mode);
}
int open64(const char *p, int fl, ...) {
    static int (*real)(const char *, int, ...); if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    va_list ap; va_start(ap, fl); int mode = va_arg(ap, int); va_end(ap);
    return real(swap(p), fl, mode);
}
