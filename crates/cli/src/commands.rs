//! The command table: names, positionals, options, summaries and help prose.
//! Help output and argument parsing are both generated from it.

use crate::args::{OptKind, OptSpec};

/// One positional slot of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Positional {
    /// The name shown in help.
    pub name: &'static str,
    /// Whether the usage line shows it as `<name>` (required) or `[name]`.
    pub required: bool,
    /// Whether it takes every remaining positional (`<name...>`).
    pub rest: bool,
    /// One line for the `Arguments:` table.
    pub description: &'static str,
}

/// One command of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// What the user types.
    pub name: &'static str,
    /// Positional slots in order.
    pub positionals: &'static [Positional],
    /// The command's own options, in help order (the globals are appended).
    pub options: &'static [OptSpec],
    /// The one-line summary of the command table.
    pub summary: &'static str,
    /// The long description of `archmax help <command>`, if any.
    pub long: Option<&'static str>,
}

const fn flag(name: &'static str, description: &'static str) -> OptSpec {
    OptSpec {
        name,
        short: None,
        kind: OptKind::Bool,
        placeholder: "",
        description,
    }
}

const fn value(
    name: &'static str,
    placeholder: &'static str,
    description: &'static str,
) -> OptSpec {
    OptSpec {
        name,
        short: None,
        kind: OptKind::Str,
        placeholder,
        description,
    }
}

const fn required(name: &'static str, description: &'static str) -> Positional {
    Positional {
        name,
        required: true,
        rest: false,
        description,
    }
}

const fn optional(name: &'static str, description: &'static str) -> Positional {
    Positional {
        name,
        required: false,
        rest: false,
        description,
    }
}

const fn rest(name: &'static str, description: &'static str) -> Positional {
    Positional {
        name,
        required: true,
        rest: true,
        description,
    }
}

/// The options every command accepts, appended after its own.
pub const GLOBAL_OPTIONS: &[OptSpec] = &[
    value(
        "root",
        "<dir>",
        "Workspace root (default: the current directory)",
    ),
    OptSpec {
        name: "help",
        short: Some('h'),
        kind: OptKind::Bool,
        placeholder: "",
        description: "Show help",
    },
];

const WORKFLOW_POS: Positional = required(
    "workflow",
    "Workflow slug, a directory under workflows/ (inferred when there is exactly one)",
);
const SESSION_POS: Positional = required(
    "session",
    "Session id, as listed by 'archmax sessions'; its workflow is read from its record",
);
const VERBOSE: OptSpec = flag("verbose", "Print raw event lines on stderr");
const OUTCOME_JSON: OptSpec = flag(
    "json",
    "Print the Outcome (session, status, state, park record) as JSON on stdout",
);
const WORKFLOW_OPT: OptSpec = value(
    "workflow",
    "<slug>",
    "Workflow whose spec is assembled (default: the session's own, else the only one)",
);
const RECORD: OptSpec = value(
    "record",
    "<file>",
    "Record the turn's model exchanges into this cassette (<name>.cassette.json)",
);
const REPLAY: OptSpec = value(
    "replay",
    "<file>",
    "Answer the turn's model calls from this cassette; no model endpoint is needed",
);
const VARIABLES: OptSpec = value(
    "variables",
    "<json>",
    "Session variables as a JSON object, seeded locked",
);

const RUN_LONG: &str = "Starts or continues a session of a workflow with a prompt and prints the reply on \
stdout; the state flow is narrated on stderr. The workflow slug may be omitted when the workspace has \
exactly one workflow. A session parked at a human state answers the prompt as a reply; a session parked \
for input takes it as a delivery of the trigger.";

const TEST_LONG: &str = "Runs the cases of a workflow (workflows/<slug>/tests/**/*.test.yaml, sorted by \
path) through the harness, one session each, and prints each case's state flow and verdict, then \
the summary. The cases never touch the workspace's sessions: they run in a session store of their \
own, by default a folder under the system's temporary directory that is removed after the run \
(neither <root>/sessions nor ARCHMAX_SESSION_STORE is used). --store names a folder or a \
postgres:// store to run them in (their sessions are removed from it after the run); --keep \
keeps them and prints where.";

