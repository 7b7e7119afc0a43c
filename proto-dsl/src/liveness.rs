//! Liveness: which states can be reached, whether the protocol can end, and whether it is
//! bounded (one preallocated packet per state suffices for a whole session) or unbounded (a
//! state's messages need a queue), by the co-liveness rule of the 2012 pipe compiler. What
//! follows for the layout of a session is decided in `layout.rs`.
//!
//! # The co-liveness rule
//!
//! 2012's `liveness.rs` defined "co-live" inductively:
//!
//! 1. `u` is co-live with `v` if `u` can transition to `v` in one message;
//! 2. `u` is co-live with `v` if there is a `w` with `u` co-live with `w`, `w` co-live with
//!    `v`, and `u` and `w` of the same direction,
//!
//! and called a protocol bounded when no state is co-live with itself. Why it matters: in a
//! bounded protocol every state owns one packet slot in a buffer allocated once per session,
//! and a send writes the current state's slot. When the next state has the same direction, the
//! same side sends again without waiting for the peer to receive; if such a run of sends can
//! come back to a state it started from, that state's slot may be written a second time while
//! its first message is still unread. With alternating directions each side must receive
//! before it sends again, so the slot is always drained by then.
//!
//! Unfolding the induction gives a simpler reading, which this module computes: `u` is co-live
//! with `v` exactly when some path of transitions leads from `u` to `v` whose intermediate
//! states all have `u`'s direction. So `u` is co-live with itself exactly when `u` lies on a
//! cycle of states that all have one direction, and the protocol is bounded exactly when the
//! graph of same-direction transitions has no cycle (self-loops included). That is a strongly
//! connected components pass, linear in states plus messages, where 2012 iterated a bit-matrix
//! fixpoint (the unit tests check that both agree).
//!
//! Like 2012, boundedness looks at every declared state, reachable or not: the msgsend
//! benchmark forced a protocol to be unbounded with an unreachable self-looping state, and
//! `pingpong_unbounded` keeps that working.

use std::fmt;

use crate::ast::{Direction, Protocol};

/// What liveness found for one protocol. States are named by their index in
/// `Protocol::states` (declaration order; 0 is the start state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Liveness {
    /// The protocol's name.
    pub protocol: String,
    /// The names of all states, by index.
    pub states: Vec<String>,
    /// The states reachable from the start state, in declaration order.
    pub reachable: Vec<usize>,
    /// Whether some reachable state can end the protocol: it has a message to `!`, or it has
    /// no messages at all.
    pub can_end: bool,
    /// Bounded or not, and what follows from it.
    pub boundedness: Boundedness,
}

/// Whether a session can live in one preallocated buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Boundedness {
    /// No state is co-live with itself: a state's message is always received before the same
    /// state is sent in again, so one slot per state can serve a whole session (see
    /// [`Layout`](crate::layout::Layout)).
    Bounded,
    /// Some states are co-live with themselves: a state may be sent in again and again before
    /// the peer receives, so its messages need a queue (or a packet each).
    Unbounded {
        /// The loops that make it so: each is a set of same-direction states that can cycle
        /// (a single state loops to itself), as state indices in declaration order.
        loops: Vec<Vec<usize>>,
    },
}

impl Liveness {
    /// Whether the protocol is bounded.
    pub fn is_bounded(&self) -> bool {
        matches!(self.boundedness, Boundedness::Bounded)
    }

    /// Whether the state with this index is reachable from the start state.
    pub fn is_reachable(&self, state: usize) -> bool {
        self.reachable.binary_search(&state).is_ok()
    }
}

/// The transitions between states, by index (targets that do not resolve are left out, so
/// this never fails on an unchecked protocol).
fn successors(protocol: &Protocol) -> Vec<Vec<usize>> {
    let index = protocol.state_map();
    protocol
        .states
        .iter()
        .map(|s| {
            let mut next: Vec<usize> = s
                .messages
                .iter()
                .filter_map(|m| {
                    m.next
                        .state_name()
                        .and_then(|n| index.get(n.unraw()).copied())
                })
                .collect();
            next.sort_unstable();
            next.dedup();
            next
        })
        .collect()
}

