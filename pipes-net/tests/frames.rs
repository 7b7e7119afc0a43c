//! Frames never panic the decoder, whatever the bytes, and every frame survives encode then
//! decode. (The fuzz target in `fuzz/` runs the first property for as long as one likes.)

use bytes::{Bytes, BytesMut};
use pipes_net::Role;
use pipes_net::frame::{AbortCode, Frame, FrameError, Kind};
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        (
            any::<bool>(),
            any::<u32>(),
            ".{0,40}",
            prop::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(server, window, name, fingerprint)| Kind::Open {
                role: if server { Role::Server } else { Role::Client },
                window,
                name,
                fingerprint: fingerprint.into(),
            }),
        (any::<u32>(), any::<u32>()).prop_map(|(state, msg)| Kind::Msg { state, msg }),
        Just(Kind::Close),
        (0..4u8, ".{0,40}").prop_map(|(code, reason)| Kind::Abort {
            code: [
                AbortCode::Aborted,
                AbortCode::Refused,
                AbortCode::Incompatible,
                AbortCode::Violation
            ][code as usize],
            reason,
        }),
        any::<u32>().prop_map(|n| Kind::Credit { n }),
        Just(Kind::Ping),
        (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(state, msg, len)| Kind::Begin {
            state,
            msg,
            len
        }),
        Just(Kind::More),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    (
        any::<u64>(),
        kind(),
        prop::collection::vec(any::<u8>(), 0..256),
    )
        .prop_map(|(session, kind, payload)| {
            let payload = match kind {
                Kind::Msg { .. } | Kind::Begin { .. } | Kind::More => Bytes::from(payload),
                _ => Bytes::new(),
            };
            Frame {
                session,
                kind,
                payload,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        let _ = Frame::decode(Bytes::from(bytes));
    }

    #[test]
    fn encode_then_decode_round_trips(frame in frame()) {
        let mut out = BytesMut::new();
        frame.encode(usize::MAX, &mut out).unwrap();
        let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        prop_assert_eq!(len, out.len() - 4);
        prop_assert_eq!(Frame::decode(out.freeze().slice(4..)), Ok(frame));
    }

    #[test]
    fn every_cut_of_a_frame_is_an_error_not_a_panic(frame in frame(), cut in any::<prop::sample::Index>()) {
        let mut out = BytesMut::new();
        frame.encode(usize::MAX, &mut out).unwrap();
        let body = out.freeze().slice(4..);
        let cut = cut.index(body.len());
        // A Msg, Begin or More cut inside its payload is a shorter payload; anything else
        // must fail.
        let decoded = Frame::decode(body.slice(..cut));
        if !matches!(frame.kind, Kind::Msg { .. } | Kind::Begin { .. } | Kind::More) {
            prop_assert!(decoded.is_err(), "{:?}", decoded);
        }
    }

    #[test]
    fn flipped_bytes_decode_or_fail_typed(frame in frame(), at in any::<prop::sample::Index>(), bits in 1..=255u8) {
        let mut out = BytesMut::new();
        frame.encode(usize::MAX, &mut out).unwrap();
        let mut body = out.split_off(4);
        let at = at.index(body.len());
        body[at] ^= bits;
        match Frame::decode(body.freeze()) {
            Ok(_) => {}
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}

#[test]
fn a_trailing_byte_after_a_credit_is_refused() {
    let mut out = BytesMut::new();
    Frame::new(3, Kind::Credit { n: 5 })
        .encode(usize::MAX, &mut out)
        .unwrap();
    let mut body = out.split_off(4);
    body.extend_from_slice(b"!");
    assert_eq!(
        Frame::decode(body.freeze()),
        Err(FrameError::TrailingBytes {
            kind: "Credit",
            len: 1
        })
    );
}
