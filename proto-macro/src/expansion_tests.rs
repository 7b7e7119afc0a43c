//! What `select!` and `select_async!` expand to, pretty-printed and snapshotted as `proto!`'s
//! expansions are (proto-dsl/tests/codegen.rs): the wait, the `match` on the ready index, and
//! the `match` on its message, as users meet them in errors and `cargo expand`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::select::Select;

/// Expands the body of a `select_impl!` call (`runtime; [async;] arms`, the runtime being what
/// `$crate` becomes) inside a function, so prettyplease can format it; `select_async!`'s needs
/// an `async fn` for its `.await`.
fn expand(input: TokenStream) -> String {
    let select: Select = syn::parse2(input).expect("the invocation parses");
    let expansion = select.expand();
    let asynchronous = select_is_async(&expansion);
    let function = if asynchronous {
        quote!(async fn expansion() { #expansion })
    } else {
        quote!(fn expansion() { #expansion })
    };
    let file: syn::File = syn::parse2(function).expect("the expansion parses as Rust");
    prettyplease::unparse(&file)
}

/// Whether an expansion awaits (only `select_async!`'s does).
fn select_is_async(expansion: &TokenStream) -> bool {
    expansion.to_string().contains(". await")
}

#[test]
fn blocking_select_over_two_endpoints_with_a_closed_arm() {
    // The example of `select!`'s docs: payload bindings, `-> !`, and a `closed` arm on one of
    // the two endpoints (the other panics naming its protocol and state).
    let expansion = expand(quote! {
        ::pipes_runtime;
        quiet => {
            Hello(text) -> ! { text },
            Bye -> ! { "bye".to_string() },
        },
        loud => {
            Hello(text) -> ! { text.to_uppercase() },
            Bye -> ! { "BYE".to_string() },
            closed => { "gone".to_string() },
        },
    });
    insta::assert_snapshot!(expansion);
}

#[test]
fn next_endpoints_named_ignored_and_mutable() {
    // The tutorial's server: `-> next` binds the endpoint for the next state, `-> _` drops it,
    // `-> mut name` binds it mutably; paths name messages of the state's enum.
    let expansion = expand(quote! {
        ::pipes_runtime;
        channel => {
            simple_proto::StartState::SayHello -> _ { log.push("hello") },
            simple_proto::StartState::WhatsYourName -> mut asked {
                asked = asked.my_name_is("Bob".into()).unwrap();
            },
        },
    });
    insta::assert_snapshot!(expansion);
}

#[test]
fn timeout_arm_waits_with_selecti_timeout() {
    let expansion = expand(quote! {
        ::pipes_runtime;
        port => {
            Ping(n) -> next { (n, next) },
        },
        timeout(std::time::Duration::from_millis(10)) => { panic!("no ping") },
    });
    insta::assert_snapshot!(expansion);
}

#[test]
fn select_async_awaits_selecti_async() {
    let expansion = expand(quote! {
        ::pipes_runtime;
        async;
        quiet => {
            Hello(text) -> ! { text },
            Bye -> ! { "bye".to_string() },
        },
        loud => {
            Hello(text) -> ! { text.to_uppercase() },
            Bye -> ! { "BYE".to_string() },
            closed => { "gone".to_string() },
        },
    });
    insta::assert_snapshot!(expansion);
}

#[test]
fn only_the_async_expansion_awaits() {
    let arms = quote!(port => { Ping(n) -> next { (n, next) } });
    let blocking = expand(quote!(::pipes_runtime; #arms));
    let awaiting = expand(quote!(::pipes_runtime; async; #arms));
    assert!(
        blocking.contains("selecti(") && !blocking.contains(".await"),
        "{blocking}"
    );
    assert!(
        awaiting.contains("selecti_async(") && awaiting.contains(".await"),
        "{awaiting}"
    );
}
