#version 450
// vk-compute's kernel: every element becomes value * value + 1 (32-bit, wrapping), in place.
// square.comp.spv beside this file is its SPIR-V, produced once with glslang (Debian glslang-tools
// 12.0.0) and committed so that building needs no shader compiler:
//   glslangValidator -V --target-env vulkan1.0 -o square.comp.spv square.comp

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Values {
    uint values[];
};

layout(push_constant) uniform Params {
    uint count;
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < count) {
        values[i] = values[i] * values[i] + 1u;
    }
}
