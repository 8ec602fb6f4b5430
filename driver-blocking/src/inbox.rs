//! The [`Runner`](crate::Runner)'s inbox: what its body reader, tool, wait and child threads
//! hand it, in the order each sent it, with a bound.
//!
//! A fast stream's reader is quicker than the session it feeds. Through a plain bounded channel
//! the two threads then trade a wake-up per piece: the reader waits as soon as the channel is
//! full, and every piece the runner takes lets it send exactly one more. Each wake-up is a
//! system call, a context switch and, on a virtual machine, an interrupt between cores: about
//! a tenth of `hrns exec`'s time on a 50 MB stream (issue 36's `BENCHMARKS.md`). Here a sender
//! that found the inbox full waits until the runner has taken it down to a quarter, so a fast
//! reader is woken once per several pieces and then reads them in one go; and a sender wakes
//! the runner only when the runner is waiting.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The receiving end, kept by the runner. Dropping it closes the inbox: what is queued is
/// dropped, and every sender, waiting or not, is refused from then on.
pub(crate) struct Inbox<T> {
    shared: Arc<Shared<T>>,
}

/// A sending end; cheap to clone.
pub(crate) struct Sender<T> {
    shared: Arc<Shared<T>>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// The runner waits here for something to arrive.
    arrived: Condvar,
    /// Senders of a full inbox wait here for room.
    room: Condvar,
    /// Most items queued at once.
    capacity: usize,
    /// How far the runner takes a full inbox down before the senders waiting for room are
    /// woken.
    low: usize,
}

struct State<T> {
    queue: VecDeque<T>,
    /// The runner waits for an item, and no sender has woken it yet.
    receiver_waiting: bool,
    /// Senders waiting for room that nobody has woken yet.
    senders_waiting: usize,
    /// Counts the times the waiting senders were woken: a sender waits until it changes, so a
    /// spurious wake-up does not let it in early.
    room_made: u64,
    /// The inbox was dropped.
    closed: bool,
}

/// An inbox of `capacity` items (at least 1) and its first sender.
pub(crate) fn inbox<T>(capacity: usize) -> (Sender<T>, Inbox<T>) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::with_capacity(capacity),
            receiver_waiting: false,
            senders_waiting: 0,
            room_made: 0,
            closed: false,
        }),
        arrived: Condvar::new(),
        room: Condvar::new(),
        capacity,
        low: capacity / 4,
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Inbox { shared },
    )
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // The lock guards no invariant a panicking holder could break halfway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Sender<T> {
    /// Queues `item`, waiting while the inbox is full (until the runner took it down to a
    /// quarter). Hands `item` back when the inbox is closed: nobody wants it.
    pub(crate) fn send(&self, item: T) -> Result<(), T> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        loop {
            if state.closed {
                return Err(item);
            }
            if state.queue.len() < shared.capacity {
                break;
            }
            state.senders_waiting += 1;
            let made = state.room_made;
            while state.room_made == made && !state.closed {
                state = shared
                    .room
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        state.queue.push_back(item);
        let wake = std::mem::take(&mut state.receiver_waiting);
        drop(state);
        if wake {
            shared.arrived.notify_one();
        }
        Ok(())
    }
}

