//! `bsi mcp`: the claims as tools of the Model Context Protocol, served over
//! stdio to the agent tool that starts it.
//!
//! Each write or read tool runs this same binary's command
//! with `--json` (`open`, `close`, `renew`, `status`, `whoami`) for the
//! server's session: the same settings, plans, locks and publishing as the
//! command line, and the documented JSON shapes, with stdout kept for the
//! protocol. `check` asks the guard in process, the way the edit hook does
//! (`guard::check_change`, then `guard::verdict::judge` under the brain's
//! hook mode), and writes nothing.
//!
//! The async runtime (one thread) starts here and nowhere else, so no other
//! command pays for it.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Ctx;
use super::edits;
use crate::agents::{self, Tool};
use crate::claims::scopes_summary;
use crate::error::{Error, Result, exit};
use crate::guard::edit::{EditDecision, Target};
use crate::guard::{Finding, verdict};

/// The resource that holds every session's claims.
const CLAIMS_URI: &str = "bsi://claims";

/// How often the registry branch's references are read while a client
/// follows the claims resource.
const POLL: Duration = Duration::from_secs(2);

/// How often the remote's registry branch is fetched meanwhile.
const FETCH_EVERY: Duration = Duration::from_secs(30);

/// What `bsi mcp` was asked.
pub(crate) struct Request {
    /// `--tool`: the agent tool that starts the server.
    pub(crate) tool: Option<Tool>,
    /// The global flags every command of the server gets (`--registry`,
    /// `--remote`).
    pub(crate) pass: Vec<OsString>,
}

/// Serves until the client closes stdin.
pub(crate) fn run(ctx: &Ctx, req: Request) -> Result<u8> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("cannot find the bsi binary to run its commands", e))?;
    let server = Server {
        inner: Arc::new(Inner {
            ctx: ctx.clone(),
            exe,
            pass: req.pass,
            tool: req.tool,
            session: Mutex::new(None),
            watching: AtomicBool::new(false),
        }),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the MCP server", e))?;
    runtime.block_on(async move {
        let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| {
            Error::io(
                "the MCP client did not start a session",
                std::io::Error::other(e),
            )
        })?;
        running
            .waiting()
            .await
            .map_err(|e| Error::io("the MCP session ended abnormally", std::io::Error::other(e)))?;
        Ok::<(), Error>(())
    })?;
    Ok(exit::OK)
}

#[derive(Clone)]
struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    exe: PathBuf,
    pass: Vec<OsString>,
    tool: Option<Tool>,
    /// The session a claim named, for when no other source has one.
    session: Mutex<Option<String>>,
    /// Whether the registry branch is being watched for a subscriber.
    watching: AtomicBool,
}

/// The session the agent tool's session-start hook recorded for the tool
/// process that started this server.
fn recorded_session(ctx: &Ctx, tool: Tool) -> Option<String> {
    agents::sessions::of_ancestors(&ctx.cwd)
        .filter(|e| e.tool == tool.name())
        .map(|e| e.session)
}

/// What one run of a bsi command gave.
struct Ran {
    code: u8,
    json: Option<Value>,
    stderr: String,
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

