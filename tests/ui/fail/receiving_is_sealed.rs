// Only the runtime's own ends implement `Receiving`: an implementation outside it would be
// handed a `Settled` of its own word in `take` and could pass it to another end's `take`.
use pipes::__private::{Cause, Receiving, RecvPacket, Settled, StateWord};

struct Borrowed(RecvPacket<u64>);

impl Receiving for Borrowed {
    type Output = u64;

    fn word(&self) -> &StateWord {
        self.0.state_word()
    }

    fn take(self, settled: Settled) -> Result<u64, Cause> {
        self.0.take(settled)
    }
}

fn main() {}
