//! Fuzz target: the frame decoder on arbitrary bodies. It must never panic, and a body that
//! decodes must encode to one that decodes to the same frame.
//!
//! `cargo +nightly fuzz run frame` from `pipes-net/` (see `fuzz/README.md`).

#![no_main]

use bytes::{Bytes, BytesMut};
use pipes_net::frame::Frame;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::decode(Bytes::copy_from_slice(data)) {
        let mut out = BytesMut::new();
        frame
            .encode(usize::MAX, &mut out)
            .expect("a decoded frame encodes");
        assert_eq!(Frame::decode(out.freeze().slice(4..)), Ok(frame));
    }
});
