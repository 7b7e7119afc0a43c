#![doc = include_str!("../README.md")]

pub use pipes_runtime::*;
