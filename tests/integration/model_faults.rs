//! The model client against a fault-injecting endpoint on 127.0.0.1: hangs, 429 with
//! `Retry-After`, 5xx, resets mid-body, malformed JSON and enormous bodies. Each case checks
//! the outcome exactly; `fault_campaign` mixes them at random and prints its figures.

use std::time::{Duration, Instant};

use archmax_machine::model::{
    ChatMessage, ChatRequest, Model, ModelConfig, ModelError, OpenAiClient, RetryPolicy,
};
use archmax_tests::scripted::{Reply, ScriptedServer};

fn request() -> ChatRequest {
    ChatRequest::new("gpt-test", vec![ChatMessage::user("hello")])
}

fn start(script: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::start(script).expect("server starts")
}

/// A client configured the way a user does it: through the `ARCHMAX_*` variables.
fn client_from_env(server: &ScriptedServer, extra: &[(&str, &str)]) -> OpenAiClient {
    let url = server.url();
    let mut pairs: Vec<(String, String)> = vec![
        ("ARCHMAX_API_BASE_URL".into(), url),
        ("ARCHMAX_API_KEY".into(), "sk-test".into()),
        ("ARCHMAX_MODEL".into(), "gpt-test".into()),
    ];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let config = ModelConfig::from_env(|name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    })
    .expect("config");
    OpenAiClient::new(config).expect("client")
}

/// Fails the test instead of waiting out a client that does not give up.
async fn bounded(
    limit: Duration,
    call: impl std::future::Future<Output = Result<archmax_machine::model::ChatResponse, ModelError>>,
) -> Result<archmax_machine::model::ChatResponse, ModelError> {
    match tokio::time::timeout(limit, call).await {
        Ok(r) => r,
        Err(_) => panic!("the model call was still running after {limit:?}"),
    }
}

#[tokio::test]
async fn a_hanging_endpoint_fails_after_the_configured_timeout_and_retries() {
    let server = start(vec![Reply::Hang, Reply::Hang, Reply::text("never reached")]);
    let client = client_from_env(
        &server,
        &[
            ("ARCHMAX_REQUEST_TIMEOUT_MS", "200"),
            ("ARCHMAX_MAX_RETRIES", "1"),
        ],
    );
    let started = Instant::now();
    let err = bounded(Duration::from_secs(10), client.complete(&request()))
        .await
        .expect_err("times out");
    let url = format!("{}/chat/completions", server.url());
    assert_eq!(
        err.to_string(),
        format!(
            "model request gave up after 2 attempts: model request to {url} (model 'gpt-test') timed out after 200ms"
        )
    );
    assert_eq!(server.requests().len(), 2);
    // Two 200 ms attempts and one 500 ms backoff.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_default_gives_up_on_a_hang_within_minutes() {
    let policy = RetryPolicy::default();
    let worst = policy.timeout * policy.attempts
        + (1..policy.attempts)
            .map(|r| policy.backoff(r))
            .sum::<Duration>();
    assert_eq!(worst, Duration::from_millis(181_500));
}

