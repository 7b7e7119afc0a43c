//! Futures on pipes, as the 2012 library built them (seed 004): a future is the client end of a
//! protocol whose start state is `recv`, `future_pipe { waiting: recv<T: Send> { completed(T)
//! -> ! } }`; `spawn` runs a closure on a thread that holds the server end and sends the value.
//! On top of that, a parallel map (one future per chunk, results in input order), used for a
//! parallel breadth-first search in the style of Graph500: a Kronecker graph from a seeded,
//! deterministic generator, searched level by level, each level's frontier expanded by futures.
//!
//! Each level hands the futures the parent array by `Arc` and gets it back unshared once they
//! are done; the futures return candidate (vertex, parent) pairs and the caller merges them in
//! chunk order. That is the order a sequential search discovers vertices in, so the parallel
//! parent tree is checked for equality against a sequential search, not just for validity.
//! Printed: the graph, each search's levels and visited vertices, and traversed edges per
//! second (TEPS) for both searches.
//!
//! Run: `cargo run --release --example futures [-- SCALE [EDGE_FACTOR [ROOTS [WORKERS]]]]`
//! (defaults 16, 16, 4, 2: 65,536 vertices and about a million edges).

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

pipes::proto! {
    /// A future: the client waits for the one value the server sends.
    pub future_pipe {
        waiting: recv<T: Send> {
            completed(T) -> !
        }
    }
}

/// A value being computed on another thread.
pub type Future<T> = future_pipe::client::waiting<T>;

/// Runs `work` on a new thread; the returned future yields its result.
pub fn spawn<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Future<T> {
    let (server, client) = future_pipe::init::<T>();
    thread::spawn(move || {
        // Calling the `FnOnce` consumes it, so everything it captured is dropped before the
        // value is sent: a caller that gets the value knows the worker holds nothing of its.
        let value = work();
        // The caller may have dropped the future; then nobody wants the value.
        let _ = server.completed(value);
    });
    client
}

/// Waits for a future's value. Panics if the worker panicked.
pub fn get<T: Send>(future: Future<T>) -> T {
    let future_pipe::waiting::completed(value) =
        future.recv().expect("the future's worker panicked");
    value
}

