// gpus <libvulkan> [settings-for N FILE | device N]: the physical devices and groups an application
// sees through one loader (name, ids, UUIDs, PCI bus), one line each; with settings-for, writes a
// loader settings file whose device_configurations name device N only; with device, counts the GPU
// device files open, creates a device on device N (where a lazy driver is loaded), reads its UUID
// and PCI bus again and says whether they are the ones listed before (MATCH).
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
static int gpu_files(void) {
  int k = 0; DIR *d = opendir("/proc/self/fd"); struct dirent *e; char path[64], target[256];
  while (d && (e = readdir(d))) {
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0) { target[len] = 0; if (!strncmp(target, "/dev/nvidia", 11) || !strncmp(target, "/dev/dri", 8)) k++; }
  }
  if (d) closedir(d);
  return k;
}
static void uuid(char *out, const uint8_t *u) { for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", u[i]); }
int main(int argc, char **argv) {
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { printf("DLOPEN_FAILED %s\n", dlerror()); return 1; }
  PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
  PFN_vkCreateInstance ci = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
  VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO, 0, "gpus", 1, "gpus", 1, VK_API_VERSION_1_3};
  VkInstanceCreateInfo ii = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, 0, 0, &ai, 0, 0, 0, 0};
  VkInstance inst;
  VkResult r = ci(&ii, 0, &inst);
  printf("CREATE %d\n", r);
  if (r) return 0;
  PFN_vkEnumeratePhysicalDevices epd = (PFN_vkEnumeratePhysicalDevices)gipa(inst, "vkEnumeratePhysicalDevices");
  PFN_vkGetPhysicalDeviceProperties2 gp2 = (PFN_vkGetPhysicalDeviceProperties2)gipa(inst, "vkGetPhysicalDeviceProperties2");
  PFN_vkEnumeratePhysicalDeviceGroups epg = (PFN_vkEnumeratePhysicalDeviceGroups)gipa(inst, "vkEnumeratePhysicalDeviceGroups");
  uint32_t n = 0; epd(inst, &n, 0);
  VkPhysicalDevice pds[16]; if (n > 16) n = 16; epd(inst, &n, pds);
  printf("DEVICES %u\n", n);
  char uuids[16][33], pcis[16][32];
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceDriverProperties drv = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &pci};
    VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &drv};
    VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    gp2(pds[i], &p);
    char du[33], dr[33]; uuid(du, id.deviceUUID); uuid(dr, id.driverUUID); strcpy(uuids[i], du);
    snprintf(pcis[i], sizeof pcis[i], "%04x:%02x:%02x.%u", pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);
    printf("DEVICE %u %s %04x:%04x driver %u uuid %s pci %04x:%02x:%02x.%u\n", i, p.properties.deviceName, p.properties.vendorID, p.properties.deviceID,
           p.properties.driverVersion, du, pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);
    if (argc == 5 && !strcmp(argv[2], "settings-for") && (uint32_t)atoi(argv[3]) == i) {
      FILE *f = fopen(argv[4], "w");
      fprintf(f, "{\"file_format_version\": \"1.0.0\", \"settings_array\": [{\"device_configurations\": [{\"deviceUUID\": [");
      for (int k = 0; k < 16; k++) fprintf(f, "%s%u", k ? ", " : "", id.deviceUUID[k]);
      fprintf(f, "], \"driverUUID\": [");
      for (int k = 0; k < 16; k++) fprintf(f, "%s%u", k ? ", " : "", id.driverUUID[k]);
      fprintf(f, "], \"driverVersion\": %u, \"deviceName\": \"%s\", \"driverName\": \"%s\"}]}]}\n", p.properties.driverVersion, p.properties.deviceName, drv.driverName);
      fclose(f);
    }
  }
  uint32_t g = 0; epg(inst, &g, 0);
  VkPhysicalDeviceGroupProperties gs[16]; if (g > 16) g = 16;
  for (uint32_t i = 0; i < g; i++) { gs[i].sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_GROUP_PROPERTIES; gs[i].pNext = 0; }
  epg(inst, &g, gs);
  printf("GROUPS %u\n", g);
  for (uint32_t i = 0; i < g; i++) {
    printf("GROUP %u size %u subset %u:", i, gs[i].physicalDeviceCount, gs[i].subsetAllocation);
    for (uint32_t k = 0; k < gs[i].physicalDeviceCount; k++) {
      int idx = -1; for (uint32_t j = 0; j < n; j++) if (pds[j] == gs[i].physicalDevices[k]) idx = j;
      printf(" %d", idx);
    }
    printf("\n");
  }
  if (argc == 4 && !strcmp(argv[2], "device") && (uint32_t)atoi(argv[3]) < n) {
    uint32_t i = (uint32_t)atoi(argv[3]);
    printf("GPU_FILES before vkCreateDevice %d\n", gpu_files());
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, 0, 1, &priority};
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, 0, 0, 1, &q, 0, 0, 0, 0, 0};
    VkDevice dev;
    PFN_vkCreateDevice cd = (PFN_vkCreateDevice)gipa(inst, "vkCreateDevice");
    r = cd(pds[i], &dci, 0, &dev);
    printf("CREATE_DEVICE %u %d\n", i, r);
    if (!r) ((PFN_vkDestroyDevice)gipa(inst, "vkDestroyDevice"))(dev, 0);
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &pci};
    VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    gp2(pds[i], &p);
    char du[33], dp[32]; uuid(du, id.deviceUUID);
    snprintf(dp, sizeof dp, "%04x:%02x:%02x.%u", pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);
    printf("LIVE %u uuid %s pci %s\n", i, du, dp);
    printf("MATCH %s\n", !strcmp(du, uuids[i]) && !strcmp(dp, pcis[i]) ? "yes" : "no");
    printf("GPU_FILES after vkCreateDevice %d\n", gpu_files());
  }
  PFN_vkDestroyInstance di = (PFN_vkDestroyInstance)gipa(inst, "vkDestroyInstance");
  di(inst, 0);
  return 0;
}
