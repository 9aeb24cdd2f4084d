//! `bsi mcp`: the claims as tools of the Model Context Protocol, served over
//! stdio to the agent tool that starts it.
//!
//! A door over the core, as the command line is: each tool resolves who
//! acts (the server's session, the agent name its claims carry), hands
//! [`bsi_core::api`] a typed request in process, and renders the typed
//! outcome as structured content (the documented JSON shapes of the
//! matching commands) with a text for the model. Scopes are data: they are
//! resolved as paths and sections, never read as options. Calls that act
//! for the session are served one at a time, so the first `claim` of a
//! server with no session names one session for every call after it; a
//! `claim` that waits does its waiting outside that line, and stops, giving
//! up its place in the queue and granting nothing more, once its call is
//! cancelled or the client goes. `check` asks the one edit decision in
//! process ([`bsi_core::guard::edit::decide`]), the one the edit hook asks, a
//! link judged as the brain file it reaches, and writes nothing.
//!
//! Every revision of the protocol up to 2026-07-28 is served by the SDK's
//! one handler: those that begin with `initialize`, and the stateless one,
//! whose requests each carry their version and the client's capabilities in
//! `_meta`. Who acts comes from the process, never from a protocol session,
//! so it is the same under both. The claims resource is followed for
//! `resources/subscribe` and for `subscriptions/listen` alike.
//!
//! The async runtime (one thread) starts here and nowhere else, so no other
//! command pays for it.

use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool as McpTool,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::edits;
use super::views::{StatusJson, WhoAmIJson, sync_state};
use super::{Clock, Ctx, check_note, resolve_lenient};
use crate::agents::{self, Tool};
use crate::output::{self, ClaimJson};
use bsi_core::api::publish::Landing;
use bsi_core::api::settings::Settings;
use bsi_core::api::store::Brain;
use bsi_core::api::{self, Actor, Stop};
use bsi_core::claims::open::Outcome;
use bsi_core::claims::scopes_summary;
use bsi_core::error::{Error, Result, exit};
use bsi_core::guard::edit::{EditDecision, Target};
use bsi_core::guard::{Finding, verdict};
use bsi_core::next::NextStep;
use bsi_core::registry::Status;
use bsi_core::scope::Scope;
use bsi_core::values::Span;
use bsi_core::values::{SessionId, Ttl};

mod start;

/// The newest revision of the protocol served: the stateless one.
const NEWEST: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The resource that holds every session's claims.
const CLAIMS_URI: &str = "bsi://claims";

/// How often the registry branch's references are read while a client
/// follows the claims resource.
const POLL: Duration = Duration::from_secs(2);

/// How often the remote's registry branch is fetched meanwhile.
const FETCH_EVERY: Duration = Duration::from_secs(30);

/// How often a waiting claim looks whether its call was cancelled.
const TICK: Duration = Duration::from_millis(200);

/// How long the server gives a call still under way to end once the
/// client is gone (a waiting claim gives up its place in the queue).
const LAST_CALLS: Duration = Duration::from_secs(10);

/// What `bsi mcp` was asked.
pub(crate) struct Request {
    /// `--tool`: the agent tool that starts the server.
    pub(crate) tool: Option<Tool>,
}

/// Serves until the client closes stdin: quietly when it asked nothing,
/// with what happened and what to do when it began no lifecycle bsi serves.
pub(crate) fn run(ctx: &Ctx, req: Request) -> Result<u8> {
    let server = Server {
        inner: Arc::new(Inner {
            ctx: ctx.clone(),
            tool: req.tool,
            session: Mutex::new(None),
            watching: AtomicBool::new(false),
            calls: Mutex::new(()),
        }),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the MCP server", e))?;
    let (stdin, stdout) = rmcp::transport::stdio();
    let (transport, heard) = start::Heard::new(
        rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout),
    );
    let served = runtime.block_on(async move {
        let running = match server.serve(transport).await {
            Ok(running) => running,
            Err(e) => return start::ended(e, &heard),
        };
        match running.waiting().await {
            Ok(_) => None,
            Err(e) => Some(start::Ended::Abnormal(e.to_string())),
        }
    });
    // The client is gone: every call's token is cancelled, so a claim
    // still waiting stops and gives up its place; it is given that long.
    runtime.shutdown_timeout(LAST_CALLS);
    let Some(end) = served else {
        return Ok(exit::OK);
    };
    // The form of every error of bsi's; stdout is the protocol's.
    let mut err = ctx.err();
    let _ = writeln!(err, "error: {end}");
    let _ = writeln!(err, "hint: {}", end.hint());
    Ok(end.code())
}

#[derive(Clone)]
struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    tool: Option<Tool>,
    /// The session a claim named, for when no other source has one.
    session: Mutex<Option<String>>,
    /// Whether the registry branch is being watched for a subscriber.
    watching: AtomicBool,
    /// The line the calls that act for the session wait in: one at a time.
    calls: Mutex<()>,
}

/// The session the agent tool's session-start hook recorded for the tool
/// process that started this server.
fn recorded_session(ctx: &Ctx, tool: Tool) -> Option<String> {
    agents::sessions::of_ancestors(&ctx.cwd)
        .filter(|e| e.tool == tool.name())
        .map(|e| e.session)
}

/// A call's context, brain and settings, and who acts in it.
struct Call {
    ctx: Ctx,
    brain: Brain,
    settings: Settings,
}

impl Call {
    fn site(&self) -> api::Site<'_> {
        self.ctx.site(&self.brain, &self.settings)
    }
}

impl Inner {
    /// The agent's session: `--session` / `BSI_SESSION` of the server's
    /// environment, else the session the agent tool's session-start hook
    /// recorded for the tool process that started this server (read at each
    /// call: a tool that starts a new session in the same process, as
    /// Claude Code's `/clear`, records it anew), else the one the first
    /// `claim` named.
    fn session(&self) -> Option<String> {
        self.ctx
            .env_session
            .clone()
            .or_else(|| self.tool.and_then(|t| recorded_session(&self.ctx, t)))
            .or_else(|| {
                self.session
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
            })
    }

