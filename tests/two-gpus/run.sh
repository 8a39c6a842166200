#!/bin/bash
# Issue 28 (parts 1, 2, 4): ours against the Khronos loader 1.4.360 (built from source) and
# Debian's 1.3.239 on a machine with two identical GPUs.
for f in .gl/*.deb; do dpkg -x $f /; done
mkdir -p /tmp/x; for f in .gl2/*.deb; do dpkg -x $f /tmp/x; done; cp -a /tmp/x/usr/lib/x86_64-linux-gnu/. /usr/lib/x86_64-linux-gnu/; cp /tmp/x/usr/bin/vulkaninfo /usr/local/bin/; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
cd .devbench; nvidia-smi -L
OURS=$PWD/libvulkan.so; KH=$PWD/libvulkan-khronos-1.4.360.so; SYS=/usr/lib/x86_64-linux-gnu/libvulkan.so.1
for L in OURS KH; do mkdir -p /tmp/lib-$L; eval ln -sf \$$L /tmp/lib-$L/libvulkan.so.1; ln -sf libvulkan.so.1 /tmp/lib-$L/libvulkan.so; done
mkdir -p /tmp/s0/vulkan/loader_settings.d /tmp/s1/vulkan/loader_settings.d
./gpus $OURS settings-for 0 /tmp/s0/vulkan/loader_settings.d/vk_loader_settings.json > /dev/null
./gpus $OURS settings-for 1 /tmp/s1/vulkan/loader_settings.d/vk_loader_settings.json > /dev/null
case_() { name=$1; shift; echo "== $name ($*)"; for L in OURS KH SYS; do eval lib=\$$L; env "$@" ./gpus $lib > /tmp/$L.txt 2>/dev/null; done
  cat /tmp/OURS.txt; if diff /tmp/OURS.txt /tmp/KH.txt > /tmp/d.txt; then echo "RESULT $name: ours = khronos 1.4.360"; else echo "RESULT $name: DIFFERS from khronos 1.4.360"; cat /tmp/d.txt; fi
  if diff -q /tmp/OURS.txt /tmp/SYS.txt > /dev/null; then echo "  (= debian 1.3.239)"; else echo "  debian 1.3.239:"; sed 's/^/    /' /tmp/SYS.txt; fi; }
case_ plain X=1
case_ device-select VK_LOADER_DEVICE_SELECT=10de:2330
case_ device-id-filter VK_LOADER_DEVICE_ID_FILTER=0x2330
case_ vendor-filter VK_LOADER_VENDOR_ID_FILTER=0x10de
case_ other-vendor-filter VK_LOADER_VENDOR_ID_FILTER=0x1002
case_ other-device-filter VK_LOADER_DEVICE_ID_FILTER=0x1234
case_ settings-gpu0 XDG_CONFIG_HOME=/tmp/s0
case_ settings-gpu1 XDG_CONFIG_HOME=/tmp/s1
echo "== vulkaninfo"
for L in OURS KH; do for g in 0 1; do (rm -rf /tmp/vi-$L-$g && mkdir /tmp/vi-$L-$g && cd /tmp/vi-$L-$g && LD_LIBRARY_PATH=/tmp/lib-$L vulkaninfo --json=$g > /dev/null 2>&1; ls); done
  LD_LIBRARY_PATH=/tmp/lib-$L vulkaninfo 2>/dev/null | awk '/^Instance Extensions/{skip=1} /^Layers:/{skip=0} !skip' | grep -v "^Vulkan Instance Version" > /tmp/vi-$L.txt; done
for g in 0 1; do if cmp -s /tmp/vi-OURS-$g/*.json /tmp/vi-KH-$g/*.json; then echo "RESULT vulkaninfo --json=$g: identical"; else echo "RESULT vulkaninfo --json=$g: differs"; fi; done
if cmp -s /tmp/vi-OURS-0/*.json /tmp/vi-OURS-1/*.json; then echo "(the two GPUs' profiles are identical)"; else echo "(the two GPUs' profiles differ: $(diff /tmp/vi-OURS-0/*.json /tmp/vi-OURS-1/*.json | grep -c '^<') lines)"; fi
if diff /tmp/vi-OURS.txt /tmp/vi-KH.txt > /tmp/vid.txt; then echo "RESULT vulkaninfo text (instance version and instance extensions left out): identical ($(wc -l < /tmp/vi-OURS.txt) lines)"; else echo "RESULT vulkaninfo text: differs"; head -30 /tmp/vid.txt; fi
echo "== compute on each GPU through ours"
for g in 0 1; do echo "-- settings naming GPU $g"; cat /tmp/s$g/vulkan/loader_settings.d/vk_loader_settings.json | head -c 300; echo; XDG_CONFIG_HOME=/tmp/s$g LD_LIBRARY_PATH=/tmp/lib-OURS ./vk-compute 1048576 3 | grep -E "physical devices|running on|PASS|FAIL|uuid|UUID|pci|PCI"; done
echo "== driver cache, warm, two GPUs"
XDG_CACHE_HOME=/tmp/vc ./gpus $OURS > /tmp/cold.txt; XDG_CACHE_HOME=/tmp/vc VK_LOADER_DEBUG=driver ./gpus $OURS > /tmp/warm.txt 2> /tmp/warm.err; diff /tmp/cold.txt /tmp/warm.txt && echo "RESULT warm cache: same devices and groups"; grep -i "cache" /tmp/warm.err | head -3
XDG_CACHE_HOME=/tmp/vc ./loader-bench child startup-pre-instance $OURS
