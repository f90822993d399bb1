//! The live state flow on stderr (cli digest §7.1): state changes on the outer
//! margin, actions inside a state indented four spaces. Append-only: each
//! event renders to zero or more complete lines.

use archmax_machine::{Envelope, Event};

use archmax_kernel::tools::WORKFLOW_TOOL_PREFIX as WORKFLOW_TOOL;

use crate::style::{ARROW, BULLET, CHECK, CROSS, DOT, QUOTE, Style, WARN};

const INDENT: &str = "    ";

/// Renders events as state-flow lines. It remembers just enough to render a
/// leave after a raise as `✖ <state> → failed`, to fold the leave that
/// follows an `on_error` routing into the routing line, and to say a hook's
/// refusal of a move once.
#[derive(Debug, Clone)]
pub struct FlowRenderer {
    style: Style,
    raised: bool,
    routed: Option<(String, String)>,
    /// The reason of the `hook-rejected` just shown: the refused move's answer that
    /// follows it with the same reason is not shown again.
    hook_refused: Option<String>,
    /// The delegation tool (`archmax_workflow_<slug>`) just refused at dispatch: the
    /// sub-workflow start and failure the runtime reports for it say nothing more.
    refused_delegation: Option<String>,
    /// The target of the last `advance`: a leave to the state itself without
    /// one is the turn ending in that state (a final state's completion, or a
    /// state waiting for the next message), not a self-transition.
    advanced_to: Option<String>,
    /// The message whose text is being shown as it streams (its id, if it has one): the
    /// last line written is its open `    │ …` line, closed by the next event.
    streaming: Option<Option<String>>,
    /// A streamed message whose line something else closed (the Ctrl-C hint) before its
    /// `agent-text` came: that text is on screen already too.
    closed: Option<Option<String>>,
}

impl FlowRenderer {
    /// A renderer with `style`.
    pub fn new(style: Style) -> Self {
        FlowRenderer {
            style,
            raised: false,
            routed: None,
            hook_refused: None,
            refused_delegation: None,
            advanced_to: None,
            streaming: None,
            closed: None,
        }
    }

    /// Whether a streamed message's line is open (the cursor is after its text).
    pub fn mid_line(&self) -> bool {
        self.streaming.is_some()
    }

    /// Ends a streamed message's open line ("\n"), or "" when none is open.
    pub fn close_line(&mut self) -> String {
        match self.streaming.take() {
            Some(id) => {
                self.closed = Some(id);
                "\n".to_string()
            }
            None => String::new(),
        }
    }

    /// A piece of streamed text: quoted as `agent-text` would quote the whole (each line
    /// `    │ <line>`), written as it comes, the line left open.
    fn delta(&mut self, text: &str, message_id: &Option<String>) -> String {
        let s = self.style;
        let mut out = String::new();
        self.closed = None;
        if self.streaming.as_ref() != Some(message_id) {
            out.push_str(&self.close_line());
            out.push_str(&format!("{INDENT}{} ", s.gray(QUOTE)));
            self.streaming = Some(message_id.clone());
        }
        let mut lines = text.split('\n');
        if let Some(first) = lines.next() {
            out.push_str(first);
        }
        for line in lines {
            out.push_str(&format!("\n{INDENT}{} {line}", s.gray(QUOTE)));
        }
        out
    }

    /// The text for one event before a child's indentation: a streamed piece, the end of
    /// a streamed line, or the event's lines (closing an open streamed line first).
    fn lines(&mut self, envelope: &Envelope) -> String {
        if let Event::AgentTextDelta {
            text, message_id, ..
        } = &envelope.event
        {
            return self.delta(text, message_id);
        }
        if let Event::AgentText {
            message_id,
            partial,
            ..
        } = &envelope.event
            && let Some(shown) = &self.streaming
        {
            // The text is on screen already: its message ends here.
            if *partial == Some(true) {
                self.streaming = None;
                self.closed = None;
                return format!(" {}\n", self.style.dim("(cut off)"));
            }
            if shown == message_id {
                let close = self.close_line();
                self.closed = None;
                return close;
            }
        }
        if let Event::AgentText {
            message_id,
            partial,
            ..
        } = &envelope.event
            && let Some(shown) = self.closed.take()
        {
            if *partial == Some(true) {
                return format!(
                    "{INDENT}{} {}\n",
                    self.style.gray(QUOTE),
                    self.style.dim("(cut off)")
                );
            }
            if shown == *message_id {
                return String::new();
            }
        }
        let lines = self.event_lines(envelope);
        if lines.is_empty() {
            // An event that prints nothing (usage, a tool result) leaves the line open.
            return lines;
        }
        self.close_line() + &lines
    }

