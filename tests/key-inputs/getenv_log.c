/* LD_PRELOAD getenv logger: every getenv/secure_getenv call made through the PLT
 * (drivers, LLVM, libdrm...) is written to stderr as "getenv NAME" or
 * "secure_getenv NAME", with "=set" when the variable exists. Looks the name up in
 * environ itself, so it calls nothing that could call getenv again. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
extern char **environ;
static void say(const char *what, const char *name, int set) {
    char buf[512]; size_t n = 0, w = strlen(what), k = strlen(name);
    if (w + k + 8 > sizeof buf) k = sizeof buf - w - 8;
    memcpy(buf, what, w); n = w; buf[n++] = ' ';
    memcpy(buf + n, name, k); n += k;
    if (set) { memcpy(buf + n, "=set", 4); n += 4; }
    buf[n++] = '\n';
    (void)!write(2, buf, n);
}
static char *lookup(const char *name) {
    size_t k = strlen(name);
    if (!environ) return 0;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, name, k) && (*e)[k] == '=') return *e + k + 1;
    return 0;
}
char *getenv(const char *name) { char *v = lookup(name); say("getenv", name, v != 0); return v; }
char *secure_getenv(const char *name) {
    char *v = getauxval(AT_SECURE) ? 0 : lookup(name); say("secure_getenv", name, v != 0); return v;
}
char *__secure_getenv(const char *name) { return secure_getenv(name); }
