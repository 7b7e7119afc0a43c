//! Protocols that meet generated code in awkward ways compile under `#![deny(warnings)]` and
//! run (probes of review 7, kept): names that meet prelude, std and generated names,
//! raw and non-ASCII names, two invocations in one module and one in a function body, a
//! generic state with a lifetime, a `?Sized` parameter, a const parameter, a higher-ranked
//! fn pointer, a trait object with a lifetime, a qualified path and nested arrays; and a
//! `#[wire]` protocol whose states and messages are named like its pump's methods.
#![deny(warnings)]
#![allow(missing_docs)]

pub mod n1 {
    pipes::proto! {
        pub names {
            Result: send { Ok(Option<u8>) -> Option, Err(Result<u8, ()>) -> Box, Some(Box<u8>) -> Vec, None -> String }
            Option: recv { Send(Vec<u8>) -> Drop, Sized -> Debug }
            Box: recv { PhantomData(String) -> ! }
            Vec: send { Infallible -> ! }
            String: send { Copy -> Clone }
            Drop: send { Default -> ! }
            Debug: send { Iterator -> ! }
            Clone: send { Func(fn(u8) -> u8) -> ! }
        }
    }
}
pub mod n2 {
    pipes::proto! {
        pub core {
            std: send { alloc(::std::string::String) -> core }
            core: recv { init -> init }
            init {}
        }
    }
}
pub mod n3 {
    pipes::proto! {
        pub r#type {
            r#struct: send { r#Loops(u8) -> r#enum, r#Enum2(u8) -> ! }
            r#enum: recv { Ärger(String) -> !, Grüße -> ! }
        }
    }
}
pub mod n4 {
    // twice in one module, inside fn body
    pipes::proto! { pub a { S: send { M(b::client::T) -> ! } } }
    pipes::proto! { pub b { T: send { N -> ! } } }
    pub fn f() {
        pipes::proto! { inner { S: send { M(u8) -> ! } } }
        let (s, c) = inner::init();
        c.m(1).unwrap();
        drop(s);
    }
}
pub mod n5 {
    pipes::proto! {
        pub r#gen {
            S: send<'a, T: ?Sized + 'a, const N: usize> {
                A(&'a T, [u8; N]) -> S<'a, T, N>,
                B(Box<dyn Fn(&u8) -> &u8 + Send + 'a>) -> S<'a, T, N>,
                C(for<'b> fn(&'b u8) -> &'b u8, <Vec<u8> as IntoIterator>::Item) -> S<'a, T, { N }>,
                D((u8, (u16,)), [[u8; 2]; N], *const T) -> !,
            }
        }
    }
}
pub mod n6 {
    // States named like the traits and types of their bounds: bounds are named inside the
    // generated module, so they are written from the crate root, which no state shadows.
    pipes::proto! {
        pub bounds {
            Start: send<T: ::core::marker::Sync + Into<::std::string::String>, const N: ::core::primitive::u8> {
                Go(T) -> String,
                Wait -> Sync,
            }
            String: recv { Back(::std::string::String) -> u8 }
            Sync: recv { Back -> ! }
            u8: send { Stop -> ! }
        }
    }
}
#[cfg(feature = "net")]
pub mod w2 {
    pipes::proto! {
        #[wire]
        pub w2 {
            step: send { hold(u8) -> local, remote(()) -> ! }
            local: recv { deliver((u8,), [u8; 0], Option<Box<str>>) -> step, done -> ! }
        }
    }
}

#[test]
fn names_that_meet_prelude_and_generated_names() {
    n4::f();
    let (server, client) = n1::names::init();
    let option = client.ok(Some(1)).unwrap();
    let n1::names::Result::Ok(value, server) = server.recv().unwrap() else {
        unreachable!()
    };
    assert_eq!(value, Some(1));
    server.sized().unwrap();
    assert!(matches!(option.recv(), Ok(n1::names::Option::Sized(_))));
    let (server, client) = n3::r#type::init();
    let r#enum = client.loops(3).unwrap();
    let n3::r#type::r#struct::r#Loops(3, server) = server.recv().unwrap() else {
        unreachable!()
    };
    server.grüße().unwrap();
    assert!(matches!(r#enum.recv(), Ok(n3::r#type::r#enum::Grüße)));
}

#[test]
fn bounds_from_the_crate_root_beside_states_named_like_them() {
    let (server, client) = n6::bounds::init::<&'static str, 3>();
    let string = client.go("hi").unwrap();
    let n6::bounds::Start::Go(text, server) = server.recv().unwrap() else {
        unreachable!()
    };
    let text: String = text.into();
    let end = server.back(text + "!").unwrap();
    let Ok(n6::bounds::String::Back(reply, u8)) = string.recv() else {
        unreachable!()
    };
    assert_eq!(reply, "hi!");
    u8.stop().unwrap();
    assert!(matches!(end.recv(), Ok(n6::bounds::u8::Stop)));
}
