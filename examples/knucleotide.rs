//! The benchmarks game's k-nucleotide over pipes: count every k-long substring of a DNA
//! sequence for k = 1, 2, 3, 4, 6, 12 and 18, with one worker thread per frame length; each
//! worker sends its whole table back over a oneshot (the table moves, nothing is copied). The
//! output is the benchmark's: the frequencies of the 1- and 2-mers, then the counts of GGT,
//! GGTA, GGTATT, GGTATTTTAATT and GGTATTTTAATTTATAGT.
//!
//! The input is generated, not read: the benchmarks game's own `fasta` generator (its linear
//! congruential generator, seed 42, and the Homo sapiens frequencies), producing the
//! `>THREE` section that k-nucleotide reads, 5 * N nucleotides for `fasta N`. Every table is
//! checked against a count on one thread.
//!
//! This is the workload of the 2012 pipes era's shootout benchmarks (seed 004 names the
//! benchmark programs the library was measured with).
//!
//! Run: `cargo run --release --example knucleotide [-- N]` (default 100000, a 500,000-long
//! sequence; the benchmark's own size is 25000000).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use pipes::oneshot;

/// The frame lengths, one worker each.
pub const FRAMES: [usize; 7] = [1, 2, 3, 4, 6, 12, 18];

/// The sequences whose counts the benchmark prints.
pub const QUERIES: [&str; 5] = [
    "GGT",
    "GGTA",
    "GGTATT",
    "GGTATTTTAATT",
    "GGTATTTTAATTTATAGT",
];

/// The benchmarks game's random generator (`fasta`): a linear congruential generator.
struct Lcg(u32);

impl Lcg {
    const IM: u32 = 139_968;
    const IA: u32 = 3_877;
    const IC: u32 = 29_573;

    /// The next number in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = (self.0 * Self::IA + Self::IC) % Self::IM;
        f64::from(self.0) / f64::from(Self::IM)
    }
}

/// The `>THREE` section of `fasta n`, upper case: 5n nucleotides. `fasta` draws one random
/// number per character of `>TWO` (3n of them) first, so the generator is advanced past those.
pub fn generate(n: usize) -> Vec<u8> {
    const HOMO_SAPIENS: [(u8, f64); 4] = [
        (b'A', 0.302_954_942_668_0),
        (b'C', 0.197_988_300_492_1),
        (b'G', 0.197_547_306_639_1),
        (b'T', 0.301_509_450_200_8),
    ];
    let mut lcg = Lcg(42);
    for _ in 0..3 * n {
        lcg.next();
    }
    (0..5 * n)
        .map(|_| {
            let r = lcg.next();
            let mut cumulative = 0.0;
            for (nucleotide, p) in HOMO_SAPIENS {
                cumulative += p;
                if r < cumulative {
                    return nucleotide;
                }
            }
            // Rounding can leave the sum of the probabilities just under 1.
            HOMO_SAPIENS[3].0
        })
        .collect()
}

/// Two bits per nucleotide.
fn code(nucleotide: u8) -> u64 {
    match nucleotide {
        b'A' => 0,
        b'C' => 1,
        b'G' => 2,
        b'T' => 3,
        other => panic!("not a nucleotide: {:?}", other as char),
    }
}

/// A k-mer (k <= 32) packed two bits per nucleotide.
pub fn pack(kmer: &[u8]) -> u64 {
    kmer.iter().fold(0, |key, &n| key << 2 | code(n))
}

/// The k-mer a packed key stands for.
pub fn unpack(key: u64, k: usize) -> String {
    (0..k)
        .rev()
        .map(|i| b"ACGT"[(key >> (2 * i) & 3) as usize] as char)
        .collect()
}

/// A multiplicative hash (after rustc's FxHash): the keys are already well-mixed integers,
/// and SipHash would dominate the counting.
#[derive(Default)]
pub struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Counts of packed k-mers.
pub type Counts = HashMap<u64, u32, BuildHasherDefault<MulHasher>>;