/// Analyses one protocol. Meant for checked protocols; on others it still returns an answer
/// (unresolved targets are ignored) rather than failing.
pub fn analyze(protocol: &Protocol) -> Liveness {
    let next = successors(protocol);
    let n = protocol.states.len();

    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    if n > 0 {
        seen[0] = true;
        stack.push(0);
    }
    while let Some(i) = stack.pop() {
        for &j in &next[i] {
            if !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    let reachable: Vec<usize> = (0..n).filter(|&i| seen[i]).collect();
    let can_end = reachable.iter().any(|&i| {
        let s = &protocol.states[i];
        s.messages.is_empty() || s.messages.iter().any(|m| m.next.state_name().is_none())
    });

    let directions: Vec<Option<Direction>> = protocol.states.iter().map(|s| s.direction).collect();
    let same_direction: Vec<Vec<usize>> = next
        .iter()
        .enumerate()
        .map(|(u, vs)| {
            vs.iter()
                .copied()
                .filter(|&v| directions[u].is_some() && directions[u] == directions[v])
                .collect()
        })
        .collect();
    let loops: Vec<Vec<usize>> = strongly_connected(&same_direction)
        .into_iter()
        .filter(|c| c.len() > 1 || c.first().is_some_and(|&u| same_direction[u].contains(&u)))
        .collect();

    let boundedness = if loops.is_empty() {
        Boundedness::Bounded
    } else {
        Boundedness::Unbounded { loops }
    };
    Liveness {
        protocol: protocol.name.unraw().to_string(),
        states: protocol
            .states
            .iter()
            .map(|s| s.name.unraw().to_string())
            .collect(),
        reachable,
        can_end,
        boundedness,
    }
}

/// Strongly connected components (Kosaraju, iterative so that long chains of states cannot
/// overflow the stack). Each component is sorted; components are ordered by their first state.
fn strongly_connected(graph: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = graph.len();
    let mut order = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    for root in 0..n {
        if visited[root] {
            continue;
        }
        visited[root] = true;
        let mut stack = vec![(root, 0usize)];
        while let Some((u, edge)) = stack.pop() {
            if let Some(&v) = graph[u].get(edge) {
                stack.push((u, edge + 1));
                if !visited[v] {
                    visited[v] = true;
                    stack.push((v, 0));
                }
            } else {
                order.push(u);
            }
        }
    }
    let mut reverse = vec![Vec::new(); n];
    for (u, vs) in graph.iter().enumerate() {
        for &v in vs {
            reverse[v].push(u);
        }
    }
    let mut component = vec![usize::MAX; n];
    let mut components = Vec::new();
    for &root in order.iter().rev() {
        if component[root] != usize::MAX {
            continue;
        }
        let id = components.len();
        let mut members = vec![root];
        component[root] = id;
        let mut stack = vec![root];
        while let Some(u) = stack.pop() {
            for &v in &reverse[u] {
                if component[v] == usize::MAX {
                    component[v] = id;
                    members.push(v);
                    stack.push(v);
                }
            }
        }
        members.sort_unstable();
        components.push(members);
    }
    components.sort_unstable_by_key(|c| c[0]);
    components
}

impl fmt::Display for Liveness {
    /// A short report: reachable states, whether it ends, bounded or not and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |indices: &[usize]| -> String {
            indices
                .iter()
                .map(|&i| self.states.get(i).map_or("?", String::as_str))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(f, "protocol {}", self.protocol)?;
        writeln!(f, "  reachable: {}", names(&self.reachable))?;
        let unreachable: Vec<usize> = (0..self.states.len())
            .filter(|&i| !self.is_reachable(i))
            .collect();
        if !unreachable.is_empty() {
            writeln!(f, "  unreachable: {}", names(&unreachable))?;
        }
        writeln!(f, "  can end: {}", if self.can_end { "yes" } else { "no" })?;
        match &self.boundedness {
            Boundedness::Bounded => writeln!(f, "  bounded: yes"),
            Boundedness::Unbounded { loops } => {
                let loops: Vec<String> = loops.iter().map(|l| format!("[{}]", names(l))).collect();
                writeln!(
                    f,
                    "  bounded: no, same-direction loops: {}",
                    loops.join(" ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2012 algorithm, transcribed: a co-live matrix seeded with one-message successors,
    /// then `colive[i] |= colive[j]` for each `j` in `colive[i]` of `i`'s direction, to a
    /// fixpoint. Returns the states co-live with themselves.
    fn colive_2012(next: &[Vec<usize>], dirs: &[Option<Direction>]) -> Vec<usize> {
        let n = next.len();
        let mut colive = vec![vec![false; n]; n];
        for (i, vs) in next.iter().enumerate() {
            for &v in vs {
                colive[i][v] = true;
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..n {
                for j in 0..n {
                    if colive[i][j] && dirs[i] == dirs[j] {
                        let row_j = colive[j].clone();
                        for (k, &j_to_k) in row_j.iter().enumerate() {
                            if j_to_k && !colive[i][k] {
                                colive[i][k] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
        }
        (0..n).filter(|&i| colive[i][i]).collect()
    }

    #[test]
    fn components_agree_with_the_2012_fixpoint_on_random_graphs() {
        let mut seed = 0x2012_u64;
        let mut random = move |bound: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % bound
        };
        for _ in 0..300 {
            let n = 1 + random(9);
            let dirs: Vec<Option<Direction>> = (0..n)
                .map(|_| match random(5) {
                    0 => None,
                    1 | 2 => Some(Direction::Send),
                    _ => Some(Direction::Recv),
                })
                .collect();
            let next: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    if dirs[i].is_none() {
                        Vec::new()
                    } else {
                        (0..random(4)).map(|_| random(n)).collect()
                    }
                })
                .collect();
            let same: Vec<Vec<usize>> = next
                .iter()
                .enumerate()
                .map(|(u, vs)| {
                    vs.iter()
                        .copied()
                        .filter(|&v| dirs[u].is_some() && dirs[u] == dirs[v])
                        .collect()
                })
                .collect();
            let mut ours: Vec<usize> = strongly_connected(&same)
                .into_iter()
                .filter(|c| c.len() > 1 || same[c[0]].contains(&c[0]))
                .flatten()
                .collect();
            ours.sort_unstable();
            assert_eq!(
                ours,
                colive_2012(&next, &dirs),
                "graph {next:?} directions {dirs:?}"
            );
        }
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let n = 200_000;
        let graph: Vec<Vec<usize>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
        let components = strongly_connected(&graph);
        assert_eq!(components.len(), 1);
        assert_eq!(components[0].len(), n);
    }
}
