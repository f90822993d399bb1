//! `archmax serve` end to end: the real command on a free loopback port over a temporary
//! workspace, the model the scripted server, every route called over HTTP.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::time::Duration;

use archmax_cli::{BufferIo, run};
use reqwest::StatusCode;
use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};

use crate::parks::{SPEC, waiting_until};
use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Workspace, cli_with};

/// A running `archmax serve` (its thread ends with the test process).
struct Served {
    base: String,
    client: Client,
    token: Option<String>,
    server: ScriptedServer,
    _ws: Workspace,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The refund workspace, the model scripted with `script`, `env` (e.g. tokens) and extra
/// `args` for the command.
fn serve(script: Vec<Reply>, env: &[(&str, &str)], args: &[&str]) -> Served {
    let ws = Workspace::new(&[("workflows/refunds/workflow.yaml", SPEC)]);
    let calc = ws.root().join("sessions/p-1/scratchpad/calc.md");
    std::fs::create_dir_all(calc.parent().expect("dir")).expect("mkdir");
    std::fs::write(&calc, "12.00").expect("write");
    start(ws, script, env, args)
}

/// `archmax serve` over `ws`, listening once this returns.
fn start(ws: Workspace, script: Vec<Reply>, env: &[(&str, &str)], args: &[&str]) -> Served {
    let server = ScriptedServer::start(script).expect("scripted server");
    let port = free_port().to_string();
    let root = ws.root().to_path_buf();
    let mut io = BufferIo::new(&root)
        .with_env("ARCHMAX_CLI_NO_BANNER", "1")
        .with_env("ARCHMAX_API_BASE_URL", &server.url())
        .with_env("ARCHMAX_API_KEY", "test-key")
        .with_env("ARCHMAX_MODEL", "scripted-model");
    for (k, v) in env {
        io = io.with_env(k, v);
    }
    let mut argv: Vec<String> = ["serve", "--port", port.as_str()]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    argv.extend(args.iter().map(|s| (*s).to_string()));
    std::thread::spawn(move || {
        let code = run(&argv, &mut io);
        // The test then fails on its first request, with this on its output.
        eprintln!("archmax serve returned {code}: {}", io.stderr_text());
    });
    let client = Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let base = format!("http://127.0.0.1:{port}");
    // Waits until it listens (the assembly comes first).
    let up = (0..400).any(|_| {
        let ok = client.get(format!("{base}/health")).send().is_ok();
        if !ok {
            std::thread::sleep(Duration::from_millis(25));
        }
        ok
    });
    assert!(up, "archmax serve did not start listening");
    let token = env
        .iter()
        .find(|(k, _)| *k == "ARCHMAX_SERVE_TOKENS")
        .and_then(|(_, v)| v.split(',').next())
        .and_then(|pair| pair.split_once('='))
        .map(|(_, t)| t.to_string());
    Served {
        base,
        client,
        token,
        server,
        _ws: ws,
    }
}

impl Served {
    fn with_token(&self, req: reqwest::blocking::RequestBuilder, token: Option<&str>) -> Response {
        let req = match token.or(self.token.as_deref()) {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        req.send().expect("the request is answered")
    }
    fn get(&self, path: &str) -> Response {
        self.with_token(self.client.get(format!("{}{path}", self.base)), None)
    }
    fn delete_as(&self, path: &str, token: Option<&str>) -> Response {
        self.with_token(self.client.delete(format!("{}{path}", self.base)), token)
    }
    fn post(&self, path: &str, body: Value) -> Response {
        self.post_as(path, body, None)
    }
    fn post_as(&self, path: &str, body: Value, token: Option<&str>) -> Response {
        self.with_token(
            self.client.post(format!("{}{path}", self.base)).json(&body),
            token,
        )
    }
}

fn json_of(r: Response) -> (StatusCode, Value) {
    let status = r.status();
    (status, r.json().expect("a JSON body"))
}

/// `parks`'s hand-over to `review`, its first model call reporting usage.
fn handover() -> Vec<Reply> {
    let mut script = crate::parks::handover();
    script[0] = script[0]
        .clone()
        .with_usage(json!({ "prompt_tokens": 11, "completion_tokens": 3 }));
    script
}

const TOKENS: &str = "finance=tok-finance,bob=tok-bob";

#[test]
fn health_and_the_inbox_need_no_token_every_other_route_does() {
    let s = serve(vec![], &[("ARCHMAX_SERVE_TOKENS", TOKENS)], &[]);
    let bare = |path: &str| {
        s.client
            .get(format!("{}{path}", s.base))
            .send()
            .expect("answered")
    };
    assert_eq!(bare("/health").status(), StatusCode::OK);
    let page = bare("/");
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().expect("html");
    assert!(html.contains("<script src=\"/inbox.js\"></script>"));
    for path in ["/sessions", "/metrics", "/openapi.json", "/workflows"] {
        let (status, body) = json_of(bare(path));
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(body["code"], "UnauthorizedError");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|e| e.contains("Authorization: Bearer")),
            "{body}"
        );
    }
    let wrong = s.with_token(
        s.client.get(format!("{}/sessions", s.base)),
        Some("tok-nope"),
    );
    let (status, body) = json_of(wrong);
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        body["error"],
        "the bearer token is not one of ARCHMAX_SERVE_TOKENS"
    );
    assert_eq!(s.get("/sessions").status(), StatusCode::OK);
}

