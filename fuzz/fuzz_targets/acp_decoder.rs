#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hrns_core::fuzzing::acp_decoder(data);
});
