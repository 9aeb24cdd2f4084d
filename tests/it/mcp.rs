//! `bsi mcp` driven by a real MCP client (the official SDK's, over the
//! binary's stdin and stdout), against real brains with a bare remote.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ProgressNotificationParam,
    ProtocolVersion, ReadResourceRequestParams, Request, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::agent_hook::{replace_event, with_stdin};
use crate::common::Brain;

/// A client that counts what the server tells it.
#[derive(Default, Clone)]
pub(crate) struct Client {
    progress: Arc<AtomicUsize>,
    progressed: Arc<Notify>,
    updated: Arc<Notify>,
    /// The version its `initialize` asks for (default: 2025-06-18).
    version: Option<ProtocolVersion>,
}

impl Client {
    /// A client whose handshake asks for `version`.
    fn speaking(version: ProtocolVersion) -> Client {
        Client {
            version: Some(version),
            ..Client::default()
        }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // The handshake the agent tools speak over stdio.
        rmcp::model::ClientConfig::default().with_protocol_version(
            self.version
                .clone()
                .unwrap_or(ProtocolVersion::V_2025_06_18),
        )
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.fetch_add(1, Ordering::SeqCst);
        self.progressed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        _params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.notify_one();
    }
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// `bsi mcp ARGS` in the brain, with `env`, as the client's server.
pub(crate) async fn connect(
    b: &Brain,
    args: &[&str],
    env: &[(&str, &str)],
    client: Client,
) -> RunningService<RoleClient, Client> {
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    let mut cmd = b.command(&all);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stderr(std::process::Stdio::null());
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(cmd)).expect("start bsi mcp");
    client.serve(transport).await.expect("initialize")
}

fn object(v: Value) -> rmcp::model::JsonObject {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object: {v}"),
    }
}

pub(crate) async fn call(
    c: &RunningService<RoleClient, Client>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(object(args)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

pub(crate) fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn doc(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured content")
}

fn scopes(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["scope"].as_str().expect("scope").to_string())
        .collect()
}

/// The remote's registry.
fn remote_registry(bare: &std::path::Path) -> String {
    let o = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(bare)
        .args(["show", "brain-index:BRAIN-INDEX.md"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git show");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_tool_answers_for_the_agents_session_against_a_brain_with_a_remote() {
    let b = Brain::new();
    let bare = b.publish_to_bare();
    crate::agent_hook::other_holds(&b, "projets/plan.md#Goals");
    let before = b.user_state();
    let commits = b.commits();
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], Client::default()).await;
        let mut names: Vec<String> = c
            .list_all_tools()
            .await
            .expect("tools/list")
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "check",
                "claim",
                "close",
                "commit",
                "release_mine",
                "renew",
                "status",
                "whoami"
            ]
        );

        let r = call(&c, "whoami", json!({})).await;
        assert_eq!(doc(&r)["session"], "sess-mine");
        assert_eq!(doc(&r)["active"], json!([]));

        // check: the edit hook's verdict, by lines or for the whole file.
        let r = call(
            &c,
            "check",
            json!({"path": "projets/plan.md", "lines": [7]}),
        )
        .await;
        assert_eq!(doc(&r)["refused"], true, "{}", text(&r));
        assert_eq!(doc(&r)["holders"][0]["session"], "sess-other");
        assert!(text(&r).contains("sess-other"), "{}", text(&r));
        let r = call(
            &c,
            "check",
            json!({"path": "projets/plan.md", "lines": [19, 19]}),
        )
        .await;
        assert_eq!(doc(&r)["refused"], false, "{}", text(&r));
        let r = call(&c, "check", json!({"path": "projets/plan.md"})).await;
        assert_eq!(doc(&r)["refused"], true, "{}", text(&r));
        let r = call(&c, "check", json!({"path": "agents/bob.md"})).await;
        assert_eq!(doc(&r)["refused"], false);

        // claim: granted, published to the remote.
        let r = call(
            &c,
            "claim",
            json!({"scopes": ["projets/plan.md#Risks"], "note": "risks"}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(doc(&r)["session"], "sess-mine");
        assert_eq!(scopes(&doc(&r)["opened"]), ["projets/plan.md#Risks"]);
        assert!(doc(&r)["commit"].is_string());
        assert!(remote_registry(bare.path()).contains("sess-mine"));

        // claim: refused, with the holder and the calls that can follow.
        let r = call(&c, "claim", json!({"scopes": ["projets/plan.md#Goals"]})).await;
        assert_eq!(r.is_error, Some(true));
        let d = doc(&r);
        assert_eq!(d["error"], "conflict");
        assert_eq!(d["conflicts"][0]["session"], "sess-other");
        assert_eq!(d["conflicts"][0]["agent"], "bob");
        assert!(d["conflicts"][0]["expires"].is_string());
        let next = d["next_calls"].as_array().expect("next calls");
        assert!(next.iter().any(|n| n["arguments"]["wait"] == 600), "{d}");
        assert!(
            text(&r).contains("held by session sess-other"),
            "{}",
            text(&r)
        );

        // The session's own section is free to edit now.
        let r = call(
            &c,
            "check",
            json!({"path": "projets/plan.md", "lines": [19]}),
        )
        .await;
        assert_eq!(doc(&r)["refused"], false);

        let r = call(&c, "renew", json!({"ttl": "4h"})).await;
        assert_eq!(scopes(&doc(&r)["renewed"]), ["projets/plan.md#Risks"]);

        let r = call(&c, "status", json!({})).await;
        let sessions: Vec<&str> = doc(&r)["active"]
            .as_array()
            .expect("active")
            .iter()
            .map(|c| c["session"].as_str().expect("session"))
            .collect();
        assert_eq!(sessions.len(), 2, "{sessions:?}");
        assert!(sessions.contains(&"sess-other") && sessions.contains(&"sess-mine"));
        assert_eq!(doc(&r)["sync"]["fetched"], true, "{}", doc(&r));
        assert!(text(&r).contains("Fetched from the remote"), "{}", text(&r));

        let r = c
            .read_resource(ReadResourceRequestParams::new("bsi://claims"))
            .await
            .expect("resources/read");
        let ResourceContents::TextResourceContents { text: body, .. } = &r.contents[0] else {
            panic!("not text");
        };
        let claims: Value = serde_json::from_str(body).expect("json");
        assert_eq!(claims["active"].as_array().expect("active").len(), 2);

        // An error is an MCP error carrying bsi's hint.
        let e = c
            .call_tool(
                CallToolRequestParams::new("claim")
                    .with_arguments(object(json!({"scopes": ["agents/"], "ttl": "9h"}))),
            )
            .await
            .expect_err("a TTL over 8h");
        let rmcp::ServiceError::McpError(e) = e else {
            panic!("{e:?}");
        };
        assert!(e.message.contains("hint:"), "{}", e.message);
        assert_eq!(e.data.as_ref().expect("data")["error"], "ttl");

        let r = call(&c, "close", json!({"scopes": ["projets/plan.md#Risks"]})).await;
        assert_eq!(scopes(&doc(&r)["closed"]), ["projets/plan.md#Risks"]);
        let r = call(&c, "whoami", json!({})).await;
        assert_eq!(doc(&r)["active"], json!([]));
        c.cancel().await.expect("close the client");
    });
    assert!(
        !b.active().iter().any(|r| r.contains("sess-mine")),
        "{}",
        b.registry()
    );
    assert!(b.history().iter().any(|h| h.contains("sess-mine")));
    assert!(
        !remote_registry(bare.path())
            .lines()
            .any(|l| l.contains("sess-mine") && l.contains("active"))
    );
    // open, renew, close: three registry commits.
    assert_eq!(b.commits(), commits + 3);
    assert!(b.last_subject().contains("close"), "{}", b.last_subject());
    assert_eq!(b.user_state(), before);
}