#[test]
fn without_tokens_it_binds_loopback_only_and_bad_tokens_are_named() {
    let ws = Workspace::new(&[("workflows/refunds/workflow.yaml", SPEC)]);
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[],
        false,
        &["serve", "--host", "0.0.0.0"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "Error: without ARCHMAX_SERVE_TOKENS the server binds to loopback only; '0.0.0.0' is not a loopback address. Set ARCHMAX_SERVE_TOKENS to serve other machines\n"
    );
    let r = cli_with(
        &ws,
        Some(&server),
        &[("ARCHMAX_SERVE_TOKENS", "alice=a,justatoken")],
        false,
        &["serve"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "Error: ARCHMAX_SERVE_TOKENS entry 2 is not 'identity=token' (got 'justatoken'); write identity=token pairs separated by commas\n"
    );
    let r = cli_with(
        &ws,
        Some(&server),
        &[("ARCHMAX_SERVE_TOKENS", "a=1,,b=2")],
        false,
        &["serve"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "Error: ARCHMAX_SERVE_TOKENS entry 2 is empty (two commas in a row, or one at an end); write identity=token there or remove the comma\n"
    );
    let r = cli_with(&ws, Some(&server), &[], false, &["serve", "--port", "x"]);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("--port must be a port number"), "{}", r.err);
}

#[test]
fn a_decision_is_refused_to_a_non_approver_and_made_by_an_approver() {
    let mut script = handover();
    script.push(Reply::text("Your refund is paid."));
    let s = serve(script, &[("ARCHMAX_SERVE_TOKENS", TOKENS)], &[]);
    let (status, outcome) = json_of(s.post(
        "/sessions/p-1/messages",
        json!({ "message": "Refund order 7" }),
    ));
    assert_eq!(status, StatusCode::OK, "{outcome}");
    assert_eq!(outcome["sessionId"], "p-1");
    assert_eq!(outcome["status"], "awaiting_decision");
    assert_eq!(outcome["pending"]["state"], "review");
    assert!(
        outcome.get("messages").is_none(),
        "the Outcome as --json prints it"
    );

    let (_, pending) = json_of(s.get("/sessions?awaiting=decision"));
    assert_eq!(pending.as_array().map(Vec::len), Some(1));
    assert_eq!(pending[0]["workflow"], "refunds");
    assert_eq!(pending[0]["park"]["approvers"], json!(["finance", "ops"]));
    let (_, none) = json_of(s.get("/sessions?awaiting=input"));
    assert_eq!(none, json!([]));

    let (status, one) = json_of(s.get("/sessions/p-1"));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(one["park"]["state"], "review");
    let trail: Vec<&str> = one["trail"]
        .as_array()
        .expect("the trail")
        .iter()
        .filter_map(|t| t["to"].as_str())
        .collect();
    assert_eq!(trail, vec!["draft", "review"]);
    assert_eq!(
        one["park"]["evidence"],
        json!(["scratchpad/refund.json", "scratchpad/calc.md"])
    );
    let calc = s.get("/sessions/p-1/evidence/scratchpad/calc.md");
    assert_eq!(calc.status(), StatusCode::OK);
    assert_eq!(calc.text().expect("text"), "12.00");
    let (status, _) = json_of(s.get("/sessions/p-1/evidence/workflows/refunds/workflow.yaml"));
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "only listed evidence is served"
    );

    let (status, refused) = json_of(s.post_as(
        "/sessions/p-1/decision",
        json!({ "target": "paid" }),
        Some("tok-bob"),
    ));
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(refused["code"], "NotAnApproverError");
    assert_eq!(
        refused["error"],
        "'bob' may not decide the human state 'review' of session 'p-1': its approvers are finance, ops"
    );
    let (status, wrong) = json_of(s.post("/sessions/p-1/decision", json!({ "target": "nowhere" })));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong["code"], "InvalidDecisionTargetError");

    let (status, decided) = json_of(s.post(
        "/sessions/p-1/decision",
        json!({ "target": "paid", "comment": "fine" }),
    ));
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert_eq!(decided["status"], "completed");
    assert_eq!(decided["reply"], "Your refund is paid.");
    let (_, after) = json_of(s.get("/sessions/p-1"));
    assert_eq!(after["status"], "completed");
    assert!(after.get("park").is_none());
    let (status, again) = json_of(s.post("/sessions/p-1/decision", json!({ "target": "paid" })));
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["code"], "SessionNotParkedError");

    let (_, transcript) = json_of(s.get("/sessions/p-1/messages"));
    let texts: Vec<String> = transcript
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(texts.iter().any(|t| t == "Refund order 7"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t == "Your refund is paid."),
        "{texts:?}"
    );

    let metrics = s.get("/metrics").text().expect("metrics");
    for line in [
        "archmax_turns_total{kind=\"message\"} 1",
        "archmax_turns_total{kind=\"decision\"} 1",
        "archmax_parks_total{kind=\"decision\"} 1",
        "archmax_tokens_total{kind=\"input\"} 11",
        "archmax_turn_seconds_count{kind=\"decision\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
    // Every model call the two turns made is counted and timed: one per request the model
    // server got, though only the first answer reported usage (the tokens are that one's).
    let calls = s.server.requests().len();
    assert!(calls >= 2, "{calls} model calls");
    for line in [
        format!("archmax_model_calls_total {calls}"),
        format!("archmax_model_call_seconds_count {calls}"),
        "archmax_model_call_failures_total 0".to_string(),
    ] {
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
}

#[test]
fn me_says_who_the_token_names_and_what_it_may_do() {
    let s = serve(vec![], &[("ARCHMAX_SERVE_TOKENS", TOKENS)], &[]);
    let (status, finance) = json_of(s.get("/me"));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        finance,
        json!({ "identity": "finance", "tokens": true, "approverOf": [{ "workflow": "refunds", "state": "review" }], "mayPrune": true })
    );
    let (_, bob) = json_of(s.with_token(s.client.get(format!("{}/me", s.base)), Some("tok-bob")));
    assert_eq!(
        bob,
        json!({ "identity": "bob", "tokens": true, "approverOf": [], "mayPrune": false })
    );
    let unknown = s.with_token(s.client.get(format!("{}/me", s.base)), Some("nope"));
    assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
}

