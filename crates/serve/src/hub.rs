//! Where every harness's events go: re-stamped with the server's own `seq` (one counter for
//! every workflow, so a subscriber's replay point is unambiguous), kept per session in a
//! bounded ring for replay, broadcast to live subscribers, and counted into the metrics.
//!
//! Beside them, the server's own notices ([`Hub::notice`]): one each time a session changed
//! through this server (a turn settled, a session was pruned), numbered from the same
//! counter and kept in one bounded ring, for pages that list sessions (`GET /events`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use archmax_machine::{Envelope, EventSink};
use tokio::sync::broadcast;

use crate::metrics::Metrics;

/// How many events of one session are kept for replay.
pub const REPLAY_PER_SESSION: usize = 2000;

/// How many events a slow subscriber may fall behind before it misses some.
const LIVE_BUFFER: usize = 4096;

/// One event as the server streams it: its JSON (with the server's `seq`) and that seq.
#[derive(Debug, Clone)]
pub struct Stamped {
    /// The server-wide sequence number.
    pub seq: u64,
    /// The session the event is about.
    pub session: Option<String>,
    /// The event's JSON.
    pub json: Arc<str>,
}

/// How many notices are kept for a reconnecting page.
pub const NOTICES_KEPT: usize = 2000;

/// The event hub shared by every harness of one server.
pub struct Hub {
    seq: AtomicU64,
    rings: Mutex<HashMap<String, VecDeque<Stamped>>>,
    live: broadcast::Sender<Stamped>,
    notices: Mutex<VecDeque<Stamped>>,
    notices_live: broadcast::Sender<Stamped>,
    metrics: Arc<Metrics>,
}

impl Hub {
    /// A hub counting into `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Hub {
        let (live, _) = broadcast::channel(LIVE_BUFFER);
        let (notices_live, _) = broadcast::channel(LIVE_BUFFER);
        Hub {
            seq: AtomicU64::new(0),
            rings: Mutex::new(HashMap::new()),
            live,
            notices: Mutex::new(VecDeque::new()),
            notices_live,
            metrics,
        }
    }

    /// Records that `session` changed through this server: `fields` (an object: what changed
    /// and how it stands now) with the session's id and the next `seq`, kept for replay and
    /// sent to every [`Hub::subscribe_notices`] subscriber.
    pub fn notice(&self, session: &str, fields: serde_json::Value) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let mut body = match fields {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        body.insert("seq".into(), seq.into());
        body.insert("sessionId".into(), session.into());
        let item = Stamped {
            seq,
            session: Some(session.to_string()),
            json: serde_json::Value::Object(body).to_string().into(),
        };
        if let Ok(mut kept) = self.notices.lock() {
            if kept.len() == NOTICES_KEPT {
                kept.pop_front();
            }
            kept.push_back(item.clone());
        }
        // No subscriber is not an error.
        let _ = self.notices_live.send(item);
    }

    /// The kept notices after `since`, and a receiver of those that follow (subscribed
    /// first, so nothing falls between the two).
    pub fn subscribe_notices(&self, since: u64) -> (Vec<Stamped>, broadcast::Receiver<Stamped>) {
        let rx = self.notices_live.subscribe();
        let kept = self
            .notices
            .lock()
            .map(|kept| kept.iter().filter(|e| e.seq > since).cloned().collect())
            .unwrap_or_default();
        (kept, rx)
    }

    /// The kept events of `session` after `since`, and a receiver of the live ones that
    /// follow (subscribed first, so nothing falls between the two).
    pub fn subscribe(
        &self,
        session: &str,
        since: u64,
    ) -> (Vec<Stamped>, broadcast::Receiver<Stamped>) {
        let rx = self.live.subscribe();
        let kept = self
            .rings
            .lock()
            .map(|rings| {
                rings
                    .get(session)
                    .map(|ring| ring.iter().filter(|e| e.seq > since).cloned().collect())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        (kept, rx)
    }

    /// The last seq handed out.
    pub fn last_seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }
}

impl EventSink for Hub {
    fn emit(&self, event: &Envelope) {
        self.metrics.on_event(&event.event);
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let mut stamped = event.clone();
        stamped.seq = seq;
        let Ok(json) = serde_json::to_string(&stamped) else {
            return;
        };
        let item = Stamped {
            seq,
            session: event.session_id.clone(),
            json: json.into(),
        };
        if let Some(session) = &event.session_id
            && let Ok(mut rings) = self.rings.lock()
        {
            let ring = rings.entry(session.clone()).or_default();
            if ring.len() == REPLAY_PER_SESSION {
                ring.pop_front();
            }
            ring.push_back(item.clone());
        }
        // No subscriber is not an error.
        let _ = self.live.send(item);
    }
}
