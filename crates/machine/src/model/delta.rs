//! Requests as deltas, for a model on the other side of a boundary that keeps
//! the conversations it has seen (the JS model function of the Node binding).
//!
//! A turn's requests grow by a few messages per call, so shipping each whole
//! request costs time that grows with the transcript (serializing and parsing
//! 60 KiB at step 200). Instead both sides keep *channels*: numbered copies of
//! a conversation. Each request names a channel and says how many of its
//! messages to keep, the system message when it changed (a state change
//! rewrites message 0), the messages to append, and the tools only when they
//! changed. The receiver applies that and hands its model the whole request.
//!
//! The system message and the tools, the bulk of a first request (9 KiB of a
//! workflow's, against a few hundred bytes for a later step), are the same for
//! every session in a state. They travel as *blocks*: a delta names a block by
//! id, and the receiver keeps each block it has seen once for all its channels,
//! fetching one it lacks from the sender ([`Channels::block`]). A thousand
//! sessions starting in one state thus cost one copy of their system message and
//! tools on each side, not a thousand, and the receiver parses them once. Block
//! ids are never reused, so a kept block is never wrong, only perhaps forgotten.
//!
//! Correctness never rests on a guess: the kept prefix is computed by comparing
//! messages, a channel serves one request at a time (concurrent sessions get
//! their own), the receiver checks the resulting length, and a failed or
//! refused call forgets the channel on both sides (the next request is whole).

use serde::Serialize;

use super::types::{ChatMessage, ChatRequest, ModelRole, ToolDef};

/// How many idle channels are kept; the least recently used is dropped beyond it.
pub const MAX_CHANNELS: usize = 64;

/// How many blocks are kept; the least recently used is forgotten beyond it.
pub const MAX_BLOCKS: usize = 16;

/// What a block holds: a system message or a tool list.
#[derive(Debug)]
enum Block {
    First(ChatMessage),
    Tools(std::sync::Arc<[ToolDef]>),
}

/// A block the receiver may keep once for every channel.
#[derive(Debug)]
struct Kept {
    id: u64,
    block: Block,
    /// The block's JSON text, which the receiver fetches once ([`Channels::block`]).
    json: std::sync::Arc<str>,
    used: u64,
}

#[derive(Debug)]
struct Channel {
    id: u64,
    busy: bool,
    used: u64,
    messages: Vec<ChatMessage>,
    tools: std::sync::Arc<[ToolDef]>,
    /// The lineage of the request it last served.
    lineage: Option<u64>,
    /// The session of the request it last served.
    session: Option<String>,
    /// The blocks its call in flight names, which are kept until it ends.
    named: [Option<u64>; 2],
}

/// The sender's mirror of what the receiver holds.
#[derive(Debug, Default)]
pub struct Channels {
    channels: Vec<Channel>,
    next_id: u64,
    clock: u64,
    /// Channels forgotten here that the receiver should forget too (sent with the next delta).
    dropped: Vec<u64>,
    /// The blocks, at most [`MAX_BLOCKS`].
    blocks: Vec<Kept>,
    /// Blocks forgotten here that the receiver may forget too (sent with the next delta).
    unkept: Vec<u64>,
    /// The last block id given out (ids are never reused).
    last_block: u64,
}

/// One request as a delta, serialized for the receiver:
/// `{ ch, len, keep, first?, append, tools?, drop?, unkeep?, head: { model, temperature?, max_tokens?, parallel_tool_calls? } }`.
///
/// The receiver forgets the blocks in `unkeep` and the channels in `drop`, truncates
/// channel `ch` to `keep` messages, sets message 0 to block `first` when present (the
/// system message changed, or `keep` is 0 and this is the first message), appends `append`
/// (then it holds `len` messages), and sets its tools to block `tools` when present.
#[derive(Debug, Serialize)]
pub struct Delta<'a> {
    /// The channel.
    pub ch: u64,
    /// How many messages the channel holds after this delta.
    pub len: usize,
    /// How many of the channel's messages to keep.
    pub keep: usize,
    /// The block of the new message 0, when it changed (or the channel starts over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    /// The messages after the kept ones (and after message 0 when `first` is set).
    pub append: &'a [ChatMessage],
    /// The block of the tools, when they changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<u64>,
    /// Channels the receiver should forget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<u64>,
    /// Blocks the receiver may forget.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unkeep: Vec<u64>,
    /// The request without its messages and tools.
    pub head: Head<'a>,
    /// Where the answer may stream its pieces, when the sender takes them (set by the
    /// sender after [`Channels::begin`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamTag>,
}