#[test]
fn without_tokens_a_guarded_decision_says_how_to_get_the_right_to_decide() {
    let s = serve(handover(), &[], &[]);
    let (_, me) = json_of(s.get("/me"));
    assert_eq!(
        me,
        json!({ "identity": "local", "tokens": false, "approverOf": [], "mayPrune": false })
    );
    let (status, _) = json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = json_of(s.post("/sessions/p-1/decision", json!({ "target": "paid" })));
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(refused["code"], "NotAnApproverError");
    assert_eq!(
        refused["error"],
        "'local' may not decide the human state 'review' of session 'p-1': its approvers are finance, ops. This server runs without tokens, so every request is 'local': start it with ARCHMAX_SERVE_TOKENS='finance=<a secret token>' and sign in with that token, or decide from a shell with 'archmax decide p-1 --to <state>'"
    );
}

#[test]
fn events_notice_every_session_that_changed_through_the_server() {
    let mut script = handover();
    script.push(Reply::text("Paid."));
    let s = serve(script, &[("ARCHMAX_SERVE_TOKENS", TOKENS)], &[]);
    let (status, _) = json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK);
    // Kept: the park, numbered after the session's own events.
    let kept = read_events(s.get("/events"), |n| !n.is_empty());
    let (seq, parked) = &kept[0];
    assert_eq!(
        parked,
        &json!({ "seq": seq, "sessionId": "p-1", "change": "message", "status": "awaiting_decision", "state": "review" })
    );
    let session_events = read_events(s.get("/sessions/p-1/events"), |evs| {
        evs.iter().any(|(_, e)| e["type"] == "parked")
    });
    assert!(session_events.iter().all(|(id, _)| id < seq));

    // Live: a decision made elsewhere is noticed once its turn settled.
    let stream = s.get(&format!("/events?since={seq}"));
    let decider = {
        let (client, base) = (s.client.clone(), s.base.clone());
        std::thread::spawn(move || {
            client
                .post(format!("{base}/sessions/p-1/decision"))
                .bearer_auth("tok-finance")
                .json(&json!({ "target": "paid" }))
                .send()
                .map(|r| r.status())
        })
    };
    let live = read_events(stream, |n| !n.is_empty());
    assert_eq!(live[0].1["change"], "decision");
    assert_eq!(live[0].1["status"], "completed");
    assert_eq!(live[0].1["state"], "paid");
    assert_eq!(
        decider.join().expect("decider thread").expect("answered"),
        StatusCode::OK
    );
    // A prune is a change too.
    let (status, _) = json_of(s.delete_as("/sessions/p-1", Some("tok-finance")));
    assert_eq!(status, StatusCode::OK);
    let last = live[0].0;
    let pruned = read_events(s.get(&format!("/events?since={last}")), |n| !n.is_empty());
    assert_eq!(pruned[0].1["change"], "prune");
    assert_eq!(pruned[0].1["sessionId"], "p-1");
}

