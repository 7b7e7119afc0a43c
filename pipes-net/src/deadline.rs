//! Deadlines counted from the durations of [`Config`](crate::Config) and
//! [`ClusterBuilder::timeout`](crate::ClusterBuilder::timeout), which a user may set as long
//! as `Duration::MAX` to mean "no deadline": `Instant + Duration` would overflow and panic
//! (inside a node's task, where the panic would leave whoever waits for it waiting forever).

use std::time::Duration;

/// How far away a deadline that overflows lies instead: about 30 years, as tokio's own
/// `sleep` and `timeout` do.
const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);

/// An instant that a duration can be added to without a panic.
pub(crate) trait Later: Copy {
    /// `self + by`, or `None` if it overflows.
    fn checked(self, by: Duration) -> Option<Self>;

    /// `self + by`, or the far future (as good as never) when that overflows.
    fn later(self, by: Duration) -> Self {
        self.checked(by)
            .or_else(|| self.checked(FAR))
            // An instant within 30 years of the end of time: no clock reads such a value.
            .unwrap_or(self)
    }
}

impl Later for std::time::Instant {
    fn checked(self, by: Duration) -> Option<Self> {
        self.checked_add(by)
    }
}

impl Later for tokio::time::Instant {
    fn checked(self, by: Duration) -> Option<Self> {
        self.checked_add(by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overflowing_deadline_is_far_away_not_a_panic() {
        let now = tokio::time::Instant::now();
        assert!(now.later(Duration::MAX) >= now + FAR);
        assert_eq!(
            now.later(Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
        let now = std::time::Instant::now();
        assert!(now.later(Duration::MAX) >= now + FAR);
    }
}