    /// The lines for one event (each ending in a newline), or "". A child session's
    /// events (`<parent>~<identity>`) are indented under the state that called it, one
    /// level per delegation.
    pub fn on_event(&mut self, envelope: &Envelope) -> String {
        let depth = envelope.session_id.as_deref().map_or(0, |id| {
            id.matches(archmax_machine::store::CHILD_SEPARATOR).count()
        });
        // A streamed piece leaves its line open: indentation goes only where a line starts.
        let at_line_start = !self.mid_line();
        let text = self.lines(envelope);
        if depth == 0 || text.is_empty() {
            return text;
        }
        let pad = INDENT.repeat(depth);
        let mut out = String::with_capacity(text.len() + pad.len());
        let mut starts = at_line_start;
        for piece in text.split_inclusive('\n') {
            if starts && piece != "\n" {
                out.push_str(&pad);
            }
            out.push_str(piece);
            starts = piece.ends_with('\n');
        }
        out
    }

    fn event_lines(&mut self, envelope: &Envelope) -> String {
        let s = self.style;
        let routed = self.routed.take();
        let hook_refused = self.hook_refused.take();
        let refused_delegation = self.refused_delegation.take();
        let this_delegation = |workflow: &str| {
            refused_delegation.as_deref() == Some(&format!("{WORKFLOW_TOOL}{workflow}"))
        };
        if let Some((tool, reason)) = envelope.event.control_refusal() {
            if tool == "archmax_advance" && hook_refused.as_deref() == Some(reason) {
                return String::new();
            }
            return refused(s, tool, reason);
        }
        match &envelope.event {
            Event::StateEnter { state } => {
                self.raised = false;
                self.advanced_to = None;
                format!("\n{} {}\n", s.cyan(DOT), s.bold(state))
            }
            Event::StateLeave { state, next } => {
                if std::mem::take(&mut self.raised) {
                    return format!(
                        "{} {} {}\n",
                        s.red(&format!("{CROSS} {state}")),
                        s.dim(ARROW),
                        s.red("failed")
                    );
                }
                if routed.is_some_and(|(from, to)| &from == state && &to == next) {
                    return String::new();
                }
                let advanced = self.advanced_to.take();
                if state == next && advanced.as_deref() != Some(next) {
                    return format!("{} {state} {}\n", s.green(CHECK), s.dim("(turn ends here)"));
                }
                format!(
                    "{} {state} {} {}\n",
                    s.green(CHECK),
                    s.dim(ARROW),
                    s.cyan(next)
                )
            }
            Event::Raised { code, reason, .. } => {
                self.raised = true;
                format!(
                    "{INDENT}{} {}\n",
                    s.red(&format!("{CROSS} raised {code}")),
                    s.dim(reason)
                )
            }
            Event::StateErrorRouted { state, to, reason } => {
                self.routed = Some((state.clone(), to.clone()));
                format!(
                    "{} {state} {} {} {}\n",
                    s.yellow(WARN),
                    s.dim(ARROW),
                    s.yellow(to),
                    s.dim(&format!("(on_error: {reason})"))
                )
            }
            Event::ToolCalled {
                tool,
                detail,
                origin,
                ..
            } => {
                if tool == "archmax_advance" || tool == "archmax_raise" {
                    return String::new();
                }
                let detail = detail
                    .as_deref()
                    .filter(|d| !d.is_empty())
                    .map(|d| format!(" {}", s.dim(d)))
                    .unwrap_or_default();
                let via = origin
                    .as_deref()
                    .map(|o| format!(" {}", s.dim(&format!("via {}", origin_label(o)))))
                    .unwrap_or_default();
                format!("{INDENT}{BULLET} {tool}{detail}{via}\n")
            }
            Event::ToolBlocked {
                tool,
                reason,
                origin,
                ..
            } => {
                if tool.starts_with(WORKFLOW_TOOL) {
                    self.refused_delegation = Some(tool.clone());
                }
                let who = match origin.as_deref() {
                    Some(o) => format!("{tool} (from a {})", origin_label(o)),
                    None => tool.clone(),
                };
                refused(s, &who, reason)
            }
            Event::HookOutput { line, .. } => format!("{INDENT}  {}\n", s.dim(line)),
            Event::ModelFallback {
                from, to, reason, ..
            } => format!(
                "{INDENT}{} {}\n",
                s.yellow(&format!("⚠ model {from} failed, switching to {to}:")),
                s.dim(reason.lines().next().unwrap_or_default())
            ),
            // A second or more in the endpoint's queue is worth a line; less is noise.
            Event::ModelQueued {
                waited_ms, limit, ..
            } if *waited_ms >= 1000 => format!(
                "{INDENT}{}\n",
                s.dim(&format!(
                    "waited {:.1} s for the model (its endpoint takes {limit} calls at once)",
                    *waited_ms as f64 / 1000.0
                ))
            ),
            Event::AgentText { text, .. } => quoted(s, text),
            Event::Parked {
                state,
                awaiting,
                reason,
                resume_at,
                ..
            } => {
                if awaiting == "input" {
                    let why = reason
                        .as_deref()
                        .map(str::trim)
                        .filter(|r| !r.is_empty())
                        .map(|r| format!(" {DASH} {r}"))
                        .unwrap_or_default();
                    let due = resume_at
                        .as_deref()
                        .map(|t| format!(" (due {t})"))
                        .unwrap_or_default();
                    format!(
                        "{INDENT}{} {}\n",
                        s.yellow(&format!("{WARN} awaiting input")),
                        s.dim(&format!("in {state}{why}{due}"))
                    )
                } else {
                    format!(
                        "{INDENT}{} {}\n",
                        s.yellow(&format!("{WARN} awaiting human decision")),
                        s.dim(&format!("at {state}"))
                    )
                }
            }
            Event::Decided { to, .. } => format!(
                "{INDENT}{} {}\n",
                s.green(CHECK),
                s.dim(&format!("decision -> {to}"))
            ),
            Event::ParkMessage {
                state,
                direction,
                text,
                ..
            } => {
                // Outbound replies arrive as agent text: shown once, there.
                if direction != "inbound" {
                    return String::new();
                }
                format!(
                    "{INDENT}{} {}\n{}",
                    s.yellow(ARROW),
                    s.dim(&format!("message to the parked session at {state}")),
                    quoted(s, text)
                )
            }
            Event::Delivered { state, trigger, .. } => format!(
                "{INDENT}{} {}\n",
                s.green(CHECK),
                s.dim(&format!("{trigger} delivered, resuming {state}"))
            ),
            Event::Advance { reason, to, .. } => {
                self.advanced_to = Some(to.clone());
                match reason.as_deref().map(str::trim) {
                    Some(r) if !r.is_empty() => {
                        format!("{INDENT}{}\n", s.dim(&format!("{ARROW} {r}")))
                    }
                    _ => String::new(),
                }
            }
            Event::Warning { scope, message } => {
                format!("{} [{scope}] {}\n", s.yellow(WARN), s.dim(message))
            }
            Event::HookStart { phase, label, .. } => {
                format!(
                    "{INDENT}{} {}\n",
                    phase_color(s, phase, &format!("{BULLET} {phase}")),
                    s.dim(label)
                )
            }
            Event::HookVerdict {
                phase,
                verdict,
                reason,
                ..
            } => {
                let mark = match verdict.as_str() {
                    "ok" => s.green(CHECK),
                    "veto" => s.red(CROSS),
                    _ => s.yellow(DOT),
                };
                let said = match reason.trim() {
                    "" => verdict.clone(),
                    r => format!("{verdict} {DASH} {r}"),
                };
                format!(
                    "{INDENT}{mark} {} {}\n",
                    phase_color(s, phase, phase),
                    s.dim(&said)
                )
            }
            Event::HookRejected { phase, reason, .. } => {
                self.hook_refused = Some(reason.clone());
                refused(s, &format!("{phase} hook"), reason)
            }
            Event::SubWorkflowStart { workflow, .. } if this_delegation(workflow) => {
                self.refused_delegation = refused_delegation.clone();
                String::new()
            }
            Event::SubWorkflowResult {
                workflow, status, ..
            } if status == "error" && this_delegation(workflow) => String::new(),
            Event::SubWorkflowStart {
                state, workflow, ..
            } => format!(
                "{INDENT}{} {}\n",
                s.cyan(BULLET),
                s.dim(&format!("running sub-workflow '{workflow}' from '{state}'"))
            ),
            Event::SubWorkflowResult {
                workflow,
                status,
                duration_ms,
                reason,
                ..
            } => {
                if status == "ok" {
                    format!(
                        "{INDENT}{} {}\n",
                        s.green(CHECK),
                        s.dim(&format!(
                            "sub-workflow '{workflow}' done ({duration_ms} ms)"
                        ))
                    )
                } else if status == "parked" {
                    format!(
                        "{INDENT}{} {}\n",
                        s.yellow(BULLET),
                        s.dim(&format!(
                            "sub-workflow '{workflow}' parked ({duration_ms} ms): this run waits with it"
                        ))
                    )
                } else {
                    format!(
                        "{INDENT}{} {}\n",
                        s.red(&format!("{CROSS} sub-workflow '{workflow}' failed")),
                        s.dim(reason.as_deref().unwrap_or_default())
                    )
                }
            }
            _ => String::new(),
        }
    }
}

