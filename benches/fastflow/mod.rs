//! What the two FastFlow benchmarks (seed 000: `farm.rs`, `pipeline.rs`) share: the element, a
//! heap buffer whose ownership moves with each message, and the one-way links between threads
//! in each implementation (pipes streams, a `proto!` protocol, crossbeam-channel, kanal), so the
//! farm and the pipeline are written once and run over every link alike.
#![allow(dead_code)]

/// One element of the stream: 64 bytes on the heap, sent as a `Box` (a pointer), never copied.
/// The sender writes it, the receiver reads and writes it, so each hop moves its cache line.
#[derive(Debug)]
pub struct Element {
    /// Position in the stream: the receiving end checks that every element arrives once, in
    /// order.
    pub id: u64,
    /// Stages that have forwarded it (the pipeline checks every element went through each).
    pub hops: u64,
    /// Input the emitter fills and the worker reads.
    pub data: [f64; 5],
    /// The worker's result.
    pub result: f64,
}

impl Element {
    /// A new element, its data derived from its id.
    pub fn new(id: u64) -> Box<Element> {
        let x = (id % 1024) as f64;
        Box::new(Element {
            id,
            hops: 0,
            data: [x, x + 0.5, x + 0.25, x + 0.125, x + 0.0625],
            result: 0.0,
        })
    }
}

pipes::proto! {
    /// A typed stream of elements that ends with an explicit `Done`, not with a hang-up: a
    /// receiver that sees the peer gone without `Done` knows its sender failed.
    pub elements {
        Open: send { Element(Box<Element>) -> Open, Done -> ! }
    }
}

/// A one-way link between two threads, as one implementation spells it. `send` and `recv` take
/// the endpoint by value and hand back the one to use next, which is how a `proto!` endpoint
/// works (each call consumes it); a channel's endpoint is just handed back.
pub trait Link {
    /// The sending end.
    type Tx: Send + 'static;
    /// The receiving end.
    type Rx: Send + 'static;
    /// The row's name in the tables.
    const NAME: &'static str;
    /// A new link: sending and receiving ends.
    fn link() -> (Self::Tx, Self::Rx);
    /// Sends an element (panics if the receiver is gone: in these programs that is a bug).
    fn send(tx: Self::Tx, element: Box<Element>) -> Self::Tx;
    /// The next element, or `None` once the sender has closed the link and it is drained.
    fn recv(rx: Self::Rx) -> Option<(Box<Element>, Self::Rx)>;
    /// Ends the link: the receiver's `recv` returns `None` after the elements already sent.
    fn close(tx: Self::Tx);
}

/// pipes streams (`pipes::stream`): a packet per message, the end is the chan's drop.
pub struct PipesStream;

impl Link for PipesStream {
    type Tx = pipes::Chan<Box<Element>>;
    type Rx = pipes::Port<Box<Element>>;
    const NAME: &'static str = "pipes stream";
    fn link() -> (Self::Tx, Self::Rx) {
        let (port, chan) = pipes::stream();
        (chan, port)
    }
    fn send(tx: Self::Tx, element: Box<Element>) -> Self::Tx {
        tx.send(element).expect("the receiver is running");
        tx
    }
    fn recv(rx: Self::Rx) -> Option<(Box<Element>, Self::Rx)> {
        let element = rx.recv().ok()?;
        Some((element, rx))
    }
    fn close(tx: Self::Tx) {
        drop(tx);
    }
}

/// The `elements` protocol: typed endpoints, a packet per message, an explicit `Done`.
pub struct PipesProtocol;

impl Link for PipesProtocol {
    type Tx = elements::client::Open;
    type Rx = elements::server::Open;
    const NAME: &'static str = "pipes proto! elements";
    fn link() -> (Self::Tx, Self::Rx) {
        let (server, client) = elements::init();
        (client, server)
    }
    fn send(tx: Self::Tx, element: Box<Element>) -> Self::Tx {
        tx.element(element).expect("the receiver is running")
    }
    fn recv(rx: Self::Rx) -> Option<(Box<Element>, Self::Rx)> {
        match rx.recv().expect("a sender says Done before it goes") {
            elements::Open::Element(element, next) => Some((element, next)),
            elements::Open::Done => None,
        }
    }
    fn close(tx: Self::Tx) {
        tx.done().expect("the receiver is running");
    }
}

/// A link over any channel crate whose ends have `send(&self)` and `recv(&self)`.
macro_rules! channel_link {
    ($link:ident, $name:expr, $make:path, $tx:ty, $rx:ty) => {
        #[doc = concat!("The peer ", $name, ", unbounded (FastFlow's queues are unbounded).")]
        pub struct $link;

        impl Link for $link {
            type Tx = $tx;
            type Rx = $rx;
            const NAME: &'static str = $name;
            fn link() -> (Self::Tx, Self::Rx) {
                $make()
            }
            fn send(tx: Self::Tx, element: Box<Element>) -> Self::Tx {
                tx.send(element).expect("the receiver is running");
                tx
            }
            fn recv(rx: Self::Rx) -> Option<(Box<Element>, Self::Rx)> {
                let element = rx.recv().ok()?;
                Some((element, rx))
            }
            fn close(tx: Self::Tx) {
                drop(tx);
            }
        }
    };
}

channel_link!(
    Crossbeam,
    "crossbeam-channel",
    crossbeam_channel::unbounded,
    crossbeam_channel::Sender<Box<Element>>,
    crossbeam_channel::Receiver<Box<Element>>
);
channel_link!(
    Kanal,
    "kanal",
    kanal::unbounded,
    kanal::Sender<Box<Element>>,
    kanal::Receiver<Box<Element>>
);
