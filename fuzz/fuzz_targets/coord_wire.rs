#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simrob_fuzz::coord_wire(data));