/// A refusal, the reason shown as its first line without the kernel's `[workflow] BLOCKED:`
/// mark (the whole text is the model's, in the transcript):
/// `    ✖ <who> refused: <reason>` (the mark and `who refused:` red, the reason dim).
fn refused(s: Style, who: &str, reason: &str) -> String {
    let reason = reason.trim_start();
    let reason = reason
        .strip_prefix("[workflow] BLOCKED:")
        .unwrap_or(reason)
        .lines()
        .next()
        .unwrap_or_default()
        .trim();
    if reason.is_empty() {
        return format!("{INDENT}{}\n", s.red(&format!("{CROSS} {who} refused")));
    }
    format!(
        "{INDENT}{} {}\n",
        s.red(&format!("{CROSS} {who} refused:")),
        s.dim(reason)
    )
}

/// How the flow names a script caller: `script`, or `lifecycle hook`.
fn origin_label(origin: &str) -> &str {
    if origin == "lifecycle" {
        "lifecycle hook"
    } else {
        origin
    }
}

/// Text quoted line by line under the current state (`    │ <line>`).
fn quoted(s: Style, text: &str) -> String {
    text.split('\n')
        .map(|line| format!("{INDENT}{} {line}\n", s.gray(QUOTE)))
        .collect()
}

/// `before` in blue, `after` in magenta.
fn phase_color(s: Style, phase: &str, text: &str) -> String {
    if phase == "before" {
        s.blue(text)
    } else {
        s.magenta(text)
    }
}

