// msgsend-ring-pipes: a number passed round three threads, each link a `ring` session.

#[test]
fn a_number_goes_round_three_threads() {
    // Three links: each thread receives from its left and sends to its right.
    let links: Vec<_> = (0..3).map(|_| ring::init()).collect();
    let (servers, clients): (Vec<_>, Vec<_>) = links.into_iter().unzip();
    let mut clients: Vec<_> = clients.into_iter().map(Some).collect();
    clients.rotate_left(1);
    let handles: Vec<_> = servers
        .into_iter()
        .zip(clients)
        .enumerate()
        .map(|(i, (mut left, right))| {
            std::thread::spawn(move || {
                let mut right = right.unwrap();
                if i == 0 {
                    right = right.num(0).unwrap();
                }
                // 100 laps: thread 0 starts the number and does not pass on the last one.
                let mut last = 0;
                for lap in 0..100 {
                    let ring::num::num(n, next) = left.recv().unwrap();
                    left = next;
                    last = n;
                    if i == 0 && lap == 99 {
                        break;
                    }
                    right = right.num(n + 1).unwrap();
                }
                last
            })
        })
        .collect();
    let results: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    // 300 hops, each adding one, starting from 0.
    assert_eq!(results, [299, 297, 298]);
}