impl<T> Inbox<T> {
    /// The next item, waiting up to `timeout` for one; `None` when none came.
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Option<T> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        let mut deadline = None;
        loop {
            if let Some(item) = self.take(state.queue.pop_front(), state) {
                return Some(item);
            }
            state = shared.lock();
            if !state.queue.is_empty() {
                continue;
            }
            let now = Instant::now();
            let deadline = *deadline.get_or_insert(now + timeout);
            if now >= deadline {
                return None;
            }
            state.receiver_waiting = true;
            state = shared
                .arrived
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            state.receiver_waiting = false;
        }
    }

    /// Whether nothing is queued: the next receive would wait.
    pub(crate) fn is_empty(&self) -> bool {
        self.shared.lock().queue.is_empty()
    }

    /// The next item if one is queued.
    pub(crate) fn try_recv(&self) -> Option<T> {
        let mut state = self.shared.lock();
        self.take(state.queue.pop_front(), state)
    }

    /// Hands out `item`, just taken from the queue under `state`'s lock, and wakes the senders
    /// waiting for room once the queue is down to a quarter.
    fn take(&self, item: Option<T>, mut state: MutexGuard<'_, State<T>>) -> Option<T> {
        let shared = &*self.shared;
        let wake = item.is_some() && state.senders_waiting > 0 && state.queue.len() <= shared.low;
        if wake {
            state.senders_waiting = 0;
            state.room_made = state.room_made.wrapping_add(1);
        }
        drop(state);
        if wake {
            shared.room.notify_all();
        }
        item
    }

    /// How many senders wait for room (for tests that need a sender to be waiting).
    #[cfg(test)]
    fn senders_waiting(&self) -> usize {
        self.shared.lock().senders_waiting
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        let queued = {
            let mut state = self.shared.lock();
            state.closed = true;
            std::mem::take(&mut state.queue)
        };
        self.shared.room.notify_all();
        // Dropped outside the lock: a body piece's buffer goes back to its reader.
        drop(queued);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    /// Every item of every sender arrives, each sender's in the order it sent them, however
    /// the threads interleave around a small bound.
    #[test]
    fn every_item_arrives_in_each_senders_order() {
        let (tx, rx) = inbox::<(usize, usize)>(4);
        let senders: Vec<_> = (0..3)
            .map(|who| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for n in 0..2_000 {
                        tx.send((who, n)).unwrap();
                    }
                })
            })
            .collect();
        let mut next = [0usize; 3];
        for _ in 0..6_000 {
            let (who, n) = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("an item within 10 s");
            assert_eq!(n, next[who], "sender {who}'s items out of order");
            next[who] += 1;
        }
        senders.into_iter().for_each(|s| s.join().unwrap());
        assert_eq!(next, [2_000; 3]);
        assert!(rx.try_recv().is_none());
    }

    /// A full inbox holds its sender back until the runner took it down to a quarter: the
    /// sender then fills it again in one go, instead of being let in one item at a time.
    #[test]
    fn a_full_inbox_lets_its_sender_in_at_a_quarter() {
        let (tx, rx) = inbox::<usize>(8);
        for n in 0..8 {
            tx.send(n).unwrap();
        }
        let sender = thread::spawn(move || tx.send(8).unwrap());
        while rx.senders_waiting() == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        // Taken down to 3 queued: still above a quarter, so the sender still waits.
        for n in 0..5 {
            assert_eq!(rx.try_recv(), Some(n));
        }
        assert_eq!(rx.senders_waiting(), 1, "let in above a quarter");
        // Down to 2 (a quarter of 8): the sender is woken and queues its item last.
        assert_eq!(rx.try_recv(), Some(5));
        sender.join().unwrap();
        assert_eq!(rx.try_recv(), Some(6));
        assert_eq!(rx.try_recv(), Some(7));
        assert_eq!(rx.try_recv(), Some(8));
        assert_eq!(rx.try_recv(), None);
    }

    /// An inbox whose runner is gone refuses what is sent, and frees a sender waiting for
    /// room; what was queued is dropped with it.
    #[test]
    fn a_dropped_inbox_refuses_senders_and_frees_the_waiting_one() {
        let (tx, rx) = inbox::<Arc<()>>(2);
        let queued = Arc::new(());
        tx.send(Arc::clone(&queued)).unwrap();
        tx.send(Arc::clone(&queued)).unwrap();
        let waiting = {
            let tx = tx.clone();
            let item = Arc::clone(&queued);
            thread::spawn(move || tx.send(item).is_err())
        };
        while rx.senders_waiting() == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        drop(rx);
        assert!(
            waiting.join().unwrap(),
            "the waiting sender was not refused"
        );
        assert!(tx.send(Arc::new(())).is_err());
        assert_eq!(Arc::strong_count(&queued), 1, "queued items were kept");
    }

    /// Waiting for an item ends at the timeout when none comes, and at once when one does.
    #[test]
    fn recv_timeout_ends_at_the_timeout_or_at_the_item() {
        let (tx, rx) = inbox::<u8>(2);
        assert_eq!(rx.recv_timeout(Duration::from_millis(10)), None);
        let sender = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            tx.send(7).unwrap();
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Some(7));
        sender.join().unwrap();
    }
}
