//! The liveness rule and the layout choice checked against a model: every interleaving of the
//! two sides over a buffer with one slot per state, for random small protocols. Whenever the
//! layout is a buffer, no side ever sends into a full slot, and whenever the model finds such
//! a send, liveness says unbounded. Plus the layouts of the shapes a reviewer would try. From
//! an adversarial review of the protocol compiler (review 4), probes that held.

use std::collections::{HashSet, VecDeque};

use proto_dsl::ast::{Direction, Next, Protocol};
use proto_dsl::layout::{Layout, WhyPackets};

/// Every interleaving of client and server over a buffer with one slot per state: returns a
/// description of the first send into a slot that is still full, if any.
fn double_write(protocol: &Protocol) -> Option<String> {
    let index = protocol.state_map();
    let n = protocol.states.len();
    let next = |s: usize, m: usize| -> Option<usize> {
        match &protocol.states[s].messages[m].next {
            Next::End { .. } => None,
            Next::State { name, .. } => Some(index[name.unraw()]),
        }
    };
    // (client at, server at, slots): `None` position = ended; slot = the message in it.
    type Config = (Option<usize>, Option<usize>, Vec<Option<usize>>);
    let start: Config = (Some(0), Some(0), vec![None; n]);
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([start]);
    while let Some(config) = queue.pop_front() {
        if !seen.insert(config.clone()) {
            continue;
        }
        let (client, server, slots) = config;
        for side in 0..2 {
            let at = if side == 0 { client } else { server };
            let Some(s) = at else { continue };
            let state = &protocol.states[s];
            let Some(direction) = state.direction else {
                continue;
            };
            if state.messages.is_empty() {
                continue;
            }
            let sends = (side == 0) == (direction == Direction::Send);
            let mut moves = Vec::new();
            if sends {
                for m in 0..state.messages.len() {
                    if slots[s].is_some() {
                        return Some(format!(
                            "{} sends into `{}` while it is full",
                            ["client", "server"][side],
                            state.name.unraw()
                        ));
                    }
                    let mut slots = slots.clone();
                    slots[s] = Some(m);
                    moves.push((next(s, m), slots));
                }
            } else if let Some(m) = slots[s] {
                let mut slots = slots.clone();
                slots[s] = None;
                moves.push((next(s, m), slots));
            }
            for (to, slots) in moves {
                let config = if side == 0 {
                    (to, server, slots)
                } else {
                    (client, to, slots)
                };
                queue.push_back(config);
            }
        }
    }
    None
}

/// A random protocol of up to 5 states.
fn random_source(random: &mut impl FnMut(usize) -> usize) -> String {
    let n = 1 + random(5);
    let mut source = String::from("#[allow(unreachable_states)] p {\n");
    for s in 0..n {
        let messages = random(4);
        let direction = match (messages, random(2)) {
            (0, _) => "",
            (_, 0) => ": send",
            _ => ": recv",
        };
        let body: Vec<String> = (0..messages)
            .map(|m| {
                let target = random(n + 1);
                if target == n {
                    format!("M{m} -> !")
                } else {
                    format!("M{m} -> S{target}")
                }
            })
            .collect();
        source.push_str(&format!("  S{s}{direction} {{ {} }}\n", body.join(", ")));
    }
    source.push('}');
    source
}

#[test]
fn a_buffer_is_chosen_only_when_no_interleaving_sends_into_a_full_slot() {
    let mut seed = 0x5eed_u64;
    let mut random = move |bound: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % bound
    };
    let (mut buffers, mut lanes) = (0, 0);
    for _ in 0..3000 {
        let source = random_source(&mut random);
        let analysis = proto_dsl::analyze(&source).unwrap_or_else(|e| panic!("{source}\n{e:?}"));
        let (protocol, liveness, layout) = analysis.layouts().next().unwrap();
        let violation = double_write(protocol);
        match layout {
            Layout::Buffer { slots } => {
                buffers += 1;
                assert!(liveness.is_bounded());
                assert_eq!(violation, None, "buffer layout for\n{source}");
                // One slot per state with messages, none for the others.
                let with_messages: Vec<usize> = (0..protocol.states.len())
                    .filter(|&i| !protocol.states[i].messages.is_empty())
                    .collect();
                assert_eq!(slots, &with_messages);
            }
            Layout::Lanes => {
                lanes += 1;
                assert!(!liveness.is_bounded(), "{source}");
            }
            Layout::Packets(why) => {
                assert_eq!(*why, WhyPackets::UsedOnce, "{source}");
                assert!(liveness.is_bounded(), "{source}");
            }
        }
        // The rule is exact for reachable states: a reachable same-direction loop can overrun.
        if violation.is_some() {
            assert!(!liveness.is_bounded(), "{source}");
        }
    }
    assert!(
        buffers > 100 && lanes > 100,
        "{buffers} buffers, {lanes} lanes"
    );
}

fn layout_of(source: &str) -> Layout {
    let analysis = proto_dsl::analyze(source).unwrap_or_else(|e| panic!("{source}\n{e:?}"));
    analysis.layouts[0].clone()
}

#[test]
fn shapes_a_reviewer_would_try() {
    // Two sends in a row, then a receive: bounded (the server must drain both before it
    // answers, and the client must hear the answer before it sends again).
    assert!(matches!(
        layout_of("p { A: send { X -> B } B: send { Y -> C } C: recv { Z -> A } }"),
        Layout::Buffer { .. }
    ));
    // A send-send cycle: lanes.
    assert_eq!(
        layout_of("p { A: send { X -> B, Q -> ! } B: send { Y -> A } }"),
        Layout::Lanes
    );
    // A state reachable two ways, one of them a same-direction loop: lanes.
    assert_eq!(
        layout_of("p { A: send { X -> B, W -> C } B: send { Y -> A } C: recv { Z -> A } }"),
        Layout::Lanes
    );
    // A receive-receive cycle: lanes.
    assert_eq!(
        layout_of("p { A: send { X -> B } B: recv { Y -> C, Q -> ! } C: recv { Z -> B } }"),
        Layout::Lanes
    );
    // An unreachable self loop makes the protocol unbounded (2012's msgsend trick).
    assert_eq!(
        layout_of("p { A: send { X -> ! } #[allow(unreachable_states)] U: send { Y -> U } }"),
        Layout::Lanes
    );
    // A raw target names the same state as its plain spelling.
    assert_eq!(
        layout_of("p { r#A: send { X -> A, Q -> ! } }"),
        Layout::Lanes
    );
    // A generic loop whose parameters change: packets (each message its own).
    assert_eq!(
        layout_of("p { A: send<T> { X(T) -> A<Vec<T>>, Q -> ! } }"),
        Layout::Packets(WhyPackets::GenericsDiffer)
    );
    // A state named like a message of another: names of messages play no part.
    assert!(matches!(
        layout_of("p { A: send { B -> B } B: recv { A -> A } }"),
        Layout::Buffer { .. }
    ));
    // One state with messages, through a messageless end: a packet used once.
    assert_eq!(
        layout_of("p { A: send { X -> Done, Y -> ! } Done {} }"),
        Layout::Packets(WhyPackets::UsedOnce)
    );
}
