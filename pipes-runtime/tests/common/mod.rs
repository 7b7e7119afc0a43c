//! Helpers shared by the runtime's integration tests.
#![allow(dead_code)]

pub mod bombs;
pub mod counting;
pub mod pingpong;
pub mod task;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A payload that counts its drops, to prove every message is dropped exactly once.
#[derive(Debug)]
pub struct Counted {
    pub value: u64,
    drops: Arc<AtomicUsize>,
}

/// Makes `Counted` values that share one drop counter.
#[derive(Clone, Default)]
pub struct DropCounter(Arc<AtomicUsize>);

impl DropCounter {
    pub fn make(&self, value: u64) -> Counted {
        Counted {
            value,
            drops: self.0.clone(),
        }
    }

    pub fn drops(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Long enough that the other thread is surely blocked (used only to order events; no test
/// asserts on time).
pub const SETTLE: std::time::Duration =
    std::time::Duration::from_millis(if cfg!(miri) { 1 } else { 30 });

/// Scales a test size down under Miri, which runs ~1000x slower.
pub const fn size(normal: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { normal }
}
