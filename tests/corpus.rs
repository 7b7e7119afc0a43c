//! The protocols of proto-dsl's fixture corpus, compiled through `proto!` (the codegen
//! snapshots show their expansions; this proves those expansions type-check and run): the 2012
//! spelling with user payload types, lower-case names, mixed directions, user types, cfg'd
//! messages, two type parameters with bounds, and a 200-state protocol.
#![allow(dead_code)]

use std::thread;

#[allow(non_camel_case_types)]
mod bank_2012 {
    pub type username = String;
    pub type password = String;
    pub type money = u64;
    pub type amount = u64;

    pipes::proto! {
        // The "Rusty Pipes" bank in the seed's spelling: lower-case names, payload types named by the
        // user (resolved where the macro is invoked).
        bank {
            login:send {
                login(username, password) -> login_response
            }

            login_response:recv {
                ok -> connected,
                invalid -> login
            }

            connected:send {
                deposit(money) -> connected,
                withdrawal(amount) -> withdrawal_response
            }

            withdrawal_response:recv {
                money(money) -> connected,
                insufficient_funds -> connected
            }
        }
    }
}

mod bar_proto {
    pipes::proto! {
        // From the 2012 select-macro test: directions alternate, so it is bounded.
        bar {
            bar:recv {
                do_bar(i64) -> barbar,
                do_baz(bool) -> bazbar,
            }

            barbar:send {
                rebarbar -> bar,
            }

            bazbar:send {
                rebazbar -> bar
            }
        }
    }
}

mod foo_proto {
    pipes::proto! {
        // From the 2012 select-macro test: a start state in which the client receives, looping.
        foo {
            foo:recv {
                do_foo -> foo
            }
        }
    }
}

mod streamp_proto {
    pipes::proto! {
        // The 2012 core streams' protocol.
        streamp {
            Open:send<T: Send> {
                data(T) -> Open<T>
            }
        }
    }
}

mod ring_proto {
    pipes::proto! {
        // msgsend-ring-pipes: "This version uses automatically compiled channel contracts."
        pub ring {
            num:send { num(u64) -> num }
        }
    }
}

mod double_buffer_proto {
    /// What the two sides pass back and forth.
    pub struct Buffer(pub Vec<u8>);

    pipes::proto! {
        // From the 2012 presentation examples (it wrote `::Buffer`; payload types now resolve where
        // the macro is invoked). `release` and `acquire` are both send states, yet bounded: no run of
        // same-direction states loops.
        pub double_buffer {
            acquire:send {
                request -> wait_buffer
            }

            wait_buffer:recv {
                give_buffer(Buffer) -> release
            }

            release:send {
                release(Buffer) -> acquire
            }
        }
    }
}

mod kv_store_proto {
    pipes::proto! {

        /// A key-value store session.
        #[doc(alias = "kv")]
        pub kv_store {
            /// The client may ask, store, or leave.
            Idle: send<K: Eq + std::hash::Hash + Send, V: Clone + Send + 'static> {
                /// Look a key up.
                Get(K) -> Lookup<K, V>,
                Put(K, V) -> Idle<K, V>,
                #[cfg(any())] // never compiled: the cfg reaches the variant, method and arms
                PutMany(std::collections::HashMap<K, V>, [u8; 4]) -> Idle<K, V>,
                Map(Box<dyn Fn(&V) -> V + Send>, fn(u8) -> u8) -> Idle<K, V>,
                Quit -> !,
            }
            Lookup: recv<K: Eq + std::hash::Hash + Send, V: Clone + Send + 'static> {
                Found(V) -> Idle<K, V>,
                Missing(K,) -> Idle<K, V>,
            }
        }
    }
}