/// The em dash of verdict lines.
const DASH: &str = "\u{2014}";

#[cfg(test)]
mod tests {
    use super::*;

    fn env(event: Event) -> Envelope {
        Envelope {
            event,
            level: "info",
            ts: 0,
            seq: 1,
            session_id: Some("s".into()),
            sub_workflow_dispatch_id: None,
        }
    }

    #[test]
    fn a_child_is_indented_under_the_calling_state() {
        let mut r = FlowRenderer::new(Style::new(false));
        let child = |event| Envelope {
            session_id: Some("s~work:enrich:0".into()),
            ..env(event)
        };
        let start = Event::SubWorkflowStart {
            state: "work".into(),
            workflow: "enrich".into(),
            dispatch_id: "subwf-0".into(),
            depth: 1,
            tool_call_id: None,
            chain: None,
        };
        let result = |status: &str, reason: Option<&str>| Event::SubWorkflowResult {
            state: "work".into(),
            workflow: "enrich".into(),
            dispatch_id: "subwf-0".into(),
            depth: 1,
            tool_call_id: None,
            chain: None,
            status: status.into(),
            duration_ms: 12,
            reason: reason.map(str::to_string),
            returns: None,
        };
        let out: String = [
            r.on_event(&env(start)),
            r.on_event(&child(Event::StateEnter {
                state: "enrich".into(),
            })),
            r.on_event(&env(result("ok", None))),
            r.on_event(&env(result("error", Some("it raised")))),
        ]
        .concat();
        assert_eq!(
            out,
            "    › running sub-workflow 'enrich' from 'work'\n\n    ● enrich\n    ✔ sub-workflow 'enrich' done (12 ms)\n    ✖ sub-workflow 'enrich' failed it raised\n"
        );
    }

