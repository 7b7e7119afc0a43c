//! Reading bodies off a byte stream: a length-delimited decoder (a `u32` big-endian length,
//! then the body) that tells an oversized frame (with its announced length) apart from other
//! errors and grows its buffer only as a frame's bytes arrive, and a reader that notes when
//! bytes last came, for the heartbeat timeout.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use futures_core::Stream;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Instant;
use tokio_util::codec::{Decoder, FramedRead};

use crate::error::SessionError;

/// The length prefix of every body.
const HEAD: usize = 4;

/// How far the buffer may grow ahead of the bytes of a frame that came so far: a frame's
/// announced length is only a claim, and reserving all of it at once would let 4 bytes make
/// the node allocate [`Config::max_frame`](crate::Config::max_frame). Past this, the buffer at
/// most doubles what came, so a long frame costs a few copies (log2 of its length over this),
/// and a peer that announces a long frame and sends little of it, this much and twice what it
/// sent. A chunk frame (64 KiB of payload by default, and a few bytes of head) most often fits
/// in one step.
const GROWTH: usize = 64 << 10;

/// The size of a new read buffer (`FramedRead`'s first one).
const BLOCK: usize = 8 << 10;

/// Length-delimited bodies of at most `max` bytes (tokio-util's `LengthDelimitedCodec`
/// reserves a frame's whole announced length as soon as its prefix is read; this grows the
/// buffer by [`GROWTH`] or by what came, whichever is more).
pub(crate) struct Bodies {
    /// The longest body taken; a longer one is [`ReadError::TooLarge`].
    pub(crate) max: usize,
}

pub(crate) enum ReadError {
    Io(io::Error),
    TooLarge(usize),
}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> Self {
        ReadError::Io(error)
    }
}

impl Decoder for Bodies {
    type Item = BytesMut;
    type Error = ReadError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<BytesMut>, ReadError> {
        let Some(head) = src.get(..HEAD) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if len > self.max {
            return Err(ReadError::TooLarge(len));
        }
        let whole = len.saturating_add(HEAD);
        if src.len() < whole {
            grow(src, whole);
            return Ok(None);
        }
        src.advance(HEAD);
        let body = src.split_to(len);
        if src.capacity() == 0 {
            // The block is full (always so after a frame `grow` made room for): the next one
            // is a small one, as `FramedRead` starts with. Left to `reserve`, it would be as
            // large as this one's first size (up to 64 KiB), and a small payload read into it
            // would keep all of it alive while it waits to be received.
            *src = BytesMut::with_capacity(BLOCK);
        }
        Ok(Some(body))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<BytesMut>, ReadError> {
        match self.decode(src)? {
            Some(body) => Ok(Some(body)),
            None if src.is_empty() => Ok(None),
            None => Err(ReadError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection ended inside a frame",
            ))),
        }
    }
}

/// Makes room in `src` for more of a frame of `whole` bytes (length prefix included), as its
/// bytes come (see [`GROWTH`]): what `FramedRead` reads next goes into this room.
fn grow(src: &mut BytesMut, whole: usize) {
    let missing = whole - src.len();
    if whole <= GROWTH {
        // A short frame: room for all of it, as the length-delimited codec made.
        src.reserve(missing);
        return;
    }
    let step = missing.min(GROWTH.max(src.len()));
    if src.capacity() - src.len() < step {
        // Allocated here, not by `reserve`, which may double the block: the last step fits
        // the frame exactly, so the bytes read after it start a block of their own, and a
        // small payload read there cannot keep a block as long as this frame alive.
        let mut grown = BytesMut::with_capacity(src.len() + step);
        grown.extend_from_slice(src);
        *src = grown;
    }
}

/// A decoder of bodies of at most `max` bytes.
pub(crate) fn codec(max: usize) -> Bodies {
    Bodies { max }
}

impl ReadError {
    pub(crate) fn into_session(self, max: usize) -> SessionError {
        match self {
            ReadError::Io(error) => SessionError::ConnectionLost(Arc::new(error)),
            ReadError::TooLarge(len) => SessionError::FrameTooLarge { len, max },
        }
    }
}

pub(crate) async fn next<R: AsyncRead + Unpin>(
    frames: &mut FramedRead<R, Bodies>,
) -> Option<Result<BytesMut, ReadError>> {
    std::future::poll_fn(|cx| Pin::new(&mut *frames).poll_next(cx)).await
}

/// A reader that notes when bytes last came, so that a large frame arriving slowly is not
/// taken for a silent peer.
pub(crate) struct Watched<R> {
    inner: R,
    pub(crate) last: Instant,
}

impl<R> Watched<R> {
    pub(crate) fn new(inner: R) -> Self {
        Watched {
            inner,
            last: Instant::now(),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.last = Instant::now();
        }
        polled
    }
}