mod generated_200_proto {
    pipes::proto! {
        /// A generated protocol of 200 states.
        pub generated_200 {
            /// State 0.
            S0: send {
                Step0(u64) -> S1,
                Abort(String) -> !,
            }
            /// State 1.
            S1: send {
                Step1(u64) -> S2,
                Abort(String) -> !,
            }
            /// State 2.
            S2: recv {
                Step2(u64) -> S3,
                Jump2(Vec<String>, Option<Box<[u8]>>) -> S16,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 3.
            S3: send {
                Step3(u64) -> S4,
                Abort(String) -> !,
            }
            /// State 4.
            S4: send {
                Step4(u64) -> S5<u64>,
                Abort(String) -> !,
            }
            /// State 5.
            S5: recv<T: Send + 'static> {
                Step5(T, u64) -> S6,
                Jump5(Vec<String>, Option<Box<[u8]>>) -> S37,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 6.
            S6: send {
                Step6(u64) -> S7,
                Abort(String) -> !,
            }
            /// State 7.
            S7: send {
                Step7(u64) -> S8,
                Abort(String) -> !,
            }
            /// State 8.
            S8: recv {
                Step8(u64) -> S9,
                Jump8(Vec<String>, Option<Box<[u8]>>) -> S58,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 9.
            S9: send {
                Step9(u64) -> S10,
                Abort(String) -> !,
            }
            /// State 10.
            S10: send {
                Step10(u64) -> S11,
                Abort(String) -> !,
            }
            /// State 11.
            S11: recv {
                Step11(u64) -> S12,
                Jump11(Vec<String>, Option<Box<[u8]>>) -> S79,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 12.
            S12: send {
                Step12(u64) -> S13,
                Abort(String) -> !,
            }
            /// State 13.
            S13: send {
                Step13(u64) -> S14,
                Abort(String) -> !,
            }
            /// State 14.
            S14: recv {
                Step14(u64) -> S15<u64>,
                Jump14(Vec<String>, Option<Box<[u8]>>) -> S100,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 15.
            S15: send<T: Send + 'static> {
                Step15(T, u64) -> S16,
                Abort(String) -> !,
            }
            /// State 16.
            S16: send {
                Step16(u64) -> S17,
                Abort(String) -> !,
            }
            /// State 17.
            S17: recv {
                Step17(u64) -> S18,
                Jump17(Vec<String>, Option<Box<[u8]>>) -> S121,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 18.
            S18: send {
                Step18(u64) -> S19,
                Abort(String) -> !,
            }
            /// State 19.
            S19: send {
                Step19(u64) -> S20,
                Abort(String) -> !,
            }
            /// State 20.
            S20: recv {
                Step20(u64) -> S21,
                Jump20(Vec<String>, Option<Box<[u8]>>) -> S142,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 21.
            S21: send {
                Step21(u64) -> S22,
                Abort(String) -> !,
            }
            /// State 22.
            S22: send {
                Step22(u64) -> S23,
                Abort(String) -> !,
            }
            /// State 23.
            S23: recv {
                Step23(u64) -> S24,
                Jump23(Vec<String>, Option<Box<[u8]>>) -> S163,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 24.
            S24: send {
                Step24(u64) -> S25<u64>,
                Abort(String) -> !,
            }
            /// State 25.
            S25: send<T: Send + 'static> {
                Step25(T, u64) -> S26,
                Abort(String) -> !,
            }
            /// State 26.
            S26: recv {
                Step26(u64) -> S27,
                Jump26(Vec<String>, Option<Box<[u8]>>) -> S184,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 27.
            S27: send {
                Step27(u64) -> S28,
                Abort(String) -> !,
            }
            /// State 28.
            S28: send {
                Step28(u64) -> S29,
                Abort(String) -> !,
            }
            /// State 29.
            S29: recv {
                Step29(u64) -> S30,
                Jump29(Vec<String>, Option<Box<[u8]>>) -> S6,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 30.
            S30: send {
                Step30(u64) -> S31,
                Abort(String) -> !,
            }
            /// State 31.
            S31: send {
                Step31(u64) -> S32,
                Abort(String) -> !,
            }
            /// State 32.
            S32: recv {
                Step32(u64) -> S33,
                Jump32(Vec<String>, Option<Box<[u8]>>) -> S27,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 33.
            S33: send {
                Step33(u64) -> S34,
                Abort(String) -> !,
            }
            /// State 34.
            S34: send {
                Step34(u64) -> S35<u64>,
                Abort(String) -> !,
            }
            /// State 35.
            S35: recv<T: Send + 'static> {
                Step35(T, u64) -> S36,
                Jump35(Vec<String>, Option<Box<[u8]>>) -> S48,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 36.
            S36: send {
                Step36(u64) -> S37,
                Abort(String) -> !,
            }
            /// State 37.
            S37: send {
                Step37(u64) -> S38,
                Abort(String) -> !,
            }
            /// State 38.
            S38: recv {
                Step38(u64) -> S39,
                Jump38(Vec<String>, Option<Box<[u8]>>) -> S69,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 39.
            S39: send {
                Step39(u64) -> S40,
                Abort(String) -> !,
            }
            /// State 40.
            S40: send {
                Step40(u64) -> S41,
                Abort(String) -> !,
            }
            /// State 41.
            S41: recv {
                Step41(u64) -> S42,
                Jump41(Vec<String>, Option<Box<[u8]>>) -> S90,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 42.
            S42: send {
                Step42(u64) -> S43,
                Abort(String) -> !,
            }
            /// State 43.
            S43: send {
                Step43(u64) -> S44,
                Abort(String) -> !,
            }
            /// State 44.
            S44: recv {
                Step44(u64) -> S45<u64>,
                Jump44(Vec<String>, Option<Box<[u8]>>) -> S111,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 45.
            S45: send<T: Send + 'static> {
                Step45(T, u64) -> S46,
                Abort(String) -> !,
            }
            /// State 46.
            S46: send {
                Step46(u64) -> S47,
                Abort(String) -> !,
            }
            /// State 47.
            S47: recv {
                Step47(u64) -> S48,
                Jump47(Vec<String>, Option<Box<[u8]>>) -> S132,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 48.
            S48: send {
                Step48(u64) -> S49,
                Abort(String) -> !,
            }
            /// State 49.
            S49: send {
                Step49(u64) -> S50,
                Abort(String) -> !,
            }
            /// State 50.
            S50: recv {
                Step50(u64) -> S51,
                Jump50(Vec<String>, Option<Box<[u8]>>) -> S153,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 51.
            S51: send {
                Step51(u64) -> S52,
                Abort(String) -> !,
            }
            /// State 52.
            S52: send {
                Step52(u64) -> S53,
                Abort(String) -> !,
            }
            /// State 53.
            S53: recv {
                Step53(u64) -> S54,
                Jump53(Vec<String>, Option<Box<[u8]>>) -> S174,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 54.
            S54: send {
                Step54(u64) -> S55<u64>,
                Abort(String) -> !,
            }
            /// State 55.
            S55: send<T: Send + 'static> {
                Step55(T, u64) -> S56,
                Abort(String) -> !,
            }
            /// State 56.
            S56: recv {
                Step56(u64) -> S57,
                Jump56(Vec<String>, Option<Box<[u8]>>) -> S195<u64>,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 57.
            S57: send {
                Step57(u64) -> S58,
                Abort(String) -> !,
            }
            /// State 58.
            S58: send {
                Step58(u64) -> S59,
                Abort(String) -> !,
            }
            /// State 59.
            S59: recv {
                Step59(u64) -> S60,
                Jump59(Vec<String>, Option<Box<[u8]>>) -> S16,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 60.
            S60: send {
                Step60(u64) -> S61,
                Abort(String) -> !,
            }
            /// State 61.
            S61: send {
                Step61(u64) -> S62,
                Abort(String) -> !,
            }
            /// State 62.
            S62: recv {
                Step62(u64) -> S63,
                Jump62(Vec<String>, Option<Box<[u8]>>) -> S37,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 63.
            S63: send {
                Step63(u64) -> S64,
                Abort(String) -> !,
            }
            /// State 64.
            S64: send {
                Step64(u64) -> S65<u64>,
                Abort(String) -> !,
            }
            /// State 65.
            S65: recv<T: Send + 'static> {
                Step65(T, u64) -> S66,
                Jump65(Vec<String>, Option<Box<[u8]>>) -> S58,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 66.
            S66: send {
                Step66(u64) -> S67,
                Abort(String) -> !,
            }
            /// State 67.
            S67: send {
                Step67(u64) -> S68,
                Abort(String) -> !,
            }
            /// State 68.
            S68: recv {
                Step68(u64) -> S69,
                Jump68(Vec<String>, Option<Box<[u8]>>) -> S79,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 69.
            S69: send {
                Step69(u64) -> S70,
                Abort(String) -> !,
            }
            /// State 70.
            S70: send {
                Step70(u64) -> S71,
                Abort(String) -> !,
            }
            /// State 71.
            S71: recv {
                Step71(u64) -> S72,
                Jump71(Vec<String>, Option<Box<[u8]>>) -> S100,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 72.
            S72: send {
                Step72(u64) -> S73,
                Abort(String) -> !,
            }
            /// State 73.
            S73: send {
                Step73(u64) -> S74,
                Abort(String) -> !,
            }
            /// State 74.
            S74: recv {
                Step74(u64) -> S75<u64>,
                Jump74(Vec<String>, Option<Box<[u8]>>) -> S121,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 75.
            S75: send<T: Send + 'static> {
                Step75(T, u64) -> S76,
                Abort(String) -> !,
            }
            /// State 76.
            S76: send {
                Step76(u64) -> S77,
                Abort(String) -> !,
            }
            /// State 77.
            S77: recv {
                Step77(u64) -> S78,
                Jump77(Vec<String>, Option<Box<[u8]>>) -> S142,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 78.
            S78: send {
                Step78(u64) -> S79,
                Abort(String) -> !,
            }
            /// State 79.
            S79: send {
                Step79(u64) -> S80,
                Abort(String) -> !,
            }
            /// State 80.
            S80: recv {
                Step80(u64) -> S81,
                Jump80(Vec<String>, Option<Box<[u8]>>) -> S163,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 81.
            S81: send {
                Step81(u64) -> S82,
                Abort(String) -> !,
            }
            /// State 82.
            S82: send {
                Step82(u64) -> S83,
                Abort(String) -> !,
            }
            /// State 83.
            S83: recv {
                Step83(u64) -> S84,
                Jump83(Vec<String>, Option<Box<[u8]>>) -> S184,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 84.
            S84: send {
                Step84(u64) -> S85<u64>,
                Abort(String) -> !,
            }
            /// State 85.
            S85: send<T: Send + 'static> {
                Step85(T, u64) -> S86,
                Abort(String) -> !,
            }
            /// State 86.
            S86: recv {
                Step86(u64) -> S87,
                Jump86(Vec<String>, Option<Box<[u8]>>) -> S4,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 87.
            S87: send {
                Step87(u64) -> S88,
                Abort(String) -> !,
            }
            /// State 88.
            S88: send {
                Step88(u64) -> S89,
                Abort(String) -> !,
            }
            /// State 89.
            S89: recv {
                Step89(u64) -> S90,
                Jump89(Vec<String>, Option<Box<[u8]>>) -> S25<u64>,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 90.
            S90: send {
                Step90(u64) -> S91,
                Abort(String) -> !,
            }
            /// State 91.
            S91: send {
                Step91(u64) -> S92,
                Abort(String) -> !,
            }
            /// State 92.
            S92: recv {
                Step92(u64) -> S93,
                Jump92(Vec<String>, Option<Box<[u8]>>) -> S46,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 93.
            S93: send {
                Step93(u64) -> S94,
                Abort(String) -> !,
            }
            /// State 94.
            S94: send {
                Step94(u64) -> S95<u64>,
                Abort(String) -> !,
            }
            /// State 95.
            S95: recv<T: Send + 'static> {
                Step95(T, u64) -> S96,
                Jump95(Vec<String>, Option<Box<[u8]>>) -> S67,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 96.
            S96: send {
                Step96(u64) -> S97,
                Abort(String) -> !,
            }
            /// State 97.
            S97: send {
                Step97(u64) -> S98,
                Abort(String) -> !,
            }
            /// State 98.
            S98: recv {
                Step98(u64) -> S99,
                Jump98(Vec<String>, Option<Box<[u8]>>) -> S88,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 99.
            S99: send {
                Step99(u64) -> S100,
                Abort(String) -> !,
            }
            /// State 100.
            S100: send {
                Step100(u64) -> S101,
                Abort(String) -> !,
            }
            /// State 101.
            S101: recv {
                Step101(u64) -> S102,
                Jump101(Vec<String>, Option<Box<[u8]>>) -> S109,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 102.
            S102: send {
                Step102(u64) -> S103,
                Abort(String) -> !,
            }
            /// State 103.
            S103: send {
                Step103(u64) -> S104,
                Abort(String) -> !,
            }
            /// State 104.
            S104: recv {
                Step104(u64) -> S105<u64>,
                Jump104(Vec<String>, Option<Box<[u8]>>) -> S130,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 105.
            S105: send<T: Send + 'static> {
                Step105(T, u64) -> S106,
                Abort(String) -> !,
            }
            /// State 106.
            S106: send {
                Step106(u64) -> S107,
                Abort(String) -> !,
            }
            /// State 107.
            S107: recv {
                Step107(u64) -> S108,
                Jump107(Vec<String>, Option<Box<[u8]>>) -> S151,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 108.
            S108: send {
                Step108(u64) -> S109,
                Abort(String) -> !,
            }
            /// State 109.
            S109: send {
                Step109(u64) -> S110,
                Abort(String) -> !,
            }
            /// State 110.
            S110: recv {
                Step110(u64) -> S111,
                Jump110(Vec<String>, Option<Box<[u8]>>) -> S172,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 111.
            S111: send {
                Step111(u64) -> S112,
                Abort(String) -> !,
            }
            /// State 112.
            S112: send {
                Step112(u64) -> S113,
                Abort(String) -> !,
            }
            /// State 113.
            S113: recv {
                Step113(u64) -> S114,
                Jump113(Vec<String>, Option<Box<[u8]>>) -> S193,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 114.
            S114: send {
                Step114(u64) -> S115<u64>,
                Abort(String) -> !,
            }
            /// State 115.
            S115: send<T: Send + 'static> {
                Step115(T, u64) -> S116,
                Abort(String) -> !,
            }
            /// State 116.
            S116: recv {
                Step116(u64) -> S117,
                Jump116(Vec<String>, Option<Box<[u8]>>) -> S15<u64>,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 117.
            S117: send {
                Step117(u64) -> S118,
                Abort(String) -> !,
            }
            /// State 118.
            S118: send {
                Step118(u64) -> S119,
                Abort(String) -> !,
            }
            /// State 119.
            S119: recv {
                Step119(u64) -> S120,
                Jump119(Vec<String>, Option<Box<[u8]>>) -> S36,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 120.
            S120: send {
                Step120(u64) -> S121,
                Abort(String) -> !,
            }
            /// State 121.
            S121: send {
                Step121(u64) -> S122,
                Abort(String) -> !,
            }
            /// State 122.
            S122: recv {
                Step122(u64) -> S123,
                Jump122(Vec<String>, Option<Box<[u8]>>) -> S57,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 123.
            S123: send {
                Step123(u64) -> S124,
                Abort(String) -> !,
            }
            /// State 124.
            S124: send {
                Step124(u64) -> S125<u64>,
                Abort(String) -> !,
            }
            /// State 125.
            S125: recv<T: Send + 'static> {
                Step125(T, u64) -> S126,
                Jump125(Vec<String>, Option<Box<[u8]>>) -> S78,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 126.
            S126: send {
                Step126(u64) -> S127,
                Abort(String) -> !,
            }
            /// State 127.
            S127: send {
                Step127(u64) -> S128,
                Abort(String) -> !,
            }
            /// State 128.
            S128: recv {
                Step128(u64) -> S129,
                Jump128(Vec<String>, Option<Box<[u8]>>) -> S99,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 129.
            S129: send {
                Step129(u64) -> S130,
                Abort(String) -> !,
            }
            /// State 130.
            S130: send {
                Step130(u64) -> S131,
                Abort(String) -> !,
            }
            /// State 131.
            S131: recv {
                Step131(u64) -> S132,
                Jump131(Vec<String>, Option<Box<[u8]>>) -> S120,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 132.
            S132: send {
                Step132(u64) -> S133,
                Abort(String) -> !,
            }
            /// State 133.
            S133: send {
                Step133(u64) -> S134,
                Abort(String) -> !,
            }
            /// State 134.
            S134: recv {
                Step134(u64) -> S135<u64>,
                Jump134(Vec<String>, Option<Box<[u8]>>) -> S141,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 135.
            S135: send<T: Send + 'static> {
                Step135(T, u64) -> S136,
                Abort(String) -> !,
            }
            /// State 136.
            S136: send {
                Step136(u64) -> S137,
                Abort(String) -> !,
            }
            /// State 137.
            S137: recv {
                Step137(u64) -> S138,
                Jump137(Vec<String>, Option<Box<[u8]>>) -> S162,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 138.
            S138: send {
                Step138(u64) -> S139,
                Abort(String) -> !,
            }
            /// State 139.
            S139: send {
                Step139(u64) -> S140,
                Abort(String) -> !,
            }
            /// State 140.
            S140: recv {
                Step140(u64) -> S141,
                Jump140(Vec<String>, Option<Box<[u8]>>) -> S183,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 141.
            S141: send {
                Step141(u64) -> S142,
                Abort(String) -> !,
            }
            /// State 142.
            S142: send {
                Step142(u64) -> S143,
                Abort(String) -> !,
            }
            /// State 143.
            S143: recv {
                Step143(u64) -> S144,
                Jump143(Vec<String>, Option<Box<[u8]>>) -> S4,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 144.
            S144: send {
                Step144(u64) -> S145<u64>,
                Abort(String) -> !,
            }
            /// State 145.
            S145: send<T: Send + 'static> {
                Step145(T, u64) -> S146,
                Abort(String) -> !,
            }
            /// State 146.
            S146: recv {
                Step146(u64) -> S147,
                Jump146(Vec<String>, Option<Box<[u8]>>) -> S25<u64>,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 147.
            S147: send {
                Step147(u64) -> S148,
                Abort(String) -> !,
            }
            /// State 148.
            S148: send {
                Step148(u64) -> S149,
                Abort(String) -> !,
            }
            /// State 149.
            S149: recv {
                Step149(u64) -> S150,
                Jump149(Vec<String>, Option<Box<[u8]>>) -> S46,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 150.
            S150: send {
                Step150(u64) -> S151,
                Abort(String) -> !,
            }
            /// State 151.
            S151: send {
                Step151(u64) -> S152,
                Abort(String) -> !,
            }
            /// State 152.
            S152: recv {
                Step152(u64) -> S153,
                Jump152(Vec<String>, Option<Box<[u8]>>) -> S67,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 153.
            S153: send {
                Step153(u64) -> S154,
                Abort(String) -> !,
            }
            /// State 154.
            S154: send {
                Step154(u64) -> S155<u64>,
                Abort(String) -> !,
            }
            /// State 155.
            S155: recv<T: Send + 'static> {
                Step155(T, u64) -> S156,
                Jump155(Vec<String>, Option<Box<[u8]>>) -> S88,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 156.
            S156: send {
                Step156(u64) -> S157,
                Abort(String) -> !,
            }
            /// State 157.
            S157: send {
                Step157(u64) -> S158,
                Abort(String) -> !,
            }
            /// State 158.
            S158: recv {
                Step158(u64) -> S159,
                Jump158(Vec<String>, Option<Box<[u8]>>) -> S109,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 159.
            S159: send {
                Step159(u64) -> S160,
                Abort(String) -> !,
            }
            /// State 160.
            S160: send {
                Step160(u64) -> S161,
                Abort(String) -> !,
            }
            /// State 161.
            S161: recv {
                Step161(u64) -> S162,
                Jump161(Vec<String>, Option<Box<[u8]>>) -> S130,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 162.
            S162: send {
                Step162(u64) -> S163,
                Abort(String) -> !,
            }
            /// State 163.
            S163: send {
                Step163(u64) -> S164,
                Abort(String) -> !,
            }
            /// State 164.
            S164: recv {
                Step164(u64) -> S165<u64>,
                Jump164(Vec<String>, Option<Box<[u8]>>) -> S151,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 165.
            S165: send<T: Send + 'static> {
                Step165(T, u64) -> S166,
                Abort(String) -> !,
            }
            /// State 166.
            S166: send {
                Step166(u64) -> S167,
                Abort(String) -> !,
            }
            /// State 167.
            S167: recv {
                Step167(u64) -> S168,
                Jump167(Vec<String>, Option<Box<[u8]>>) -> S172,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 168.
            S168: send {
                Step168(u64) -> S169,
                Abort(String) -> !,
            }
            /// State 169.
            S169: send {
                Step169(u64) -> S170,
                Abort(String) -> !,
            }
            /// State 170.
            S170: recv {
                Step170(u64) -> S171,
                Jump170(Vec<String>, Option<Box<[u8]>>) -> S193,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 171.
            S171: send {
                Step171(u64) -> S172,
                Abort(String) -> !,
            }
            /// State 172.
            S172: send {
                Step172(u64) -> S173,
                Abort(String) -> !,
            }
            /// State 173.
            S173: recv {
                Step173(u64) -> S174,
                Jump173(Vec<String>, Option<Box<[u8]>>) -> S13,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 174.
            S174: send {
                Step174(u64) -> S175<u64>,
                Abort(String) -> !,
            }
            /// State 175.
            S175: send<T: Send + 'static> {
                Step175(T, u64) -> S176,
                Abort(String) -> !,
            }
            /// State 176.
            S176: recv {
                Step176(u64) -> S177,
                Jump176(Vec<String>, Option<Box<[u8]>>) -> S34,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 177.
            S177: send {
                Step177(u64) -> S178,
                Abort(String) -> !,
            }
            /// State 178.
            S178: send {
                Step178(u64) -> S179,
                Abort(String) -> !,
            }
            /// State 179.
            S179: recv {
                Step179(u64) -> S180,
                Jump179(Vec<String>, Option<Box<[u8]>>) -> S55<u64>,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 180.
            S180: send {
                Step180(u64) -> S181,
                Abort(String) -> !,
            }
            /// State 181.
            S181: send {
                Step181(u64) -> S182,
                Abort(String) -> !,
            }
            /// State 182.
            S182: recv {
                Step182(u64) -> S183,
                Jump182(Vec<String>, Option<Box<[u8]>>) -> S76,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 183.
            S183: send {
                Step183(u64) -> S184,
                Abort(String) -> !,
            }
            /// State 184.
            S184: send {
                Step184(u64) -> S185<u64>,
                Abort(String) -> !,
            }
            /// State 185.
            S185: recv<T: Send + 'static> {
                Step185(T, u64) -> S186,
                Jump185(Vec<String>, Option<Box<[u8]>>) -> S97,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 186.
            S186: send {
                Step186(u64) -> S187,
                Abort(String) -> !,
            }
            /// State 187.
            S187: send {
                Step187(u64) -> S188,
                Abort(String) -> !,
            }
            /// State 188.
            S188: recv {
                Step188(u64) -> S189,
                Jump188(Vec<String>, Option<Box<[u8]>>) -> S118,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 189.
            S189: send {
                Step189(u64) -> S190,
                Abort(String) -> !,
            }
            /// State 190.
            S190: send {
                Step190(u64) -> S191,
                Abort(String) -> !,
            }
            /// State 191.
            S191: recv {
                Step191(u64) -> S192,
                Jump191(Vec<String>, Option<Box<[u8]>>) -> S139,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 192.
            S192: send {
                Step192(u64) -> S193,
                Abort(String) -> !,
            }
            /// State 193.
            S193: send {
                Step193(u64) -> S194,
                Abort(String) -> !,
            }
            /// State 194.
            S194: recv {
                Step194(u64) -> S195<u64>,
                Jump194(Vec<String>, Option<Box<[u8]>>) -> S160,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 195.
            S195: send<T: Send + 'static> {
                Step195(T, u64) -> S196,
                Abort(String) -> !,
            }
            /// State 196.
            S196: send {
                Step196(u64) -> S197,
                Abort(String) -> !,
            }
            /// State 197.
            S197: recv {
                Step197(u64) -> S198,
                Jump197(Vec<String>, Option<Box<[u8]>>) -> S181,
                Restart -> S0,
                Abort(String) -> !,
            }
            /// State 198.
            S198: send {
                Step198(u64) -> S199,
                Abort(String) -> !,
            }
            /// State 199.
            S199: send {
                Finish(u64) -> !,
                Abort(String) -> !,
            }
        }
    }
}

#[test]
fn ring_passes_a_number_round_three_threads() {
    use ring_proto::ring;
    // Three links: each thread receives from its left and sends to its right.
    let links: Vec<_> = (0..3).map(|_| ring::init()).collect();
    let (servers, clients): (Vec<_>, Vec<_>) = links.into_iter().unzip();
    let mut clients: Vec<_> = clients.into_iter().map(Some).collect();
    clients.rotate_left(1);
    let handles: Vec<_> = servers
        .into_iter()
        .zip(clients)
        .enumerate()
        .map(|(i, (mut left, right))| {
            thread::spawn(move || {
                let mut right = right.unwrap();
                if i == 0 {
                    right = right.num(0).unwrap();
                }
                // 100 laps: thread 0 starts the number and does not pass on the last one.
                let mut last = 0;
                for lap in 0..100 {
                    let ring::num::num(n, next) = left.recv().unwrap();
                    left = next;
                    last = n;
                    if i == 0 && lap == 99 {
                        break;
                    }
                    right = right.num(n + 1).unwrap();
                }
                last
            })
        })
        .collect();
    let results: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    // 300 hops, each adding one, starting from 0.
    assert_eq!(results, [299, 297, 298]);
}

#[test]
fn double_buffer_hands_the_buffer_back_and_forth() {
    use double_buffer_proto::{Buffer, double_buffer};
    let (server, client) = double_buffer::init();
    let producer = thread::spawn(move || {
        let mut acquire = server;
        let mut buffer = Some(Buffer(Vec::new()));
        for round in 0..10u8 {
            let double_buffer::acquire::request(wait) = acquire.recv().unwrap();
            let mut filled = buffer.take().unwrap();
            filled.0.push(round);
            let release = wait.give_buffer(filled).unwrap();
            let double_buffer::release::release(back, next) = release.recv().unwrap();
            buffer = Some(back);
            acquire = next;
        }
        buffer.unwrap().0
    });
    let mut acquire = client;
    for _ in 0..10 {
        let double_buffer::wait_buffer::give_buffer(buffer, release) =
            acquire.request().unwrap().recv().unwrap();
        acquire = release.release(buffer).unwrap();
    }
    drop(acquire);
    assert_eq!(producer.join().unwrap(), (0..10).collect::<Vec<u8>>());
}