#[test]
fn replies_and_deliveries_answer_the_outcome() {
    let mut script = handover();
    script.push(Reply::text("The reviewer will look soon."));
    script.extend(waiting_until("2030-01-01T09:00:00Z"));
    script.push(Reply::text("Payment received."));
    let s = serve(script, &[], &[]);
    let (status, _) = json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK);
    let (status, replied) = json_of(s.post("/sessions/p-1/reply", json!({ "message": "When?" })));
    assert_eq!(status, StatusCode::OK, "{replied}");
    assert_eq!(replied["reply"], "The reviewer will look soon.");
    assert_eq!(replied["status"], "awaiting_decision");

    let (status, waiting) =
        json_of(s.post("/sessions/w-1/messages", json!({ "message": "Refund 8" })));
    assert_eq!(status, StatusCode::OK, "{waiting}");
    assert_eq!(waiting["status"], "awaiting_input");
    let (_, waits) = json_of(s.get("/sessions?awaiting=input"));
    assert_eq!(waits[0]["sessionId"], "w-1");
    assert_eq!(waits[0]["park"]["resumeAt"], "2030-01-01T09:00:00.000Z");
    let (status, wrong) =
        json_of(s.post("/sessions/p-1/deliveries", json!({ "trigger": "payment" })));
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(wrong["code"], "SessionNotAwaitingInputError");
    let (status, delivered) = json_of(s.post(
        "/sessions/w-1/deliveries",
        json!({ "trigger": "payment", "variables": { "amount": 12 } }),
    ));
    assert_eq!(status, StatusCode::OK, "{delivered}");
    assert_eq!(delivered["reply"], "Payment received.");
    assert_eq!(delivered["status"], "completed");
    let (status, missing) = json_of(s.get("/sessions/nope"));
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(missing["error"], "no durable session 'nope'");
}

/// Reads SSE events from `r` until `enough` says stop; each as (id, JSON).
fn read_events(r: Response, enough: impl Fn(&[(u64, Value)]) -> bool) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    let mut id = 0;
    for line in BufReader::new(r).lines() {
        let line = line.expect("a line of the stream");
        if let Some(v) = line
            .strip_prefix("id: ")
            .or_else(|| line.strip_prefix("id:"))
        {
            id = v.trim().parse().expect("a numeric id");
        } else if let Some(data) = line
            .strip_prefix("data: ")
            .or_else(|| line.strip_prefix("data:"))
        {
            out.push((id, serde_json::from_str(data).expect("JSON data")));
            if enough(&out) {
                break;
            }
        }
    }
    out
}

