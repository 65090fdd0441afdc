//! Numba's deferred cleanup, for the memory pools of device backends: while
//! a `defer_cleanup` guard lives, freed buffers are queued instead of being
//! reused or freed; the last guard's end releases them. A pool keeps one
//! [`Deferral`] under its own lock.

/// The queue of buffers freed while cleanup is deferred.
#[derive(Debug)]
pub struct Deferral<T> {
    guards: usize,
    queued: Vec<T>,
}

impl<T> Default for Deferral<T> {
    fn default() -> Self {
        Deferral {
            guards: 0,
            queued: Vec::new(),
        }
    }
}

impl<T> Deferral<T> {
    /// One more guard.
    pub fn defer(&mut self) {
        self.guards += 1;
    }

    /// One guard fewer; when it was the last, the queued buffers, for the
    /// pool to release.
    pub fn resume(&mut self) -> Vec<T> {
        self.guards = self.guards.saturating_sub(1);
        if self.guards == 0 {
            std::mem::take(&mut self.queued)
        } else {
            Vec::new()
        }
    }

    /// A freed buffer: queued (`None`) while a guard lives, else handed
    /// back for the pool to release.
    pub fn hold(&mut self, freed: T) -> Option<T> {
        if self.guards > 0 {
            self.queued.push(freed);
            None
        } else {
            Some(freed)
        }
    }

    /// How many buffers are queued.
    pub fn queued(&self) -> usize {
        self.queued.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_wait_for_the_last_guard() {
        let mut d = Deferral::default();
        assert_eq!(d.hold(1), Some(1));
        d.defer();
        d.defer();
        assert_eq!(d.hold(2), None);
        assert!(d.resume().is_empty());
        assert_eq!(d.queued(), 1);
        assert_eq!(d.resume(), vec![2]);
        assert_eq!(d.hold(3), Some(3));
    }
}
