/* Loads one ICD library directly (no loader), and asks it what the driver cache records,
 * phase by phase. Each phase is marked in an strace of %file as access("/@probe/PHASE")
 * and in a getenv log as getenv("@probe:PHASE").
 * usage: icd-probe /path/to/libvulkan_driver.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>
static unsigned long long H[8];
static const char *HN[8] = {"properties","features","memory","queues","extensions","formats","instance","count"};
static void hash(int k, const void *p, size_t n) { const unsigned char *b = p; unsigned long long h = H[k] ? H[k] : 1469598103934665603ULL; for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ULL; } H[k] = h; }
#define HB(k, s) hash(k, (const char *)&(s) + 16, sizeof(s) - 16)
static void phase(const char *p) {
    char path[128]; snprintf(path, sizeof path, "/@probe/%s", p);
    access(path, F_OK);
    snprintf(path, sizeof path, "@probe:%s", p);
    getenv(path);
    fprintf(stderr, "== %s\n", p);
}
typedef VkResult (*Negotiate)(uint32_t *);
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s ICD.so\n", argv[0]); return 2; }
    phase("load");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
    phase("pre-instance");
    Negotiate negotiate = (Negotiate)dlsym(lib, "vk_icdNegotiateLoaderICDInterfaceVersion");
    uint32_t iv = 5; if (negotiate) negotiate(&iv);
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vk_icdGetInstanceProcAddr");
    if (!gipa) { fprintf(stderr, "no vk_icdGetInstanceProcAddr\n"); return 1; }
#define G(inst, name) PFN_##name p_##name = (PFN_##name)gipa(inst, #name)
    G(NULL, vkEnumerateInstanceVersion);
    G(NULL, vkEnumerateInstanceExtensionProperties);
    G(NULL, vkCreateInstance);
    uint32_t version = VK_API_VERSION_1_0;
    if (p_vkEnumerateInstanceVersion) p_vkEnumerateInstanceVersion(&version);
    uint32_t n = 0;
    p_vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
    VkExtensionProperties *ext = calloc(n + 1, sizeof *ext);
    p_vkEnumerateInstanceExtensionProperties(NULL, &n, ext);
    hash(6, &version, 4); hash(6, ext, n * sizeof *ext);
    fprintf(stderr, "interface %u, version %u.%u.%u, %u instance extensions\n", iv, VK_VERSION_MAJOR(version), VK_VERSION_MINOR(version), VK_VERSION_PATCH(version), n);
    phase("create-instance");
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "icd-probe", 1, "icd-probe", 1, version >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0 };
    const char *want[] = { "VK_KHR_get_physical_device_properties2" };
    int has2 = 0; for (uint32_t i = 0; i < n; i++) if (!strcmp(ext[i].extensionName, want[0])) has2 = 1;
    VkInstanceCreateInfo ci = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, has2 ? 1u : 0u, want };
    VkInstance inst;
    VkResult r = p_vkCreateInstance(&ci, NULL, &inst);
    if (r) { fprintf(stderr, "vkCreateInstance: %d\n", r); return 1; }
    phase("enumerate");
    G(inst, vkEnumeratePhysicalDevices);
    G(inst, vkEnumeratePhysicalDeviceGroups);
    uint32_t count = 0;
    p_vkEnumeratePhysicalDevices(inst, &count, NULL);
    VkPhysicalDevice *pd = calloc(count + 1, sizeof *pd);
    p_vkEnumeratePhysicalDevices(inst, &count, pd);
    uint32_t groups = 0;
    if (p_vkEnumeratePhysicalDeviceGroups) p_vkEnumeratePhysicalDeviceGroups(inst, &groups, NULL);
    hash(7, &count, 4);
    fprintf(stderr, "%u physical devices, %u groups\n", count, groups);
    phase("properties");
    G(inst, vkGetPhysicalDeviceProperties2);
    G(inst, vkGetPhysicalDeviceFeatures2);
    G(inst, vkGetPhysicalDeviceMemoryProperties2);
    G(inst, vkGetPhysicalDeviceQueueFamilyProperties2);
    G(inst, vkGetPhysicalDeviceFormatProperties2);
    G(inst, vkEnumerateDeviceExtensionProperties);
    G(inst, vkGetPhysicalDeviceProperties);
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceVulkan13Properties v13 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES };
        VkPhysicalDeviceVulkan12Properties v12 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES, version >= VK_API_VERSION_1_3 ? &v13 : NULL };
        VkPhysicalDeviceVulkan11Properties v11 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &v12 };
        VkPhysicalDeviceDriverProperties drv = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, version >= VK_API_VERSION_1_2 ? &v11 : NULL };
        VkPhysicalDeviceProperties2 p2 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv };
        if (p_vkGetPhysicalDeviceProperties2) p_vkGetPhysicalDeviceProperties2(pd[i], &p2);
        else p_vkGetPhysicalDeviceProperties(pd[i], &p2.properties);
        HB(0, p2); HB(0, drv); HB(0, v11); HB(0, v12); HB(0, v13);
        fprintf(stderr, "device %u: %s (%04x:%04x) %s %s\n", i, p2.properties.deviceName, p2.properties.vendorID, p2.properties.deviceID, drv.driverName, drv.driverInfo);
        if (p_vkGetPhysicalDeviceFeatures2) { VkPhysicalDeviceFeatures2 f = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 }; p_vkGetPhysicalDeviceFeatures2(pd[i], &f); HB(1, f); }
        if (p_vkGetPhysicalDeviceMemoryProperties2) { VkPhysicalDeviceMemoryProperties2 m = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 }; p_vkGetPhysicalDeviceMemoryProperties2(pd[i], &m); HB(2, m); }
        if (p_vkGetPhysicalDeviceQueueFamilyProperties2) {
            uint32_t q = 0; p_vkGetPhysicalDeviceQueueFamilyProperties2(pd[i], &q, NULL);
            VkQueueFamilyProperties2 *qs = calloc(q + 1, sizeof *qs);
            for (uint32_t j = 0; j < q; j++) qs[j].sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2;
            p_vkGetPhysicalDeviceQueueFamilyProperties2(pd[i], &q, qs); for (uint32_t j = 0; j < q; j++) HB(3, qs[j]); free(qs);
        }
        uint32_t e = 0; p_vkEnumerateDeviceExtensionProperties(pd[i], NULL, &e, NULL);
        VkExtensionProperties *de = calloc(e + 1, sizeof *de); p_vkEnumerateDeviceExtensionProperties(pd[i], NULL, &e, de); hash(4, de, e * sizeof *de); free(de);
        if (p_vkGetPhysicalDeviceFormatProperties2)
            for (int f = 0; f <= VK_FORMAT_ASTC_12x12_SRGB_BLOCK; f++) { VkFormatProperties2 fp = { VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2 }; p_vkGetPhysicalDeviceFormatProperties2(pd[i], (VkFormat)f, &fp); HB(5, fp); }
    }
    phase("destroy");
    G(inst, vkDestroyInstance);
    p_vkDestroyInstance(inst, NULL);
    phase("end");
    for (int k = 0; k < 8; k++) printf("%s %016llx\n", HN[k], H[k]);
    return 0;
}