#[test]
fn a_claim_that_waits_is_granted_once_the_holder_closes_with_progress_meanwhile() {
    let b = Brain::new();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "sess-other"])
        .ok();
    runtime().block_on(async {
        let client = Client::default();
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], client.clone()).await;
        let args = object(json!({"scopes": ["projets/plan.md#Goals"], "wait": 60}));
        let handle = c
            .send_cancellable_request(
                ClientRequest::CallToolRequest(Request::new(
                    CallToolRequestParams::new("claim").with_arguments(args),
                )),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("send");
        // The holder closes once the server has said it waits.
        tokio::time::timeout(Duration::from_secs(30), client.progressed.notified())
            .await
            .expect("a progress notification");
        let closer = tokio::process::Command::from(b.command(&["close", "sess-other"]))
            .output()
            .await
            .expect("close");
        assert!(closer.status.success());
        let r = handle.await_response().await.expect("response");
        let rmcp::model::ServerResult::CallToolResult(r) = r else {
            panic!("{r:?}");
        };
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(scopes(&doc(&r)["opened"]), ["projets/plan.md#Goals"]);
        assert!(client.progress.load(Ordering::SeqCst) >= 1);
        c.cancel().await.expect("close the client");
    });
    assert!(b.active().iter().any(|r| r.contains("sess-mine")));
}

#[test]
fn a_subscriber_hears_when_the_registry_branch_moves() {
    let b = Brain::new();
    runtime().block_on(async {
        let client = Client::default();
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], client.clone()).await;
        // The subscription of the protocol versions with a handshake.
        #[allow(deprecated)]
        let subscribed = c
            .subscribe(SubscribeRequestParams::new("bsi://claims"))
            .await;
        subscribed.expect("subscribe");
        // Another session claims, from its own shell.
        let o = b
            .command(&["open", "agents/", "--session", "sess-other"])
            .output()
            .expect("open");
        assert!(o.status.success());
        tokio::time::timeout(Duration::from_secs(30), client.updated.notified())
            .await
            .expect("notifications/resources/updated");
        c.cancel().await.expect("close the client");
    });
}

