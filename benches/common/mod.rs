//! What every benchmark program shares: CPU time, medians, and its numeric arguments.
#![allow(dead_code)]

pub mod counting;
pub mod protocols;

use std::time::{Duration, Instant};

/// CPU time of the whole process (every thread), user plus system: reported beside wall time,
/// since a spinning receiver can buy wall time with CPU.
pub fn cpu_time() -> Duration {
    let (user, system) = user_system_time();
    user + system
}

/// User and system CPU time of the whole process apart, as `time` reports them (seed 003's
/// figures show both: a thread that parks in the kernel shows as system time).
pub fn user_system_time() -> (Duration, Duration) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a full `rusage` on success, which the assert checks.
    let usage = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()), 0);
        usage.assume_init()
    };
    let time =
        |t: libc::timeval| Duration::from_micros(t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64);
    (time(usage.ru_utime), time(usage.ru_stime))
}

/// The median of some measurements (the upper one of an even count).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The program's numeric arguments, in order: `cargo bench` also passes `--bench`, which is
/// skipped with anything else that is not a number.
pub fn numeric_args() -> Vec<u64> {
    std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect()
}

/// Whether a measurement should stop before iteration `i` (the clock is read every 1024).
pub fn out_of_time(i: u64, limit: Instant) -> bool {
    i.is_multiple_of(1024) && Instant::now() >= limit
}

/// One machine-readable line, `RESULT key=value ...`, which benches/report.py parses (the Go
/// programs in benches/go print the same); a value holding a space is quoted.
pub fn result_line(fields: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut line = String::from("RESULT");
    for (key, value) in fields {
        let value = value.to_string();
        if value.contains(' ') {
            line += &format!(" {key}={value:?}");
        } else {
            line += &format!(" {key}={value}");
        }
    }
    line
}
