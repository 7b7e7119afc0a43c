//! What `select!` checks of each arm before its `match`: that the arm binds as many payload
//! values as its message carries. Without the check, rustc compares the arm's pattern with the
//! message's enum variant, whose last field is the endpoint for the next state, and its error
//! counts that hidden field ("this pattern has 3 fields, but the corresponding tuple variant
//! has 2 fields"). The check goes through the variant's constructor, a function whose
//! parameters are the payload (then the endpoint, for a message that leads to a state): the
//! payload's types become a tuple, and the arm's number of bindings must be that tuple's
//! length, or the error names both in protocol words. An arm for a message that ends the
//! protocol (`-> !`) needs no check: its variant has no endpoint field, so rustc's count is the
//! payload's.

/// The payload of a message that leads to a state, read from its enum variant's constructor
/// (`Fields` are the constructor's parameters, the endpoint last; `Arm` the state's enum).
#[diagnostic::on_unimplemented(
    message = "this `select!` arm takes the next state's endpoint with `-> name`, but its \
               message ends the protocol",
    label = "this message ends the protocol",
    note = "an arm for a message that ends the protocol is written `Message(payload..) -> ! {{ .. }}`"
)]
pub trait LeadsOn<Fields, Arm> {
    /// The payload's types, as a tuple.
    type Payload;
}

/// An arm of `select!`, for the impls of [`Binds`]. (The arm, not the payload, implements it,
/// so that rustc never suggests wrapping the message in a tuple to satisfy it.)
pub struct SelectArm;

/// `BOUND` bindings match a payload (a tuple of its types).
#[diagnostic::on_unimplemented(
    message = "this `select!` arm binds {BOUND} payload value(s), but its message carries `{Payload}`",
    label = "the payload of this message is `{Payload}`",
    note = "an arm binds the payload in parentheses, one name or pattern per value, and the \
            endpoint for the next state after the arrow: `Message(a, b) -> next {{ .. }}`"
)]
pub trait Binds<const BOUND: usize, Payload> {}

/// No payload at all: its impl of [`Binds`] for every count keeps rustc from settling on the
/// one tuple impl of a count before it knows the message's payload (it would then report a
/// type mismatch instead of the message above).
pub enum Unknown {}

#[diagnostic::do_not_recommend]
impl<const BOUND: usize> Binds<BOUND, Unknown> for SelectArm {}

/// The enum of the state an endpoint receives in (`Self`) is the one of an arm's message
/// (`Arm`).
#[diagnostic::on_unimplemented(
    message = "this `select!` arm is for a message of state `{Arm}`, but the endpoint receives \
               in state `{Self}`",
    label = "a message of state `{Arm}`",
    note = "each endpoint's block has one arm per message of the state that endpoint is in"
)]
pub trait SameState<Arm> {}

impl<T> SameState<T> for T {}

/// Checks, for `select!`, that an arm of a message leading to a state binds its payload:
/// `constructor` is the arm's message (its enum variant as a function), `message` what was
/// received (the one impl of [`SameState`] then infers a generic state's parameters).
pub fn arm_leads_on<const BOUND: usize, Fields, M, Arm, F>(_constructor: F, _message: &M)
where
    F: LeadsOn<Fields, Arm>,
    M: SameState<Arm>,
    SelectArm: Binds<BOUND, F::Payload>,
{
}

/// The impls for one length of payload: `$n` values of types `$t`.
macro_rules! payload_of {
    ($n:literal; $($t:ident)*) => {
        #[diagnostic::do_not_recommend]
        impl<$($t,)*> Binds<$n, ($($t,)*)> for SelectArm {}

        impl<Func, $($t,)* E, Arm> LeadsOn<($($t,)* E,), Arm> for Func
        where
            Func: Fn($($t,)* E) -> Arm,
        {
            type Payload = ($($t,)*);
        }
    };
}

payload_of!(0;);
payload_of!(1; A);
payload_of!(2; A B);
payload_of!(3; A B C);
payload_of!(4; A B C D);
payload_of!(5; A B C D F);
payload_of!(6; A B C D F G);
payload_of!(7; A B C D F G H);
payload_of!(8; A B C D F G H I);
payload_of!(9; A B C D F G H I J);
payload_of!(10; A B C D F G H I J K);
payload_of!(11; A B C D F G H I J K L);
payload_of!(12; A B C D F G H I J K L N);
