//! The input read on a thread of its own once records are being sent, so the sender
//! sees a cancellation while the input waits (a pipe or a terminal with nothing more
//! to say): with `--transactional` a signal must abort the open transaction, which
//! only the thread that owns the producer can do. Items are handed over one at a
//! time (a channel of one), so nothing is read far ahead of what is sent and a line
//! typed on a terminal is sent as soon as it is read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::Duration;

use crate::ops::{Error, Result};

/// How often a wait for input looks at the cancellation flag.
const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// Items of an input, read ahead by one on their own thread.
pub struct Feed<T> {
    items: Receiver<Result<T>>,
}

impl<T: Send + 'static> Feed<T> {
    /// Moves `next` to a new thread that reads until the end, the first error or the
    /// feed being dropped. A thread still blocked in a read when the command ends
    /// dies with the process; it holds nothing that needs closing.
    pub fn spawn(mut next: impl FnMut() -> Option<Result<T>> + Send + 'static) -> Result<Self> {
        let (tx, items) = sync_channel(1);
        std::thread::Builder::new()
            .name("produce-input".into())
            .spawn(move || {
                while let Some(item) = next() {
                    let last = item.is_err();
                    if tx.send(item).is_err() || last {
                        break;
                    }
                }
            })
            .map_err(|e| Error::failure(format!("cannot start the input thread: {e}")))?;
        Ok(Feed { items })
    }

    /// The next item, `None` at the end, or the cancelled error as soon as
    /// `cancelled` is set, even while the input has nothing to give.
    pub fn next(&self, cancelled: &AtomicBool) -> Option<Result<T>> {
        loop {
            if cancelled.load(Ordering::SeqCst) {
                return Some(Err(Error::cancelled()));
            }
            match self.items.recv_timeout(CANCEL_CHECK) {
                Ok(item) => return Some(item),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ErrorKind;
    use std::sync::Arc;

    #[test]
    fn items_come_in_order_and_the_end_is_none() {
        let mut n = 0;
        let feed = Feed::spawn(move || {
            n += 1;
            (n <= 3).then_some(Ok(n))
        })
        .unwrap();
        let flag = AtomicBool::new(false);
        let got: Vec<i32> = std::iter::from_fn(|| feed.next(&flag))
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got, [1, 2, 3]);
    }

    #[test]
    fn a_cancellation_ends_a_wait_for_an_input_that_never_answers() {
        // The reader blocks for good (as `read` on a silent pipe does).
        let feed: Feed<i32> = Feed::spawn(|| {
            std::thread::park();
            None
        })
        .unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                flag.store(true, Ordering::SeqCst);
            })
        };
        let e = feed.next(&flag).unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Cancelled);
        setter.join().unwrap();
    }
}