/// The stream a receiver sends an answer's pieces to: `{ id, show }`. `show`: the text is
/// shown as it arrives (the receiver may stream a model that would not otherwise).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamTag {
    /// The stream's id.
    pub id: u32,
    /// Whether the pieces are shown live.
    pub show: bool,
}

/// The fields of a request besides messages and tools.
#[derive(Debug, Serialize)]
pub struct Head<'a> {
    /// The model id.
    pub model: &'a str,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Max output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Parallel tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Who asks, when not the agent (`rubric`); the receiver takes it off the request.
    #[serde(skip_serializing_if = "ModelRole::is_agent")]
    pub role: ModelRole,
    /// The session the request serves, when known; the receiver takes it off the request
    /// (a host driving several sessions through one model, `deepagents.js`, routes on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<&'a str>,
    /// The workflow state the request is made in, when known; the receiver takes it off the
    /// request (a JS model function's `info.state`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'a str>,
}

/// Length of the common prefix of two message lists.
fn common_prefix(a: &[ChatMessage], b: &[ChatMessage]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Channels {
    /// No channels.
    pub fn new() -> Self {
        Self::default()
    }

    /// The delta that brings a channel to `req`, and marks that channel busy until
    /// [`Channels::end`]. Picks the idle channel `req` extends (same first user message,
    /// the channel's last message at the same place), else opens a new one. Fails (and
    /// holds no channel) only when a new block cannot be serialized.
    pub fn begin<'a>(&mut self, req: &'a ChatRequest) -> Result<Delta<'a>, serde_json::Error> {
        self.clock += 1;
        let msgs = &req.messages;
        // Same lineage: `msgs` extends the channel's messages after message 0, by the
        // sender's promise (checked in debug builds), so they are not compared.
        let same_lineage = |c: &Channel| {
            req.lineage.is_some() && c.lineage == req.lineage && msgs.len() >= c.messages.len()
        };
        let extends = |c: &Channel| {
            let n = c.messages.len();
            !c.busy
                && n >= 2
                && msgs.len() >= n
                && (same_lineage(c)
                    || (c.messages[n - 1] == msgs[n - 1] && c.messages[1] == msgs[1]))
        };
        let index = match self.channels.iter().position(extends) {
            Some(i) => i,
            None => self.open(),
        };
        let clock = self.clock;
        let c = &mut self.channels[index];
        c.busy = true;
        c.used = clock;
        let (keep, first) = match (c.messages.first(), msgs.first()) {
            (Some(old), Some(new)) => {
                let keep = if same_lineage(c) {
                    debug_assert_eq!(
                        common_prefix(&c.messages[1..], &msgs[1..]) + 1,
                        c.messages.len(),
                        "a request broke its lineage's promise"
                    );
                    c.messages.len()
                } else {
                    1 + common_prefix(&c.messages[1..], &msgs[1..])
                };
                (keep, (old != new).then_some(new))
            }
            // Starting over: message 0 travels as a block too.
            _ => (0, msgs.first()),
        };
        c.lineage = req.lineage;
        c.session.clone_from(&req.session);
        c.messages.truncate(keep);
        if let Some(first) = first {
            match c.messages.first_mut() {
                Some(m) => first.clone_into(m),
                None => c.messages.push(first.clone()),
            }
        }
        let from = keep.max(usize::from(first.is_some()));
        let append = &msgs[from.min(msgs.len())..];
        c.messages.extend_from_slice(append);
        // The same definitions are shared while a turn stays in a state: compare pointers first.
        let same_tools =
            std::sync::Arc::ptr_eq(&c.tools, &req.tools) || c.tools[..] == req.tools[..];
        c.tools = std::sync::Arc::clone(&req.tools);
        let ch = c.id;
        let blocks = first
            .map(|m| self.block_of_first(m))
            .transpose()
            .and_then(|first| {
                let tools = (!same_tools)
                    .then(|| self.block_of_tools(&req.tools))
                    .transpose()?;
                Ok((first, tools))
            });
        let (first, tools) = match blocks {
            Ok(ids) => ids,
            Err(e) => {
                self.end(ch, false);
                return Err(e);
            }
        };
        if let Some(c) = self.channels.iter_mut().find(|c| c.id == ch) {
            c.named = [first, tools];
        }
        Ok(Delta {
            ch,
            len: msgs.len(),
            keep,
            first,
            append,
            tools,
            drop: std::mem::take(&mut self.dropped),
            unkeep: std::mem::take(&mut self.unkept),
            head: Head {
                model: &req.model,
                temperature: req.temperature,
                max_tokens: req.max_tokens,
                parallel_tool_calls: req.parallel_tool_calls,
                role: req.role,
                session: req.session.as_deref(),
                state: req.state.as_deref(),
            },
            stream: None,
        })
    }

    /// The JSON text of block `id`, for a receiver that does not hold it. A block a call
    /// in flight names is kept until that call ends, so `None` only for a delta applied
    /// after its call ended (the receiver then refuses it, and the request is sent again).
    pub fn block(&self, id: u64) -> Option<std::sync::Arc<str>> {
        self.blocks
            .iter()
            .find(|k| k.id == id)
            .map(|k| std::sync::Arc::clone(&k.json))
    }

    /// The block holding `message` as a message 0, kept now if it is new.
    fn block_of_first(&mut self, message: &ChatMessage) -> Result<u64, serde_json::Error> {
        let found = self
            .blocks
            .iter()
            .position(|k| matches!(&k.block, Block::First(m) if m == message));
        match found {
            Some(i) => Ok(self.touch(i)),
            None => {
                let json = serde_json::to_string(message)?;
                Ok(self.keep_block(Block::First(message.clone()), json))
            }
        }
    }

    /// The block holding `tools`, kept now if it is new.
    fn block_of_tools(
        &mut self,
        tools: &std::sync::Arc<[ToolDef]>,
    ) -> Result<u64, serde_json::Error> {
        let found = self.blocks.iter().position(|k| {
            matches!(&k.block, Block::Tools(t) if std::sync::Arc::ptr_eq(t, tools) || t[..] == tools[..])
        });
        match found {
            Some(i) => Ok(self.touch(i)),
            None => {
                let json = serde_json::to_string(&tools[..])?;
                Ok(self.keep_block(Block::Tools(std::sync::Arc::clone(tools)), json))
            }
        }
    }

    /// Block `i` was used now; its id.
    fn touch(&mut self, i: usize) -> u64 {
        self.blocks[i].used = self.clock;
        self.blocks[i].id
    }

    /// Keeps a new block, forgetting the least recently used ones beyond [`MAX_BLOCKS`]
    /// that no call in flight names (while calls in flight name more, more are kept); its id.
    fn keep_block(&mut self, block: Block, json: String) -> u64 {
        if self.blocks.len() >= MAX_BLOCKS {
            let named: std::collections::HashSet<u64> = self
                .channels
                .iter()
                .filter(|c| c.busy)
                .flat_map(|c| c.named.iter().flatten().copied())
                .collect();
            while self.blocks.len() >= MAX_BLOCKS {
                let Some((i, _)) = self
                    .blocks
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| !named.contains(&k.id))
                    .min_by_key(|(_, k)| k.used)
                else {
                    break;
                };
                let gone = self.blocks.swap_remove(i);
                self.unkept.push(gone.id);
            }
        }
        self.last_block += 1;
        self.blocks.push(Kept {
            id: self.last_block,
            block,
            json: json.into(),
            used: self.clock,
        });
        self.last_block
    }

    /// The call on channel `ch` ended; `ok: false` (the call failed or the receiver
    /// refused the delta) forgets the channel, so the next request is sent whole.
    pub fn end(&mut self, ch: u64, ok: bool) {
        if let Some(i) = self.channels.iter().position(|c| c.id == ch) {
            if ok {
                self.channels[i].busy = false;
                self.channels[i].named = [None, None];
            } else {
                self.channels.swap_remove(i);
                self.dropped.push(ch);
            }
        }
    }

    /// Forgets the idle channels whose last request served `session` or one of its child
    /// sessions (`<session>~…`): that session's conversation copies. Returns their ids, which
    /// the receiver should forget too. A busy channel is left to its call.
    pub fn forget_session(&mut self, session: &str) -> Vec<u64> {
        let child = format!("{session}~");
        let of_session = |c: &Channel| {
            !c.busy
                && c.session
                    .as_deref()
                    .is_some_and(|s| s == session || s.starts_with(&child))
        };
        let ids: Vec<u64> = self
            .channels
            .iter()
            .filter(|c| of_session(c))
            .map(|c| c.id)
            .collect();
        self.channels.retain(|c| !ids.contains(&c.id));
        ids
    }

    /// Forgets every channel and block (the receiver is gone).
    pub fn clear(&mut self) {
        self.channels.clear();
        self.dropped.clear();
        self.blocks.clear();
        self.unkept.clear();
    }

    /// How many channels are held.
    pub fn len(&self) -> usize {
        self.channels.len()
    }

    /// Whether no channel is held.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Opens an empty channel, dropping the least recently used idle one beyond
    /// [`MAX_CHANNELS`]; its index.
    fn open(&mut self) -> usize {
        if self.channels.len() >= MAX_CHANNELS
            && let Some((i, _)) = self
                .channels
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.busy)
                .min_by_key(|(_, c)| c.used)
        {
            let gone = self.channels.swap_remove(i);
            self.dropped.push(gone.id);
        }
        self.next_id += 1;
        self.channels.push(Channel {
            id: self.next_id,
            busy: false,
            used: self.clock,
            messages: Vec::new(),
            tools: std::sync::Arc::from(Vec::new()),
            lineage: None,
            session: None,
            named: [None, None],
        });
        self.channels.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::model::MessageContent;

    fn sys(text: &str) -> ChatMessage {
        ChatMessage::System {
            content: MessageContent::Text(text.to_string()),
        }
    }
    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: MessageContent::Text(text.to_string()),
        }
    }
    fn said(text: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: Some(text.to_string()),
            tool_calls: Vec::new(),
        }
    }
    fn req(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest::new("m", messages)
    }

    /// The receiver: applies deltas the way `agent.js` does, keeping each block it fetched
    /// from the sender; `None` on a length mismatch or a block the sender no longer has.
    #[derive(Default)]
    struct Receiver {
        channels: std::collections::HashMap<u64, (Vec<Value>, Value)>,
        blocks: std::collections::HashMap<u64, Value>,
        fetched: usize,
    }

    impl Receiver {
        fn block(&mut self, id: &Value, sender: &Channels) -> Option<Value> {
            let id = id.as_u64()?;
            if let Some(b) = self.blocks.get(&id) {
                return Some(b.clone());
            }
            let b: Value = serde_json::from_str(&sender.block(id)?).ok()?;
            self.fetched += 1;
            self.blocks.insert(id, b.clone());
            Some(b)
        }

        fn apply(&mut self, delta: &Delta<'_>, sender: &Channels) -> Option<(Vec<Value>, Value)> {
            let d: Value = serde_json::to_value(delta).ok()?;
            for id in d["unkeep"].as_array().into_iter().flatten() {
                self.blocks.remove(&id.as_u64()?);
            }
            for id in d["drop"].as_array().into_iter().flatten() {
                self.channels.remove(&id.as_u64()?);
            }
            let first = match d.get("first") {
                Some(id) => Some(self.block(id, sender)?),
                None => None,
            };
            let tools = match d.get("tools") {
                Some(id) => Some(self.block(id, sender)?),
                None => None,
            };
            let ch = self.channels.entry(d["ch"].as_u64()?).or_default();
            ch.0.truncate(d["keep"].as_u64()? as usize);
            if let Some(first) = first {
                match ch.0.first_mut() {
                    Some(m) => *m = first,
                    None => ch.0.push(first),
                }
            }
            ch.0.extend(d["append"].as_array()?.iter().cloned());
            if let Some(tools) = tools {
                ch.1 = tools;
            }
            (ch.0.len() == d["len"].as_u64()? as usize).then(|| ch.clone())
        }
    }

    /// What the receiver hands its model equals the request sent whole.
    fn same(got: &(Vec<Value>, Value), req: &ChatRequest) {
        let whole = serde_json::to_value(req).unwrap_or(Value::Null);
        assert_eq!(Value::Array(got.0.clone()), whole["messages"]);
        let tools = if req.tools.is_empty() {
            json!([])
        } else {
            whole["tools"].clone()
        };
        let held = if got.1.is_null() {
            json!([])
        } else {
            got.1.clone()
        };
        assert_eq!(held, tools);
    }

    #[test]
    fn a_growing_turn_sends_only_new_messages() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let mut messages = vec![sys("s"), user("hi")];
        for step in 0..5 {
            let r = req(messages.clone());
            let d = chans.begin(&r).expect("delta");
            if step == 0 {
                assert_eq!((d.keep, d.first.is_some(), d.append.len()), (0, true, 1));
            } else {
                assert_eq!(
                    (d.keep, d.append.len()),
                    (messages.len() - 1, 1),
                    "step {step}"
                );
                assert!(d.tools.is_none());
            }
            let ch = d.ch;
            same(&rx.apply(&d, &chans).expect("lengths agree"), &r);
            chans.end(ch, true);
            messages.push(said(&format!("step {step}")));
        }
        assert_eq!(chans.len(), 1);
    }

    #[test]
    fn forgetting_a_session_drops_its_idle_channels_and_its_childrens_only() {
        let mut channels = Channels::new();
        let mut ids = Vec::new();
        for (session, text) in [
            ("s1", "a"),
            ("s1~x:child:1", "b"),
            ("s10", "c"),
            ("s2", "d"),
        ] {
            let mut r = req(vec![sys("p"), user(text)]);
            r.session = Some(session.to_string());
            let ch = channels.begin(&r).expect("delta").ch;
            channels.end(ch, true);
            ids.push(ch);
        }
        let mut busy = req(vec![sys("p"), user("e")]);
        busy.session = Some("s1".to_string());
        let busy_ch = channels.begin(&busy).expect("delta").ch;
        assert_eq!(channels.forget_session("s1"), vec![ids[0], ids[1]]);
        assert_eq!(channels.len(), 3, "s10, s2 and the busy channel stay");
        assert!(channels.forget_session("s1").is_empty(), "idempotent");
        channels.end(busy_ch, true);
        assert_eq!(channels.forget_session("s1"), vec![busy_ch]);
    }

    #[test]
    fn a_request_of_the_same_lineage_keeps_the_whole_channel_and_another_is_compared() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let lineage = |messages: Vec<ChatMessage>, l: Option<u64>| {
            let mut r = req(messages);
            r.lineage = l;
            r
        };
        let first = lineage(vec![sys("a"), user("hi"), said("one")], Some(7));
        let d = chans.begin(&first).expect("delta");
        let ch = d.ch;
        rx.apply(&d, &chans);
        chans.end(ch, true);
        // Same lineage, grown by one and with a new system message: kept whole, no compare.
        let second = lineage(
            vec![sys("b"), user("hi"), said("one"), said("two")],
            Some(7),
        );
        let d = chans.begin(&second).expect("delta");
        assert_eq!((d.ch, d.keep, d.append.len()), (ch, 3, 1));
        assert!(d.first.is_some());
        same(&rx.apply(&d, &chans).expect("lengths agree"), &second);
        chans.end(ch, true);
        // Another lineage that rewrote message 2 reuses the channel by comparing: keeps 2.
        let third = lineage(
            vec![sys("b"), user("hi"), said("ONE"), said("two")],
            Some(8),
        );
        let d = chans.begin(&third).expect("delta");
        assert_eq!((d.ch, d.keep, d.append.len()), (ch, 2, 2));
        same(&rx.apply(&d, &chans).expect("lengths agree"), &third);
        chans.end(ch, true);
    }

    #[test]
    fn a_changed_system_message_is_replaced_in_place() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let first = req(vec![sys("state a"), user("hi"), said("x")]);
        let d = chans.begin(&first).expect("delta");
        let ch = d.ch;
        rx.apply(&d, &chans);
        chans.end(ch, true);
        let second = req(vec![sys("state b"), user("hi"), said("x"), said("y")]);
        let d = chans.begin(&second).expect("delta");
        assert_eq!(d.ch, ch);
        assert_eq!(d.keep, 3);
        assert!(d.first.is_some());
        assert_eq!(d.append.len(), 1);
        same(&rx.apply(&d, &chans).expect("lengths agree"), &second);
    }

    #[test]
    fn a_rewritten_middle_keeps_only_the_common_prefix() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let a = req(vec![sys("s"), user("hi"), said("a"), said("b"), said("c")]);
        let d = chans.begin(&a).expect("delta");
        let ch = d.ch;
        rx.apply(&d, &chans);
        chans.end(ch, true);
        // Same first user message and same last message, different middle.
        let b = req(vec![
            sys("s"),
            user("hi"),
            said("A"),
            said("b"),
            said("c"),
            said("d"),
        ]);
        let d = chans.begin(&b).expect("delta");
        assert_eq!(d.keep, 2);
        same(&rx.apply(&d, &chans).expect("lengths agree"), &b);
    }

    #[test]
    fn concurrent_sessions_get_their_own_channels() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let a = req(vec![sys("s"), user("a")]);
        let b = req(vec![sys("s"), user("a")]);
        let da = chans.begin(&a).expect("delta");
        let db = chans.begin(&b).expect("delta");
        assert_ne!(da.ch, db.ch, "a busy channel is not shared");
        let (cha, chb) = (da.ch, db.ch);
        same(&rx.apply(&da, &chans).expect("a"), &a);
        same(&rx.apply(&db, &chans).expect("b"), &b);
        chans.end(cha, true);
        chans.end(chb, true);
        assert_eq!(chans.len(), 2);
    }

    #[test]
    fn a_failed_call_forgets_its_channel_on_both_sides() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let a = req(vec![sys("s"), user("a"), said("1")]);
        let d = chans.begin(&a).expect("delta");
        let ch = d.ch;
        rx.apply(&d, &chans);
        chans.end(ch, false);
        assert!(chans.is_empty());
        let mut longer = a.clone();
        longer.messages.push(said("2"));
        let d = chans.begin(&longer).expect("delta");
        assert_ne!(d.ch, ch);
        assert_eq!(d.keep, 0, "sent whole");
        assert_eq!(
            d.drop,
            vec![ch],
            "the receiver is told to forget the old channel"
        );
        same(&rx.apply(&d, &chans).expect("lengths agree"), &longer);
        assert!(!rx.channels.contains_key(&ch));
    }

    #[test]
    fn tools_are_sent_when_they_change() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let tool = |n: &str| ToolDef::new(n, "d", json!({ "type": "object" }));
        let mut r = req(vec![sys("s"), user("a")]).with_tools(vec![tool("x")]);
        for (i, tools) in [vec![tool("x")], vec![tool("x")], vec![tool("y")], vec![]]
            .into_iter()
            .enumerate()
        {
            r.tools = tools.into();
            r.messages.push(said(&i.to_string()));
            let d = chans.begin(&r).expect("delta");
            assert_eq!(d.tools.is_some(), i != 1, "call {i}");
            let ch = d.ch;
            same(&rx.apply(&d, &chans).expect("lengths agree"), &r);
            chans.end(ch, true);
        }
    }

    #[test]
    fn concurrent_sessions_in_one_state_share_their_system_message_and_tools() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let tools: std::sync::Arc<[ToolDef]> =
            vec![ToolDef::new("x", "d", json!({ "type": "object" }))].into();
        let mut ids = std::collections::HashSet::new();
        let mut open = Vec::new();
        for i in 0..100 {
            let mut r = req(vec![
                sys("the state's prompt"),
                user(&format!("session {i}")),
            ]);
            // Each session's own copy of the same definitions (not the same pointer).
            r.tools = tools.to_vec().into();
            let d = chans.begin(&r).expect("delta");
            ids.insert((d.first, d.tools));
            same(&rx.apply(&d, &chans).expect("lengths agree"), &r);
            open.push(d.ch);
        }
        assert_eq!(
            ids.len(),
            1,
            "one block each for the prompt and the tools: {ids:?}"
        );
        assert_eq!(rx.fetched, 2, "the receiver fetched each block once");
        for ch in open {
            chans.end(ch, true);
        }
        // Another state's prompt is another block; the receiver fetches only that one.
        let r = req(vec![sys("another state"), user("session 0")]).with_tools(tools.to_vec());
        let d = chans.begin(&r).expect("delta");
        same(&rx.apply(&d, &chans).expect("lengths agree"), &r);
        assert_eq!(rx.fetched, 3);
    }

    #[test]
    fn blocks_are_bounded_but_never_those_of_a_call_in_flight() {
        let mut chans = Channels::new();
        let mut rx = Receiver::default();
        let prompt = |i: usize| req(vec![sys(&format!("prompt {i}")), user("u")]);
        // More distinct prompts in flight at once than the bound: every one stays fetchable.
        let reqs: Vec<ChatRequest> = (0..MAX_BLOCKS + 4).map(prompt).collect();
        let deltas: Vec<Delta<'_>> = reqs
            .iter()
            .map(|r| chans.begin(r).expect("delta"))
            .collect();
        assert_eq!(chans.blocks.len(), MAX_BLOCKS + 4);
        for (d, r) in deltas.iter().zip(&reqs) {
            assert!(
                d.unkeep.is_empty(),
                "no block of a call in flight is forgotten"
            );
            same(&rx.apply(d, &chans).expect("lengths agree"), r);
        }
        let stale = &deltas[0];
        for d in &deltas {
            chans.end(d.ch, true);
        }
        // Once they ended, the next new block brings the count back to the bound, oldest first.
        let late = prompt(99);
        let d = chans.begin(&late).expect("delta");
        assert_eq!(chans.blocks.len(), MAX_BLOCKS);
        let unkept = d.unkeep.clone();
        assert_eq!(unkept.len(), 5, "{unkept:?}");
        assert!(unkept.contains(&stale.first.expect("a block")));
        // A delta applied after its call ended and its block was forgotten is refused, never
        // applied with a wrong message 0.
        let mut fresh = Receiver::default();
        assert!(fresh.apply(stale, &chans).is_none());
        same(&rx.apply(&d, &chans).expect("lengths agree"), &late);
    }

    #[test]
    fn idle_channels_are_bounded() {
        let mut chans = Channels::new();
        let mut dropped = Vec::new();
        for i in 0..(MAX_CHANNELS + 10) {
            let r = req(vec![sys("s"), user(&format!("session {i}"))]);
            let d = chans.begin(&r).expect("delta");
            dropped.extend(d.drop.iter().copied());
            let ch = d.ch;
            chans.end(ch, true);
        }
        assert_eq!(chans.len(), MAX_CHANNELS);
        assert_eq!(
            dropped,
            (1..=10).collect::<Vec<u64>>(),
            "the oldest, each reported once"
        );
    }
}