    /// Keeps the session a claim named when the server had none.
    fn adopt(&self, session: &str) {
        let mut known = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if known.is_none() {
            *known = Some(session.to_string());
        }
    }

    /// Waits for the calls before this one to end.
    fn in_line(&self) -> std::sync::MutexGuard<'_, ()> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The server's context at the time of a call, with its brain.
    fn call(&self) -> Result<Call> {
        let mut ctx = self.ctx.clone();
        // This call's notes are its own, said in its result.
        ctx.notes = bsi_core::api::store::Notes::default();
        if ctx.clock == Clock::System {
            ctx.now = chrono::Local::now().fixed_offset();
        }
        let (brain, settings) = ctx.open()?;
        Ok(Call {
            ctx,
            brain,
            settings,
        })
    }

    /// Who acts in `call`: the server's session, else the tool session
    /// this server descends from, else (`draw`) a new one; the agent name
    /// by the rule of every door. `None` with no session and no `draw`.
    fn actor(&self, call: &mut Call, draw: bool, given: Option<&str>) -> Result<Option<Actor>> {
        let ctx = &mut call.ctx;
        // A session the call names comes first, as `--session` does.
        match given.map(str::to_string).or_else(|| self.session()) {
            Some(s) => ctx.env_session = Some(SessionId::parse(&s)?.into_string()),
            None => ctx.find_tool_session(),
        }
        let agent = ctx.agent(None, &call.settings.config)?.into_string();
        let named = ctx.agent_named(None, &call.settings.config);
        Ok(match ctx.env_session.clone() {
            // A named session takes its recorded agent, as the CLI's.
            Some(session) => Some(
                Actor {
                    session: Some(session),
                    agent,
                    agent_named: named,
                    drawn: false,
                }
                .adopting(&call.site()),
            ),
            None if draw => Some(Actor {
                session: Some(bsi_core::session::new_session_id(ctx.now, ctx.random_seed)),
                agent,
                agent_named: named,
                drawn: true,
            }),
            None => None,
        })
    }
}

/// A result: `doc` as structured content, `text` for the model.
fn answer(text: impl Into<String>, doc: Value, refused: bool) -> CallToolResult {
    let mut r = if refused {
        CallToolResult::structured_error(doc)
    } else {
        CallToolResult::structured(doc)
    };
    r.content = vec![ContentBlock::text(text.into())];
    r
}

/// bsi's error document as an MCP error: what happened, then the hint.
fn error_of(doc: &Value, code: u8) -> McpError {
    let message = doc["message"].as_str().unwrap_or("bsi failed");
    let hint = doc["hint"].as_str().unwrap_or("");
    let code = if doc["error"] == "usage" {
        rmcp::model::ErrorCode::INVALID_PARAMS
    } else {
        // bsi's own errors, apart from JSON-RPC's: -32000 minus the exit code.
        rmcp::model::ErrorCode(-32000 - i32::from(code))
    };
    McpError::new(code, format!("{message} — hint: {hint}"), Some(doc.clone()))
}

/// An error of bsi as an MCP error, with its document.
fn failed(e: &Error) -> McpError {
    error_of(&error_doc(e), e.code())
}

/// The document of an error, as `--json` prints it, its hint in MCP's
/// words: the steps bsi's tools take as calls (`next_calls`, also said in
/// `hint`), the others as for a shell.
fn error_doc(e: &Error) -> Value {
    let hint = if matches!(e, Error::NoSession) {
        // The tools name a session by their own argument, not a shell's.
        crate::hints::no_session_call()
    } else {
        crate::hints::hint(e)
    };
    let (calls, said) = crate::steps::hint_calls(&hint);
    let mut doc = doc_of(output::ErrorJson::hinted(e, said, &hint));
    if let Value::Object(m) = &mut doc {
        m.insert("next_calls".into(), Value::Array(calls));
    }
    doc
}

fn doc_of(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(", ")
    }
}

fn scopes_of<'a>(claims: impl IntoIterator<Item = &'a bsi_core::registry::Claim>) -> Vec<String> {
    claims.into_iter().map(|c| c.scope.to_string()).collect()
}

/// What the model is told beside a write's outcome: what the registry's
/// IO had to say during the call, then where the write landed, in the
/// words every door uses ([`crate::output::landing_lines`]).
fn landing_notes(call: &Call, landing: &Landing) -> Vec<String> {
    let mut notes = call.ctx.notes.take();
    notes.extend(crate::output::landing_lines(landing));
    notes
}

/// `text`, then each note on its own line.
fn with_notes(mut text: String, notes: &[String]) -> String {
    for n in notes {
        text.push('\n');
        text.push_str(n);
    }
    text
}

// --- the tools' arguments ---------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimArgs {
    scopes: Vec<String>,
    ttl: Option<String>,
    note: Option<String>,
    /// Seconds.
    wait: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SomeArgs {
    #[serde(default)]
    scopes: Vec<String>,
    ttl: Option<String>,
    /// The session to act for, when the server has none (a client that
    /// starts a server for each call).
    session: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(default)]
    offline: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CommitArgs {
    message: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    /// The session to act for, as [`SomeArgs::session`].
    session: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    path: String,
    lines: Option<Vec<usize>>,
}

fn args<T: serde::de::DeserializeOwned + Default>(
    given: Option<JsonObject>,
) -> std::result::Result<T, McpError> {
    match given {
        None => Ok(T::default()),
        Some(map) => required(Some(map)),
    }
}

fn required<T: serde::de::DeserializeOwned>(
    given: Option<JsonObject>,
) -> std::result::Result<T, McpError> {
    serde_json::from_value(Value::Object(given.unwrap_or_default()))
        .map_err(|e| McpError::invalid_params(format!("bad arguments: {e}"), None))
}

fn schema(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    })
}

