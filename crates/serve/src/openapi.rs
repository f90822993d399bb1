//! The OpenAPI 3.1 document of `GET /openapi.json`, written out by hand: the routes are
//! few and fixed, and the bodies are small.

use serde_json::{Value, json};

fn outcome_answer() -> Value {
    json!({
        "200": { "description": "The Outcome, as `archmax … --json` prints it", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Outcome" } } } },
        "400": { "$ref": "#/components/responses/Error" },
        "401": { "$ref": "#/components/responses/Error" },
        "403": { "$ref": "#/components/responses/Error" },
        "404": { "$ref": "#/components/responses/Error" },
        "409": { "$ref": "#/components/responses/Error" },
        "413": { "$ref": "#/components/responses/Error" }
    })
}

fn json_body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

fn session_param() -> Value {
    json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }])
}

fn status_param() -> Value {
    json!({ "name": "status", "in": "query", "description": "Only sessions standing so, comma-separated: running, awaiting-decision, awaiting-input, waiting, idle, done, failed, cancelled, rejected (the original's completed, awaiting_decision and awaiting_input name the standings they cover)", "schema": { "type": "string" } })
}

fn older_than_param() -> Value {
    json!({ "name": "olderThan", "in": "query", "description": "Only sessions standing so for at least this long: a whole number and s, m, h, d or w (7d)", "schema": { "type": "string" } })
}