/// Maps `f` over `inputs`, one future per input, and returns the results in input order.
pub fn par_map<T, R>(inputs: Vec<T>, f: impl Fn(T) -> R + Send + Sync + 'static) -> Vec<R>
where
    T: Send + 'static,
    R: Send + 'static,
{
    let f = Arc::new(f);
    let futures: Vec<Future<R>> = inputs
        .into_iter()
        .map(|input| {
            let f = Arc::clone(&f);
            spawn(move || f(input))
        })
        .collect();
    futures.into_iter().map(get).collect()
}

/// A small, fast, seeded generator (SplitMix64): the same seed gives the same graph anywhere.
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// An undirected graph in compressed sparse rows: the neighbours of `v` are
/// `targets[offsets[v]..offsets[v + 1]]`, sorted.
pub struct Graph {
    /// Where each vertex's neighbours start; one more entry than vertices.
    pub offsets: Vec<usize>,
    /// All neighbour lists, one after another.
    pub targets: Vec<u32>,
}

impl Graph {
    /// Vertices in the graph.
    pub fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The neighbours of `v`.
    pub fn neighbours(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }

    /// Undirected edges (each stored twice, once per end).
    pub fn edges(&self) -> usize {
        self.targets.len() / 2
    }
}

/// Graph500's Kronecker generator: `edge_factor * 2^scale` edges, each placed by recursively
/// choosing a quadrant of the adjacency matrix with probabilities A = 0.57, B = C = 0.19,
/// D = 0.05; vertex labels are then shuffled so the high-degree vertices are not all at 0.
/// Self-loops and duplicate edges are dropped.
pub fn kronecker(scale: u32, edge_factor: u64, seed: u64) -> Graph {
    let (a, b, c) = (0.57, 0.19, 0.19);
    let ab = a + b;
    let c_norm = c / (1.0 - ab);
    let a_norm = a / ab;
    let n = 1usize << scale;
    let mut rng = SplitMix64::new(seed);
    let mut edges = Vec::with_capacity((edge_factor as usize) << scale);
    for _ in 0..(edge_factor << scale) {
        let (mut i, mut j) = (0u32, 0u32);
        for bit in 0..scale {
            let i_bit = rng.next_f64() > ab;
            let j_bit = rng.next_f64() > if i_bit { c_norm } else { a_norm };
            i |= u32::from(i_bit) << bit;
            j |= u32::from(j_bit) << bit;
        }
        edges.push((i, j));
    }
    // Fisher-Yates over the labels.
    let mut label: Vec<u32> = (0..n as u32).collect();
    for k in (1..n).rev() {
        label.swap(k, (rng.next_u64() % (k as u64 + 1)) as usize);
    }
    let mut adjacency: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, j) in edges {
        let (i, j) = (label[i as usize], label[j as usize]);
        if i != j {
            adjacency[i as usize].push(j);
            adjacency[j as usize].push(i);
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::new();
    offsets.push(0);
    for mut list in adjacency {
        list.sort_unstable();
        list.dedup();
        targets.extend_from_slice(&list);
        offsets.push(targets.len());
    }
    Graph { offsets, targets }
}

/// Marks a vertex not reached (yet).
pub const UNVISITED: u32 = u32::MAX;

/// A search's result: each vertex's parent in the tree (the root is its own parent) and the
/// number of levels.
#[derive(Debug, PartialEq, Eq)]
pub struct Search {
    /// The parent of each vertex, or [`UNVISITED`].
    pub parent: Vec<u32>,
    /// Levels of the search, the root's included.
    pub levels: usize,
}

impl Search {
    /// Vertices reached, the root included.
    pub fn visited(&self) -> usize {
        self.parent.iter().filter(|&&p| p != UNVISITED).count()
    }
}

/// Breadth-first search on one thread: the reference.
pub fn bfs_sequential(graph: &Graph, root: u32) -> Search {
    let mut parent = vec![UNVISITED; graph.vertices()];
    parent[root as usize] = root;
    let mut frontier = vec![root];
    let mut levels = 0;
    while !frontier.is_empty() {
        levels += 1;
        let mut next = Vec::new();
        for &u in &frontier {
            for &v in graph.neighbours(u) {
                if parent[v as usize] == UNVISITED {
                    parent[v as usize] = u;
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    Search { parent, levels }
}

/// Breadth-first search, each level's frontier split into `workers` chunks expanded by
/// futures. A future proposes (vertex, parent) for every neighbour unvisited at the start of
/// the level; the first proposal for a vertex, in frontier order, wins, as in the sequential
/// search.
pub fn bfs_parallel(graph: &Arc<Graph>, root: u32, workers: usize) -> Search {
    let mut parent = Arc::new(vec![UNVISITED; graph.vertices()]);
    Arc::get_mut(&mut parent).expect("not shared yet")[root as usize] = root;
    let mut frontier = vec![root];
    let mut levels = 0;
    while !frontier.is_empty() {
        levels += 1;
        let chunk = frontier.len().div_ceil(workers.max(1));
        let chunks: Vec<Vec<u32>> = frontier.chunks(chunk).map(<[u32]>::to_vec).collect();
        let (shared_graph, shared_parent) = (Arc::clone(graph), Arc::clone(&parent));
        let proposals = par_map(chunks, move |chunk| {
            // Only a chunk's first proposal for a vertex can win the merge, so later ones are
            // dropped here, in parallel, rather than sent back for the caller to skip.
            let mut proposed = vec![0u64; shared_parent.len().div_ceil(64)];
            let mut found = Vec::new();
            for u in chunk {
                for &v in shared_graph.neighbours(u) {
                    let (word, bit) = (v as usize / 64, 1u64 << (v % 64));
                    if shared_parent[v as usize] == UNVISITED && proposed[word] & bit == 0 {
                        proposed[word] |= bit;
                        found.push((v, u));
                    }
                }
            }
            found
        });
        // par_map has dropped its closure and every future has returned, so the parent array
        // is ours alone again and can be updated in place.
        let parent_mut = Arc::get_mut(&mut parent).expect("the futures have let go");
        let mut next = Vec::new();
        for (v, u) in proposals.into_iter().flatten() {
            if parent_mut[v as usize] == UNVISITED {
                parent_mut[v as usize] = u;
                next.push(v);
            }
        }
        frontier = next;
    }
    let parent = Arc::try_unwrap(parent).expect("the futures have let go");
    Search { parent, levels }
}

/// `count` search roots with at least one neighbour, chosen by a seeded generator.
pub fn roots(graph: &Graph, count: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    let mut roots = Vec::with_capacity(count);
    while roots.len() < count {
        let v = (rng.next_u64() % graph.vertices() as u64) as u32;
        if !graph.neighbours(v).is_empty() && !roots.contains(&v) {
            roots.push(v);
        }
    }
    roots
}

/// What one root's searches give back.
#[derive(Debug)]
pub struct RootRun {
    /// The root.
    pub root: u32,
    /// The sequential search.
    pub sequential: Search,
    /// The parallel search; equal to the sequential one when all is well.
    pub parallel: Search,
    /// Wall time of each.
    pub times: (Duration, Duration),
}

/// Generates the graph and searches it from `root_count` roots both ways, printing as it goes.
pub fn report(scale: u32, edge_factor: u64, root_count: usize, workers: usize) -> Vec<RootRun> {
    let start = Instant::now();
    let graph = Arc::new(kronecker(scale, edge_factor, 500));
    println!(
        "futures: Kronecker graph, scale {scale}, edge factor {edge_factor}: {} vertices, {} edges, generated in {:.2} s",
        graph.vertices(),
        graph.edges(),
        start.elapsed().as_secs_f64()
    );
    let mut runs = Vec::new();
    for root in roots(&graph, root_count, 7) {
        let start = Instant::now();
        let sequential = bfs_sequential(&graph, root);
        let sequential_time = start.elapsed();
        let start = Instant::now();
        let parallel = bfs_parallel(&graph, root, workers);
        let parallel_time = start.elapsed();
        // Edges in the component searched: each is stored once per end.
        let traversed: usize = (0..graph.vertices() as u32)
            .filter(|&v| sequential.parent[v as usize] != UNVISITED)
            .map(|v| graph.neighbours(v).len())
            .sum::<usize>()
            / 2;
        println!(
            "futures: root {root:>6}: {} levels, {} vertices; sequential {:6.1} M TEPS, {workers} futures per level {:6.1} M TEPS; same tree: {}",
            sequential.levels,
            sequential.visited(),
            traversed as f64 / sequential_time.as_secs_f64() / 1e6,
            traversed as f64 / parallel_time.as_secs_f64() / 1e6,
            parallel == sequential
        );
        runs.push(RootRun {
            root,
            sequential,
            parallel,
            times: (sequential_time, parallel_time),
        });
    }
    runs
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers"))
        .collect();
    let scale = args.first().copied().unwrap_or(16) as u32;
    let edge_factor = args.get(1).copied().unwrap_or(16);
    let roots = args.get(2).copied().unwrap_or(4) as usize;
    let workers = args.get(3).copied().unwrap_or(2) as usize;
    assert!((1..32).contains(&scale), "scale is between 1 and 31");
    let runs = report(scale, edge_factor, roots, workers);
    assert!(runs.iter().all(|run| run.parallel == run.sequential));
}