#[test]
fn events_replay_from_a_seq_and_stream_live() {
    let mut script = handover();
    script.push(Reply::text("Paid."));
    let s = serve(script, &[("ARCHMAX_SERVE_TOKENS", TOKENS)], &[]);
    let (status, _) = json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK);
    let parked = |evs: &[(u64, Value)]| evs.iter().any(|(_, e)| e["type"] == "parked");
    let replay = read_events(s.get("/sessions/p-1/events"), parked);
    assert!(replay.iter().all(|(_, e)| e["sessionId"] == "p-1"));
    let ids: Vec<u64> = replay.iter().map(|(id, _)| *id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(
        replay
            .iter()
            .any(|(_, e)| e["type"] == "state-enter" && e["state"] == "review")
    );
    assert!(replay.iter().all(|(id, e)| e["seq"] == json!(id)));

    // From the middle: only what came after.
    let mid = ids[ids.len() / 2];
    let later = read_events(s.get(&format!("/sessions/p-1/events?since={mid}")), parked);
    assert!(later.iter().all(|(id, _)| *id > mid));
    assert_eq!(later.len(), ids.iter().filter(|i| **i > mid).count());

    // Live: subscribed after everything kept, the decision's events arrive as they happen.
    let last = *ids.last().expect("events");
    let stream = s.get(&format!("/sessions/p-1/events?since={last}"));
    let decider = {
        let (client, base) = (s.client.clone(), s.base.clone());
        std::thread::spawn(move || {
            client
                .post(format!("{base}/sessions/p-1/decision"))
                .bearer_auth("tok-finance")
                .json(&json!({ "target": "paid" }))
                .send()
                .map(|r| r.status())
        })
    };
    let live = read_events(stream, |evs| {
        evs.iter()
            .any(|(_, e)| e["type"] == "state-enter" && e["state"] == "paid")
    });
    assert!(live.iter().all(|(id, _)| *id > last));
    assert!(live.iter().any(|(_, e)| e["type"] == "decided"), "{live:?}");
    assert_eq!(
        decider.join().expect("decider thread").expect("answered"),
        StatusCode::OK
    );
}