/// Claude Code's session-start hook for its chat `chat`, run as a child of
/// this test process (as the server will be): the bsi session it names.
fn session_start(b: &Brain, chat: &str) -> String {
    let start = json!({
        "session_id": chat, "cwd": b.path(), "hook_event_name": "SessionStart",
        "source": "startup"
    })
    .to_string();
    let r = with_stdin(
        b,
        &["hook", "session-start", "--tool", "claude"],
        &start,
        &[],
    );
    r.ok();
    let context = r.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context")
        .to_string();
    context
        .split("Your bsi session: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("the session named")
        .to_string()
}

#[test]
fn the_server_acts_for_the_session_the_tools_session_start_hook_named() {
    // The session-start hook and the server are both children of the tool
    // (here: this test process); no BSI_SESSION anywhere.
    let b = Brain::new();
    let session = session_start(&b, "chat-1");
    runtime().block_on(async {
        let c = connect(&b, &["--tool", "claude"], &[], Client::default()).await;
        let r = call(&c, "whoami", json!({})).await;
        assert_eq!(doc(&r)["session"], session.as_str(), "{}", text(&r));
        let r = call(&c, "claim", json!({"scopes": ["projets/plan.md#Goals"]})).await;
        assert_eq!(doc(&r)["session"], session.as_str(), "{}", text(&r));
        c.cancel().await.expect("close the client");
    });
    // The claim made through MCP is the agent's own for the edit hook.
    let mut ev: Value = serde_json::from_str(&replace_event(
        &b,
        "claude",
        "projets/plan.md",
        "goal text",
        "better goal text",
    ))
    .expect("event");
    ev["session_id"] = json!("chat-1");
    let r = with_stdin(
        &b,
        &["hook", "edit", "--tool", "claude"],
        &ev.to_string(),
        &[],
    );
    r.ok();
    assert!(!r.stdout.contains("\"deny\""), "{}", r.stdout);
    // Another chat of the tool is refused the same edit.
    ev["session_id"] = json!("chat-2");
    let r = with_stdin(
        &b,
        &["hook", "edit", "--tool", "claude"],
        &ev.to_string(),
        &[],
    );
    assert!(r.stdout.contains("\"deny\""), "{}", r.stdout);
}

#[test]
fn agent_install_registers_the_server_beside_the_users_own_and_uninstall_takes_it_out() {
    let cases = [
        ("claude", ".mcp.json"),
        ("codex", ".codex/config.toml"),
        ("gemini", ".gemini/settings.json"),
        ("cursor", ".cursor/mcp.json"),
    ];
    for (tool, rel) in cases {
        let b = Brain::new();
        let status = b.git(&["status", "--porcelain"]);
        b.bsi(&["agent", "install", tool])
            .ok()
            .stdout_has(&format!("registered the MCP server `bsi mcp` in {rel}"));
        let text = b.read(rel);
        if tool == "codex" {
            assert_eq!(
                text,
                "[mcp_servers.bsi]\ncommand = \"bsi\"\nargs = [\"mcp\", \"--tool\", \"codex\"]\n"
            );
        } else {
            let v: Value = serde_json::from_str(&text).expect("json");
            // `bsi` from the PATH: no path of this machine in a shared file.
            assert_eq!(v["mcpServers"]["bsi"]["command"], "bsi", "{tool}");
            assert_eq!(
                v["mcpServers"]["bsi"]["args"],
                json!(["mcp", "--tool", tool])
            );
        }
        b.bsi(&["agent", "install", tool])
            .ok()
            .stdout_has("is already in");
        b.bsi(&["agent", "uninstall", tool])
            .ok()
            .stdout_has(&format!("took the MCP server `bsi mcp` out of {rel}"));
        assert!(!b.path().join(rel).exists(), "{tool}: {rel}");
        assert_eq!(b.git(&["status", "--porcelain"]), status, "{tool}");
    }
    // The user's servers and keys stay, in their order and indentation.
    let b = Brain::new();
    let mine = "{\n    \"mcpServers\": {\n        \"notes\": {\n            \"command\": \"notes-server\"\n        }\n    },\n    \"other\": true\n}\n";
    b.write(".mcp.json", mine);
    let toml = "# my servers\n[mcp_servers.notes]\ncommand = \"notes-server\" # local\n";
    b.write(".codex/config.toml", toml);
    b.bsi(&["agent", "install", "claude"]).ok();
    b.bsi(&["agent", "install", "codex"]).ok();
    let v: Value = serde_json::from_str(&b.read(".mcp.json")).expect("json");
    assert_eq!(v["mcpServers"]["notes"]["command"], "notes-server");
    assert_eq!(v["other"], true);
    assert!(b.read(".codex/config.toml").starts_with(toml));
    b.bsi(&["agent", "uninstall", "claude"]).ok();
    b.bsi(&["agent", "uninstall", "codex"]).ok();
    assert_eq!(b.read(".mcp.json"), mine);
    assert_eq!(b.read(".codex/config.toml"), toml);
    // A server of the user's named bsi is left alone.
    let theirs = "{\"mcpServers\": {\"bsi\": {\"command\": \"node\", \"args\": [\"x.js\"]}}}\n";
    b.write(".cursor/mcp.json", theirs);
    b.bsi(&["agent", "install", "cursor"])
        .ok()
        .stdout_has("another MCP server named bsi");
    b.bsi(&["agent", "uninstall", "cursor"]).ok();
    assert_eq!(b.read(".cursor/mcp.json"), theirs);
}

/// The active rows of the registry that name `word`.
fn rows_with(b: &Brain, word: &str) -> Vec<String> {
    b.active()
        .into_iter()
        .filter(|r| r.contains(word))
        .collect()
}

#[test]
fn scopes_are_data_never_options_and_a_file_named_like_an_option_is_claimable() {
    let b = Brain::new();
    b.write("-draft.md", "# Draft\n");
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], Client::default()).await;
        let r = call(
            &c,
            "claim",
            json!({"scopes": ["--session=s1", "--agent=alice", "agents/"]}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        // The scopes as written, for the server's own session.
        assert_eq!(doc(&r)["session"], "sess-mine", "{}", text(&r));
        assert_eq!(
            scopes(&doc(&r)["opened"]),
            ["--session=s1", "--agent=alice", "agents/"]
        );
        let r = call(&c, "claim", json!({"scopes": ["-draft.md"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(scopes(&doc(&r)["opened"]), ["-draft.md"]);
        assert_eq!(doc(&r)["session"], "sess-mine");
        c.cancel().await.expect("close the client");
    });
    // Every claim is the server's session's, under its own agent name.
    let status = b.bsi(&["status", "--json"]).json();
    let active = status["active"].as_array().expect("active");
    assert_eq!(active.len(), 4, "{status}");
    for c in active {
        assert_eq!(c["session"], "sess-mine", "{c}");
        assert_ne!(c["agent"], "alice", "{c}");
    }
}

/// What the registry's IO says beside an outcome reaches the model in the
/// tool's result, as the CLI says it on stderr: here the lock a killed bsi
/// left on the registry branch, removed by the claim that found it.
#[test]
fn a_note_of_the_registrys_io_reaches_the_model_in_the_result() {
    let b = Brain::new();
    let lock = b.path().join(".git/refs/heads/brain-index.lock");
    std::fs::write(
        b.path().join(".git/bsi/lock"),
        "busy write\npid 4000000000\nstart 1\n",
    )
    .expect("record");
    std::fs::write(&lock, "").expect("lock");
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], Client::default()).await;
        let r = call(&c, "claim", json!({"scopes": ["agents/"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert!(
            text(&r)
                .contains("note: removed 1 lock file(s) a killed bsi left on the registry branch"),
            "{}",
            text(&r)
        );
        // Said once: the next call has nothing more to say.
        let r = call(&c, "claim", json!({"scopes": ["README.md"]})).await;
        assert!(!text(&r).contains("note:"), "{}", text(&r));
        c.cancel().await.expect("close the client");
    });
    assert!(!lock.exists());
    assert_eq!(b.active().len(), 2);
}

#[test]
fn three_claims_sent_together_without_a_session_make_one_session() {
    let b = Brain::new();
    let session = runtime().block_on(async {
        // No BSI_SESSION, no tool session: the first claim names one.
        let c = connect(&b, &[], &[], Client::default()).await;
        let (x, y, z) = tokio::join!(
            call(&c, "claim", json!({"scopes": ["agents/alice.md"]})),
            call(&c, "claim", json!({"scopes": ["agents/bob.md"]})),
            call(&c, "claim", json!({"scopes": ["projets/plan.md#Goals"]})),
        );
        let sessions: Vec<String> = [&x, &y, &z]
            .iter()
            .map(|r| {
                assert_ne!(r.is_error, Some(true), "{}", text(r));
                doc(r)["session"].as_str().expect("session").to_string()
            })
            .collect();
        assert_eq!(sessions[0], sessions[1], "{sessions:?}");
        assert_eq!(sessions[0], sessions[2], "{sessions:?}");
        let r = call(&c, "whoami", json!({})).await;
        assert_eq!(doc(&r)["session"], sessions[0].as_str());
        assert_eq!(doc(&r)["active"].as_array().expect("active").len(), 3);
        // One close ends them all: nothing stays active for nobody.
        let r = call(&c, "close", json!({})).await;
        assert_eq!(scopes(&doc(&r)["closed"]).len(), 3, "{}", text(&r));
        c.cancel().await.expect("close the client");
        sessions[0].clone()
    });
    assert!(b.active().is_empty(), "{}", b.registry());
    assert_eq!(
        b.history().iter().filter(|h| h.contains(&session)).count(),
        3
    );
}

#[test]
fn a_close_of_two_scopes_where_one_is_held_says_what_closed_and_what_did_not() {
    let b = Brain::new();
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], Client::default()).await;
        let r = call(&c, "claim", json!({"scopes": ["agents/"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        let r = call(&c, "close", json!({"scopes": ["agents/", "projets/"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        let d = doc(&r);
        assert_eq!(scopes(&d["closed"]), ["agents/"], "{d}");
        assert_eq!(d["not_closed"][0]["scope"], "projets/", "{d}");
        assert_eq!(d["not_closed"][0]["error"], "not-found", "{d}");
        assert!(text(&r).contains("Not closed: projets/"), "{}", text(&r));
        c.cancel().await.expect("close the client");
    });
    assert!(rows_with(&b, "sess-mine").is_empty(), "{}", b.registry());
    assert!(b.history().iter().any(|h| h.contains("sess-mine")));
}

#[test]
fn a_cancelled_wait_ends_with_its_client_and_is_never_granted() {
    let b = Brain::new();
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "sess-other"])
        .ok();
    runtime().block_on(async {
        // The server as a process of the test's own, to see it end.
        let mut cmd = tokio::process::Command::from(b.command(&["mcp"]));
        cmd.env("BSI_SESSION", "sess-mine")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("start bsi mcp");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let client = Client::default();
        let c = client
            .clone()
            .serve((stdout, stdin))
            .await
            .expect("initialize");
        let args = object(json!({"scopes": ["projets/plan.md#Goals"], "wait": 600}));
        let handle = c
            .send_cancellable_request(
                ClientRequest::CallToolRequest(Request::new(
                    CallToolRequestParams::new("claim").with_arguments(args),
                )),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("send");
        tokio::time::timeout(Duration::from_secs(30), client.progressed.notified())
            .await
            .expect("a progress notification");
        // It waits in the queue.
        let queued = b.bsi(&["status", "--json"]).json();
        assert_eq!(queued["queue"][0]["session"], "sess-mine", "{queued}");
        handle
            .cancel(Some("no longer needed".into()))
            .await
            .expect("cancel");
        c.cancel().await.expect("close the client");
        // stdin is closed: the server ends, long before its wait would.
        let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
            .await
            .expect("the server ends once its client is gone")
            .expect("wait");
        assert!(status.success(), "{status:?}");
    });
    // The place in the queue was given up.
    let after = b.bsi(&["status", "--json"]).json();
    assert_eq!(after["queue"], json!([]), "{after}");
    // The holder closes: nobody is granted the section.
    b.bsi(&["close", "sess-other"]).ok();
    std::thread::sleep(Duration::from_secs(3));
    assert!(rows_with(&b, "sess-mine").is_empty(), "{}", b.registry());
    assert!(b.active().is_empty(), "{}", b.registry());
}

// --- the stateless revision (2026-07-28), raw JSON-RPC ----------------------------

/// How long a raw client waits for the server's next line or its end.
const PATIENCE: Duration = Duration::from_secs(60);

/// A client of the stateless revision: the test process writes JSON-RPC
/// lines on `bsi mcp`'s stdin and reads its stdout, with no `initialize`.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    /// What the server wrote besides the answers awaited.
    notes: Vec<Value>,
    next: i64,
}

/// The `_meta` of a 2026-07-28 request naming `version`.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

impl Raw {
    /// `bsi mcp ARGS` in the brain, with `env`.
    fn start(b: &Brain, args: &[&str], env: &[(&str, &str)]) -> Raw {
        use std::io::BufRead;
        let mut all = vec!["mcp"];
        all.extend_from_slice(args);
        let mut cmd = b.command(&all);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start bsi mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines,
            notes: Vec::new(),
            next: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to bsi mcp");
        stdin.flush().expect("flush");
    }

    /// The next line the server writes, as JSON.
    fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("a line from bsi mcp");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends `method` with `params` (and `meta` as its `_meta` unless null)
    /// and returns the answer to it; notifications meanwhile are kept.
    fn ask(&mut self, method: &str, mut params: Value, meta: Value) -> Value {
        self.next += 1;
        let id = self.next;
        if !meta.is_null() {
            params["_meta"] = meta;
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.read();
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
            self.notes.push(m);
        }
    }

    /// A 2026-07-28 request: its result, which must be one.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let m = self.ask(method, params, meta("2026-07-28"));
        assert!(m.get("error").is_none(), "{method}: {m}");
        m["result"].clone()
    }

    /// `tools/call` of `tool` with `args`: its result.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// Closes stdin and waits for the server's end: its status and stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        use std::io::Read;
        drop(self.stdin.take());
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "bsi mcp did not end with its client"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        (status, err)
    }
}

#[test]
fn a_stateless_client_lists_claims_and_reads_status_as_the_agents_session_without_initialize() {
    let b = Brain::new();
    let bare = b.publish_to_bare();
    crate::agent_hook::other_holds(&b, "projets/plan.md#Goals");
    // The agent's session comes from the process that started the server:
    // the tool's session-start hook named it; no BSI_SESSION, no handshake.
    let session = session_start(&b, "chat-1");
    let before = b.user_state();
    let commits = b.commits();
    let mut c = Raw::start(&b, &["--tool", "claude"], &[]);

    // Discovery replaces the handshake: the revisions served, who serves.
    let d = c.result("server/discover", json!({}));
    let versions = d["supportedVersions"]
        .as_array()
        .expect("supportedVersions");
    for v in ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(versions.contains(&json!(v)), "{v}: {d}");
    }
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "bsi",
        "{d}"
    );
    assert!(d["capabilities"]["tools"].is_object(), "{d}");

    let r = c.result("tools/list", json!({}));
    let mut names: Vec<&str> = r["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "check",
            "claim",
            "close",
            "commit",
            "release_mine",
            "renew",
            "status",
            "whoami"
        ]
    );

    let r = c.call("whoami", json!({}));
    assert_eq!(r["structuredContent"]["session"], session.as_str(), "{r}");

    let r = c.call(
        "claim",
        json!({"scopes": ["projets/plan.md#Risks"], "note": "risks"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["resultType"], "complete", "{r}");
    let doc = &r["structuredContent"];
    assert_eq!(doc["session"], session.as_str(), "{r}");
    assert_eq!(scopes(&doc["opened"]), ["projets/plan.md#Risks"]);
    assert!(remote_registry(bare.path()).contains(&session));

    // Refused: a result the model reads, naming the holder.
    let r = c.call("claim", json!({"scopes": ["projets/plan.md#Goals"]}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["conflicts"][0]["session"],
        "sess-other"
    );
    assert!(
        r["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("held by session sess-other"),
        "{r}"
    );

    let r = c.call("status", json!({}));
    let mut sessions: Vec<&str> = r["structuredContent"]["active"]
        .as_array()
        .expect("active")
        .iter()
        .map(|c| c["session"].as_str().expect("session"))
        .collect();
    sessions.sort_unstable();
    let mut expected = vec!["sess-other", session.as_str()];
    expected.sort_unstable();
    assert_eq!(sessions, expected, "{r}");

    // A revision bsi does not speak: refused with the ones it does.
    let m = c.ask("tools/list", json!({}), meta("2099-01-01"));
    assert_eq!(m["error"]["code"], -32022, "{m}");
    let served = m["error"]["data"]["supported"]
        .as_array()
        .expect("supported");
    assert!(served.contains(&json!("2026-07-28")) && served.contains(&json!("2025-11-25")));
    // A request of the stateless revision without its client capabilities.
    let mut partial = meta("2026-07-28");
    partial
        .as_object_mut()
        .expect("meta")
        .remove("io.modelcontextprotocol/clientCapabilities");
    let m = c.ask("tools/list", json!({}), partial);
    assert_eq!(m["error"]["code"], -32602, "{m}");
    assert!(
        m["error"]["message"]
            .as_str()
            .expect("message")
            .contains("clientCapabilities"),
        "{m}"
    );

    // The client goes: the server ends with it, quietly.
    let (status, err) = c.finish();
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("error"), "{err}");

    let mine = rows_with(&b, &session);
    assert_eq!(mine.len(), 1, "{}", b.registry());
    assert!(mine[0].contains("projets/plan.md#Risks"), "{mine:?}");
    assert_eq!(rows_with(&b, "sess-other").len(), 1, "{}", b.registry());
    // One registry commit: the claim granted.
    assert_eq!(b.commits(), commits + 1);
    assert_eq!(b.user_state(), before);
}

#[test]
fn a_stateless_listener_hears_when_the_registry_branch_moves() {
    let b = Brain::new();
    let mut c = Raw::start(&b, &[], &[("BSI_SESSION", "sess-mine")]);
    c.next += 1;
    let id = c.next;
    let mut params = json!({"notifications": {"resourceSubscriptions": ["bsi://claims"]}});
    params["_meta"] = meta("2026-07-28");
    c.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}),
    );
    let ack = c.read();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["bsi://claims"]),
        "{ack}"
    );
    // Another session claims, from its own shell.
    b.bsi(&["open", "agents/", "--session", "sess-other"]).ok();
    let update = c.read();
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], "bsi://claims");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{update}"
    );
    let (status, err) = c.finish();
    assert!(status.success(), "{status:?}: {err}");
}

