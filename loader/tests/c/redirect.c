/* An LD_PRELOAD interposer of the kind sandboxes, fakechroot and the Khronos loader's test shim
 * are: paths under /vk-virtual/ exist only through it, served from the directory named by
 * REDIRECT_TO, for opendir, fopen and dlopen; what is written to stderr through fputs and fputc
 * is copied to the file named by REDIRECT_STDERR_COPY. A loader that reaches the file system
 * past these entry points (stat, open, getdents) cannot see the virtual files. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PREFIX[] = "/vk-virtual/";

/* The real path behind a virtual one, written to buf; any other path unchanged. */
static const char *redirect(const char *path, char *buf, size_t size) {
    const char *target = getenv("REDIRECT_TO");
    if (path == NULL || target == NULL || strncmp(path, PREFIX, sizeof PREFIX - 1) != 0) return path;
    snprintf(buf, size, "%s/%s", target, path + sizeof PREFIX - 1);
    return buf;
}

DIR *opendir(const char *path) {
    static DIR *(*real)(const char *);
    if (real == NULL) real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
    char buf[4096];
    return real(redirect(path, buf, sizeof buf));
}

FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *);
    if (real == NULL) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    char buf[4096];
    return real(redirect(path, buf, sizeof buf), mode);
}

void *dlopen(const char *path, int flags) {
    static void *(*real)(const char *, int);
    if (real == NULL) real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    char buf[4096];
    return real(redirect(path, buf, sizeof buf), flags);
}

static void copy_stderr(const char *text, size_t len) {
    static FILE *(*real_fopen)(const char *, const char *);
    if (real_fopen == NULL) real_fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    const char *copy = getenv("REDIRECT_STDERR_COPY");
    if (copy == NULL) return;
    FILE *file = real_fopen(copy, "a");
    if (file == NULL) return;
    fwrite(text, 1, len, file);
    fclose(file);
}

int fputs(const char *text, FILE *stream) {
    static int (*real)(const char *, FILE *);
    if (real == NULL) real = (int (*)(const char *, FILE *))dlsym(RTLD_NEXT, "fputs");
    if (stream == stderr) copy_stderr(text, strlen(text));
    return real(text, stream);
}

int fputc(int c, FILE *stream) {
    static int (*real)(int, FILE *);
    if (real == NULL) real = (int (*)(int, FILE *))dlsym(RTLD_NEXT, "fputc");
    if (stream == stderr) {
        char ch = (char)c;
        copy_stderr(&ch, 1);
    }
    return real(c, stream);
}
