/* Preloaded into a process whose library deletes a log the test must read: unlink() of the path
 * named by KEEP_FILE succeeds without removing it; every other path goes to libc's unlink.
 * (RenderDoc deletes its log file when its library unloads and no capture was made.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

int unlink(const char *path) {
    const char *keep = getenv("KEEP_FILE");
    if (keep && path && strcmp(path, keep) == 0)
        return 0;
    int (*next)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    return next(path);
}
