#!/bin/bash
# Issue 24 (the H100 targets) and issue 28 part 3: lazy drivers with NVIDIA's driver, two H100s.
# Run from the repository root on the device machine, carrying .gl, .gl2 and .devbench (see run.sh);
# wait two seconds after unpacking: the driver cache trusts no file modified in the last two
# seconds (ldconfig has just rewritten /etc/ld.so.cache, which NVIDIA's bare library name depends on).
for f in .gl/*.deb; do dpkg -x $f /; done
mkdir -p /tmp/x; for f in .gl2/*.deb; do dpkg -x $f /tmp/x; done; cp -a /tmp/x/usr/lib/x86_64-linux-gnu/. /usr/lib/x86_64-linux-gnu/; cp /tmp/x/usr/bin/vulkaninfo /usr/local/bin/; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
sleep 3
cd .devbench; nvidia-smi -L
OURS=$PWD/libvulkan.so; KH=$PWD/libvulkan-khronos-1.4.360.so
mkdir -p /tmp/lib-OURS; ln -sf $OURS /tmp/lib-OURS/libvulkan.so.1; ln -sf libvulkan.so.1 /tmp/lib-OURS/libvulkan.so
lazy() { grep -E "not loaded: |never loaded: |loaded at |could not be loaded" "$1" | grep -v "answered from the driver cache (recorded"; }
export XDG_CACHE_HOME=/tmp/lz
echo "== the start-up probe (create, enumerate, properties2 + ID, queue families, memory, destroy): cold, then warm"
# The first process records the driver, the second its physical devices' answers, the third is lazy.
./loader-bench child startup-properties $OURS; ./loader-bench child startup-properties $OURS
VK_LOADER_DEBUG=driver ./loader-bench child startup-properties $OURS 2> /tmp/warm.err; lazy /tmp/warm.err
echo "== then in other processes on the same warm cache: a checked compute dispatch (vk-compute's first two runs record the driver and its own answers: LD_LIBRARY_PATH, set for it, is part of the key)"
for run in 1 2; do LD_LIBRARY_PATH=/tmp/lib-OURS ./vk-compute 1048576 3 | grep -E "PASS|FAIL"; done
LD_LIBRARY_PATH=/tmp/lib-OURS VK_LOADER_DEBUG=driver ./vk-compute 1048576 3 2> /tmp/c.err | grep -E "running on|PASS|FAIL"; lazy /tmp/c.err
echo "== two GPUs: each device created in its own process on a warm cache, its identity read again from the live driver"
./gpus $OURS > /tmp/g-cold.txt
for g in 0 1; do VK_LOADER_DEBUG=driver ./gpus $OURS device $g > /tmp/g$g.txt 2> /tmp/g$g.err; grep -E "^DEVICE |CREATE_DEVICE|LIVE|MATCH|GPU_FILES" /tmp/g$g.txt; lazy /tmp/g$g.err; done
diff <(grep -E "^DEVICE |^GROUP" /tmp/g-cold.txt) <(grep -E "^DEVICE |^GROUP" /tmp/g1.txt) && echo "RESULT warm devices and groups = cold ones"
echo "== vulkaninfo (text, --json) with the cache off, cold, warm, verify"
vi() { rm -rf /tmp/vi-$1 && mkdir -p /tmp/vi-$1 && cd /tmp/vi-$1 && LD_LIBRARY_PATH=/tmp/lib-OURS VK_LOADER_DRIVER_CACHE=$2 vulkaninfo 2>/dev/null > text.txt; LD_LIBRARY_PATH=/tmp/lib-OURS VK_LOADER_DRIVER_CACHE=$2 vulkaninfo --json=0 > /dev/null 2>&1; cd - > /dev/null; }
export XDG_CACHE_HOME=/tmp/vic; vi off off; vi cold on; vi warm on; vi verify verify
for m in cold warm verify; do if diff -r /tmp/vi-off /tmp/vi-$m > /dev/null; then echo "RESULT vulkaninfo $m = off ($(wc -l < /tmp/vi-$m/text.txt) lines, $(ls /tmp/vi-$m | tr '\n' ' '))"; else echo "RESULT vulkaninfo $m DIFFERS"; diff -r /tmp/vi-off /tmp/vi-$m | head -20; fi; done
export XDG_CACHE_HOME=/tmp/lz
echo "== bench startup"
./loader-bench startup --khronos $KH --json $OUT/startup.json
