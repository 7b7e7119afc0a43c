//! The fixture corpus (`tests/fixtures/*.pipes`): every protocol the project takes as a
//! reference must analyse cleanly; its AST and its liveness are snapshotted.

mod common;

use std::collections::BTreeSet;

use proto_dsl::layout::{Layout, WhyPackets};
use proto_dsl::liveness::Boundedness;

fn analyze_fixture(name: &str) -> proto_dsl::Analysis {
    let path = common::fixtures().join(format!("{name}.pipes"));
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match proto_dsl::analyze(&source) {
        Ok(analysis) => analysis,
        Err(errors) => panic!(
            "{name} does not compile:\n{}",
            errors.render(&format!("{name}.pipes"), &source)
        ),
    }
}

macro_rules! fixtures {
    ($($name:ident: $bounded:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let analysis = analyze_fixture(stringify!($name));
                insta::assert_snapshot!(concat!("ast__", stringify!($name)), analysis.file.outline());
                let liveness: String = analysis.liveness.iter().map(|l| l.to_string()).collect();
                insta::assert_snapshot!(concat!("liveness__", stringify!($name)), liveness);
                let bounded: Vec<bool> = analysis.liveness.iter().map(|l| l.is_bounded()).collect();
                assert_eq!(bounded, $bounded, "boundedness of {}", stringify!($name));
            }
        )*

        /// Every file in the corpus has a test above, so none is silently skipped.
        #[test]
        fn every_fixture_is_listed() {
            let listed: BTreeSet<String> = [$(stringify!($name)),*].iter().map(|s| s.to_string()).collect();
            let on_disk: BTreeSet<String> = std::fs::read_dir(common::fixtures())
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".pipes").map(str::to_string))
                .collect();
            assert_eq!(listed, on_disk);
        }
    };
}

// The expected boundedness is the 2012 compiler's (see the reference's table), worked by hand.
fixtures! {
    simple_proto_empty: [true];
    simple_proto_hello: [false];
    simple_proto_name: [false];
    simple_proto_goodbye: [true];
    simple_proto_end: [true];
    bank: [false];
    bank_2012: [false];
    pingpong: [true];
    pingpong_unbounded: [false];
    oneshot: [true];
    stream: [false];
    streamp: [false];
    ring: [false];
    foo: [false];
    bar: [true];
    double_buffer: [true];
    future_pipe: [true];
    kv_store: [false];
    generated_200: [true];
    cfg_empties_a_state: [true];
    cfg_leaves_one_message: [false];
}

#[test]
fn generated_fixture_matches_its_generator() {
    let path = common::fixtures().join("generated_200.pipes");
    let expected = common::generated_protocol("generated_200", 200);
    if std::env::var_os("PROTO_DSL_REGENERATE").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        expected,
        "run with PROTO_DSL_REGENERATE=1"
    );
}

#[test]
fn bounded_protocols_get_a_slot_per_message_state_and_unbounded_ones_lanes() {
    let analysis = analyze_fixture("pingpong");
    assert_eq!(analysis.liveness[0].boundedness, Boundedness::Bounded);
    assert_eq!(analysis.layouts[0], Layout::Buffer { slots: vec![0, 1] });

    let analysis = analyze_fixture("pingpong_unbounded");
    let liveness = &analysis.liveness[0];
    assert_eq!(liveness.reachable, [0, 1]);
    assert_eq!(
        liveness.boundedness,
        Boundedness::Unbounded {
            loops: vec![vec![2]]
        }
    );
    assert_eq!(analysis.layouts[0], Layout::Lanes);

    // One message state, no loop: a oneshot, used once.
    let analysis = analyze_fixture("oneshot");
    assert_eq!(analysis.layouts[0], Layout::Packets(WhyPackets::UsedOnce));
    // Generic states whose parameters differ: no one session type could name them.
    let analysis = analyze_fixture("generated_200");
    assert_eq!(
        analysis.layouts[0],
        Layout::Packets(WhyPackets::GenericsDiffer)
    );
}

#[test]
fn codegen_finds_what_it_needs_in_the_ast() {
    let analysis = analyze_fixture("kv_store");
    let (protocol, liveness) = analysis.protocols().next().unwrap();
    assert!(matches!(protocol.vis, syn::Visibility::Restricted(_)));
    assert_eq!(protocol.meta.docs[0].text, " A key-value store session.");
    let idle = &protocol.states[0];
    assert_eq!(idle.direction, Some(proto_dsl::ast::Direction::Send));
    assert_eq!(idle.generics.syn.params.len(), 2);
    let get = &idle.messages[0];
    assert_eq!(get.meta.docs.len(), 1);
    let proto_dsl::ast::Next::State { name, args, .. } = &get.next else {
        panic!("Get steps to a state")
    };
    assert_eq!(name.text, "Lookup");
    assert_eq!(args.len(), 2);
    let put_many = &idle.messages[2];
    assert_eq!(put_many.meta.attrs.len(), 1);
    assert_eq!(put_many.payload.len(), 2);
    assert!(liveness.can_end);
}