    #[test]
    fn a_childs_streamed_text_is_indented_where_its_lines_start_only() {
        let mut r = FlowRenderer::new(Style::new(false));
        let child = |event| Envelope {
            session_id: Some("s~work:enrich:0".into()),
            ..env(event)
        };
        let delta = |text: &str| Event::AgentTextDelta {
            state: "enrich".into(),
            text: text.into(),
            message_id: Some("m1".into()),
        };
        let out: String = [
            r.on_event(&child(delta("Enri"))),
            r.on_event(&child(delta("ched.\nNext"))),
            r.on_event(&child(delta(" line."))),
            r.on_event(&child(Event::StateEnter {
                state: "done".into(),
            })),
        ]
        .concat();
        assert_eq!(
            out,
            "        │ Enriched.\n        │ Next line.\n\n    ● done\n"
        );
    }

    fn render(events: Vec<Event>) -> String {
        let mut r = FlowRenderer::new(Style::new(false));
        events.into_iter().map(|e| r.on_event(&env(e))).collect()
    }

    fn delta(text: &str) -> Event {
        Event::AgentTextDelta {
            state: "b".into(),
            text: text.into(),
            message_id: Some("m1".into()),
        }
    }

    fn said(text: &str, partial: Option<bool>) -> Event {
        Event::AgentText {
            state: "b".into(),
            text: text.into(),
            message_id: if partial.is_some() {
                None
            } else {
                Some("m1".into())
            },
            partial,
        }
    }

    #[test]
    fn streamed_text_ends_up_as_the_whole_text_would_show_and_is_not_repeated() {
        let whole = render(vec![
            said("one\ntwo\n", None),
            Event::StateEnter { state: "c".into() },
        ]);
        let mut r = FlowRenderer::new(Style::new(false));
        let mut pieces = Vec::new();
        let usage = Event::ModelUsage {
            state: "b".into(),
            input_tokens: 1,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
            model: None,
            cost_usd: None,
            turn_tokens: None,
            turn_cost_usd: None,
            session_tokens: None,
            session_cost_usd: None,
        };
        for e in [
            delta("on"),
            delta("e\nt"),
            delta("wo"),
            delta("\n"),
            usage,
            said("one\ntwo\n", None),
            Event::StateEnter { state: "c".into() },
        ] {
            pieces.push(r.on_event(&env(e)));
            if pieces.len() == 2 {
                assert!(r.mid_line());
            }
        }
        assert_eq!(pieces[0], "    │ on", "the first piece shows at once");
        assert_eq!(pieces[1], "e\n    │ t");
        assert_eq!(pieces.concat(), whole);
        assert!(!r.mid_line());
    }

    #[test]
    fn another_event_closes_a_streamed_line_and_a_cut_off_message_says_so() {
        let out = render(vec![
            delta("Thinking"),
            Event::Warning {
                scope: "session".into(),
                message: "slow".into(),
            },
            delta(" more"),
            said("Thinking more", Some(true)),
        ]);
        assert_eq!(
            out,
            "    │ Thinking\n⚠ [session] slow\n    │  more (cut off)\n"
        );
        let mut r = FlowRenderer::new(Style::new(false));
        r.on_event(&env(delta("x")));
        assert_eq!(r.close_line(), "\n");
        assert_eq!(r.close_line(), "");
        // Closed from outside (the Ctrl-C hint), the text is not shown again.
        assert_eq!(r.on_event(&env(said("x", Some(true)))), "    │ (cut off)\n");
        r.on_event(&env(delta("y")));
        r.close_line();
        assert_eq!(r.on_event(&env(said("y", None))), "");
        assert_eq!(
            r.on_event(&env(said("z", None))),
            "    │ z\n",
            "a later text is shown"
        );
    }

