//! Turn behaviours, in-process: a workflow, a scripted model, the arrivals, and what happened
//! as an inline snapshot (`UPDATE_EXPECT=1 cargo test` rewrites them).

use expect_test::expect;
use serde_json::json;

use crate::testing::{Turns, reply};

const REVIEW: &str = "\
instructions: A test workflow.
states:
  draft:
    triggers: { manual: }
    instructions: Draft it.
    transitions:
      - to: review
  review:
    type: human
    instructions: A person approves.
    transitions:
      - { to: done, type: approve, description: Approve. }
      - { to: draft, type: refine, description: Send it back. }
  done:
    instructions: Say goodbye.
";

#[test]
fn a_turn_parks_at_the_human_state_and_the_decision_finishes_it() {
    let mut t = Turns::new(
        REVIEW,
        vec![
            reply::call(
                "c1",
                "archmax_advance",
                json!({ "to": "review", "reason": "drafted" }),
            ),
            reply::text("A person will look at it."),
            reply::text("Goodbye."),
        ],
    );
    expect![[r#"
        > send "Write it."
          advance to=draft from=__start__
          state-enter state=draft
          tool-called args={"to":"review","reason":"drafted"} state=draft tool=archmax_advance callId=c1
          advance callId=c1 from=draft to=review reason=drafted
          state-leave next=review state=draft
          state-enter state=review
          parked awaiting=decision state=review
          tool-result truncated=false state=draft tool=archmax_advance callId=c1 status=ok output=Advanced to state 'review'. You may now use the tools allowed in this state.
          agent-text-delta text=A person will look at it. state=review
          agent-text text=A person will look at it. state=review
        = parked at review: A person will look at it.
          trail: draft(trigger) → review(agent)
    "#]]
    .assert_eq(&t.send("s-1", "Write it."));
    expect![[r#"
        > decide done
          decided to=done state=review
          state-leave next=done state=review
          state-enter state=done
          agent-text-delta text=Goodbye. state=done
          agent-text text=Goodbye. state=done
          state-leave next=done state=done
        = completed at done: Goodbye.
          trail: draft(trigger) → review(agent) → done(human)
    "#]]
    .assert_eq(&t.decide("s-1", "done", None));
    assert_eq!(t.model.left(), 0);
}

#[test]
fn a_jump_past_the_human_state_is_refused_with_the_kernel_s_reason() {
    let mut t = Turns::new(
        REVIEW,
        vec![
            reply::call(
                "c1",
                "archmax_advance",
                json!({ "to": "done", "reason": "skip" }),
            ),
            reply::text("I stay here."),
        ],
    );
    expect![[r#"
        > send "Skip the review."
          advance to=draft from=__start__
          state-enter state=draft
          tool-called args={"to":"done","reason":"skip"} state=draft tool=archmax_advance callId=c1
          tool-result truncated=false state=draft tool=archmax_advance callId=c1 status=error output=archmax_advance rejected: cannot advance from 'draft' to 'done'. Valid target slugs: review.
          agent-text-delta text=I stay here. state=draft
          agent-text text=I stay here. state=draft
          state-leave next=draft state=draft
        = completed at draft: I stay here.
          trail: draft(trigger)
    "#]]
    .assert_eq(&t.send("s-1", "Skip the review."));
}

#[test]
fn a_tool_the_state_does_not_grant_is_refused_and_the_turn_goes_on() {
    let yaml = "\
instructions: A test workflow.
states:
  read-only:
    triggers: { manual: }
    instructions: Look only.
    tools:
      forbid: [write_file]
";
    let mut t = Turns::new(
        yaml,
        vec![
            reply::call(
                "c1",
                "write_file",
                json!({ "file_path": "notes.md", "content": "x" }),
            ),
            reply::text("I could not write."),
        ],
    );
    expect![[r#"
        > send "Write a note."
          advance to=read-only from=__start__
          state-enter state=read-only
          tool-blocked args={"file_path":"notes.md","content":"x"} state=read-only tool=write_file reason=[workflow] BLOCKED: 'write_file' on 'notes.md' is forbidden by state 'read-only' (states.read-only.tools.forbid). A denial beats every grant, so no allow entry here permits it. callId=c1
          agent-text-delta text=I could not write. state=read-only
          agent-text text=I could not write. state=read-only
          state-leave next=read-only state=read-only
        = completed at read-only: I could not write.
          trail: read-only(trigger)
    "#]]
    .assert_eq(&t.send("s-1", "Write a note."));
}

#[test]
fn a_script_that_runs_out_fails_the_turn_with_the_model_s_error() {
    let mut t = Turns::new(REVIEW, vec![]);
    expect![[r#"
        > send "Hi."
          advance to=draft from=__start__
          state-enter state=draft
        = failed at draft: 
          exit: {"success":false,"code":"turn-error","reason":"the script ran out of answers (model 'default')"}
          trail: draft(trigger)
    "#]]
    .assert_eq(&t.send("s-1", "Hi."));
}

#[test]
fn a_call_of_delete_answers_that_deletion_is_not_available() {
    let mut t = Turns::new(
        REVIEW,
        vec![
            reply::call("c1", "delete", json!({ "file_path": "/notes.md" })),
            reply::text("I cannot delete."),
        ],
    );
    let shown = t.send("s-1", "Delete the notes.");
    let answer = t.model.requests()[1]
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            crate::model::ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert_eq!(answer, "Error: deletion is not available for '/notes.md'.");
    assert!(
        shown.contains("= completed at draft: I cannot delete."),
        "{shown}"
    );
}

#[test]
fn every_refused_call_is_shown_an_unknown_name_bad_arguments_and_a_quiet_refusal() {
    let mut t = Turns::new(
        REVIEW,
        vec![
            reply::calls(&[
                ("c1", "send_email", json!({ "to": "a@b.c" })),
                ("c2", "eval", json!({ "code": "1" })),
            ]),
            reply::call_raw("c3", "write_file", "{not json"),
            reply::text("Nothing worked."),
        ],
    );
    expect![[r#"
        > send "Try things."
          advance to=draft from=__start__
          state-enter state=draft
          tool-blocked args={"to":"a@b.c"} state=draft tool=send_email reason=[workflow] 'send_email' is not a tool. Call one of the tools you were given, by its exact name. callId=c1
          tool-blocked args={"code":"1"} state=draft tool=eval reason=[workflow] BLOCKED: an unnamespaced `eval` tool is never governed — use `archmax_eval`, the runtime's own code interpreter. callId=c2
          tool-blocked callId=c3 state=draft tool=write_file reason=Error: the arguments of 'write_file' are not valid JSON (key must be a string at line 1 column 2), so nothing was run. Call 'write_file' again with its arguments as one JSON object.
          agent-text-delta text=Nothing worked. state=draft
          agent-text text=Nothing worked. state=draft
          state-leave next=draft state=draft
        = completed at draft: Nothing worked.
          trail: draft(trigger)
    "#]]
    .assert_eq(&t.send("s-1", "Try things."));
}

#[test]
fn a_turn_that_reaches_its_token_cap_is_routed_and_its_handler_has_a_tenth_more() {
    let yaml = "\
instructions: A test workflow.
budget: { maxTurnTokens: 100 }
states:
  draft:
    triggers: { manual: }
    instructions: Draft it.
    on_error: triage
    transitions:
      - to: done
  triage:
    instructions: Hand it over.
  done:
    instructions: Say goodbye.
";
    let mut t = Turns::new(
        yaml,
        vec![
            reply::using(reply::call("c1", "ls", json!({})), 60, 10),
            reply::using(reply::call("c2", "ls", json!({})), 30, 5),
            reply::using(reply::text("A person will take it from here."), 2, 1),
        ],
    );
    let shown = t.send("s-1", "Draft it.");
    assert!(
        shown.contains("state-error-routed reason=the turn reached its token cap (budget.maxTurnTokens: 100 tokens): 105 tokens spent state=draft to=triage"),
        "{shown}"
    );
    assert!(
        shown.contains("= completed at triage: A person will take it from here."),
        "{shown}"
    );
    assert_eq!(t.model.left(), 0);
    // The next call of a turn past a tenth more is never made: the turn ends rejected.
    let mut t = Turns::new(
        yaml,
        vec![
            reply::using(reply::call("c1", "ls", json!({})), 90, 30),
            reply::text("never asked"),
        ],
    );
    let shown = t.send("s-1", "Draft it.");
    assert!(
        shown.contains("= rejected at triage: ") && shown.contains("120 tokens spent"),
        "{shown}"
    );
    assert_eq!(t.model.left(), 1, "no call started past the cap");
}

#[test]
fn a_wait_until_a_duration_is_due_that_long_after_the_manual_clock() {
    let mut t = Turns::new(
        REVIEW,
        vec![
            reply::call(
                "c1",
                "archmax_wait",
                json!({ "reason": "the payment", "until": "2h" }),
            ),
            reply::text("I will wait for the payment."),
        ],
    );
    t.at(1_796_688_000_000); // 2026-12-08T00:00:00.000Z
    let shown = t.send("s-1", "Wait for it.");
    assert!(
        shown.contains("parked callId=c1 state=draft awaiting=input reason=the payment resumeAt=2026-12-08T02:00:00.000Z"),
        "{shown}"
    );
}

const HOOKED: &str = "\
instructions: A test workflow.
states:
  draft:
    triggers: { manual: }
    instructions: Draft it.
    after:
      script: hooks/check.js
      max_iterations: 1
    on_error: triage
    transitions:
      - to: done
  triage:
    instructions: Hand it over.
  done:
    instructions: Say goodbye.
";

/// An after hook that corrects every move once, then lets the model's second try through.
const CHECK: &str = "\
import { defineHook } from '@archmax-ai/harness/sandbox';
export default defineHook(async (input) => {
  const tried = await input.tools.readFile({ file_path: 'scratchpad/tried.md' }).catch(() => null);
  if (!tried || String(tried).includes('not found')) {
    await input.tools.writeFile({ file_path: 'scratchpad/tried.md', content: 'once' });
    return { verdict: 'correct', reason: 'Add a summary first.' };
  }
  return { verdict: 'ok', reason: 'fine' };
});
";

#[test]
fn an_after_hook_corrects_a_move_and_the_second_try_passes() {
    let mut t = Turns::with_files(
        HOOKED,
        &[("workflows/wf/hooks/check.js", CHECK)],
        vec![
            reply::call(
                "c1",
                "archmax_advance",
                json!({ "to": "done", "reason": "drafted" }),
            ),
            reply::call(
                "c2",
                "archmax_advance",
                json!({ "to": "done", "reason": "summary added" }),
            ),
            reply::text("Goodbye."),
        ],
    );
    expect![[r#"
        > send "Draft it."
          advance to=draft from=__start__
          state-enter state=draft
          tool-called args={"to":"done","reason":"drafted"} state=draft tool=archmax_advance callId=c1
          hook-start label=hooks/check.js state=draft phase=after
          tool-called origin=lifecycle state=draft tool=read_file callId=ptc:1 args={"file_path":"scratchpad/tried.md"}
          tool-result origin=lifecycle state=draft tool=read_file callId=ptc:1 status=ok truncated=false output=Error: File '/scratchpad/tried.md' not found
          tool-called origin=lifecycle state=draft tool=write_file callId=ptc:2 args={"file_path":"scratchpad/tried.md","content":"once"}
          tool-result origin=lifecycle state=draft tool=write_file callId=ptc:2 status=ok truncated=false output=Successfully wrote to 'scratchpad/tried.md'
          hook-verdict reason=Add a summary first. state=draft phase=after label=hooks/check.js verdict=correct
          hook-rejected reason=hook: reply incomplete — Add a summary first.. Update your answer and call archmax_advance({ to: "done" }) again. (0 attempt(s) remaining) state=draft phase=after
          tool-result truncated=false state=draft tool=archmax_advance callId=c1 status=error output=archmax_advance rejected: hook: reply incomplete — Add a summary first.. Update your answer and call archmax_advance({ to: "done" }) again. (0 attempt(s) remaining)
          tool-called args={"to":"done","reason":"summary added"} state=draft tool=archmax_advance callId=c2
          hook-start label=hooks/check.js state=draft phase=after
          tool-called origin=lifecycle state=draft tool=read_file callId=ptc:1 args={"file_path":"scratchpad/tried.md"}
          tool-result origin=lifecycle state=draft tool=read_file callId=ptc:1 status=ok truncated=false output=once
          hook-verdict reason= state=draft phase=after label=hooks/check.js verdict=ok
          advance callId=c2 from=draft to=done reason=summary added
          state-leave next=done state=draft
          state-enter state=done
          tool-result truncated=false state=draft tool=archmax_advance callId=c2 status=ok output=Advanced to state 'done'. You may now use the tools allowed in this state.
          agent-text-delta text=Goodbye. state=done
          agent-text text=Goodbye. state=done
          state-leave next=done state=done
        = completed at done: Goodbye.
          trail: draft(trigger) → done(agent)
    "#]]
    .assert_eq(&t.send("s-1", "Draft it."));
}

#[test]
fn a_hook_that_keeps_correcting_fails_the_state_and_on_error_routes_it() {
    let always = "\
import { defineHook } from '@archmax-ai/harness/sandbox';
export default defineHook(async () => ({ verdict: 'correct', reason: 'Never good enough.' }));
";
    let mut t = Turns::with_files(
        HOOKED,
        &[("workflows/wf/hooks/check.js", always)],
        vec![
            reply::call(
                "c1",
                "archmax_advance",
                json!({ "to": "done", "reason": "one" }),
            ),
            reply::call(
                "c2",
                "archmax_advance",
                json!({ "to": "done", "reason": "two" }),
            ),
            reply::text("Handed over."),
            reply::text("A colleague takes over."),
        ],
    );
    expect![[r#"
        > send "Draft it."
          advance to=draft from=__start__
          state-enter state=draft
          tool-called args={"to":"done","reason":"one"} state=draft tool=archmax_advance callId=c1
          hook-start label=hooks/check.js state=draft phase=after
          hook-verdict reason=Never good enough. state=draft phase=after label=hooks/check.js verdict=correct
          hook-rejected reason=hook: reply incomplete — Never good enough.. Update your answer and call archmax_advance({ to: "done" }) again. (0 attempt(s) remaining) state=draft phase=after
          tool-result truncated=false state=draft tool=archmax_advance callId=c1 status=error output=archmax_advance rejected: hook: reply incomplete — Never good enough.. Update your answer and call archmax_advance({ to: "done" }) again. (0 attempt(s) remaining)
          tool-called args={"to":"done","reason":"two"} state=draft tool=archmax_advance callId=c2
          hook-start label=hooks/check.js state=draft phase=after
          hook-verdict reason=Never good enough. state=draft phase=after label=hooks/check.js verdict=correct
          hook-rejected reason=hook veto: reply still incomplete after 1 attempt(s) — Never good enough. state=draft phase=after
          tool-result truncated=false state=draft tool=archmax_advance callId=c2 status=error output=archmax_advance rejected: hook veto: reply still incomplete after 1 attempt(s) — Never good enough.
          agent-text-delta text=Handed over. state=draft
          agent-text text=Handed over. state=draft
          state-error-routed reason=hook veto: reply still incomplete after 1 attempt(s) — Never good enough. state=draft to=triage
          state-leave next=triage state=draft
          state-enter state=triage
          agent-text-delta text=A colleague takes over. state=triage
          agent-text text=A colleague takes over. state=triage
          state-leave next=triage state=triage
        = completed at triage: A colleague takes over.
          trail: draft(trigger) → triage(on_error)
    "#]]
    .assert_eq(&t.send("s-1", "Draft it."));
}