/// Counts every k-long window of `sequence`.
pub fn count(sequence: &[u8], k: usize) -> Counts {
    assert!((1..=32).contains(&k), "a k-mer must fit in 64 bits");
    let mut counts = Counts::default();
    if sequence.len() < k {
        return counts;
    }
    let mask = if k == 32 {
        u64::MAX
    } else {
        (1 << (2 * k)) - 1
    };
    let mut key = pack(&sequence[..k - 1]);
    for &n in &sequence[k - 1..] {
        key = (key << 2 | code(n)) & mask;
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

/// Counts every frame length in `FRAMES`, one worker thread per length, each sending its table
/// back on a oneshot. Tables come back in `FRAMES` order.
pub fn count_parallel(sequence: Arc<Vec<u8>>) -> Vec<Counts> {
    let ports: Vec<_> = FRAMES
        .iter()
        .map(|&k| {
            let (port, chan) = oneshot::<Counts>();
            let sequence = Arc::clone(&sequence);
            thread::spawn(move || {
                // The caller waits on every port, so it is still there.
                chan.send(count(&sequence, k))
                    .expect("the caller waits for the table");
            });
            port
        })
        .collect();
    ports
        .into_iter()
        .map(|port| port.recv().expect("a counting worker panicked"))
        .collect()
}

/// The benchmark's report: frequencies of every k-mer for k = 1 and 2, largest first, then the
/// counts of the queries.
pub fn render(tables: &[Counts]) -> String {
    let mut out = String::new();
    for k in [1, 2] {
        let table = &tables[FRAMES.iter().position(|&f| f == k).expect("a frame")];
        let total: u32 = table.values().sum();
        let mut entries: Vec<(String, u32)> =
            table.iter().map(|(&key, &n)| (unpack(key, k), n)).collect();
        entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (kmer, n) in entries {
            out += &format!("{kmer} {:.3}\n", 100.0 * f64::from(n) / f64::from(total));
        }
        out += "\n";
    }
    for query in QUERIES {
        let table = &tables[FRAMES
            .iter()
            .position(|&f| f == query.len())
            .expect("a frame")];
        let n = table.get(&pack(query.as_bytes())).copied().unwrap_or(0);
        out += &format!("{n}\t{query}\n");
    }
    out
}

/// What a run gives back: the report, and whether every table matched the sequential count.
pub struct Run {
    /// The benchmark's output.
    pub report: String,
    /// Whether the workers' tables equal the ones counted on one thread.
    pub matches_sequential: bool,
    /// Generating, counting in parallel, counting sequentially.
    pub times: (Duration, Duration, Duration),
}

/// Generates `fasta n`'s sequence, counts it both ways and renders the report.
pub fn run(n: usize) -> Run {
    let start = Instant::now();
    let sequence = Arc::new(generate(n));
    let generated = start.elapsed();
    let start = Instant::now();
    let parallel = count_parallel(Arc::clone(&sequence));
    let parallel_time = start.elapsed();
    let start = Instant::now();
    let sequential: Vec<Counts> = FRAMES.iter().map(|&k| count(&sequence, k)).collect();
    let sequential_time = start.elapsed();
    Run {
        report: render(&parallel),
        matches_sequential: parallel == sequential,
        times: (generated, parallel_time, sequential_time),
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("N is a number"))
        .unwrap_or(100_000);
    let run = run(n);
    print!("{}", run.report);
    let (generated, parallel, sequential) = run.times;
    println!(
        "knucleotide: {} nucleotides generated in {:.3} s; {} workers {:.3} s, one thread {:.3} s; tables match: {}",
        5 * n,
        generated.as_secs_f64(),
        FRAMES.len(),
        parallel.as_secs_f64(),
        sequential.as_secs_f64(),
        run.matches_sequential
    );
    assert!(run.matches_sequential);
}
