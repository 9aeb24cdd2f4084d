//! How a client's start with `bsi mcp` ends when it starts nothing: what
//! the server heard before a lifecycle began, and what that says.
//!
//! The SDK serves both lifecycles: the `initialize` handshake (2024-11-05 …
//! 2025-11-25) and the stateless revision (2026-07-28), where the first
//! request carrying its protocol version and client capabilities in `_meta`
//! is served as it comes. Until one of them begins, the SDK answers what it
//! can (`ping`, `server/discover`) and refuses the rest (a version bsi does
//! not speak, a request without that `_meta`). When the client closes then,
//! [`Heard`] tells a client that asked nothing (a quiet end) from one whose
//! every request was refused (an error that names why and what to do).

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, ServerJsonRpcMessage};
use rmcp::service::ServerInitializeError;
use rmcp::transport::Transport;

use bsi_core::error::exit;

/// What the server heard and said on a transport.
#[derive(Default)]
pub(super) struct Log {
    /// Messages received.
    received: usize,
    /// The last message sent, when it was an error: the refusal the client
    /// was left with.
    refused: Option<ErrorData>,
}

/// A transport that keeps a [`Log`] of what passes through it.
pub(super) struct Heard<T> {
    inner: T,
    log: Arc<Mutex<Log>>,
}

impl<T> Heard<T> {
    pub(super) fn new(inner: T) -> (Self, Arc<Mutex<Log>>) {
        let log = Arc::new(Mutex::new(Log::default()));
        (
            Heard {
                inner,
                log: log.clone(),
            },
            log,
        )
    }
}