fn tools() -> Vec<McpTool> {
    let scopes = json!({
        "type": "array", "items": {"type": "string"},
        "description": "Scopes relative to the project root: `global`, a folder `dir/`, a file `dir/file.md`, or a section `dir/file.md#Heading`."
    });
    let some = json!({
        "type": "array", "items": {"type": "string"},
        "description": "Only these of the session's scopes (default: all of them)."
    });
    let ttl = json!({
        "type": "string",
        "description": "How long the claim lasts: 90m, 2h, 4h, 8h, or short, deep, long (at most 8h after it was opened). Default: the project's default_ttl, else 2h."
    });
    let session = json!({
        "type": "string",
        "description": "The session to act for: the id `claim` returned. Needed only when this server does not know it (a client that starts a new server for each call); otherwise leave it out."
    });
    let close = "Close the session's claims (all, or only `scopes`) once their work is committed: they move to the history as completed. Returns the closed claims and whether the session's commits stayed inside them.";
    vec![
        McpTool::new(
            "claim",
            "Claim parts of the project for your session before editing them (bsi open): all the scopes or none. A scope held by another session is refused with its holder, expiry, free scopes nearby and the next call to make; `wait` keeps the request for that many seconds and returns when it is granted or the time is over (progress is notified meanwhile).",
            schema(json!({
                "type": "object",
                "properties": {
                    "scopes": scopes,
                    "ttl": ttl,
                    "note": {"type": "string", "description": "A short note shown beside the claim."},
                    "wait": {"type": "integer", "minimum": 0, "maximum": Span::Wait.max().as_secs(), "description": "When refused, wait up to this many seconds for the scopes to be free (at most 24 hours, as `bsi open --wait`)."}
                },
                "required": ["scopes"]
            })),
        ),
        McpTool::new(
            "close",
            close,
            schema(json!({"type": "object", "properties": {"scopes": some, "session": session}})),
        ),
        McpTool::new(
            "release_mine",
            format!("The same as `close`: {close}"),
            schema(json!({"type": "object", "properties": {"scopes": some, "session": session}})),
        ),
        McpTool::new(
            "renew",
            "Extend the session's active claims (all, or only `scopes`) by `ttl` from now, never past 8h after they were opened.",
            schema(json!({"type": "object", "properties": {"scopes": some, "ttl": ttl, "session": session}})),
        ),
        McpTool::new(
            "status",
            "Every session's claims, active and stale, with time left; fetched from the remote first when there is one (a few seconds at most), with the age of the view (`sync`).",
            schema(json!({"type": "object", "properties": {
                "offline": {"type": "boolean", "description": "Do not fetch: the claims as last fetched."}
            }})),
        ),
        McpTool::new(
            "check",
            "Would an edit of this file, or of these lines of it, be refused, and why: the verdict of bsi's edit hook, without editing or claiming anything.",
            schema(json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file, relative to the project root (or absolute)."},
                "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 2, "description": "The first and last line (1-based) the edit changes; the whole file when absent."}
            }, "required": ["path"]})),
        ),
        McpTool::new(
            "commit",
            "Commit your session's own lines (bsi commit): of the uncommitted changes (under `paths`, else all), the hunks inside your claims, with your session's trailer, through git commit; every other session's lines stay in the files as they are, and are listed. Use it instead of git commit when other sessions work in the same files. Nothing of yours there: nothing is written.",
            schema(json!({"type": "object", "properties": {
                "message": {"type": "string", "description": "The commit message (default: one naming the session and the files)."},
                "paths": {"type": "array", "items": {"type": "string"}, "description": "Only changes under these files or folders, relative to the project root."},
                "session": session
            }})),
        ),
        McpTool::new(
            "whoami",
            "Your bsi session (the one your edits, commits and shell commands count for), the agent name its claims carry, and its claims.",
            schema(json!({"type": "object", "properties": {}})),
        ),
    ]
    .into_iter()
    .map(|t| {
        let read_only = matches!(t.name.as_ref(), "status" | "check" | "whoami");
        t.annotate(rmcp::model::ToolAnnotations::new().read_only(read_only))
    })
    .collect()
}

// --- the tools ---------------------------------------------------------------

/// Sets a call's stop when the call's future goes away, however it goes.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// What the first, unqueued attempt of a claim came to.
enum Claimed {
    /// Its answer.
    Done(CallToolResult),
    /// Refused, and asked to wait: the session is known now.
    Wait(Actor),
}

/// The parts of a claim request the core takes, resolved in `call`.
fn claim_request(call: &Call, a: &ClaimArgs) -> Result<(Vec<Scope>, chrono::Duration, String)> {
    let scopes = api::open::scopes(&call.brain, &call.ctx.cwd, &a.scopes)?;
    let ttl = a.ttl.as_deref().map(Ttl::parse).transpose()?;
    let note = a.note.clone().unwrap_or_default();
    check_note(&note)?;
    Ok((scopes, call.settings.ttl(ttl.map(Ttl::duration)), note))
}

/// A claim's first attempt, in line with the other calls: the session is
/// the server's, or one drawn now and kept for every later call.
fn claim_now(inner: &Inner, a: &ClaimArgs, wait: Option<u64>) -> Result<Claimed> {
    let _line = inner.in_line();
    let mut call = inner.call()?;
    let Some(actor) = inner.actor(&mut call, true, None)? else {
        return Err(Error::NoSession);
    };
    let (scopes, ttl, note) = claim_request(&call, a)?;
    let req = api::open::Request {
        scopes: &scopes,
        ttl,
        note: &note,
        wait: None,
        queue: true,
    };
    let opening = api::open::open(
        &call.site(),
        &actor,
        &req,
        &mut api::open::Silent,
        &Stop::new(),
    )?;
    inner.adopt(&opening.session);
    if wait.is_some() && matches!(opening.applied.report, Outcome::Refused { .. }) {
        return Ok(Claimed::Wait(Actor {
            session: Some(opening.session),
            drawn: false,
            ..actor
        }));
    }
    Ok(Claimed::Done(claim_answer(&call, &scopes, opening, None)))
}

/// A refused claim kept waiting up to `wait` seconds, in the queue, until
/// it is granted, the time is up or `stop` is set.
fn claim_waiting(
    inner: &Inner,
    actor: &Actor,
    a: &ClaimArgs,
    wait: u64,
    stop: &Stop,
) -> Result<Option<CallToolResult>> {
    let call = inner.call()?;
    let (scopes, ttl, note) = claim_request(&call, a)?;
    let req = api::open::Request {
        scopes: &scopes,
        ttl,
        note: &note,
        wait: Some(Duration::from_secs(wait)),
        queue: true,
    };
    let opening = api::open::open(&call.site(), actor, &req, &mut api::open::Silent, stop)?;
    if opening.stopped {
        return Ok(None);
    }
    Ok(Some(claim_answer(&call, &scopes, opening, Some(wait))))
}

