//! The model request: the system message (static prefix and volatile state block, or the
//! parked directive), the state's tool definitions, the conversation moved in from the
//! transcript, and the usage each response reports.
//!
//! State it changes: the session's usage totals (`record_usage`); the request borrows the
//! transcript's wire view and gives it back.

use crate::events::Event;
use crate::model::types::{ChatMessage, ChatRequest, ChatResponse, ToolDef};

use super::Turn;

impl Turn<'_> {
    pub(super) fn model_for(&self) -> String {
        let st = self.h.spec.states.get(&self.session.workflow_state);
        st.and_then(|s| s.model.clone())
            .or_else(|| self.h.spec.settings.as_ref().and_then(|s| s.model.clone()))
            .unwrap_or_else(|| self.h.default_model.clone())
    }

    /// Lists the tools of the MCP servers the current state's surface names (once a turn per
    /// state; a server starts on the way), so [`Turn::tool_defs`] can offer them. A server
    /// that cannot be listed is a warning, and its tools are not offered.
    pub(super) async fn list_mcp(&mut self) {
        let Some(mcp) = self.h.mcp.clone() else {
            return;
        };
        let state = self.session.workflow_state.clone();
        if !self.mcp_listed.insert(state.clone()) {
            return;
        }
        let surface = self.h.policy.surface(&state);
        // Boxed: listing may start a server, a large future every turn's would carry.
        let problems = Box::pin(mcp.list(&surface)).await;
        for problem in problems {
            self.emit(crate::events::Event::Warning {
                scope: "mcp".to_string(),
                message: problem,
            });
        }
    }

    /// The tool definitions the model is shown in the current state.
    pub(super) fn tool_defs(&self) -> std::sync::Arc<[ToolDef]> {
        self.h.tool_defs(&self.session.workflow_state)
    }

    /// The system message: one text, or, where the endpoint takes Anthropic-style
    /// cache markers, `[static (cached), volatile]` blocks.
    pub(super) fn system_message(&self) -> ChatMessage {
        let (static_part, volatile) = self.system_prompt();
        let (enabled, ttl) = self.h.prompt_cache();
        if enabled && crate::harness::takes_cache_markers(&self.model_for()) {
            let mut parts = vec![crate::model::ContentPart::cached_text(
                static_part,
                Some(ttl),
            )];
            if !volatile.is_empty() {
                parts.push(crate::model::ContentPart::text(volatile));
            }
            return ChatMessage::System {
                content: crate::model::MessageContent::Parts(parts),
            };
        }
        if volatile.is_empty() {
            return ChatMessage::system(static_part);
        }
        ChatMessage::system(format!("{static_part}\n\n{volatile}"))
    }

    /// The static prefix and the volatile block.
    pub(super) fn system_prompt(&self) -> (String, String) {
        if self.h.plain {
            // A plain agent's prompt holds still: no state, clock or park to render.
            return (self.h.static_prompt.clone(), String::new());
        }
        let clock = crate::clock::clock_line(crate::clock::now_ms());
        if self.mode == super::Mode::ReplyOnly {
            let (state, title, reason) = match self.session.park.as_ref() {
                Some(crate::state::Park::Decision { state, title, .. }) => {
                    (state.clone(), title.clone(), String::new())
                }
                Some(crate::state::Park::Input {
                    state,
                    title,
                    reason,
                    ..
                }) => (state.clone(), title.clone(), reason.clone()),
                None => (self.session.workflow_state.clone(), None, String::new()),
            };
            let directive =
                crate::park::directive(self.reply_case, &state, title.as_deref(), &reason);
            return (
                self.h.static_prompt.clone(),
                format!("{clock}\n\n## This run is parked\n\n{directive}"),
            );
        }
        let volatile = crate::prompt::volatile_block(
            &self.h.spec,
            &self.h.policy,
            &crate::prompt::VolatileInput {
                clock: &clock,
                session: &self.session,
                skills: &self.h.skills,
                signature: self.signature.as_ref(),
                child: self.h.child,
            },
        );
        (self.h.static_prompt.clone(), volatile)
    }

    /// The next model request. Its messages move out of `chat` (and back after the call:
    /// such a request carries the turn's lineage), except when images ride along: those are
    /// added to a copy (`crate::images`), so they never enter the conversation.
    pub(super) fn request(&mut self) -> ChatRequest {
        let system = self.system_message();
        let tools = self.tool_defs();
        let with_images = self
            .h
            .settings
            .images
            .filter(|_| !self.transcript.images().is_empty());
        let mut messages = match &with_images {
            Some(opts) => crate::images::with_images(
                self.workspace().as_ref(),
                self.transcript.chat(),
                self.transcript.images(),
                opts,
            ),
            None => self.transcript.lend(),
        };
        match messages.first_mut() {
            Some(slot) => *slot = system,
            None => messages.push(system),
        }
        let mut req = ChatRequest::new(self.model_for(), messages).with_tools(tools);
        // `chat` only grows after message 0 while this turn lives (see `push`); images
        // inserted mid-conversation (and dropped past `keep`) break that promise.
        req.lineage = with_images.is_none().then_some(self.lineage);
        req.session = Some(self.id.as_str().to_string());
        req.state = (!self.h.plain).then(|| self.session.workflow_state.clone());
        req
    }

    pub(super) fn record_usage(&mut self, r: &ChatResponse) {
        let Some(u) = &r.usage else { return };
        // The model id of the response, else the one requested, picks the price and is
        // reported; with neither (the placeholder a host that names no model gets), none is.
        let model = r
            .model
            .clone()
            .or_else(|| Some(self.model_for()).filter(|m| m != crate::UNNAMED_MODEL));
        let cost_usd = self
            .h
            .settings
            .pricing
            .as_ref()
            .and_then(|table| table.cost_usd(model.as_deref().unwrap_or_default(), u));
        self.session.usage.add(u, cost_usd);
        self.session.turn_usage.add(u, cost_usd);
        let (turn, session) = (self.session.turn_usage, self.session.usage);
        // An i64, which OpenTelemetry exports as an integer (a u64 goes as text).
        let tokens = i64::try_from(turn.tokens()).unwrap_or(i64::MAX);
        self.spans.turn.record("archmax.turn.tokens", tokens);
        if let Some(cost) = turn.cost_usd {
            self.spans.turn.record("archmax.turn.cost_usd", cost);
        }
        self.emit(Event::ModelUsage {
            state: self.session.workflow_state.clone(),
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_creation_tokens: u.cache_creation_tokens,
            model,
            cost_usd,
            turn_tokens: Some(turn.tokens()),
            turn_cost_usd: turn.cost_usd,
            session_tokens: Some(session.tokens()),
            session_cost_usd: session.cost_usd,
        });
    }
}