#[test]
fn trigger_webhooks_find_their_session_by_the_declared_path() {
    const HOOKED: &str = "title: Tickets\nstates:\n  triage:\n    triggers:\n      ticket:\n        session: ticket.id\n        message: ticket.text\n    instructions: Triage it.\n";
    let ws_spec = HOOKED;
    let ws = Workspace::new(&[("workflows/tickets/workflow.yaml", ws_spec)]);
    let s = start(
        ws,
        vec![Reply::text("Triaged."), Reply::text("Again.")],
        &[],
        &[],
    );
    let fire = json!({ "ticket": { "id": "T-9", "text": "My kettle leaks." } });
    let (status, first) = json_of(s.post("/triggers/tickets/ticket", fire.clone()));
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["sessionId"], "T-9");
    assert_eq!(first["reply"], "Triaged.");
    let (_, transcript) = json_of(s.get("/sessions/T-9/messages"));
    assert!(
        transcript
            .as_array()
            .expect("messages")
            .iter()
            .any(|m| m["content"] == "My kettle leaks."),
        "{transcript}"
    );
    let (status, second) = json_of(s.post("/triggers/tickets/ticket", fire));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(second["sessionId"], "T-9", "the same conversation");
    let (status, unknown) = json_of(s.post("/triggers/tickets/nope", json!({})));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{unknown}");
    let (status, _) = json_of(s.post("/triggers/nowhere/ticket", json!({})));
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn bodies_are_bounded_cors_is_off_unless_configured_and_openapi_lists_every_route() {
    let s = serve(vec![], &[], &["--max-body", "200"]);
    let (status, big) = json_of(s.post(
        "/sessions/p-1/messages",
        json!({ "message": "x".repeat(500) }),
    ));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(big["code"], "PayloadTooLargeError");
    let (status, bad) = json_of(s.post("/sessions/p-1/messages", json!({ "text": "hi" })));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad["error"]
            .as_str()
            .is_some_and(|e| e.contains("unknown field `text`")),
        "{bad}"
    );
    let plain = s
        .client
        .get(format!("{}/health", s.base))
        .header("Origin", "http://elsewhere.example")
        .send()
        .expect("answered");
    assert!(plain.headers().get("access-control-allow-origin").is_none());

    let (_, doc) = json_of(s.get("/openapi.json"));
    let paths: Vec<&str> = doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .map(String::as_str)
        .collect();
    for route in [
        "/health",
        "/metrics",
        "/openapi.json",
        "/workflows",
        "/workflows/{workflow}/graph",
        "/sessions",
        "/sessions/{id}",
        "/sessions/{id}/messages",
        "/sessions/{id}/history",
        "/sessions/{id}/fork",
        "/sessions/{id}/decision",
        "/sessions/{id}/reply",
        "/sessions/{id}/deliveries",
        "/sessions/{id}/events",
        "/sessions/{id}/evidence/{path}",
        "/triggers/{workflow}/{trigger}",
        "/me",
        "/events",
    ] {
        assert!(paths.contains(&route), "{route} in the OpenAPI document");
    }
    for route in ["/sessions", "/sessions/{id}"] {
        assert!(
            doc["paths"][route]["delete"].is_object(),
            "DELETE {route} documented"
        );
    }
    let svg = s.get("/workflows/refunds/graph");
    assert_eq!(
        svg.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/svg+xml")
    );
    assert!(svg.text().expect("svg").contains("data-state=\"review\""));

    let c = serve(vec![], &[], &["--cors-origin", "http://app.example"]);
    let allowed = c
        .client
        .get(format!("{}/health", c.base))
        .header("Origin", "http://app.example")
        .send()
        .expect("answered");
    assert_eq!(
        allowed
            .headers()
            .get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok()),
        Some("http://app.example")
    );
}

/// A parked session's history, then a fork of its parked step decided another way.
fn history_and_fork_over_http(args: &[&str]) {
    let mut script = handover();
    script.push(Reply::text("Your refund is paid."));
    script.push(Reply::text("Redrafting."));
    let s = serve(script, &[("ARCHMAX_SERVE_TOKENS", TOKENS)], args);
    let (status, outcome) =
        json_of(s.post("/sessions/h-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK, "{outcome}");
    let (status, steps) = json_of(s.get("/sessions/h-1/history"));
    assert_eq!(status, StatusCode::OK, "{steps}");
    let parked = steps
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["status"] == "awaiting_decision")
        .expect("a parked step")
        .clone();
    assert_eq!(parked["tokens"], 14, "{parked}");
    let at = parked["step"].as_u64().expect("step");
    let (status, _) = json_of(s.post_as(
        "/sessions/h-1/decision",
        json!({ "target": "paid" }),
        Some("tok-finance"),
    ));
    assert_eq!(status, StatusCode::OK);

    let (status, fork) = json_of(s.post("/sessions/h-1/fork", json!({ "at": at, "as": "h-2" })));
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    assert_eq!(fork["sessionId"], "h-2");
    assert_eq!(fork["status"], "awaiting_decision");
    assert_eq!(
        fork["park"]["state"], "review",
        "the park is presented again: {fork}"
    );
    assert_eq!(fork["forkedFrom"]["sessionId"], "h-1");
    assert_eq!(fork["forkedFrom"]["step"], at);
    // Its approvers hold as for the original.
    let (status, _) = json_of(s.post_as(
        "/sessions/h-2/decision",
        json!({ "target": "draft" }),
        Some("tok-bob"),
    ));
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, sent_back) = json_of(s.post_as(
        "/sessions/h-2/decision",
        json!({ "target": "draft" }),
        Some("tok-finance"),
    ));
    assert_eq!(status, StatusCode::OK, "{sent_back}");
    let (_, original) = json_of(s.get("/sessions/h-1"));
    assert_eq!(original["workflowState"], "paid");

    let (status, refused) = json_of(s.post("/sessions/h-1/fork", json!({ "at": 99 })));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["code"], "SessionForkError");
    let (status, taken) = json_of(s.post("/sessions/h-1/fork", json!({ "at": 1, "as": "h-2" })));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{taken}");
    let (status, _) = json_of(s.post("/sessions/nobody/fork", json!({ "at": 1 })));
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = json_of(s.get("/sessions/nobody/history"));
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = json_of(s.post("/sessions/h-1/fork", json!({ "step": 1 })));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[test]
fn history_and_fork_over_http_on_the_filesystem_store() {
    history_and_fork_over_http(&[]);
}

