/* A browser GPU process: Vulkan is initialized, then a seccomp filter like Chromium's baseline
 * policy is engaged, and Vulkan keeps being called. The filter kills the process (SIGSYS) on
 * inotify and fanotify, and fails file system writes with EPERM.
 *
 * usage: sandboxed_gpu_process [ROUNDS]   (rounds after the sandbox; 30 by default)
 * stdout: one line per round, the same for any loader over the same driver, then "rounds: N".
 * stderr: "loader: <path>", the libvulkan that answered. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

/* Chromium creates its instance once before the sandbox. A short start also leaves what a loader
 * begins only after some calls (file system watches) to happen inside the sandbox. */
#define ROUNDS_BEFORE_SANDBOX 1
#define MAX_DEVICES 8

static void check(VkResult result, const char *call, int round) {
    if (result != VK_SUCCESS) {
        fprintf(stderr, "round %d: %s failed: VkResult %d\n", round, call, result);
        exit(1);
    }
}

static void engage_sandbox(void) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        fprintf(stderr, "seccomp_init failed\n");
        exit(2);
    }
    const int killed[] = { SCMP_SYS(inotify_init), SCMP_SYS(inotify_init1), SCMP_SYS(inotify_add_watch),
                           SCMP_SYS(inotify_rm_watch), SCMP_SYS(fanotify_init) };
    const int refused[] = { SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rename), SCMP_SYS(renameat),
                            SCMP_SYS(renameat2), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rmdir),
                            SCMP_SYS(creat) };
    const int write_flags[] = { O_WRONLY, O_RDWR, O_CREAT };
    int rc = 0;
    for (size_t i = 0; i < sizeof killed / sizeof *killed; i++)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, killed[i], 0);
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
    /* Opens for writing: rules of one action and syscall are or-ed, one per flag. */
    for (size_t i = 0; i < sizeof write_flags / sizeof *write_flags; i++) {
        unsigned flag = write_flags[i];
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
    }
    if (rc != 0 || seccomp_load(ctx) != 0) {
        fprintf(stderr, "cannot engage the seccomp filter\n");
        exit(2);
    }
    seccomp_release(ctx);
}

/* Entries of a /proc/self directory, "." and ".." (and the listing's own descriptor) left out. */
static int entries_of(const char *path) {
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir));)
        n += e->d_name[0] != '.';
    closedir(dir);
    return n;
}

static void round_of_calls(int round) {
    uint32_t extension_count = 0;
    check(vkEnumerateInstanceExtensionProperties(NULL, &extension_count, NULL), "vkEnumerateInstanceExtensionProperties", round);
    VkExtensionProperties *extensions = calloc(extension_count, sizeof *extensions);
    uint32_t filled = extension_count;
    check(vkEnumerateInstanceExtensionProperties(NULL, &filled, extensions), "vkEnumerateInstanceExtensionProperties", round);
    free(extensions);
    if (filled != extension_count) {
        fprintf(stderr, "round %d: %u instance extensions counted, %u filled\n", round, extension_count, filled);
        exit(1);
    }

    uint32_t layer_count = 0;
    check(vkEnumerateInstanceLayerProperties(&layer_count, NULL), "vkEnumerateInstanceLayerProperties", round);

    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "gpu-process",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo instance_info = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkInstance instance;
    check(vkCreateInstance(&instance_info, NULL, &instance), "vkCreateInstance", round);

    uint32_t device_count = 0;
    check(vkEnumeratePhysicalDevices(instance, &device_count, NULL), "vkEnumeratePhysicalDevices", round);
    VkPhysicalDevice devices[MAX_DEVICES];
    uint32_t listed = device_count < MAX_DEVICES ? device_count : MAX_DEVICES;
    VkResult listing = vkEnumeratePhysicalDevices(instance, &listed, devices);
    if (listing != VK_INCOMPLETE)
        check(listing, "vkEnumeratePhysicalDevices", round);
    if (listed == 0) {
        fprintf(stderr, "round %d: no physical device\n", round);
        exit(1);
    }

    printf("round %d: instance extensions %u, layers %u, devices %u:", round, extension_count, layer_count, device_count);
    for (uint32_t i = 0; i < listed; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devices[i], &p);
        printf(" [%s, api %u.%u.%u, driver 0x%x, %04x:%04x]", p.deviceName, VK_API_VERSION_MAJOR(p.apiVersion),
               VK_API_VERSION_MINOR(p.apiVersion), VK_API_VERSION_PATCH(p.apiVersion), p.driverVersion, p.vendorID,
               p.deviceID);
    }

    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0,
                                      .queueCount = 1, .pQueuePriorities = &priority };
    VkDeviceCreateInfo device_info = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                                       .pQueueCreateInfos = &queue };
    VkDevice device;
    check(vkCreateDevice(devices[0], &device_info, NULL, &device), "vkCreateDevice", round);
    printf(", device created");
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    /* Between calls: the threads and descriptors the process holds, which the loader's own (a
     * watcher's thread, a descriptor kept open) would add to. */
    printf(", then threads %d, descriptors %d\n", entries_of("/proc/self/task"), entries_of("/proc/self/fd") - 1);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    /* Line-buffered: the rounds done before a kill still reach the pipe. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    Dl_info info;
    char loader[PATH_MAX];
    if (dladdr((void *)vkCreateInstance, &info) && info.dli_fname && realpath(info.dli_fname, loader))
        fprintf(stderr, "loader: %s\n", loader);

    for (int i = 1; i <= ROUNDS_BEFORE_SANDBOX; i++)
        round_of_calls(i);
    engage_sandbox();
    printf("sandbox engaged\n");
    for (int i = 1; i <= rounds; i++)
        round_of_calls(ROUNDS_BEFORE_SANDBOX + i);
    printf("rounds: %d\n", rounds);
    return 0;
}
