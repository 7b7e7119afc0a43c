// Found by review 11's generator of random protocols: a type parameter with the name of its own
// state (the state's enum, named with its arguments in the generated impls as `Item<Item>`, is
// shadowed by the parameter there: rustc's E0109 at the whole invocation). The checker refuses
// it at the parameter. A parameter named like another state is fine.

pipes::proto! {
    p {
        Item: send<Item> { Stop(Item) -> Other<Item> }
        Other: recv<Item> { Done(Item) -> ! }
    }
}

fn main() {}