#[test]
fn history_and_fork_over_http_on_the_postgres_store() {
    let Some(url) = crate::postgres::store_url() else {
        return;
    };
    history_and_fork_over_http(&["--store", url.as_str()]);
}

#[test]
fn sessions_live_in_the_postgres_store_that_store_names() {
    let Some(url) = crate::postgres::store_url() else {
        return;
    };
    let mut script = handover();
    script.push(Reply::text("Your refund is paid."));
    let s = serve(
        script,
        &[("ARCHMAX_SERVE_TOKENS", TOKENS)],
        &["--store", url.as_str()],
    );
    let (status, outcome) =
        json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK, "{outcome}");
    assert_eq!(outcome["status"], "awaiting_decision");
    let (_, pending) = json_of(s.get("/sessions?awaiting=decision"));
    assert_eq!(pending[0]["sessionId"], "p-1");
    let (status, decided) = json_of(s.post("/sessions/p-1/decision", json!({ "target": "paid" })));
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert_eq!(decided["status"], "completed");
    // `paid` has no transitions: done, and prunable by an approver.
    let (_, one) = json_of(s.get("/sessions/p-1"));
    assert_eq!(one["standing"]["kind"], "done", "{one}");
    let (status, report) = json_of(s.delete_as("/sessions?status=done", Some("tok-finance")));
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["pruned"][0]["sessionId"], "p-1", "{report}");
    let (status, _) = json_of(s.get("/sessions/p-1"));
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn sessions_say_where_they_stand_and_only_approvers_and_admins_prune() {
    let mut script = handover();
    script.push(Reply::text("Here is a first draft."));
    let s = serve(
        script,
        &[
            (
                "ARCHMAX_SERVE_TOKENS",
                "finance=tok-finance,bob=tok-bob,carol=tok-carol",
            ),
            ("ARCHMAX_SERVE_ADMINS", "carol"),
        ],
        &[],
    );
    let (status, _) = json_of(s.post("/sessions/p-1/messages", json!({ "message": "Refund 7" })));
    assert_eq!(status, StatusCode::OK);
    let (status, _) = json_of(s.post("/sessions/i-1/messages", json!({ "message": "Refund 8" })));
    assert_eq!(status, StatusCode::OK);
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s["sessionId"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };

    // Where each stands, beside the original's fields.
    let (_, one) = json_of(s.get("/sessions/i-1"));
    assert_eq!(
        (one["status"].clone(), one["classification"].clone()),
        (json!("completed"), json!("finished"))
    );
    assert_eq!(one["standing"]["kind"], "idle");
    assert_eq!(one["standing"]["state"], "draft");
    assert_eq!(one["standing"]["resumable"], true);
    assert!(one["standing"]["since"].as_u64().is_some(), "{one}");
    let (_, idle) = json_of(s.get("/sessions?status=idle"));
    assert_eq!(ids(&idle), ["i-1"]);
    let (_, parked) = json_of(s.get("/sessions?status=awaiting-decision,waiting"));
    assert_eq!(ids(&parked), ["p-1"]);
    assert_eq!(parked[0]["standing"]["kind"], "awaiting-decision");
    let (_, legacy) = json_of(s.get("/sessions?status=awaiting_decision"));
    assert_eq!(ids(&legacy), ["p-1"]);
    let (_, attention) = json_of(s.get("/sessions?attention=true"));
    assert_eq!(
        ids(&attention),
        ["i-1"],
        "a fresh park needs no attention yet"
    );
    let (_, old) = json_of(s.get("/sessions?olderThan=1d"));
    assert_eq!(old, json!([]));
    for (path, message) in [
        (
            "/sessions?status=stuck",
            "status: 'stuck' is not a session status",
        ),
        (
            "/sessions?olderThan=soon",
            "olderThan: 'soon' is not an age",
        ),
    ] {
        let (status, err) = json_of(s.get(path));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        assert!(
            err["error"]
                .as_str()
                .is_some_and(|e| e.starts_with(message)),
            "{err}"
        );
    }

    // Pruning: not for bob; for finance (an approver of `review`) and carol (an admin).
    let (status, refused) = json_of(s.delete_as("/sessions?status=idle", Some("tok-bob")));
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(refused["code"], "NotAllowedToPruneError");
    assert_eq!(
        refused["error"],
        "'bob' may not prune sessions: that takes an approver of some state, or an identity listed in ARCHMAX_SERVE_ADMINS"
    );
    let (status, dry) =
        json_of(s.delete_as("/sessions?status=idle&dryRun=true", Some("tok-finance")));
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["pruned"][0]["sessionId"], "i-1");
    assert_eq!(dry["pruned"][0]["standing"]["kind"], "idle");
    assert_eq!(json_of(s.get("/sessions/i-1")).0, StatusCode::OK);
    let (status, err) =
        json_of(s.delete_as("/sessions?status=awaiting-decision", Some("tok-carol")));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(err["code"], "TypeError");
    let (status, report) = json_of(s.delete_as("/sessions?status=idle", Some("tok-carol")));
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        (report["dryRun"].clone(), ids(&report["pruned"])),
        (json!(false), vec!["i-1".to_string()])
    );
    assert_eq!(json_of(s.get("/sessions/i-1")).0, StatusCode::NOT_FOUND);
    // A parked session, by id only.
    let (status, report) = json_of(s.delete_as("/sessions/p-1", Some("tok-finance")));
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["pruned"][0]["standing"]["kind"], "awaiting-decision");
    assert_eq!(json_of(s.get("/sessions/p-1")).0, StatusCode::NOT_FOUND);
    let (status, gone) = json_of(s.delete_as("/sessions/p-1", Some("tok-finance")));
    assert_eq!(status, StatusCode::NOT_FOUND, "{gone}");
    let (status, _) = json_of(s.delete_as("/sessions/p-1", Some("tok-bob")));
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// `POST <path>` with `body` over a raw connection, the path sent exactly as written (an HTTP
/// client would resolve `.` and `%2e` segments before sending): the status and the body.
fn raw_post(base: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        conn,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn a_session_id_never_names_another_sessions_folder_over_http() {
    let s = serve(vec![Reply::text("Own session.")], &[], &[]);
    let body = json!({ "message": "hello" }).to_string();
    let root = s._ws.root().to_path_buf();
    let before: Vec<_> = std::fs::read_dir(root.join("sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").file_name())
        .collect();
    for path in [
        "/sessions/%2e/messages",
        "/sessions/%2E/messages",
        "/sessions/./messages",
        "/sessions/%2e%2e%2e/messages",
        "/sessions/a%0d%0ab/messages",
        "/sessions/x%E2%80%AEy/messages",
        "/sessions/p-1~review:refunds:1/messages",
        "/sessions/checkpoints/messages",
    ] {
        let (status, answer) = raw_post(&s.base, path, &body);
        assert!(
            status == 400 && answer.contains("SessionStoreIdError") || status == 404,
            "{path}: {status} {answer}"
        );
    }
    let after: Vec<_> = std::fs::read_dir(root.join("sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(before, after, "a refused id makes nothing");
    assert_eq!(s.server.requests().len(), 0, "a refused id asks no model");
    // An id holding `/` is a session of its own, in a folder of its own.
    let (status, answer) = raw_post(&s.base, "/sessions/p-1%2Fscratchpad/messages", &body);
    assert_eq!(status, 200, "{answer}");
    let outcome: Value = serde_json::from_str(&answer).expect("outcome");
    assert_eq!(outcome["sessionId"], "p-1/scratchpad");
    assert!(root.join("sessions/p-1%2Fscratchpad/checkpoints").is_dir());
    assert!(!root.join("sessions/p-1/scratchpad/checkpoints").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sessions/p-1/scratchpad/calc.md")).expect("calc"),
        "12.00"
    );
}