    /// Runs `bsi ARGS` for `session`, its stdout read as one JSON document.
    fn bsi(&self, session: Option<&str>, args: &[String]) -> std::result::Result<Ran, McpError> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(&self.pass);
        if let Some(s) = session {
            cmd.arg("--session").arg(s);
        }
        let out = cmd
            .args(args)
            .current_dir(&self.ctx.cwd)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                McpError::internal_error(format!("cannot run {}: {e}", self.exe.display()), None)
            })?;
        let code = out
            .status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(exit::ERROR);
        Ok(Ran {
            code,
            json: serde_json::from_slice(&out.stdout).ok(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

/// A command's run as the tool's result: its JSON document as structured
/// content, with `text` for people; an error document as an MCP error
/// carrying its hint.
fn result(
    ran: Ran,
    ok: &[u8],
    text: impl FnOnce(&Value) -> String,
) -> std::result::Result<CallToolResult, McpError> {
    let Some(doc) = ran.json else {
        return Err(McpError::internal_error(
            format!(
                "bsi said nothing readable (exit {}): {}",
                ran.code,
                ran.stderr.trim()
            ),
            None,
        ));
    };
    if !ok.contains(&ran.code) || doc.get("error").is_some() {
        return Err(error_of(&doc, ran.code));
    }
    let mut said = text(&doc);
    for line in warnings(&ran.stderr) {
        said.push('\n');
        said.push_str(&line);
    }
    Ok(answer(said, doc, false))
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

/// The lines of a command's stderr worth passing on (warnings, a change
/// recorded only locally).
fn warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn scopes_of(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["scope"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(", ")
    }
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
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(default)]
    offline: bool,
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
                    "wait": {"type": "integer", "minimum": 0, "maximum": 3600, "description": "When refused, wait up to this many seconds for the scopes to be free."}
                },
                "required": ["scopes"]
            })),
        ),
        McpTool::new(
            "close",
            close,
            schema(json!({"type": "object", "properties": {"scopes": some}})),
        ),
        McpTool::new(
            "release_mine",
            format!("The same as `close`: {close}"),
            schema(json!({"type": "object", "properties": {"scopes": some}})),
        ),
        McpTool::new(
            "renew",
            "Extend the session's active claims (all, or only `scopes`) by `ttl` from now, never past 8h after they were opened.",
            schema(json!({"type": "object", "properties": {"scopes": some, "ttl": ttl}})),
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
        let mut argv: Vec<String> = vec!["open".into()];
        argv.extend(a.scopes.iter().cloned());
        argv.push("--json".into());
        if let Some(t) = &a.ttl {
            argv.extend(["--ttl".into(), t.clone()]);
        }
        if let Some(n) = &a.note {
            argv.extend(["--note".into(), n.clone()]);
        }
        let wait = a.wait.filter(|w| *w > 0).map(|w| w.min(3600));
        if let Some(w) = wait {
            argv.extend(["--wait".into(), format!("{w}s")]);
        }
        let inner = self.inner.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            let session = inner.session();
            inner.bsi(session.as_deref(), &argv)
        });
        let started = Instant::now();
        let token = ctx.meta.get_progress_token();
        let ran = loop {
            match tokio::time::timeout(Duration::from_secs(1), &mut job).await {
                Ok(done) => {
                    break done.map_err(|e| {
                        McpError::internal_error(format!("the claim stopped: {e}"), None)
                    })??;
                }
                Err(_) => {
                    if let (Some(token), Some(w)) = (token.clone(), wait) {
                        let waited = started.elapsed().as_secs();
                        let _ = ctx
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token, waited as f64)
                                    .with_total(w as f64)
                                    .with_message(format!(
                                        "waiting for {} to be free: {waited}s of {w}s",
                                        a.scopes.join(", ")
                                    )),
                            )
                            .await;
                    }
                }
            }
        };
        if ran.code == exit::CONFLICT
            && let Some(doc) = ran.json.as_ref().filter(|d| d.get("conflicts").is_some())
        {
            return Ok(refusal(doc.clone(), &a.scopes, wait));
        }
        let inner = self.inner.clone();
        result(ran, &[exit::OK, exit::UNPUBLISHED], |doc| {
            if let Some(s) = doc["session"].as_str() {
                inner.adopt(s);
            }
            format!(
                "Claimed {} (already held: {}) for session {}. Edit only inside your claims; commit your paths, then call `close`.",
                list(&scopes_of(doc, "opened")),
                list(&scopes_of(doc, "already_held")),
                doc["session"].as_str().unwrap_or("?")
            )
        })
    }

    async fn close(&self, a: SomeArgs) -> std::result::Result<CallToolResult, McpError> {
        let ran = self.per_scope("close", a.scopes, Vec::new()).await?;
        result(ran, &[exit::OK, exit::UNPUBLISHED], |doc| {
            format!(
                "Closed {} of session {} (verify: {}). Next: `status` shows what others hold; `claim` starts new work.",
                list(&scopes_of(doc, "closed")),
                doc["session"].as_str().unwrap_or("?"),
                doc["verify"].as_str().unwrap_or("?")
            )
        })
    }

    async fn renew(&self, a: SomeArgs) -> std::result::Result<CallToolResult, McpError> {
        let extra = a
            .ttl
            .map(|t| vec!["--ttl".to_string(), t])
            .unwrap_or_default();
        let ran = self.per_scope("renew", a.scopes, extra).await?;
        result(ran, &[exit::OK, exit::UNPUBLISHED], |doc| {
            format!(
                "Renewed {}; unchanged {}.",
                list(&scopes_of(doc, "renewed")),
                list(&scopes_of(doc, "unchanged"))
            )
        })
    }

    /// `close` or `renew` of the session, once per scope asked (the
    /// command takes one `--scope`), the documents merged: their lists
    /// joined, the last commit kept.
    async fn per_scope(
        &self,
        command: &'static str,
        scopes: Vec<String>,
        extra: Vec<String>,
    ) -> std::result::Result<Ran, McpError> {
        self.blocking(move |inner| {
            let Some(session) = inner.session() else {
                return Err(McpError::invalid_request(
                    "this session holds no claim yet: `claim` names it — hint: call `claim` with the scopes you will edit",
                    None,
                ));
            };
            let runs: Vec<Option<String>> = if scopes.is_empty() {
                vec![None]
            } else {
                scopes.into_iter().map(Some).collect()
            };
            let mut merged: Option<Ran> = None;
            for scope in runs {
                let mut argv = vec![command.to_string(), "--json".into()];
                argv.extend(extra.iter().cloned());
                if let Some(s) = scope {
                    argv.extend(["--scope".into(), s]);
                }
                let ran = inner.bsi(Some(&session), &argv)?;
                let failed = ran.json.as_ref().is_none_or(|d| d.get("error").is_some());
                merged = Some(match merged {
                    None => ran,
                    Some(_) if failed => return Ok(ran),
                    Some(mut m) => {
                        merge(&mut m, ran);
                        m
                    }
                });
            }
            merged.ok_or_else(|| McpError::internal_error("nothing was run", None))
        })
        .await?
    }

    async fn status(&self, a: StatusArgs) -> std::result::Result<CallToolResult, McpError> {
        let ran = self
            .blocking(move |inner| {
                let mut argv = vec!["status".to_string(), "--json".into()];
                if a.offline {
                    argv.push("--offline".into());
                }
                inner.bsi(None, &argv)
            })
            .await??;
        result(ran, &[exit::OK, exit::CONFLICT], status_text)
    }

    async fn whoami(&self) -> std::result::Result<CallToolResult, McpError> {
        let ran = self
            .blocking(|inner| {
                let session = inner.session();
                session
                    .as_deref()
                    .map(|s| inner.bsi(Some(s), &["whoami".into(), "--json".into()]))
                    .transpose()
            })
            .await??;
        let Some(ran) = ran else {
            let doc = json!({"session": null, "agent": null, "active": [], "stale": []});
            return Ok(answer(
                "No bsi session yet: the agent tool's session-start hook did not name one here, and BSI_SESSION is not set. Your first `claim` names it; later calls use it.",
                doc,
                false,
            ));
        };
        result(ran, &[exit::OK], |doc| {
            format!(
                "Session {} (agent {}): active {}; stale {}.",
                doc["session"].as_str().unwrap_or("?"),
                doc["agent"].as_str().unwrap_or("?"),
                list(&scopes_of(doc, "active")),
                list(&scopes_of(doc, "stale"))
            )
        })
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
            .map_err(|e| {
                let doc = crate::output::ErrorJson::of(&e);
                let doc = serde_json::to_value(&doc).unwrap_or(Value::Null);
                error_of(&doc, e.code())
            })?;
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

    /// Follows the registry branch while a client is subscribed: a moved
    /// reference (a change here, or on the remote as fetched) is a
    /// `notifications/resources/updated` for the claims resource.
    fn watch(&self, peer: Peer<RoleServer>) {
        if self.inner.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = self.clone();
        tokio::spawn(async move {
            let mut seen = server.blocking(|i| tips(&i.ctx)).await.ok().flatten();
            let mut fetched = Instant::now();
            loop {
                tokio::time::sleep(POLL).await;
                if fetched.elapsed() >= FETCH_EVERY {
                    fetched = Instant::now();
                    // Brings the remote's registry branch in (read only).
                    let _ = server
                        .blocking(|i| i.bsi(None, &["status".into(), "--json".into()]))
                        .await;
                }
                let now = server.blocking(|i| tips(&i.ctx)).await.ok().flatten();
                if now != seen {
                    seen = now;
                    if peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(CLAIMS_URI))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
    }
}

/// The references of the registry branch, local and remote-tracking.
fn tips(ctx: &Ctx) -> Option<String> {
    let (brain, settings) = ctx.open().ok()?;
    let remote = settings.remote().ok().flatten();
    Some(format!("{:?}", brain.tips(remote.as_ref())))
}

/// A refused claim as a result the model acts on: the refusal document of
/// `bsi open --json`, with the calls that can follow.
fn refusal(mut doc: Value, asked: &[String], waited: Option<u64>) -> CallToolResult {
    let mut next: Vec<Value> = Vec::new();
    if let Some(alt) = doc["alternatives"]
        .as_array()
        .and_then(|a| a.first())
        .cloned()
    {
        next.push(
            json!({"tool": "claim", "arguments": {"scopes": [alt]}, "why": "a free scope nearby"}),
        );
    }
    if let Some(free) = doc["free_in_request"].as_array().filter(|a| !a.is_empty()) {
        next.push(json!({"tool": "claim", "arguments": {"scopes": free}, "why": "the free part of the request alone"}));
    }
    if waited.is_none() {
        next.push(json!({"tool": "claim", "arguments": {"scopes": asked, "wait": 600}, "why": "wait up to 10 minutes for the holder to close"}));
    }
    let mut text = String::from("Claim refused — nothing was written.");
    for c in doc["conflicts"].as_array().into_iter().flatten() {
        text.push_str(&format!(
            "\n  {} is held by session {} (agent {}, {}, until {}){}",
            c["requested"].as_str().unwrap_or("?"),
            c["session"].as_str().unwrap_or("?"),
            c["agent"].as_str().unwrap_or("?"),
            c["scope"].as_str().unwrap_or("?"),
            c["expires"].as_str().unwrap_or("?"),
            if c["stale"] == true {
                " STALE: only a person frees it"
            } else {
                ""
            }
        ));
    }
    if let Some(w) = waited {
        text.push_str(&format!("\nStill held after waiting {w}s."));
    }
    for n in &next {
        text.push_str(&format!(
            "\nNext: `{}` {} ({})",
            n["tool"].as_str().unwrap_or("claim"),
            n["arguments"],
            n["why"].as_str().unwrap_or("")
        ));
    }
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

/// Joins two documents of one command: lists concatenated, the later
/// commit kept.
fn merge(into: &mut Ran, more: Ran) {
    if let (Some(Value::Object(a)), Some(Value::Object(b))) = (&mut into.json, more.json) {
        for (k, v) in b {
            match (a.get_mut(&k), v) {
                (Some(Value::Array(x)), Value::Array(y)) => x.extend(y),
                (Some(slot), v) if k == "commit" && !v.is_null() => *slot = v,
                _ => {}
            }
        }
    }
    into.code = into.code.max(more.code);
    into.stderr.push_str(&more.stderr);
}

/// The edit hook's decision on an edit of `path` (its lines `lines`, else
/// the whole file), for `session`: read only. The path is resolved as the
/// hook resolves it (a symbolic link is the brain file it reaches), and the
/// decision is the hook's own ([`crate::guard::edit`]).
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
    let rules = edits::rules(&brain, &settings);
    let decision = edits::decide(&rules, &reg, session, &mut targets);
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
    if let EditDecision::Deny {
        copy: None, judged, ..
    } = &decision
    {
        for w in verdict::ways_out(judged, session) {
            reason.push('\n');
            reason.push_str(&w);
        }
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
            "bsi coordinates parallel sessions editing this project: claim what you will edit before editing it (`claim`), stay inside your claims, commit your own paths, then `close`. An edit inside another session's claim is refused by bsi's edit hook; `check` says beforehand whether it would be. These tools act for the same bsi session as your edit hooks and your shell.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // The versions with an `initialize` handshake and resource
        // subscriptions: what the agent tools speak over stdio.
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
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
            other => Err(McpError::invalid_params(
                format!(
                    "no tool {other}: the tools are claim, close, release_mine, renew, status, check, whoami"
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
        let ran = self
            .blocking(|i| {
                i.bsi(
                    None,
                    &["status".into(), "--json".into(), "--offline".into()],
                )
            })
            .await??;
        let Some(doc) = ran.json.filter(|d| d.get("error").is_none()) else {
            return Err(McpError::internal_error(
                format!("the claims could not be read: {}", ran.stderr.trim()),
                None,
            ));
        };
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
    fn documents_of_one_command_are_joined() {
        let mut a = Ran {
            code: exit::OK,
            json: Some(json!({"session": "s", "closed": [{"scope": "a.md"}], "commit": "1"})),
            stderr: String::new(),
        };
        let b = Ran {
            code: exit::UNPUBLISHED,
            json: Some(json!({"session": "s", "closed": [{"scope": "b.md"}], "commit": "2"})),
            stderr: "not published\n".into(),
        };
        merge(&mut a, b);
        let doc = a.json.expect("doc");
        assert_eq!(scopes_of(&doc, "closed"), ["a.md", "b.md"]);
        assert_eq!(doc["commit"], "2");
        assert_eq!(a.code, exit::UNPUBLISHED);
        assert_eq!(warnings(&a.stderr), ["not published"]);
    }

    #[test]
    fn a_refusal_names_the_calls_that_can_follow() {
        let doc = json!({
            "error": "conflict", "conflicts": [{"requested": "a.md", "session": "s2", "agent": "bob", "scope": "a.md", "expires": "t", "stale": false}],
            "alternatives": ["b.md"], "free_in_request": []
        });
        let r = refusal(doc, &["a.md".into()], None);
        assert_eq!(r.is_error, Some(true));
        let next = &r.structured_content.expect("doc")["next_calls"];
        assert_eq!(next[0]["arguments"]["scopes"], json!(["b.md"]));
        assert_eq!(next[1]["arguments"]["wait"], 600);
    }
}
