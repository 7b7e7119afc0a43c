// Two type parameters with bounds, and awkward payload types (a boxed closure, a fn pointer).

#[test]
fn a_stored_value_is_found() {
    let (server, client) = kv_store::init::<String, u32>();
    let client = client.put("a".into(), 1).unwrap();
    let lookup = client.get("a".into()).unwrap();
    let kv_store::Idle::Put(key, value, server) = server.recv().unwrap() else {
        panic!("not a put");
    };
    let kv_store::Idle::Get(asked, server) = server.recv().unwrap() else {
        panic!("not a get");
    };
    assert_eq!(asked, key);
    let _idle = server.found(value).unwrap();
    assert!(matches!(lookup.recv().unwrap(), kv_store::Lookup::Found(1, _)));
}

#[test]
fn a_closure_travels() {
    fn double(x: u8) -> u8 {
        x * 2
    }
    let (server, client) = kv_store::init::<u8, u32>();
    let _idle = client.map(Box::new(|v: &u32| v + 1), double).unwrap();
    let kv_store::Idle::Map(f, g, _server) = server.recv().unwrap() else {
        panic!("not a map");
    };
    assert_eq!((f(&41), g(21)), (42, 42));
}
