//! Payloads whose `Drop` panics on purpose, and wakers whose wake does: reading a caught
//! panic, and keeping those panics out of the test output.

use std::any::Any;
use std::panic;
use std::sync::Arc;
use std::task::{Wake, Waker};

/// A waker whose wake panics ("bomb waker", quiet under [`quiet_bombs`]): a `Waker` is user
/// code, and the runtime must survive one that panics.
pub fn panicking_waker() -> Waker {
    struct Panicking;
    impl Wake for Panicking {
        fn wake(self: Arc<Self>) {
            panic!("bomb waker");
        }
        fn wake_by_ref(self: &Arc<Self>) {
            panic!("bomb waker");
        }
    }
    Waker::from(Arc::new(Panicking))
}

/// The message of a panic caught by `catch_unwind`.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Quiets the default hook's report of panics whose message starts with "bomb " (the ones the
/// tests cause on purpose), and keeps the report of any other.
pub fn quiet_bombs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).starts_with("bomb ") {
                default(info);
            }
        }));
    });
}