#[test]
fn the_2025_11_25_handshake_serves_the_same_tools_for_the_same_session() {
    let b = Brain::new();
    let before = b.user_state();
    runtime().block_on(async {
        let c = connect(
            &b,
            &[],
            &[("BSI_SESSION", "sess-mine")],
            Client::speaking(ProtocolVersion::V_2025_11_25),
        )
        .await;
        let info = c.peer_info().expect("the server's answer to initialize");
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
        assert_eq!(info.server_info.as_ref().expect("server info").name, "bsi");
        assert_eq!(c.list_all_tools().await.expect("tools/list").len(), 8);
        let r = call(&c, "claim", json!({"scopes": ["agents/"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        assert_eq!(doc(&r)["session"], "sess-mine");
        let r = call(&c, "status", json!({"offline": true})).await;
        assert_eq!(doc(&r)["active"][0]["session"], "sess-mine", "{}", doc(&r));
        c.cancel().await.expect("close the client");
    });
    assert_eq!(rows_with(&b, "sess-mine").len(), 1, "{}", b.registry());
    assert_eq!(b.user_state(), before);
}

#[test]
fn a_client_that_closes_without_a_request_ends_the_server_quietly() {
    let b = Brain::new();
    let (status, err) = Raw::start(&b, &[], &[]).finish();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(err, "");
}

#[test]
fn a_client_refused_its_every_request_is_told_why_and_what_to_do() {
    let b = Brain::new();
    let mut c = Raw::start(&b, &[], &[]);
    let m = c.ask("tools/list", json!({}), meta("2099-01-01"));
    assert_eq!(m["error"]["code"], -32022, "{m}");
    let (status, err) = c.finish();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: the MCP client closed after bsi refused its requests"),
        "{err}"
    );
    assert!(err.contains("2099-01-01"), "{err}");
    assert!(
        err.contains("2025-11-25") && err.contains("2026-07-28"),
        "{err}"
    );
    assert!(!err.contains("permissions"), "{err}");
    // No request carrying its version: both ways to begin are named.
    let mut c = Raw::start(&b, &[], &[]);
    let m = c.ask("tools/list", json!({}), Value::Null);
    assert_eq!(m["error"]["code"], -32602, "{m}");
    let (status, err) = c.finish();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("hint: the client must begin with `initialize`"),
        "{err}"
    );
    assert!(b.active().is_empty(), "{}", b.registry());
}

#[test]
fn an_initialize_asking_for_the_stateless_revision_is_answered_with_the_newest_handshake() {
    let b = Brain::new();
    let mut c = Raw::start(&b, &[], &[("BSI_SESSION", "sess-mine")]);
    let m = c.ask(
        "initialize",
        json!({
            "protocolVersion": "2026-07-28",
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "1.0.0"}
        }),
        Value::Null,
    );
    assert_eq!(m["result"]["protocolVersion"], "2025-11-25", "{m}");
    assert_eq!(m["result"]["serverInfo"]["name"], "bsi", "{m}");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The session's requests need no `_meta` then.
    let m = c.ask(
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
        Value::Null,
    );
    assert_eq!(
        m["result"]["structuredContent"]["session"], "sess-mine",
        "{m}"
    );
    let (status, err) = c.finish();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(err, "");
}

/// `claim`'s `wait` has `bsi open --wait`'s range, in the same words: the
/// schema says 24 hours, a longer wait is refused (not cut short without a
/// word), and the CLI refuses the same value.
#[test]
fn the_wait_of_a_claim_has_the_command_lines_bound() {
    let b = Brain::new();
    crate::agent_hook::other_holds(&b, "projets/plan.md#Goals");
    let cli = b.bsi(&[
        "open",
        "projets/plan.md#Goals",
        "--session",
        "sess-mine",
        "--wait",
        "86401s",
    ]);
    cli.code(2).stderr_has("longer than 24h");
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-mine")], Client::default()).await;
        let tools = c.list_all_tools().await.expect("tools/list");
        let claim = tools
            .iter()
            .find(|t| t.name == "claim")
            .expect("the claim tool");
        assert_eq!(
            claim.input_schema["properties"]["wait"]["maximum"],
            json!(86_400)
        );
        let e = c
            .call_tool(
                CallToolRequestParams::new("claim".to_string()).with_arguments(object(json!({
                    "scopes": ["projets/plan.md#Goals"],
                    "wait": 86_401
                }))),
            )
            .await
            .expect_err("a wait past 24h is refused");
        let said = e.to_string();
        assert!(said.contains("longer than 24h"), "{said}");
        c.cancel().await.expect("close the client");
    });
    // Refused before anything was asked: no place in the queue.
    assert!(b.registry().contains("| sess-other |"), "{}", b.registry());
    assert!(!b.registry().contains("sess-mine"), "{}", b.registry());
}