/// A claim's outcome as the tool's result.
fn claim_answer(
    call: &Call,
    asked: &[Scope],
    opening: api::open::Opening,
    waited: Option<u64>,
) -> CallToolResult {
    let now = call.ctx.now;
    let session = opening.session;
    let notes = landing_notes(call, &opening.applied.landing);
    let commit = opening.applied.commit.map(|c| c.to_string());
    match opening.applied.report {
        Outcome::Opened { new_claims, held } => {
            let text = format!(
                "Claimed {} (already held: {}) for session {session}. Edit only inside your claims; commit your paths, then call `close`.",
                list(&scopes_of(&new_claims)),
                list(&scopes_of(held.iter().map(|(c, _)| c))),
            );
            let doc = output::OpenedJson::new(&session, &new_claims, &held, commit, now);
            answer(with_notes(text, &notes), doc_of(doc), false)
        }
        Outcome::Refused {
            blockers,
            alternatives,
            free,
            queue,
        } => {
            let steps = api::open::refusal_steps(
                (&blockers, &alternatives, &free),
                queue.as_ref(),
                asked,
                waited.is_some(),
                now,
            );
            let doc = output::RefusedJson {
                error: "conflict",
                message: "claim refused — nothing was written".into(),
                hint: String::new(),
                next: crate::steps::json(&steps),
                exit: exit::CONFLICT,
                session,
                conflicts: blockers
                    .iter()
                    .map(|b| output::ConflictJson {
                        requested: b.requested.to_string(),
                        claim: ClaimJson::new(&b.claim, b.stale, now),
                    })
                    .collect(),
                alternatives: alternatives.iter().map(ToString::to_string).collect(),
                free_in_request: free.iter().map(ToString::to_string).collect(),
                queue: queue.map(|p| output::PlaceJson::new(p.place, p.queued, &p.ahead)),
            };
            refusal(doc, waited, &steps)
        }
        // Drawn again by the core until free; a session the server already
        // has is never refused for this.
        Outcome::IdTaken => CallToolResult::error(vec![ContentBlock::text(format!(
            "session id {session} is taken: call `claim` again"
        ))]),
    }
}

/// The closes of a `close` call, in line with the other calls.
fn close_now(inner: &Inner, raw: &[String], given: Option<&str>) -> Result<CallToolResult> {
    let _line = inner.in_line();
    let mut call = inner.call()?;
    let Some(actor) = inner.actor(&mut call, false, given)? else {
        return Err(Error::NoSession);
    };
    let session = actor.own_session()?;
    let site = call.site();
    let each = if raw.is_empty() {
        api::close::Each {
            closed: vec![api::close::close(&site, &actor, session, None, false)?],
            kept: Vec::new(),
        }
    } else {
        let mut scopes = Vec::new();
        let mut unknown = Vec::new();
        for r in raw {
            match resolve_lenient(&call.brain, &call.ctx, r) {
                Ok(s) => scopes.push(s),
                Err(e) => unknown.push((r.clone(), e)),
            }
        }
        let mut each = api::close::close_each(&site, &actor, session, &scopes, false);
        let mut kept: Vec<(String, Error)> = unknown;
        kept.extend(each.kept.drain(..).map(|(s, e)| (s.to_string(), e)));
        if each.closed.is_empty() && !kept.is_empty() {
            // Nothing closed: the first reason is the answer.
            return Err(kept.remove(0).1);
        }
        return Ok(closed_answer(&call, session, &each, &kept));
    };
    Ok(closed_answer(&call, session, &each, &[]))
}

/// What a `close` closed, and each scope it did not with why.
fn closed_answer(
    call: &Call,
    session: &str,
    each: &api::close::Each,
    kept: &[(String, Error)],
) -> CallToolResult {
    let closed: Vec<&(bsi_core::registry::Claim, bool)> = each.claims().collect();
    let last = each.closed.last();
    let verify = last
        .and_then(|c| c.applied.report.verified())
        .map_or_else(|| "clean".to_string(), ToString::to_string);
    let doc = output::ClosedJson {
        session: session.to_string(),
        closed: closed
            .iter()
            .map(|(c, st)| ClaimJson::new(c, *st, call.ctx.now))
            .collect(),
        status: Status::Completed.as_str(),
        verify: verify.clone(),
        forced_by: None,
        commit: last.and_then(|c| c.applied.commit.map(|c| c.to_string())),
    };
    let mut doc = doc_of(doc);
    let not_closed: Vec<Value> = kept
        .iter()
        .map(|(scope, e)| {
            let mut d = error_doc(e);
            if let Value::Object(m) = &mut d {
                m.insert("scope".into(), Value::String(scope.clone()));
            }
            d
        })
        .collect();
    if let Value::Object(m) = &mut doc {
        m.insert("not_closed".into(), Value::Array(not_closed));
    }
    let mut text = format!(
        "Closed {} of session {} (verify: {verify}).",
        list(&scopes_of(closed.iter().map(|(c, _)| c))),
        session
    );
    for h in each.closed.iter().flat_map(|c| c.applied.report.handed()) {
        text.push_str(&format!(
            "\nHanded over: {} was waiting for {} and holds it now.",
            h.session,
            list(&scopes_of(&h.claims))
        ));
    }
    for (scope, e) in kept {
        text.push_str(&format!("\nNot closed: {scope} — {e}."));
    }
    text.push_str("\nNext: `status` shows what others hold; `claim` starts new work.");
    let mut notes: Vec<String> = each
        .closed
        .iter()
        .flat_map(|c| c.unverified.iter().map(|w| format!("warning: {w}")))
        .collect();
    for c in &each.closed {
        notes.extend(landing_notes(call, &c.applied.landing));
    }
    answer(with_notes(text, &notes), doc, false)
}