fn locked(log: &Mutex<Log>) -> std::sync::MutexGuard<'_, Log> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Heard<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        locked(&self.log).refused = match &item {
            ServerJsonRpcMessage::Error(e) => Some(e.error.clone()),
            _ => None,
        };
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        let log = self.log.clone();
        let next = self.inner.receive();
        async move {
            let message = next.await;
            if message.is_some() {
                locked(&log).received += 1;
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// How to begin, in either lifecycle.
const HOW_TO_BEGIN: &str = "begin with `initialize` (protocol 2024-11-05 to 2025-11-25), or carry `io.modelcontextprotocol/protocolVersion` and `io.modelcontextprotocol/clientCapabilities` in the `_meta` of every request (2026-07-28)";

/// Why a start of `bsi mcp` ended without serving anything.
#[derive(Debug, thiserror::Error)]
pub(super) enum Ended {
    /// Every request the client sent was refused, then it closed.
    #[error("the MCP client closed after bsi refused its requests: {message}")]
    Refused {
        /// The last refusal, as sent.
        message: String,
        /// The versions asked and served, for a refused version.
        versions: Option<(String, String)>,
    },
    /// The client's first message was no request.
    #[error("the MCP client began with {what}, not a request")]
    NoRequest {
        /// What it sent.
        what: String,
    },
    /// Writing to, or reading from, the client failed.
    #[error("the MCP client's pipe failed while {context}: {why}")]
    Pipe {
        /// What the server was doing.
        context: String,
        /// The transport's words.
        why: String,
    },
    /// The server's own loop stopped.
    #[error("the MCP server stopped abnormally: {0}")]
    Abnormal(String),
}

impl Ended {
    /// What to do next.
    pub(super) fn hint(&self) -> String {
        match self {
            Ended::Refused {
                versions: Some((asked, served)),
                ..
            } => format!(
                "bsi mcp speaks the protocol versions {served}, not {asked}: set the client to one of them, or use a bsi that speaks {asked} (`bsi --version` names this one)"
            ),
            Ended::Refused { versions: None, .. } | Ended::NoRequest { .. } => {
                format!("the client must {HOW_TO_BEGIN}")
            }
            Ended::Pipe { .. } => {
                "the agent tool stopped reading or writing its bsi server: restart the tool, which starts `bsi mcp` again".into()
            }
            Ended::Abnormal(_) => {
                "restart the agent tool, which starts `bsi mcp` again; `bsi status` shows the claims as they stand, whatever a call cut short did".into()
            }
        }
    }

    /// The exit code.
    pub(super) fn code(&self) -> u8 {
        exit::ERROR
    }
}

/// What a start that served nothing comes to: `None` for a client that
/// closed having asked nothing, or having been answered (a probe of
/// `server/discover` or `ping`): a quiet end.
pub(super) fn ended(e: ServerInitializeError, log: &Mutex<Log>) -> Option<Ended> {
    match e {
        ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled => {
            let log = locked(log);
            if log.received == 0 {
                return None;
            }
            log.refused.as_ref().map(refused)
        }
        ServerInitializeError::ExpectedInitializeRequest(m) => Some(Ended::NoRequest {
            what: m.map_or_else(|| "nothing".into(), |m| describe(&m)),
        }),
        // The SDK answered `initialize` with this error already.
        ServerInitializeError::InitializeFailed(e) => Some(refused(&e)),
        ServerInitializeError::TransportError { error, context } => Some(Ended::Pipe {
            context: context.into_owned(),
            why: error.to_string(),
        }),
        other => Some(Ended::Abnormal(other.to_string())),
    }
}

/// A refusal sent as the client's last word from the server.
fn refused(e: &ErrorData) -> Ended {
    let versions = (e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
        .then(|| {
            let data = e.data.as_ref()?;
            let asked = data["requested"].as_str()?.to_string();
            let served: Vec<&str> = data["supported"]
                .as_array()?
                .iter()
                .filter_map(|v| v.as_str())
                .collect();
            Some((asked, served.join(", ")))
        })
        .flatten();
    let message = match &versions {
        Some((asked, _)) => format!("{} {asked}", e.message),
        None => e.message.to_string(),
    };
    Ended::Refused { message, versions }
}

/// A message as the words `the notification notifications/x`.
fn describe(m: &ClientJsonRpcMessage) -> String {
    let v = serde_json::to_value(m).unwrap_or_default();
    match (v.get("method").and_then(|m| m.as_str()), m) {
        (Some(method), ClientJsonRpcMessage::Notification(_)) => {
            format!("the notification `{method}`")
        }
        (_, ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)) => {
            "a response to no request of bsi's".into()
        }
        _ => "a message bsi could not read".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ProtocolVersion;

    fn log(received: usize, refused: Option<ErrorData>) -> Mutex<Log> {
        Mutex::new(Log { received, refused })
    }

    #[test]
    fn a_client_that_asked_nothing_or_was_answered_ends_quietly() {
        let closed = || ServerInitializeError::ConnectionClosed("initialize request".into());
        assert!(ended(closed(), &log(0, None)).is_none());
        // A `server/discover` answered, then gone: a probe.
        assert!(ended(closed(), &log(1, None)).is_none());
    }

    #[test]
    fn a_refused_version_names_the_versions_served_and_the_way_on() {
        let e = ErrorData::unsupported_protocol_version(
            serde_json::from_value(serde_json::json!("2099-01-01")).expect("a version"),
            &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28],
        );
        let closed = ServerInitializeError::ConnectionClosed("initialize request".into());
        let end = ended(closed, &log(1, Some(e))).expect("an error");
        assert!(end.to_string().contains("2099-01-01"), "{end}");
        let hint = end.hint();
        assert!(hint.contains("2025-11-25, 2026-07-28"), "{hint}");
        assert!(!hint.contains("permissions"), "{hint}");
        assert_eq!(end.code(), exit::ERROR);
    }

    #[test]
    fn a_request_without_its_meta_is_told_both_ways_to_begin() {
        let e = ErrorData::invalid_params(
            "request _meta is missing or has malformed required fields: io.modelcontextprotocol/protocolVersion",
            None,
        );
        let closed = ServerInitializeError::ConnectionClosed("initialize request".into());
        let end = ended(closed, &log(2, Some(e))).expect("an error");
        assert!(end.hint().contains("`initialize`"), "{}", end.hint());
        assert!(end.hint().contains("2026-07-28"), "{}", end.hint());
    }
}