#[tokio::test]
async fn retry_after_is_capped() {
    let server = start(vec![
        Reply::error(429, "slow down").with_header("Retry-After", "86400"),
        Reply::text("ok"),
    ]);
    let mut config = ModelConfig::new(server.url(), "sk", "gpt-test");
    config.retry.max_delay = Duration::from_millis(300);
    let client = OpenAiClient::new(config).expect("client");
    let started = Instant::now();
    let resp = bounded(Duration::from_secs(10), client.complete(&request()))
        .await
        .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("ok"));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn a_reset_mid_body_is_retried() {
    let body =
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "cut"}}]})
            .to_string();
    let server = start(vec![
        Reply::ResetMidBody {
            sent: body.len() / 2,
            declared: body.len(),
            body,
        },
        Reply::text("whole"),
    ]);
    let client = client_from_env(&server, &[]);
    let resp = bounded(Duration::from_secs(10), client.complete(&request()))
        .await
        .expect("the retry completes");
    assert_eq!(resp.message.content.as_deref(), Some("whole"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_enormous_body_is_refused_without_reading_it() {
    // 200 MB announced by Content-Length, then 50 MB without one (chunked); the bound is 1 MiB.
    for declare_length in [true, false] {
        let bytes = if declare_length {
            200_000_000
        } else {
            50_000_000
        };
        let server = start(vec![
            Reply::Huge {
                bytes,
                declare_length,
            },
            Reply::text("never reached"),
        ]);
        let client = client_from_env(&server, &[("ARCHMAX_MAX_RESPONSE_BYTES", "1048576")]);
        let started = Instant::now();
        let err = bounded(Duration::from_secs(20), client.complete(&request()))
            .await
            .expect_err("refused");
        let url = format!("{}/chat/completions", server.url());
        assert_eq!(
            err.to_string(),
            format!(
                "model response from {url} (model 'gpt-test') is larger than the 1048576-byte limit (ARCHMAX_MAX_RESPONSE_BYTES); it was not read"
            ),
            "declare_length: {declare_length}"
        );
        assert!(!err.is_retryable());
        assert_eq!(server.requests().len(), 1, "not retried");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn the_default_bound_admits_a_large_ordinary_answer() {
    let text = "y".repeat(2 * 1024 * 1024);
    let server = start(vec![Reply::text(&text)]);
    let client = client_from_env(&server, &[]);
    let resp = client.complete(&request()).await.expect("completes");
    assert_eq!(
        resp.message.content.as_deref().map(str::len),
        Some(text.len())
    );
}

/// A tiny deterministic generator (xorshift), so a failing campaign can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Ok,
    Status503,
    TooMany,
    Hang,
    Reset,
    Malformed,
    Huge,
}

impl Fault {
    fn reply(self, n: usize) -> Reply {
        match self {
            Fault::Ok => Reply::text(&format!("answer {n}")),
            Fault::Status503 => Reply::error(503, "overloaded"),
            Fault::TooMany => Reply::error(429, "slow").with_header("Retry-After", "3600"),
            Fault::Hang => Reply::Hang,
            Fault::Reset => Reply::ResetMidBody {
                body: format!("{{\"choices\":[{{\"message\":{{\"content\":\"answer {n}\"}}}}]}}"),
                sent: 10,
                declared: 60,
            },
            Fault::Malformed => Reply::Raw {
                status: 200,
                headers: Vec::new(),
                body: "{\"choices\": [".into(),
            },
            Fault::Huge => Reply::Huge {
                bytes: 8 * 1024 * 1024,
                declare_length: false,
            },
        }
    }

    fn retried(self) -> bool {
        matches!(
            self,
            Fault::Status503 | Fault::TooMany | Fault::Hang | Fault::Reset
        )
    }
}

/// Calls in a row, each against a random run of faults; every outcome must be exactly the one
/// the script implies (the scripted answer, or the error of the fault that ended the call).
/// `FAULT_CALLS` sets the number of calls (default 40; the full run is 1 000).
#[tokio::test]
async fn fault_campaign() {
    const FAULTS: [Fault; 7] = [
        Fault::Ok,
        Fault::Status503,
        Fault::TooMany,
        Fault::Hang,
        Fault::Reset,
        Fault::Malformed,
        Fault::Huge,
    ];
    let calls: usize = std::env::var("FAULT_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut attempts, mut ok, mut failed, mut wrong) = (0usize, 0usize, 0usize, Vec::new());
    let started = Instant::now();
    for n in 0..calls {
        // Up to three faults, then (maybe) an answer.
        let mut script = Vec::new();
        let mut faults = Vec::new();
        for _ in 0..3 {
            let f = FAULTS[(rng.next() % FAULTS.len() as u64) as usize];
            faults.push(f);
            if !f.retried() {
                break;
            }
        }
        script.extend(faults.iter().map(|f| f.reply(n)));
        script.push(Reply::text(&format!("answer {n}")));
        let server = start(script);
        let mut config = ModelConfig::new(server.url(), "sk", "gpt-test");
        config.retry = RetryPolicy {
            attempts: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            timeout: Duration::from_millis(150),
        };
        config.max_response_bytes = 1024 * 1024;
        let client = OpenAiClient::new(config).expect("client");
        let result = bounded(Duration::from_secs(10), client.complete(&request())).await;
        attempts += server.requests().len();
        // What the script implies: the first non-retried fault ends the call; an answer within
        // three attempts completes it; three retried faults exhaust it.
        let expected_answer = format!("answer {n}");
        let ended_by = faults.iter().copied().find(|f| !f.retried());
        let outcome_ok = match (&result, ended_by) {
            (Ok(resp), Some(Fault::Ok)) => {
                resp.message.content.as_deref() == Some(&expected_answer)
            }
            (Ok(resp), None) => {
                faults.len() < 3 && resp.message.content.as_deref() == Some(&expected_answer)
            }
            (Err(ModelError::Decode { .. }), Some(Fault::Malformed)) => true,
            (Err(ModelError::TooLarge { .. }), Some(Fault::Huge)) => true,
            (Err(ModelError::Exhausted { attempts: 3, .. }), None) => faults.len() == 3,
            _ => false,
        };
        match &result {
            Ok(_) => ok += 1,
            Err(_) => failed += 1,
        }
        if !outcome_ok {
            wrong.push(format!("call {n}: faults {faults:?} gave {result:?}"));
        }
    }
    eprintln!(
        "fault campaign: {calls} calls, {attempts} attempts, {ok} answered, {failed} failed as scripted, {} wrong, {:.1?}",
        wrong.len(),
        started.elapsed()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