/// The renewals of a `renew` call, in line with the other calls: all the
/// session's claims, or each scope asked on its own.
fn renew_now(
    inner: &Inner,
    raw: &[String],
    ttl: Option<&str>,
    given: Option<&str>,
) -> Result<CallToolResult> {
    let _line = inner.in_line();
    let mut call = inner.call()?;
    let Some(actor) = inner.actor(&mut call, false, given)? else {
        return Err(Error::NoSession);
    };
    let session = actor.own_session()?;
    let ttl = call
        .settings
        .ttl(ttl.map(Ttl::parse).transpose()?.map(Ttl::duration));
    let scopes: Vec<Option<Scope>> = if raw.is_empty() {
        vec![None]
    } else {
        raw.iter()
            .map(|r| resolve_lenient(&call.brain, &call.ctx, r).map(Some))
            .collect::<Result<_>>()?
    };
    let site = call.site();
    let (mut renewed, mut unchanged) = (Vec::new(), Vec::new());
    let (mut commit, mut notes) = (None, Vec::new());
    for s in &scopes {
        let applied = api::renew::renew(&site, &actor, session, s.as_ref(), ttl, false)?;
        notes.extend(landing_notes(&call, &applied.landing));
        commit = applied.commit.or(commit);
        let (r, u) = applied.report;
        renewed.extend(r);
        unchanged.extend(u.into_iter().map(|(c, _)| c));
    }
    let now = call.ctx.now;
    let text = format!(
        "Renewed {}; unchanged {}.",
        list(&scopes_of(&renewed)),
        list(&scopes_of(&unchanged))
    );
    let doc = output::RenewedJson {
        session: session.to_string(),
        renewed: ClaimJson::list(renewed.iter(), false, now),
        unchanged: ClaimJson::list(unchanged.iter(), false, now),
        commit: commit.map(|c| c.to_string()),
    };
    Ok(answer(with_notes(text, &notes), doc_of(doc), false))
}

/// Every session's claims, as `status --json` gives them.
fn status_doc(inner: &Inner, offline: bool) -> Result<(Value, Vec<String>)> {
    let call = inner.call()?;
    let seen = api::views::status(&call.site(), offline)?;
    let sync = sync_state(
        &call.ctx,
        &call.brain,
        &call.settings,
        &seen.view,
        &seen.fresh,
    );
    let doc = doc_of(StatusJson::new(&call.ctx, &call.brain, &seen, sync));
    Ok((doc, call.ctx.notes.take()))
}

/// The session's own lines committed (`bsi commit`), in line with the
/// other calls.
fn commit_now(inner: &Inner, a: CommitArgs) -> Result<CallToolResult> {
    let _line = inner.in_line();
    let mut call = inner.call()?;
    let Some(actor) = inner.actor(&mut call, false, a.session.as_deref())? else {
        return Ok(answer(
            "No bsi session yet, so nothing is yours to commit: `claim` what you edit first.",
            json!({"session": null, "commit": null, "files": [], "left": []}),
            true,
        ));
    };
    let session = actor.session.clone().unwrap_or_default();
    let req = api::commit::Request {
        session: session.clone(),
        message: a.message,
        paths: a.paths,
    };
    let done = api::commit::own(&call.site(), &req)?;
    let lines = crate::output::commit_lines(&session, &done);
    Ok(answer(
        with_notes(lines.join("\n"), &call.ctx.notes.take()),
        doc_of(crate::output::CommitJson::new(&session, &done)),
        done.commit.is_none(),
    ))
}

/// The session's own claims, in line with the other calls.
fn whoami_now(inner: &Inner) -> Result<CallToolResult> {
    let _line = inner.in_line();
    let mut call = inner.call()?;
    let Some(actor) = inner.actor(&mut call, false, None)? else {
        let doc = json!({"session": null, "agent": null, "active": [], "stale": []});
        return Ok(answer(
            "No bsi session yet: the agent tool's session-start hook did not name one here, and BSI_SESSION is not set. Your first `claim` names it; later calls use it.",
            doc,
            false,
        ));
    };
    let seen = api::views::whoami(&call.site(), &actor, false)?;
    let text = format!(
        "Session {} (agent {}): active {}; stale {}.",
        seen.session,
        seen.agent,
        list(&scopes_of(&seen.active)),
        list(&scopes_of(&seen.stale))
    );
    Ok(answer(
        with_notes(text, &call.ctx.notes.take()),
        doc_of(WhoAmIJson::new(&seen, call.ctx.now)),
        false,
    ))
}

