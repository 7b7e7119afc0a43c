// A payload that serializes but is not Send cannot cross the wire either: the pump moves it
// between threads. rustc words this one itself (Send's own message wins), at the payload; the
// errors after it, at the invocation, are the pumps that would hold such a payload.

use std::marker::PhantomData;

pipes::proto! {
    #[wire]
    pub ticks {
        Start: send { Tick(PhantomData<*const u8>) -> ! }
    }
}

fn main() {}