const TOOLS_LONG: &str = "\
Prints a governance matrix: a row for every tool the workspace can reach (the runtime's own, \
the sub-workflows and host tools the workflow names, and the tools of the MCP servers in \
.mcp.json, which are started and asked for their tools), a column for every state, and in \
each cell how the state stands toward the tool: allowed, guarded (allowed for some calls: \
the guards are listed below the table), denied (the state's forbid list), denied* \
(forbid_always), always (a control every state has), or not granted. --json prints the same \
with each guard.";

const GRAPH_LONG: &str = "Prints the diagram of a workflow on stdout, from its spec alone (no model calls): \
every state with its title and hooks, every transition with its description (and its type on a human \
state), on_error routes dashed, human states as hexagons, terminal states rounded. Mermaid renders on \
GitHub; svg is laid out without external tools; dot is for Graphviz.";

const SESSIONS_LONG: &str = "Lists every durable session under <root>/sessions, or shows one session in full: \
its status, current state, what it is waiting for and its variables. A variable marked locked was \
established by the host (a trigger firing or --variables) and cannot be changed by the agent.\n\n\
Each session also says where it stands (after → in the listing, 'standing' in the detail view, \
'standing' in --json), with how long it has stood so: running (a turn is in progress); \
awaiting-decision (parked at a human state); awaiting-input (parked for an event); waiting (parked \
for an event until a due time); idle (the last turn ended at a state that is not terminal: the \
workflow is unfinished and nothing is pending); done (ended at a terminal state); failed (the agent \
raised; 'resumable' when the harness ended the turn: turn-error, recursion-limit); cancelled (the \
turn was stopped, e.g. Ctrl-C; resumable); rejected (governance or a budget ended the turn). \
--status idle,failed lists only those (the original's completed, awaiting_decision and \
awaiting_input are accepted too); --older-than 2h only those standing so for at least that long \
(s, m, h, d, w). --attention lists the root sessions that need a person, stalled work first \
(idle, cancelled, failed and resumable, waiting past its due time, running for over an hour), \
then sessions parked for over a day, each longest-standing first.\n\n\
'archmax sessions prune' removes sessions with their child sessions: by default the root sessions \
that are done, failed, cancelled or rejected; --status chooses among those and idle, --older-than \
keeps the younger ones, --dry-run only says what it would remove. A running or parked session is \
never removed by status: 'archmax sessions prune <session>' removes that one session whatever it \
stands as. A session a turn holds (in any process) is always left. --store names another store: \
a folder of sessions (such as one 'archmax test --keep' left) or a postgres:// URL.\n\n\
'archmax sessions history <session>' lists every committed step of a session: its number, when, \
the state and status after it, what it did (messages, tool calls, moves, decisions, parks) and \
the tokens and cost it spent. 'archmax sessions fork <session> --at <step> [--as <new-id>]' makes \
a new session from that step: the same spec snapshot, the step's state, variables and transcript, \
the session's files as they are now (a store keeps only the latest of each file), and 'forkedFrom' \
naming where it came from; the session itself is not changed. A fork of a parked step is parked \
the same way; a fork of a step inside a turn goes on from that step with the next message.";

const DECIDE_LONG: &str = "Resumes a session parked at a human state by picking one of its transitions. \
Routing is deterministic: the session moves to the state named by --to, with no model interpreting \
the choice. The optional comment is recorded with the decision.";

const REPLY_LONG: &str = "Sends a message to a session parked at a human state. The session answers on a \
reply-only turn: it may speak but every tool call it makes is refused, and it stays parked. No wording \
selects a transition; use 'archmax decide' to route it.";

const DELIVER_LONG: &str = "Resumes a session parked for input by delivering the event it was waiting for. \
The session continues in the state it parked in, the trigger becomes its current one, and any variables \
given are seeded locked. With --enqueue (a PostgreSQL store) the delivery is stored instead, and one \
'archmax worker' runs it, after the session's earlier queued deliveries.";