impl Server {
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner) -> T + Send + 'static,
    ) -> std::result::Result<T, McpError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || f(&inner))
            .await
            .map_err(|e| McpError::internal_error(format!("the call stopped: {e}"), None))
    }

    /// `f` on a thread of its own; bsi's error as an MCP error.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, McpError> {
        self.blocking(f).await?.map_err(|e| failed(&e))
    }

    async fn claim(
        &self,
        a: ClaimArgs,
        ctx: &RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResult, McpError> {
        if a.scopes.is_empty() {
            return Err(McpError::invalid_params(
                "`scopes` is empty: name at least one scope to claim",
                None,
            ));
        }
        // `wait` is held to `bsi open --wait`'s range, in the same words.
        let wait = match a.wait.filter(|w| *w > 0) {
            Some(w) => Some(
                Span::Wait
                    .of_secs(w)
                    .map_err(|e| McpError::invalid_params(format!("`wait` {}", e.reason()), None))?
                    .as_secs(),
            ),
            None => None,
        };
        let a = Arc::new(a);
        let first = a.clone();
        let actor = match self.run(move |i| claim_now(i, &first, wait)).await? {
            Claimed::Done(r) => return Ok(r),
            Claimed::Wait(actor) => actor,
        };
        let Some(wait) = wait else {
            return Err(McpError::internal_error("nothing to wait for", None));
        };
        let stop = StopOnDrop(Stop::new());
        let waiting = stop.0.clone();
        let asked = a.clone();
        let inner = self.inner.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            claim_waiting(&inner, &actor, &asked, wait, &waiting)
        });
        let started = Instant::now();
        let mut told = Instant::now();
        let token = ctx.meta.get_progress_token();
        let done = loop {
            match tokio::time::timeout(TICK, &mut job).await {
                Ok(done) => break done,
                Err(_) if ctx.ct.is_cancelled() => stop.0.set(),
                Err(_) => {
                    if let Some(token) = token
                        .clone()
                        .filter(|_| told.elapsed() >= Duration::from_secs(1))
                    {
                        told = Instant::now();
                        let waited = started.elapsed().as_secs();
                        let _ = ctx
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token, waited as f64)
                                    .with_total(wait as f64)
                                    .with_message(format!(
                                        "waiting for {} to be free: {waited}s of {wait}s",
                                        a.scopes.join(", ")
                                    )),
                            )
                            .await;
                    }
                }
            }
        };
        let done =
            done.map_err(|e| McpError::internal_error(format!("the claim stopped: {e}"), None))?;
        match done.map_err(|e| failed(&e))? {
            Some(r) => Ok(r),
            None => Err(McpError::invalid_request(
                "the claim was cancelled: nothing was granted, and its place in the queue was given up",
                None,
            )),
        }
    }

    async fn close(&self, a: SomeArgs) -> std::result::Result<CallToolResult, McpError> {
        self.run(move |i| close_now(i, &a.scopes, a.session.as_deref()))
            .await
    }

    async fn renew(&self, a: SomeArgs) -> std::result::Result<CallToolResult, McpError> {
        self.run(move |i| renew_now(i, &a.scopes, a.ttl.as_deref(), a.session.as_deref()))
            .await
    }

    async fn status(&self, a: StatusArgs) -> std::result::Result<CallToolResult, McpError> {
        let (doc, notes) = self.run(move |i| status_doc(i, a.offline)).await?;
        Ok(answer(with_notes(status_text(&doc), &notes), doc, false))
    }

    async fn whoami(&self) -> std::result::Result<CallToolResult, McpError> {
        self.run(whoami_now).await
    }

    async fn commit(&self, a: CommitArgs) -> std::result::Result<CallToolResult, McpError> {
        self.run(move |i| commit_now(i, a)).await
    }

    async fn check(&self, a: CheckArgs) -> std::result::Result<CallToolResult, McpError> {
        let lines = match a.lines.as_deref() {
            None => None,
            Some([one]) => Some((*one, *one)),
            Some([from, to]) if from <= to && *from >= 1 => Some((*from, *to)),
            Some(_) => {
                return Err(McpError::invalid_params(
                    "`lines` is [first, last] with 1 <= first <= last",
                    None,
                ));
            }
        };
        let doc = self
            .blocking(move |inner| {
                let session = inner.session();
                judge_edit(&inner.ctx, session.as_deref(), &a.path, lines)
            })
            .await?
            .map_err(|e| failed(&e))?;
        let text = doc["reason"].as_str().map_or_else(
            || {
                format!(
                    "An edit of {} would be allowed.",
                    doc["path"].as_str().unwrap_or("?")
                )
            },
            str::to_string,
        );
        Ok(answer(text, doc, false))
    }

    /// Follows the registry branch for a client subscribed the way of the
    /// revisions with a handshake (`resources/subscribe`), once per server.
    fn watch(&self, peer: Peer<RoleServer>) {
        if self.inner.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = self.clone();
        tokio::spawn(async move { server.follow(&Listener::Peer(peer), || false).await });
    }

    /// Follows the registry branch until `to` can no longer be told or
    /// `ended` says so: a moved reference (a change here, or on the remote
    /// as fetched) is a `notifications/resources/updated` for the claims
    /// resource.
    async fn follow(&self, to: &Listener, ended: impl Fn() -> bool) {
        let mut seen = self.blocking(|i| tips(&i.ctx)).await.ok().flatten();
        let mut fetched = Instant::now();
        loop {
            tokio::time::sleep(POLL).await;
            if ended() {
                break;
            }
            if fetched.elapsed() >= FETCH_EVERY {
                fetched = Instant::now();
                // Brings the remote's registry branch in (read only).
                let _ = self.blocking(|i| status_doc(i, false)).await;
            }
            let now = self.blocking(|i| tips(&i.ctx)).await.ok().flatten();
            if now != seen {
                seen = now;
                if !to.tell().await {
                    break;
                }
            }
        }
    }
}

/// Who hears that the claims moved.
enum Listener {
    /// A client subscribed with `resources/subscribe` (up to 2025-11-25).
    Peer(Peer<RoleServer>),
    /// A `subscriptions/listen` request (2026-07-28): its notifications
    /// carry the request's id.
    Stream(SubscriptionSink),
}

impl Listener {
    /// Sends `notifications/resources/updated` for the claims; false once
    /// the client cannot hear it any more.
    async fn tell(&self) -> bool {
        match self {
            Listener::Peer(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(CLAIMS_URI))
                .await
                .is_ok(),
            Listener::Stream(sink) => sink.notify_resource_updated(CLAIMS_URI).await.is_ok(),
        }
    }
}

/// The references of the registry branch, local and remote-tracking.
fn tips(ctx: &Ctx) -> Option<String> {
    let (brain, settings) = ctx.open().ok()?;
    let remote = settings.remote().ok().flatten();
    Some(format!("{:?}", brain.tips(remote.as_ref())))
}