fn prune_answer() -> Value {
    json!({
        "200": { "description": "What was removed (with dryRun: what would be) and what was left and why", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/PruneReport" } } } },
        "400": { "$ref": "#/components/responses/Error" },
        "401": { "$ref": "#/components/responses/Error" },
        "403": { "$ref": "#/components/responses/Error" },
        "404": { "$ref": "#/components/responses/Error" },
        "409": { "$ref": "#/components/responses/Error" }
    })
}

/// The document.
pub(crate) fn document() -> Value {
    let object = json!({ "type": "object", "additionalProperties": true });
    json!({
        "openapi": "3.1.0",
        "info": { "title": "archmax serve", "version": env!("CARGO_PKG_VERSION") },
        "security": [{ "bearer": [] }],
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer", "description": "A token of ARCHMAX_SERVE_TOKENS (identity=token pairs); none needed when the server runs without tokens on loopback" } },
            "schemas": {
                "Outcome": { "type": "object", "description": "types/Outcome.ts, without `messages`", "required": ["sessionId", "status"] },
                "PruneReport": { "type": "object", "description": "types/PruneReport.ts", "required": ["dryRun", "pruned", "skipped"], "properties": {
                    "dryRun": { "type": "boolean" },
                    "pruned": { "type": "array", "items": { "type": "object", "required": ["sessionId", "standing"], "properties": { "sessionId": { "type": "string" }, "workflow": { "type": "string" }, "standing": { "type": "object" } } } },
                    "skipped": { "type": "array", "items": { "type": "object", "required": ["sessionId", "reason"], "properties": { "sessionId": { "type": "string" }, "reason": { "type": "string" } } } } } },
                "Error": { "type": "object", "required": ["error", "code"], "properties": { "error": { "type": "string" }, "code": { "type": "string" } } }
            },
            "responses": { "Error": { "description": "A refusal", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } } }
        },
        "paths": {
            "/health": { "get": { "security": [], "summary": "Liveness", "responses": { "200": { "description": "{ status: ok }" } } } },
            "/metrics": { "get": { "summary": "Prometheus metrics: turns, model calls, tokens, parks, turn latency", "responses": { "200": { "description": "OpenMetrics text" } } } },
            "/openapi.json": { "get": { "summary": "This document", "responses": { "200": { "description": "OpenAPI 3.1" } } } },
            "/me": { "get": { "summary": "Who the request acts as: its identity (local without tokens), whether the server has tokens, the human states it is an approver of, whether it may prune", "responses": { "200": { "description": "{ identity, tokens, approverOf: [{ workflow, state }], mayPrune }" }, "401": { "$ref": "#/components/responses/Error" } } } },
            "/events": { "get": { "summary": "Server-Sent Events of the server's notices: `event: session` each time a session changed through this server, its data { seq, sessionId, change (message, decision, reply, delivery, trigger, fork or prune), status?, state? }; kept notices after `since` (or Last-Event-ID), then live ones",
                "parameters": [ { "name": "since", "in": "query", "schema": { "type": "integer" } } ],
                "responses": { "200": { "description": "text/event-stream" } } } },
            "/workflows": { "get": { "summary": "The workspace's workflows", "responses": { "200": { "description": "[{ workflow, title?, loaded, error? }]" } } } },
            "/workflows/{workflow}/graph": { "get": {
                "summary": "The workflow's diagram",
                "parameters": [
                    { "name": "workflow", "in": "path", "required": true, "schema": { "type": "string" } },
                    { "name": "format", "in": "query", "schema": { "enum": ["svg", "mermaid", "dot"], "default": "svg" } }
                ],
                "responses": { "200": { "description": "The diagram" } } } },
            "/sessions": {
                "get": {
                    "summary": "Session summaries with their workflow, park record and standing (where each stands: types/Standing.ts)",
                    "parameters": [
                        { "name": "workflow", "in": "query", "schema": { "type": "string" } },
                        status_param(),
                        older_than_param(),
                        { "name": "attention", "in": "query", "description": "The attention view: root sessions that need a person, stalled work first (idle, cancelled, failed and resumable, waiting past its due time, running for over an hour), then sessions parked for over a day, each longest-standing first", "schema": { "type": "boolean" } },
                        { "name": "awaiting", "in": "query", "description": "decision or input: only sessions parked so, oldest first", "schema": { "enum": ["decision", "input"] } }
                    ],
                    "responses": { "200": { "description": "[SessionSummary & { workflow?, park? }]" }, "400": { "$ref": "#/components/responses/Error" } } },
                "delete": {
                    "summary": "Prune: remove root sessions (with their child sessions) by standing and age. Without status: done, failed, cancelled and rejected ones; a running or parked standing is refused (remove such a session by id). A session a turn holds is skipped. Only for an approver of some state or an identity of ARCHMAX_SERVE_ADMINS",
                    "parameters": [
                        { "name": "status", "in": "query", "description": "Comma-separated: done, failed, cancelled, rejected, idle", "schema": { "type": "string" } },
                        older_than_param(),
                        { "name": "dryRun", "in": "query", "description": "Say what would be removed; remove nothing", "schema": { "type": "boolean" } }
                    ],
                    "responses": prune_answer() }
            },
            "/sessions/{id}": {
                "get": { "summary": "One session's summary, workflow, park record and standing", "parameters": session_param(), "responses": { "200": { "description": "SessionSummary & { workflow?, park? }" }, "404": { "$ref": "#/components/responses/Error" } } },
                "delete": { "summary": "Prune one session (and its child sessions) whatever it stands as, parked included; 409 while a turn holds it. Only for an approver of some state or an identity of ARCHMAX_SERVE_ADMINS",
                    "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }, { "name": "dryRun", "in": "query", "schema": { "type": "boolean" } } ],
                    "responses": prune_answer() }
            },
            "/sessions/{id}/messages": {
                "get": { "summary": "The session's transcript", "parameters": session_param(), "responses": { "200": { "description": "Messages" } } },
                "post": { "summary": "Send a message (a turn, or a reply/delivery as the session's park says)", "parameters": session_param(),
                    "requestBody": json_body(json!({ "type": "object", "required": ["message"], "properties": { "message": { "type": "string" }, "workflow": { "type": "string" }, "trigger": { "type": "string" }, "variables": object } })),
                    "responses": outcome_answer() }
            },
            "/sessions/{id}/history": { "get": { "summary": "Every committed step of the session, oldest first: step, state, status, what it did, at, messages, tokens, totalTokens, costUsd?, totalCostUsd?", "parameters": session_param(),
                "responses": { "200": { "description": "HistoryStep[]" }, "404": { "$ref": "#/components/responses/Error" } } } },
            "/sessions/{id}/fork": { "post": { "summary": "A new session from step `at` of this one (same spec, that step's state and transcript, the session's files as they are now, forkedFrom); a fork of a parked step is parked the same way. The new id is `as`, else `<id>-fork-<at>`",
                "parameters": session_param(),
                "requestBody": json_body(json!({ "type": "object", "required": ["at"], "properties": { "at": { "type": "integer", "minimum": 1 }, "as": { "type": "string" } } })),
                "responses": { "201": { "description": "The fork's SessionSummary & { workflow?, park? }" }, "404": { "$ref": "#/components/responses/Error" }, "422": { "$ref": "#/components/responses/Error" } } } },
            "/sessions/{id}/decision": { "post": { "summary": "Decide a human state (the identity must be one of its approvers, when it names any)", "parameters": session_param(),
                "requestBody": json_body(json!({ "type": "object", "required": ["target"], "properties": { "target": { "type": "string" }, "comment": { "type": "string" } } })),
                "responses": outcome_answer() } },
            "/sessions/{id}/reply": { "post": { "summary": "A reply-only turn at a human state", "parameters": session_param(),
                "requestBody": json_body(json!({ "type": "object", "required": ["message"], "properties": { "message": { "type": "string" } } })),
                "responses": outcome_answer() } },
            "/sessions/{id}/deliveries": { "post": { "summary": "Deliver the event a session waits for", "parameters": session_param(),
                "requestBody": json_body(json!({ "type": "object", "required": ["trigger"], "properties": { "trigger": { "type": "string" }, "variables": object, "message": { "type": "string" } } })),
                "responses": outcome_answer() } },
            "/sessions/{id}/events": { "get": { "summary": "Server-Sent Events of the session (and its child sessions): kept events after `since` (or Last-Event-ID), then live ones; each event's id is its server seq",
                "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }, { "name": "since", "in": "query", "schema": { "type": "integer" } } ],
                "responses": { "200": { "description": "text/event-stream" } } } },
            "/sessions/{id}/evidence/{path}": { "get": { "summary": "One evidence file of the pending decision", "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }, { "name": "path", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "responses": { "200": { "description": "The file" }, "404": { "$ref": "#/components/responses/Error" } } } },
            "/triggers/{workflow}/{trigger}": { "post": { "summary": "A webhook firing: the body is the firing's variables; the session comes from the trigger's `session:` path",
                "parameters": [ { "name": "workflow", "in": "path", "required": true, "schema": { "type": "string" } }, { "name": "trigger", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "requestBody": json_body(object.clone()),
                "responses": outcome_answer() } }
        }
    })
}
