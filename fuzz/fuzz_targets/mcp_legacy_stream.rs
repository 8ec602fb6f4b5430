#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hrns_core::fuzzing::mcp_legacy_stream(data);
});
