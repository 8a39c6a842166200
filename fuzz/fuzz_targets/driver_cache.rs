#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vulkan::fuzzing::driver_cache(data));