const INIT_LONG: &str = "Writes a workspace that 'archmax validate' passes: the workflow 'hello' (a state \
that drafts an answer, an after hook that checks the draft, a human state that approves it or sends it \
back), a case file, AGENTS.md and .env.example. Copy .env.example to .env and set the endpoint, then \
'archmax run hello \"<request>\"'. Existing files are never overwritten: if any is there, nothing is written.";

const SKILL_LONG: &str = "Copies the archmax-harness skill (SKILL.md and its references on the workflow \
language, hooks, cases, diagnostics and host wiring) into <dir>/archmax-harness, replacing an older copy \
of the skill's own files. Without a directory it goes to .claude/skills of the project (--root, else the \
current directory), where Claude Code finds it.";

/// The command table, in help order.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "init",
        positionals: &[optional(
            "dir",
            "Where to write the workspace (default: --root, else the current directory)",
        )],
        options: &[],
        summary: "Write a starter workspace that 'archmax validate' passes",
        long: Some(INIT_LONG),
    },
    Command {
        name: "skill",
        positionals: &[
            required("action", "The action: 'install'"),
            optional(
                "dir",
                "The coding agent's skills folder (default: .claude/skills of the project)",
            ),
        ],
        options: &[value(
            "dir",
            "<dir>",
            "The skills folder, as the positional (default: .claude/skills under --root)",
        )],
        summary: "Install the workflow-authoring skill for a coding agent",
        long: Some(SKILL_LONG),
    },
    Command {
        name: "run",
        positionals: &[
            WORKFLOW_POS,
            rest("prompt", "The message that starts the turn"),
        ],
        options: &[
            value(
                "trigger",
                "<id>",
                "Trigger that starts the turn (default: manual)",
            ),
            VARIABLES,
            value(
                "session",
                "<id>",
                "Conversation id: continue that session, or start one under it",
            ),
            value(
                "session-path",
                "<path>",
                "Dotted path into --variables that holds the session id",
            ),
            OUTCOME_JSON,
            RECORD,
            REPLAY,
            VERBOSE,
        ],
        summary: "Run a workflow on a prompt; the reply goes to stdout",
        long: Some(RUN_LONG),
    },
    Command {
        name: "test",
        positionals: &[
            WORKFLOW_POS,
            optional("filter", "Only cases whose path contains this text"),
        ],
        options: &[
            flag("json", "Print the results as JSON on stdout"),
            flag(
                "record",
                "Record each case's model exchanges into tests/<case>.cassette.json beside it",
            ),
            flag(
                "replay",
                "Answer each case's model calls from its tests/<case>.cassette.json; no model endpoint is needed",
            ),
            value(
                "store",
                "<dir|url>",
                "Run the cases' sessions in this folder or postgres:// store (default: a temporary folder)",
            ),
            flag(
                "keep",
                "Keep the cases' sessions after the run, and print where they are",
            ),
            VERBOSE,
        ],
        summary: "Run a workflow's cases",
        long: Some(TEST_LONG),
    },
    Command {
        name: "validate",
        positionals: &[WORKFLOW_POS],
        options: &[flag("json", "Print the result as JSON on stdout")],
        summary: "Statically validate a workflow — no model calls",
        long: None,
    },
    Command {
        name: "graph",
        positionals: &[WORKFLOW_POS],
        options: &[value("format", "<format>", "mermaid (default), svg or dot")],
        summary: "Print a workflow's diagram: states, edges, human and terminal states, hooks",
        long: Some(GRAPH_LONG),
    },
    Command {
        name: "tools",
        positionals: &[WORKFLOW_POS],
        options: &[flag("json", "Print the matrix as JSON on stdout")],
        summary: "Show every tool the workspace can reach and how each state stands toward it",
        long: Some(TOOLS_LONG),
    },
    Command {
        name: "sessions",
        positionals: &[
            optional(
                "session",
                "Show this session in full instead of listing all; 'prune' removes sessions; 'history' lists a session's steps; 'fork' makes a session from one",
            ),
            optional(
                "id",
                "With prune: the one session to remove, even if parked; with history or fork: the session",
            ),
        ],
        options: &[
            WORKFLOW_OPT,
            value(
                "status",
                "<words>",
                "Only sessions standing so: running, awaiting-decision, awaiting-input, waiting, idle, done, failed, cancelled, rejected (comma-separated)",
            ),
            value(
                "older-than",
                "<age>",
                "Only sessions standing so for at least this long: 30s, 15m, 12h, 7d, 2w",
            ),
            flag(
                "attention",
                "List the sessions that need a person: stalled work first, longest first",
            ),
            flag(
                "dry-run",
                "With prune: say what would be removed, remove nothing",
            ),
            value(
                "at",
                "<step>",
                "With fork: the step to fork from (see 'archmax sessions history <session>')",
            ),
            value(
                "as",
                "<new-id>",
                "With fork: the new session's id (default <session>-fork-<step>)",
            ),
            value(
                "store",
                "<dir|url>",
                "The sessions of this folder or postgres:// store (default: ARCHMAX_SESSION_STORE, else sessions/)",
            ),
            flag("json", "Print JSON on stdout"),
        ],
        summary: "List durable sessions and where they stand, show one in full or its steps, fork one, or prune them",
        long: Some(SESSIONS_LONG),
    },
    Command {
        name: "decide",
        positionals: &[SESSION_POS],
        options: &[
            value(
                "to",
                "<state>",
                "The transition target the person picks (required)",
            ),
            value("comment", "<text>", "Why; recorded with the decision"),
            WORKFLOW_OPT,
            OUTCOME_JSON,
            RECORD,
            REPLAY,
            VERBOSE,
        ],
        summary: "Resume a session parked at a human state by picking a transition",
        long: Some(DECIDE_LONG),
    },
    Command {
        name: "reply",
        positionals: &[
            SESSION_POS,
            rest("message", "The message for the parked session"),
        ],
        options: &[WORKFLOW_OPT, OUTCOME_JSON, RECORD, REPLAY, VERBOSE],
        summary: "Send a message to a session parked at a human state; it stays parked",
        long: Some(REPLY_LONG),
    },
    Command {
        name: "deliver",
        positionals: &[SESSION_POS],
        options: &[
            value("trigger", "<id>", "The event that arrived (required)"),
            VARIABLES,
            WORKFLOW_OPT,
            flag(
                "enqueue",
                "Queue the delivery for 'archmax worker' (PostgreSQL store) instead of running it here",
            ),
            flag(
                "wait",
                "With --enqueue: wait until a worker has run it, and report its Outcome",
            ),
            OUTCOME_JSON,
            RECORD,
            REPLAY,
            VERBOSE,
        ],
        summary: "Resume a session parked for input by delivering a trigger",
        long: Some(DELIVER_LONG),
    },
    Command {
        name: "worker",
        positionals: &[optional(
            "workflow",
            "Workflow slug whose sessions it wakes (inferred when there is exactly one)",
        )],
        options: &[
            value(
                "trigger",
                "<id>",
                "The trigger delivered to a session whose wait fell due (default: timer)",
            ),
            flag(
                "once",
                "Serve every interrupted turn, queued delivery and due wait ready now, then exit",
            ),
            value(
                "poll",
                "<ms>",
                "The longest pause between looks for due sessions (default: 1000)",
            ),
            VERBOSE,
        ],
        summary: "Finish interrupted turns, run queued deliveries, wake due waits (PostgreSQL session store)",
        long: Some(WORKER_LONG),
    },
    Command {
        name: "serve",
        positionals: &[],
        options: &[
            value(
                "port",
                "<n>",
                "The port to listen on (default: 8787; 0 picks a free one)",
            ),
            value(
                "host",
                "<ip>",
                "The address to bind (default: 127.0.0.1; others need ARCHMAX_SERVE_TOKENS)",
            ),
            value(
                "store",
                "<url>",
                "A postgres:// session store (default: ARCHMAX_SESSION_STORE, else sessions/)",
            ),
            value(
                "cors-origin",
                "<origin>",
                "The one origin allowed to call from a browser (default: no CORS)",
            ),
            value(
                "max-body",
                "<bytes>",
                "The largest request body accepted (default: 1048576)",
            ),
        ],
        summary: "Serve the workspace over HTTP, with the web inbox at /",
        long: Some(SERVE_LONG),
    },
    Command {
        name: "mcp",
        positionals: &[],
        options: &[value(
            "store",
            "<url>",
            "A postgres:// session store (default: ARCHMAX_SESSION_STORE, else sessions/)",
        )],
        summary: "Serve the workspace's workflows as MCP tools over stdio (for an MCP client)",
        long: Some(MCP_LONG),
    },
    Command {
        name: "help",
        positionals: &[optional("command", "The command to describe")],
        options: &[],
        summary: "Show help for the CLI or one command",
        long: None,
    },
];