/// A refused claim as a result the model acts on: the refusal document of
/// `bsi open --json`, its hint the calls that can follow (also listed as
/// `next_calls`) and the steps that are not calls (a person's, told to the
/// user). `waited`: how long the call waited, if it did.
fn refusal(doc: output::RefusedJson, waited: Option<u64>, steps: &[NextStep]) -> CallToolResult {
    let (next, person) = crate::steps::calls(steps);
    let mut text = String::from("Claim refused — nothing was written.");
    for c in &doc.conflicts {
        // In words, a time reads as the hooks' and the CLI's words give it;
        // the document keeps RFC 3339.
        let until = chrono::DateTime::parse_from_rfc3339(&c.claim.expires)
            .map_or_else(|_| c.claim.expires.clone(), bsi_core::ttl::local_zone_ts);
        text.push_str(&format!(
            "\n  {} is held by session {} (agent {}, {}, until {until}){}",
            c.requested,
            c.claim.session,
            c.claim.agent,
            c.claim.scope,
            if c.claim.stale {
                " STALE: only a person frees it"
            } else {
                ""
            }
        ));
    }
    if let Some(w) = waited {
        text.push_str(&format!("\nStill held after waiting {w}s."));
    }
    let calls: Vec<String> = next.iter().map(crate::steps::call_line).collect();
    for c in &calls {
        text.push_str(&format!("\nNext: {c}"));
    }
    for p in &person {
        text.push_str(&format!("\n{p}"));
    }
    let mut hint = if calls.is_empty() {
        "call `status` to see who holds what".to_string()
    } else {
        format!("call {}", calls.join("; or "))
    };
    for p in &person {
        hint.push_str(&format!("; {p}"));
    }
    let doc = output::RefusedJson { hint, ..doc };
    let mut doc = doc_of(doc);
    if let Value::Object(m) = &mut doc {
        m.insert("next_calls".into(), Value::Array(next));
    }
    answer(text, doc, true)
}

fn status_text(doc: &Value) -> String {
    let mut t = String::new();
    for (key, label) in [("active", "active"), ("stale", "STALE")] {
        for c in doc[key].as_array().into_iter().flatten() {
            t.push_str(&format!(
                "{} {} — session {}, agent {}, until {}\n",
                label,
                c["scope"].as_str().unwrap_or("?"),
                c["session"].as_str().unwrap_or("?"),
                c["agent"].as_str().unwrap_or("?"),
                c["expires"].as_str().unwrap_or("?"),
            ));
        }
    }
    if t.is_empty() {
        t.push_str("No claims.\n");
    }
    match &doc["sync"] {
        Value::Null => t.push_str("No remote: the local registry."),
        s if s["fetched"] == true => t.push_str("Fetched from the remote just now."),
        s => t.push_str(&format!(
            "Not fetched ({}); last heard from the remote {} minutes ago.",
            s["unreachable"].as_str().unwrap_or("offline"),
            s["minutes_since_sync"]
                .as_i64()
                .map_or_else(|| "?".into(), |m| m.to_string())
        )),
    }
    t
}

/// The edit hook's decision on an edit of `path` (its lines `lines`, else
/// the whole file), for `session`: read only. The path is resolved as the
/// hook resolves it (a symbolic link is the brain file it reaches), and the
/// decision is the hook's own ([`bsi_core::guard::edit`]).
fn judge_edit(
    ctx: &Ctx,
    session: Option<&str>,
    path: &str,
    lines: Option<(usize, usize)>,
) -> Result<Value> {
    let (brain, settings) = ctx.open()?;
    let abs = ctx.cwd.join(path);
    let mode = settings.hook_mode;
    let Some(rel) = edits::brain_rel(&brain.root, &abs) else {
        return Ok(json!({
            "path": path, "lines": lines.map(|(a, b)| [a, b]), "session": session,
            "refused": false, "decision": "allow", "mode": mode.as_str(), "holders": [],
            "findings": [], "claim_first": [],
            "reason": format!("{path} is outside the brain: no claim applies.")
        }));
    };
    let remote = settings.remote().ok().flatten();
    let reg = brain.view(remote.as_ref())?.registry;
    let (old, new) = match (lines, std::fs::read_to_string(&abs).ok()) {
        (Some(range), Some(text)) => {
            let new = touched(&text, range);
            (Some(text), Some(new))
        }
        _ => (None, None),
    };
    let mut targets = vec![Target {
        old,
        new,
        ..Target::whole(rel.as_str())
    }];
    let rules = api::edit::rules(&brain, &settings);
    let decision = api::edit::decide(&rules, &reg, session, &mut targets);
    let (name, refused, findings, words, claim_first) = match &decision {
        EditDecision::Allow => ("allow", false, &[][..], Vec::new(), Vec::new()),
        EditDecision::Warn {
            copy,
            findings,
            judged,
        } => {
            let mut words: Vec<String> = copy
                .iter()
                .map(|c| verdict::copy_edited(c, &brain.branch, false))
                .collect();
            words.extend(judged.lines.iter().cloned());
            ("warn", false, &findings[..], words, judged.outside.clone())
        }
        EditDecision::Deny {
            copy: Some(copy), ..
        } => {
            let words = vec![format!(
                "{}: change claims with `claim` and `close`.",
                verdict::copy_edited(copy, &brain.branch, true)
            )];
            ("deny", true, &[][..], words, Vec::new())
        }
        EditDecision::Deny {
            findings,
            judged,
            claim,
            ..
        } => {
            let words = judged.lines.clone();
            let claim_first = if claim.is_empty() {
                judged.outside.clone()
            } else {
                claim.clone()
            };
            ("deny", true, &findings[..], words, claim_first)
        }
        EditDecision::ClaimFirst { scopes, .. } => {
            let words = vec![format!(
                "An edit of {rel} would be allowed: it is free and outside your claims, so the edit hook claims {} for your session first (`claim_on_write`).",
                scopes_summary(scopes)
            )];
            ("claim_first", false, &[][..], words, scopes.clone())
        }
    };
    let holders: Vec<Value> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::Claimed { claim, stale, .. } => Some(
                serde_json::to_value(crate::output::ClaimJson::new(claim, *stale, ctx.now))
                    .unwrap_or(Value::Null),
            ),
            _ => None,
        })
        .collect();
    let claim_first: Vec<String> = claim_first.iter().map(ToString::to_string).collect();
    let mut reason = words.join("\n");
    let steps = match &decision {
        EditDecision::Deny {
            copy: None,
            findings,
            claim,
            ..
        } => api::edit::steps(
            &brain,
            &reg,
            session.unwrap_or_default(),
            findings,
            claim,
            ctx.now,
        ),
        _ => Vec::new(),
    };
    let (next_calls, others) = crate::steps::calls(&steps);
    for c in &next_calls {
        reason.push_str(&format!("\nNext: {}", crate::steps::call_line(c)));
    }
    for w in &others {
        reason.push('\n');
        reason.push_str(w);
    }
    Ok(json!({
        "path": rel,
        "lines": lines.map(|(a, b)| [a, b]),
        "session": session,
        "mode": mode.as_str(),
        "decision": name,
        "refused": refused,
        "holders": holders,
        "findings": words,
        "claim_first": claim_first,
        "next": crate::steps::json(&steps),
        "next_calls": next_calls,
        "reason": if reason.is_empty() { Value::Null } else { Value::String(reason) },
    }))
}