    #[test]
    fn a_turn_in_plain_text() {
        let out = render(vec![
            Event::Advance {
                from: "__start__".into(),
                to: "a".into(),
                reason: None,
                call_id: None,
            },
            Event::StateEnter { state: "a".into() },
            Event::ToolCalled {
                state: "a".into(),
                tool: "read_file".into(),
                call_id: None,
                args: None,
                detail: None,
                origin: None,
                mcp: None,
            },
            Event::ToolCalled {
                state: "a".into(),
                tool: "archmax_advance".into(),
                call_id: None,
                args: None,
                detail: None,
                origin: None,
                mcp: None,
            },
            Event::ToolBlocked {
                state: "a".into(),
                tool: "write_file".into(),
                reason: "no".into(),
                call_id: None,
                args: None,
                origin: None,
            },
            Event::Advance {
                from: "a".into(),
                to: "b".into(),
                reason: Some(" done ".into()),
                call_id: None,
            },
            Event::StateLeave {
                state: "a".into(),
                next: "b".into(),
            },
            Event::StateEnter { state: "b".into() },
            Event::AgentText {
                state: "b".into(),
                text: "one\ntwo".into(),
                message_id: None,
                partial: None,
            },
        ]);
        assert_eq!(
            out,
            "\n● a\n    › read_file\n    ✖ write_file refused: no\n    → done\n✔ a → b\n\n● b\n    │ one\n    │ two\n"
        );
    }

    #[test]
    fn raises_and_routing() {
        let out = render(vec![
            Event::Raised {
                state: "a".into(),
                session_id: "s".into(),
                code: "x-y".into(),
                reason: "why".into(),
                call_id: None,
            },
            Event::StateLeave {
                state: "a".into(),
                next: "a".into(),
            },
            Event::StateErrorRouted {
                state: "b".into(),
                to: "c".into(),
                reason: "r".into(),
            },
            Event::StateLeave {
                state: "b".into(),
                next: "c".into(),
            },
            Event::Warning {
                scope: "session".into(),
                message: "m".into(),
            },
        ]);
        assert_eq!(
            out,
            "    ✖ raised x-y why\n✖ a → failed\n⚠ b → c (on_error: r)\n⚠ [session] m\n"
        );
    }

    #[test]
    fn a_final_state_ends_without_an_arrow_and_a_self_edge_keeps_it() {
        let leave = |s: &str| Event::StateLeave {
            state: s.into(),
            next: s.into(),
        };
        let advance = |s: &str| Event::Advance {
            from: s.into(),
            to: s.into(),
            reason: None,
            call_id: None,
        };
        assert_eq!(
            render(vec![
                Event::StateEnter {
                    state: "done".into()
                },
                leave("done")
            ]),
            "\n● done\n✔ done (turn ends here)\n"
        );
        assert_eq!(
            render(vec![
                Event::StateEnter {
                    state: "poll".into()
                },
                advance("poll"),
                leave("poll")
            ]),
            "\n● poll\n✔ poll → poll\n"
        );
    }

    #[test]
    fn colors() {
        let mut r = FlowRenderer::new(Style::new(true));
        assert_eq!(
            r.on_event(&env(Event::StateEnter { state: "a".into() })),
            "\n\x1b[36m●\x1b[0m \x1b[1ma\x1b[0m\n"
        );
    }
}

#[cfg(test)]
mod refusals {
    use super::*;

    fn render(color: bool, events: Vec<Event>) -> String {
        let mut r = FlowRenderer::new(Style::new(color));
        events
            .into_iter()
            .map(|event| {
                r.on_event(&Envelope {
                    event,
                    level: "info",
                    ts: 0,
                    seq: 1,
                    session_id: Some("s".into()),
                    sub_workflow_dispatch_id: None,
                })
            })
            .collect()
    }

    fn answered(tool: &str, output: &str) -> Event {
        Event::ToolResult {
            state: "classify".into(),
            tool: tool.into(),
            call_id: "c1".into(),
            status: "ok".into(),
            duration_ms: 1,
            output: output.into(),
            truncated: false,
            origin: None,
        }
    }