/// The command named `name`.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

impl Command {
    /// The command's options followed by the globals.
    pub fn all_options(&self) -> Vec<OptSpec> {
        self.options.iter().chain(GLOBAL_OPTIONS).copied().collect()
    }

    /// The usage syntax of the positionals: `<workflow> <prompt...>`.
    pub fn positional_syntax(&self) -> String {
        let cells: Vec<String> = self
            .positionals
            .iter()
            .map(|p| {
                let dots = if p.rest { "..." } else { "" };
                if p.required {
                    format!("<{}{dots}>", p.name)
                } else {
                    format!("[{}{dots}]", p.name)
                }
            })
            .collect();
        cells.join(" ")
    }
}

const WORKER_LONG: &str = "Serves the sessions of a workflow in the PostgreSQL session store that \
ARCHMAX_SESSION_STORE names (postgres://…): it finishes turns a stopped worker left running (once their \
lease expired, from the last committed step), runs the deliveries 'archmax deliver --enqueue' queued (a \
session's in arrival order), and wakes sessions whose archmax_wait fell due with a delivery of --trigger, \
as a host's scheduler would deliver it. Each is claimed by exactly one worker, however many run on however \
many machines. Runs until stopped, or with --once until nothing is ready.";

const MCP_LONG: &str = "Serves every workflow of the workspace as MCP tools over stdin and stdout, for an \
MCP client's configuration (\"command\": \"npx\", \"args\": [\"archmax\", \"mcp\", \"--root\", \"<workspace>\"]): one tool \
per entry a host may fire (<workflow> for its manual trigger, <workflow>__<trigger> for the others), each \
running one governed turn and answering its outcome, and decide, reply, deliver and sessions for the \
sessions it leaves parked. The workflow, not the client, decides every tool call inside a session. Over \
stdio the caller is the local user, as with 'archmax decide'; 'archmax serve' offers the same at /mcp over \
streamable HTTP, with its bearer tokens and approvers. See docs/mcp-server.md.";

const SERVE_LONG: &str = "Serves every workflow of the workspace over HTTP: sessions, messages, decisions, \
replies, deliveries and trigger webhooks answer the Outcome that --json prints; GET /sessions/<id>/events \
streams a session's events (Server-Sent Events, replay from ?since=<seq>); /health, Prometheus /metrics and \
/openapi.json describe it. The inbox at / shows the pending decisions. ARCHMAX_SERVE_TOKENS holds \
identity=token pairs; every route but /health and the inbox's files then needs 'Authorization: Bearer \
<token>', and a human state's approvers are checked against the identity. DELETE /sessions prunes \
sessions, for an approver of some state or an identity listed in ARCHMAX_SERVE_ADMINS. Without tokens \
the server listens on loopback only. The model is the ARCHMAX_* endpoint, as for 'archmax run'. See docs/serve.md.";