/// `text` with the lines `from..=to` (1-based) changed: each replaced by a
/// line no file has; past the end, one line is added.
fn touched(text: &str, (from, to): (usize, usize)) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let mark = "\u{2063}bsi-check\u{2063}";
    if from > lines.len() {
        lines.push(mark);
    } else {
        for l in lines.iter_mut().take(to).skip(from - 1) {
            *l = mark;
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

// --- the protocol --------------------------------------------------------------

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("bsi", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "bsi coordinates parallel sessions editing this project: claim what you will edit before editing it (`claim`), stay inside your claims, commit your own lines with `commit` (other sessions' lines in the same files stay as they are), then `close`. An edit inside another session's claim is refused by bsi's edit hook; `check` says beforehand whether it would be. These tools act for the same bsi session as your edit hooks and your shell.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Every revision up to the stateless one: those with an `initialize`
        // handshake (2024-11-05 … 2025-11-25), and 2026-07-28, whose requests
        // each carry their version in `_meta`. Named, not the SDK's newest:
        // a revision is served once bsi's tools are known to hold under it.
        Cow::Borrowed(ProtocolVersion::known_up_to(&NEWEST))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let a = request.arguments;
        let result = match request.name.as_ref() {
            "claim" => self.claim(required(a)?, &context).await,
            "close" | "release_mine" => self.close(args(a)?).await,
            "renew" => self.renew(args(a)?).await,
            "status" => self.status(args(a)?).await,
            "check" => self.check(required(a)?).await,
            "whoami" => self.whoami().await,
            "commit" => self.commit(args(a)?).await,
            other => Err(McpError::invalid_params(
                format!(
                    "no tool {other}: the tools are claim, close, release_mine, renew, status, check, commit, whoami"
                ),
                None,
            )),
        }?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(CLAIMS_URI, "claims")
                .with_description("Every session's claims, as `bsi status --json --offline` gives them; updated when the registry branch moves.")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, McpError> {
        if request.uri != CLAIMS_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}: bsi serves {CLAIMS_URI}", request.uri),
                None,
            ));
        }
        let (doc, _notes) = self.run(|i| status_doc(i, true)).await?;
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        Ok(
            ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                uri: CLAIMS_URI.into(),
                mime_type: Some("application/json".into()),
                text,
                meta: None,
            }])
            .into(),
        )
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<(), McpError> {
        if request.uri != CLAIMS_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}: bsi serves {CLAIMS_URI}", request.uri),
                None,
            ));
        }
        self.watch(context.peer);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // The claims resource is the one that changes.
        let asked = requested.resource_subscriptions.as_deref().unwrap_or(&[]);
        let claims = asked.iter().any(|u| u == CLAIMS_URI);
        Some(if claims {
            SubscriptionFilter::builder()
                .resource_subscription(CLAIMS_URI)
                .build()
        } else {
            SubscriptionFilter::new()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> std::result::Result<(), McpError> {
        let claims = context
            .accepted()
            .resource_subscriptions
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .any(|u| u == CLAIMS_URI);
        if claims {
            let to = Listener::Stream(context.sink().clone());
            let ct = &context.request_context().ct;
            self.follow(&to, || ct.is_cancelled()).await;
        } else {
            context.cancelled().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_a_check_are_changed_and_no_other() {
        let text = "# A\n\none\n\n## B\n\ntwo\n";
        let new = touched(text, (3, 3));
        let lines: Vec<&str> = new.lines().collect();
        assert_eq!(lines.len(), 7);
        assert_ne!(lines[2], "one");
        assert_eq!(lines[..2], ["# A", ""]);
        assert_eq!(lines[3..], ["", "## B", "", "two"]);
        // Past the end: one line more.
        assert_eq!(touched(text, (40, 41)).lines().count(), 8);
    }

    #[test]
    fn a_refusal_names_the_calls_that_can_follow() {
        let claim = ClaimJson {
            session: "s2".into(),
            scope: "a.md".into(),
            level: bsi_core::scope::Level::File,
            agent: "bob".into(),
            opened: "t".into(),
            expires: "t".into(),
            note: String::new(),
            stale: false,
            reason: None,
            minutes_left: 5,
        };
        let steps = vec![
            NextStep {
                step: bsi_core::next::Step::Claim {
                    scopes: vec![Scope::File("b.md".into())],
                    why: bsi_core::next::Why::Nearby,
                },
                who: bsi_core::next::Who::ThisSession,
            },
            NextStep {
                step: bsi_core::next::Step::Wait {
                    scopes: vec![Scope::File("a.md".into())],
                    holders: vec!["s2".into()],
                    ahead: Vec::new(),
                    seconds: 600,
                },
                who: bsi_core::next::Who::ThisSession,
            },
        ];
        let doc = output::RefusedJson {
            error: "conflict",
            message: "claim refused — nothing was written".into(),
            hint: String::new(),
            next: crate::steps::json(&steps),
            exit: exit::CONFLICT,
            session: "s1".into(),
            conflicts: vec![output::ConflictJson {
                requested: "a.md".into(),
                claim,
            }],
            alternatives: vec!["b.md".into()],
            free_in_request: Vec::new(),
            queue: None,
        };
        let r = refusal(doc, None, &steps);
        assert_eq!(r.is_error, Some(true));
        let doc = r.structured_content.expect("doc");
        let next = &doc["next_calls"];
        assert_eq!(next[0]["arguments"]["scopes"], json!(["b.md"]));
        assert_eq!(next[1]["arguments"]["wait"], 600);
        assert!(
            doc["hint"].as_str().expect("hint").contains("`claim`"),
            "{doc}"
        );
    }
}
