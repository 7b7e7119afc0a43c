//! The async examples (`examples/async_rumpsteak.rs`), run small on tokio's current-thread
//! and multi-thread runtimes, with their results checked against closed forms.

#[allow(dead_code)]
#[path = "../examples/async_rumpsteak.rs"]
mod rumpsteak;

fn runtimes() -> [tokio::runtime::Runtime; 2] {
    [
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap(),
    ]
}

#[test]
fn ring_adds_six_per_round() {
    for runtime in runtimes() {
        assert_eq!(runtime.block_on(rumpsteak::ring(100)), 600);
    }
}

#[test]
fn ring_choice_alternates_subtracting_and_adding() {
    // Rounds 1..=100: odd rounds subtract 6 * round, even rounds add it: 6 * 50.
    for runtime in runtimes() {
        assert_eq!(runtime.block_on(rumpsteak::ring_choice(100)), 300);
    }
}

#[test]
fn adder_sums_the_pairs() {
    for runtime in runtimes() {
        assert_eq!(runtime.block_on(rumpsteak::adder(100)), 100 * 100);
    }
}

#[test]
fn double_buffering_delivers_every_number_once() {
    for runtime in runtimes() {
        let n = 50 * 8;
        assert_eq!(
            runtime.block_on(rumpsteak::double_buffering(50, 8)),
            n * (n - 1) / 2
        );
    }
}
