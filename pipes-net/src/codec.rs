//! Reading bodies off a byte stream: tokio-util's length-delimited codec, telling an oversized
//! frame (with its announced length) apart from other errors, and a reader that notes when
//! bytes last came, for the heartbeat timeout.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::BytesMut;
use futures_core::Stream;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Instant;
use tokio_util::codec::{Decoder, FramedRead, LengthDelimitedCodec, LengthDelimitedCodecError};

use crate::error::SessionError;

/// The length-delimited codec, telling an oversized frame apart from other errors (with the
/// announced length: the codec refuses a frame while its length is still at the front).
pub(crate) struct Bodies {
    inner: LengthDelimitedCodec,
    max: usize,
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
        let announced = src
            .get(..4)
            .map(|head| u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize);
        self.inner.decode(src).map_err(|error| {
            let too_big = error
                .get_ref()
                .is_some_and(|inner| inner.is::<LengthDelimitedCodecError>());
            match (too_big, announced) {
                (true, Some(len)) => ReadError::TooLarge(len),
                (true, None) => ReadError::TooLarge(self.max + 1),
                (false, _) => ReadError::Io(error),
            }
        })
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

pub(crate) fn codec(max: usize) -> Bodies {
    Bodies {
        inner: LengthDelimitedCodec::builder()
            .max_frame_length(max)
            .new_codec(),
        max,
    }
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
