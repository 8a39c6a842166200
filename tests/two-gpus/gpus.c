// gpus <libvulkan> [settings-for N FILE]: the physical devices and groups an application sees
// through one loader (name, ids, UUIDs, PCI bus), one line each; with settings-for, writes a
// loader settings file whose device_configurations name device N only.
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  char uuids[16][33];
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceDriverProperties drv = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &pci};
    VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &drv};
    VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    gp2(pds[i], &p);
    char du[33], dr[33]; uuid(du, id.deviceUUID); uuid(dr, id.driverUUID); strcpy(uuids[i], du);
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
  PFN_vkDestroyInstance di = (PFN_vkDestroyInstance)gipa(inst, "vkDestroyInstance");
  di(inst, 0);
  return 0;
}
