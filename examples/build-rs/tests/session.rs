//! A whole session over the generated protocol ends with the balance both sides agree on.

use pipes_build_example::{Statement, session};

#[test]
fn a_session_reaches_the_expected_statement() {
    let statement = session(&[100, 50], &[30, 500, 20]).unwrap();
    assert_eq!(
        statement,
        Statement {
            refused_logins: 1,
            cash: 50,
            refused_withdrawals: 1,
            balance: 100,
        }
    );
}

#[test]
fn a_session_without_money_refuses_every_withdrawal() {
    let statement = session(&[], &[1, 2]).unwrap();
    assert_eq!(statement.cash, 0);
    assert_eq!(statement.refused_withdrawals, 2);
    assert_eq!(statement.balance, 0);
}