    fn hook_refused(reason: &str) -> Event {
        Event::HookRejected {
            state: "classify".into(),
            phase: "after".into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn a_refused_move_shows_its_reason_and_an_allowed_one_nothing() {
        let out = render(
            false,
            vec![
                answered(
                    "archmax_advance",
                    "archmax_advance rejected: cannot advance from 'classify' to 'refund-approved'. Valid target slugs: refund-review.",
                ),
                answered("archmax_advance", "Advanced to state 'refund-review'."),
                answered(
                    "archmax_set_variables",
                    "archmax_set_variables rejected: 'k' is locked and cannot be changed (current value: 1). Nothing was written.",
                ),
                answered("read_file", "read_file rejected: not a control tool"),
            ],
        );
        assert_eq!(
            out,
            "    ✖ archmax_advance refused: cannot advance from 'classify' to 'refund-approved'. Valid target slugs: refund-review.\n    ✖ archmax_set_variables refused: 'k' is locked and cannot be changed (current value: 1). Nothing was written.\n"
        );
    }

    #[test]
    fn a_kernel_refusal_shows_its_first_line_without_the_mark() {
        let out = render(
            false,
            vec![Event::ToolBlocked {
                state: "classify".into(),
                tool: "read_file".into(),
                reason: "[workflow] BLOCKED: 'read_file' on 'secrets/keys.md' is not allowed in state 'classify'.\nAllowed in 'classify': read_file (notes/**).\n".into(),
                call_id: Some("c1".into()),
                args: None,
                origin: None,
            }],
        );
        assert_eq!(
            out,
            "    ✖ read_file refused: 'read_file' on 'secrets/keys.md' is not allowed in state 'classify'.\n"
        );
    }

    #[test]
    fn a_hooks_refusal_of_a_move_is_said_once() {
        let out = render(
            false,
            vec![
                hook_refused("hook veto: no date"),
                answered(
                    "archmax_advance",
                    "archmax_advance rejected: hook veto: no date",
                ),
                // Another reason is another refusal.
                hook_refused("hook veto: no date"),
                answered(
                    "archmax_advance",
                    "archmax_advance rejected: something else",
                ),
            ],
        );
        assert_eq!(
            out,
            "    ✖ after hook refused: hook veto: no date\n    ✖ after hook refused: hook veto: no date\n    ✖ archmax_advance refused: something else\n"
        );
    }

    #[test]
    fn refusals_are_red_with_color_and_plain_without() {
        let refusal = || answered("archmax_advance", "archmax_advance rejected: no edge");
        assert_eq!(
            render(true, vec![refusal()]),
            "    \x1b[31m✖ archmax_advance refused:\x1b[0m \x1b[2mno edge\x1b[0m\n"
        );
        assert!(!render(false, vec![refusal()]).contains('\x1b'));
    }
}

#[cfg(test)]
mod park_lines {
    use super::*;

    fn line(event: Event) -> String {
        let mut r = FlowRenderer::new(Style::new(false));
        r.on_event(&Envelope {
            event,
            level: "info",
            ts: 0,
            seq: 1,
            session_id: Some("s".into()),
            sub_workflow_dispatch_id: None,
        })
    }

    #[test]
    fn a_wait_for_the_model_of_a_second_or_more_is_a_line() {
        let queued = |waited_ms| Event::ModelQueued {
            state: "a".into(),
            waited_ms,
            limit: 8,
        };
        assert_eq!(
            line(queued(2400)),
            "    waited 2.4 s for the model (its endpoint takes 8 calls at once)\n"
        );
        assert_eq!(line(queued(300)), "");
    }

    #[test]
    fn parks_decisions_deliveries_and_messages() {
        assert_eq!(
            line(Event::Parked {
                state: "poll".into(),
                session_id: "s".into(),
                awaiting: "input".into(),
                reason: Some(" the payment ".into()),
                resume_at: Some("2030-01-01T09:00:00.000Z".into()),
                call_id: None,
            }),
            "    ⚠ awaiting input in poll — the payment (due 2030-01-01T09:00:00.000Z)\n"
        );
        assert_eq!(
            line(Event::Parked {
                state: "poll".into(),
                session_id: "s".into(),
                awaiting: "input".into(),
                reason: None,
                resume_at: None,
                call_id: None,
            }),
            "    ⚠ awaiting input in poll\n"
        );
        assert_eq!(
            line(Event::Parked {
                state: "review".into(),
                session_id: "s".into(),
                awaiting: "decision".into(),
                reason: None,
                resume_at: None,
                call_id: None,
            }),
            "    ⚠ awaiting human decision at review\n"
        );
        assert_eq!(
            line(Event::Decided {
                state: "review".into(),
                to: "paid".into(),
                session_id: "s".into(),
            }),
            "    ✔ decision -> paid\n"
        );
        assert_eq!(
            line(Event::Delivered {
                state: "poll".into(),
                trigger: "payment".into(),
                to: "poll".into(),
                session_id: "s".into(),
            }),
            "    ✔ payment delivered, resuming poll\n"
        );
        assert_eq!(
            line(Event::ParkMessage {
                state: "review".into(),
                session_id: "s".into(),
                direction: "inbound".into(),
                text: "Any news?\nSoon?".into(),
            }),
            "    → message to the parked session at review\n    │ Any news?\n    │ Soon?\n"
        );
        assert_eq!(
            line(Event::ParkMessage {
                state: "review".into(),
                session_id: "s".into(),
                direction: "outbound".into(),
                text: "Soon.".into(),
            }),
            ""
        );
    }

    #[test]
    fn park_line_colors() {
        let mut r = FlowRenderer::new(Style::new(true));
        let text = r.on_event(&Envelope {
            event: Event::Decided {
                state: "review".into(),
                to: "paid".into(),
                session_id: "s".into(),
            },
            level: "info",
            ts: 0,
            seq: 1,
            session_id: None,
            sub_workflow_dispatch_id: None,
        });
        assert_eq!(
            text,
            "    \x1b[32m✔\x1b[0m \x1b[2mdecision -> paid\x1b[0m\n"
        );
    }
}

#[cfg(test)]
mod hook_lines {
    use super::*;

    fn line(event: Event) -> String {
        let mut r = FlowRenderer::new(Style::new(false));
        r.on_event(&Envelope {
            event,
            level: "info",
            ts: 0,
            seq: 1,
            session_id: None,
            sub_workflow_dispatch_id: None,
        })
    }

    #[test]
    fn hooks_render_as_the_state_flow_shows_them() {
        let phase = |p: &str| p.to_string();
        assert_eq!(
            line(Event::HookStart {
                state: "a".into(),
                phase: phase("after"),
                label: "hooks/check.js".into()
            }),
            "    › after hooks/check.js\n"
        );
        assert_eq!(
            line(Event::HookVerdict {
                state: "a".into(),
                phase: phase("after"),
                label: "rubric#0".into(),
                verdict: "veto".into(),
                reason: "no date".into()
            }),
            "    ✖ after veto — no date\n"
        );
        assert_eq!(
            line(Event::HookVerdict {
                state: "a".into(),
                phase: phase("after"),
                label: "hooks/check.js".into(),
                verdict: "ok".into(),
                reason: " ".into()
            }),
            "    ✔ after ok\n",
            "no dangling dash without a reason"
        );
        assert_eq!(
            line(Event::HookRejected {
                state: "a".into(),
                phase: phase("before"),
                reason: "cannot run".into()
            }),
            "    ✖ before hook refused: cannot run\n"
        );
        assert_eq!(
            line(Event::HookOutput {
                state: "a".into(),
                line: "checked 2 orders".into()
            }),
            "      checked 2 orders\n"
        );
    }

    #[test]
    fn script_calls_name_their_origin() {
        let called = |origin: &str| Event::ToolCalled {
            state: "a".into(),
            tool: "read_file".into(),
            call_id: Some("ptc:1".into()),
            args: None,
            detail: None,
            origin: Some(origin.into()),
            mcp: None,
        };
        assert_eq!(
            line(called("lifecycle")),
            "    › read_file via lifecycle hook\n"
        );
        assert_eq!(line(called("script")), "    › read_file via script\n");
        assert_eq!(
            line(Event::ToolBlocked {
                state: "a".into(),
                tool: "write_file".into(),
                reason: "no".into(),
                call_id: None,
                args: None,
                origin: Some("script".into()),
            }),
            "    ✖ write_file (from a script) refused: no\n"
        );
    }
}
