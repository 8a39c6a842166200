#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| vulkan::fuzzing::looks_file(data));
