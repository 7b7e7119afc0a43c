//! The examples, run small and checked. Each example keeps its logic in functions and its
//! `main` only parses arguments, so the test includes the example's source as a module and
//! calls those functions: no cargo inside cargo, and the example and its test cannot drift
//! apart. `dead_code` is allowed on the modules because `main` and the printing helpers are
//! there for the command line.
//!
//! Speed is printed by the examples, never asserted here.

use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../examples/bank.rs"]
mod bank;

#[allow(dead_code)]
#[path = "../examples/farm.rs"]
mod farm;

#[allow(dead_code)]
#[path = "../examples/pipeline.rs"]
mod pipeline;

#[allow(dead_code)]
#[path = "../examples/producer_consumer.rs"]
mod producer_consumer;

#[allow(dead_code)]
#[path = "../examples/futures.rs"]
mod futures;

#[allow(dead_code)]
#[path = "../examples/knucleotide.rs"]
mod knucleotide;

#[allow(dead_code)]
#[path = "../examples/tutorial.rs"]
mod tutorial;

#[test]
fn tutorial_servers_answer_with_select() {
    let (hello, name, answer, goodbye) = tutorial::run();
    assert_eq!(hello, ["Client says hello!"; 3]);
    assert_eq!(name, ["Client says hello!", "Client asks my name"]);
    assert_eq!(answer, "The server is named Bob");
    assert_eq!(
        goodbye,
        [
            "Client says hello!",
            "Client says hello!",
            "Client says good-bye."
        ]
    );
}

#[test]
fn bank_story_refuses_a_login_and_a_withdrawal_and_keeps_the_balances() {
    let (log, accounts) = bank::story();
    assert_eq!(
        log,
        [
            "alice: login with a wrong password refused",
            "alice: logged in",
            "alice: deposited 50 and 25",
            "alice: withdrawal of 120 -> Ok(120)",
            "alice: withdrawal of 100 -> Err(100)",
            "alice: logged out",
            "bob: deposited 10, withdrawal of 11 -> Err(11)",
            "mallory: unknown user refused",
        ]
    );
    // alice: 100 + 50 + 25 - 120; bob: 10, his withdrawal refused.
    assert_eq!(accounts["alice"].balance, 55);
    assert_eq!(accounts["bob"].balance, 10);
    assert!(!accounts.contains_key("mallory"));
}

#[test]
fn bank_sessions_leave_the_balance_where_it_was() {
    assert_eq!(bank::sessions(200), 100);
}

#[test]
fn bank_survives_a_client_that_vanishes_mid_session() {
    let (server, bank_thread) = bank::start_server(bank::opening_accounts());
    // A session dropped before it logs in, and one dropped while logged in.
    let (server_end, client_end) = bank::bank::init();
    server.send(server_end).unwrap();
    drop(client_end);
    let (server_end, client_end) = bank::bank::init();
    server.send(server_end).unwrap();
    let response = client_end.login("bob".into(), "hunter2".into()).unwrap();
    let bank::bank::LoginResponse::LoggedIn(connected) = response.recv().unwrap() else {
        panic!("bob's password was refused");
    };
    drop(connected.deposit(5).unwrap());
    drop(server);
    let accounts = bank_thread.join().expect("the bank outlives its clients");
    assert_eq!(accounts["bob"].balance, 5);
}

#[test]
fn farm_results_come_back_in_order_and_match_one_thread() {
    let iterations = 200;
    let expected = farm::sequential_checksum(2_000, iterations);
    for workers in [1, 2, 3, 5] {
        let run = farm::farm(2_000, iterations, workers);
        assert_eq!(run.tasks, 2_000, "{workers} workers");
        assert!(run.in_order, "{workers} workers");
        assert_eq!(run.checksum, expected, "{workers} workers");
    }
    // Fewer tasks than workers: the idle workers just see their stream end.
    assert_eq!(farm::farm(2, iterations, 4).tasks, 2);
}

#[test]
fn farm_report_checks_every_worker_count() {
    let iterations = farm::calibrate(Duration::from_micros(1));
    assert!(iterations >= 1);
    assert_eq!(farm::report("test", 500, iterations, 3).len(), 3);
}

#[test]
fn pipeline_returns_every_element_in_order() {
    // Fewer than a first batch, a batch that does not divide evenly, and several stages.
    for (elements, stages) in [(10, 1), (1_300, 2), (5_000, 4)] {
        let run = pipeline::ring(elements, stages);
        assert_eq!(run.returned, elements);
        assert!(run.in_order);
        assert_eq!(run.messages, elements * (stages as u64 + 1));
    }
    assert_eq!(pipeline::report(2_000, 3).len(), 3);
}