/// A session named to the server with no agent name takes the agent its
/// claims were recorded by, as `bsi open` does: one session's claims stay
/// one agent's whatever the door.
#[test]
fn a_named_session_keeps_its_recorded_agent_through_mcp_as_through_the_cli() {
    let b = Brain::new();
    b.bsi(&[
        "open",
        "agents/",
        "--session",
        "sess-s1",
        "--agent",
        "claude",
    ])
    .ok();
    // The CLI, with no agent name: the recorded one.
    b.bsi(&["open", "projets/plan.md#Goals", "--session", "sess-s1"])
        .ok();
    runtime().block_on(async {
        let c = connect(&b, &[], &[("BSI_SESSION", "sess-s1")], Client::default()).await;
        let r = call(&c, "claim", json!({"scopes": ["projets/plan.md#Risks"]})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        c.cancel().await.expect("close the client");
    });
    let rows = b.active();
    for scope in ["agents/", "projets/plan.md#Goals", "projets/plan.md#Risks"] {
        let row = rows
            .iter()
            .find(|r| r.contains(&format!("| {scope} |")))
            .unwrap_or_else(|| panic!("no row for {scope}: {rows:?}"));
        assert!(row.contains("| claude |"), "{row}");
    }
}

/// A one-shot client (each call a new server, as a stateless client that
/// starts `bsi mcp` per call does) names the session `claim` returned in
/// its later calls: `renew` and `close` act for it. Without it, the call
/// is refused with the argument to give, not a shell command.
#[test]
fn a_one_shot_client_names_its_session_in_later_calls() {
    let b = Brain::new();
    let mut c = Raw::start(&b, &[], &[]);
    let r = c.call("claim", json!({"scopes": ["agents/"], "note": "tidying"}));
    let session = r["structuredContent"]["session"]
        .as_str()
        .expect("a session")
        .to_string();
    c.finish();
    // A new server knows no session: told to give `session`.
    let mut c = Raw::start(&b, &[], &[]);
    let m = c.ask(
        "tools/call",
        json!({"name": "close", "arguments": {}}),
        meta("2026-07-28"),
    );
    let said = m["error"]["message"]
        .as_str()
        .expect("an error")
        .to_string();
    assert!(
        said.contains("as `session`: the id `claim` returned"),
        "{m}"
    );
    assert!(!said.contains("bsi close SESSION"), "{m}");
    // Its steps as data: the one a tool takes is a call of `status`.
    let data = &m["error"]["data"];
    assert_eq!(data["next"][0]["command"], Value::Null, "{m}");
    assert_eq!(data["next_calls"][0]["tool"], "status", "{m}");
    assert_eq!(b.active().len(), 1, "{:?}", b.active());
    c.finish();
    // Named: renew, then close, each from a server of its own.
    let mut c = Raw::start(&b, &[], &[]);
    let r = c.call("renew", json!({"ttl": "4h", "session": session}));
    assert_eq!(r["structuredContent"]["session"], session.as_str(), "{r}");
    c.finish();
    let mut c = Raw::start(&b, &[], &[]);
    let r = c.call("close", json!({"session": session}));
    assert_eq!(r["structuredContent"]["session"], session.as_str(), "{r}");
    c.finish();
    assert!(b.active().is_empty(), "{:?}", b.active());
    let history = b.history();
    assert!(
        history
            .iter()
            .any(|row| row.contains(&session) && row.contains("agents/")),
        "{history:?}"
    );
    assert_eq!(b.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_claim_whose_filing_lands_late_where_the_clones_meet_is_carried_out_once() {
    let n = crate::remote::Net::new();
    let place = n.bare.path().join("bsi/writes/brain-index/requests");
    let late = |place: &std::path::Path| {
        std::fs::read_dir(place).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".req"))
                .count()
        })
    };
    // Filing a request where the clones of this machine meet answers after
    // 3 s, as on a disk gone slow: the server stops waiting after its 1 s
    // connection timeout, carries its writes out alone, and each late
    // filing lands there while the server still runs.
    let mut c = Raw::start(
        &n.a,
        &[],
        &[
            ("BSI_SESSION", "sess-late"),
            ("BSI_CONNECTION_TIMEOUT", "1s"),
            ("BSI_FAULT_POINT", "meeting-file:late=3000"),
        ],
    );
    let r = c.call("claim", json!({"scopes": ["notes.md"]}));
    assert_eq!(r["isError"], Value::Bool(false), "{r}");
    let r = c.call("close", json!({"session": "sess-late"}));
    assert_eq!(r["isError"], Value::Bool(false), "{r}");
    let started = std::time::Instant::now();
    while late(&place) == 0 && started.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(late(&place) > 0, "the late filing never landed");
    let commits = n.git(&["rev-list", "--count", "brain-index"]);
    // Another clone's write finds the late requests where they meet, their
    // writer alive: it carries out its own only.
    n.b.bsi(&["open", "other.md", "--session", "sess-other"])
        .ok();
    assert_eq!(late(&place), 0, "the late requests were taken");
    let (status, _) = c.finish();
    assert!(status.success(), "{status:?}");
    let after: usize = n
        .git(&["rev-list", "--count", "brain-index"])
        .trim()
        .parse()
        .expect("a count");
    let before: usize = commits.trim().parse().expect("a count");
    assert_eq!(after, before + 1, "one commit: the other clone's claim");
    n.b.bsi(&["sync"]).ok();
    assert!(
        rows_with(&n.b, "sess-late").is_empty(),
        "{}\n{}",
        n.b.registry(),
        n.git(&["log", "--format=%H %ct%n%B", "brain-index"])
    );
    assert_eq!(rows_with(&n.b, "sess-other").len(), 1, "{}", n.b.registry());
}