#[test]
fn producer_consumer_takes_every_item_once_in_both_modes() {
    use producer_consumer::{Config, Mode, report};
    for mode in [Mode::IoBound, Mode::ComputeBound] {
        // The paper's shape and latency at its smallest size: 100 items per producer.
        let consumed = report(Config::paper(500, mode));
        assert_eq!(consumed.per_consumer, [100; 5]);
    }
}

#[test]
fn producer_consumer_runs_dry_of_credit_and_closes_uneven_sessions() {
    use producer_consumer::{Config, Mode, run};
    // One credit per session: every second item waits for a grant. 1001 items do not divide
    // among 3 producers and 4 consumers, so sessions close after different numbers of items.
    let config = Config {
        producers: 3,
        consumers: 4,
        buffer: 12,
        items: 1_001,
        mode: Mode::ComputeBound,
        latency: Duration::ZERO,
    };
    assert_eq!(config.credits(), 1);
    let consumed = run(config);
    assert_eq!(consumed.count, 1_001);
    assert_eq!(consumed.sum, 1_001 * 1_000 / 2);
    assert_eq!(consumed.per_consumer.iter().sum::<u64>(), 1_001);
    // Producers make 334, 334 and 333 items and deal them round-robin from consumer 0.
    assert_eq!(
        consumed.per_consumer,
        [84 + 84 + 84, 84 + 84 + 83, 83 + 83 + 83, 83 + 83 + 83]
    );
}

#[test]
fn futures_map_in_order() {
    let squares = futures::par_map((0..20u64).collect(), |n| n * n);
    assert_eq!(squares, (0..20u64).map(|n| n * n).collect::<Vec<_>>());
    let future = futures::spawn(|| "value".to_string());
    assert_eq!(futures::get(future), "value");
}

#[test]
fn futures_graph_is_deterministic_and_undirected() {
    let graph = futures::kronecker(8, 8, 1);
    let again = futures::kronecker(8, 8, 1);
    assert_eq!(graph.targets, again.targets);
    assert_eq!(graph.vertices(), 256);
    for u in 0..graph.vertices() as u32 {
        for &v in graph.neighbours(u) {
            assert_ne!(u, v, "no self-loops");
            assert!(
                graph.neighbours(v).binary_search(&u).is_ok(),
                "{u}-{v} both ways"
            );
        }
    }
    assert_ne!(futures::kronecker(8, 8, 2).targets, graph.targets);
}

#[test]
fn futures_parallel_search_equals_the_sequential_one() {
    let graph = Arc::new(futures::kronecker(10, 8, 3));
    for root in futures::roots(&graph, 3, 11) {
        let sequential = futures::bfs_sequential(&graph, root);
        // The sequential tree is a breadth-first tree: parents are neighbours, the root is
        // its own parent.
        assert_eq!(sequential.parent[root as usize], root);
        for (v, &p) in sequential.parent.iter().enumerate() {
            if p != futures::UNVISITED && v as u32 != root {
                assert!(graph.neighbours(p).contains(&(v as u32)));
            }
        }
        assert!(sequential.visited() > 1);
        for workers in [1, 2, 3, 7] {
            assert_eq!(futures::bfs_parallel(&graph, root, workers), sequential);
        }
    }
    let runs = futures::report(9, 8, 2, 2);
    assert!(runs.iter().all(|run| run.parallel == run.sequential));
}

#[test]
fn knucleotide_counts_windows() {
    use knucleotide::{count, pack, unpack};
    let sequence = b"GGTATTGGTA";
    let threes = count(sequence, 3);
    assert_eq!(threes[&pack(b"GGT")], 2);
    assert_eq!(threes.values().sum::<u32>(), 8);
    assert_eq!(count(sequence, 10)[&pack(sequence)], 1);
    assert!(count(sequence, 11).is_empty());
    assert_eq!(unpack(pack(b"GATTACA"), 7), "GATTACA");
}

#[test]
fn knucleotide_workers_match_one_thread() {
    let run = knucleotide::run(2_000);
    assert!(run.matches_sequential);
    let lines: Vec<&str> = run.report.lines().collect();
    // 4 one-mers, a blank line, 16 two-mers, a blank line, 5 queries.
    assert_eq!(lines.len(), 4 + 1 + 16 + 1 + 5);
    assert!(lines[26].ends_with("\tGGTATTTTAATTTATAGT"));
}

#[test]
fn knucleotide_input_is_the_benchmarks_games() {
    // The published k-nucleotide output for `fasta 250000` counts 14717 GGT, 4463 GGTA and
    // 472 GGTATT; the generator reproduces that input.
    use knucleotide::{count, generate, pack};
    let sequence = generate(250_000);
    assert_eq!(sequence.len(), 1_250_000);
    assert_eq!(count(&sequence, 3)[&pack(b"GGT")], 14_717);
    assert_eq!(count(&sequence, 4)[&pack(b"GGTA")], 4_463);
    assert_eq!(count(&sequence, 6)[&pack(b"GGTATT")], 472);
}
