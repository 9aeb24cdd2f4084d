//! Commit message trailers (`BSI-Session: <id>`), written and read here
//! only: the trailer a commit hook adds to a user's commit, and the block
//! bsi writes on its registry commits and `log` reads back. Pure: text in,
//! text out.

/// The trailer that ties a commit to a session.
pub const SESSION: &str = "BSI-Session";
/// The trailer bsi writes on its own registry commits.
pub const ACTION: &str = "BSI-Action";
/// Who acted, on a registry commit (commits of an older bsi have none).
pub const AGENT: &str = "BSI-Agent";
/// A scope the write is about, one line each, whole (the summary line is
/// cut at 100 characters; commits of an older bsi have none).
pub const SCOPE: &str = "BSI-Scope";
/// The request of another writer a shared write carried out.
pub const REQUEST: &str = "BSI-Request";

/// The trailers of a registry commit: its sessions, its action and who
/// acted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    /// The sessions the change is about, each once, in order.
    pub sessions: Vec<String>,
    /// `open`, `close`, `watchdog`…; `None` on a commit bsi did not write.
    pub action: Option<String>,
    /// Who acted.
    pub agent: Option<String>,
    /// The scopes it is about, whole.
    pub scopes: Vec<String>,
}

impl Registry {
    /// Reads them from a commit message (the first action and agent count).
    pub fn parse(message: &str) -> Registry {
        let first = |key| values(message, key).first().map(|v| (*v).to_string());
        Registry {
            sessions: values(message, SESSION)
                .into_iter()
                .map(String::from)
                .collect(),
            action: first(ACTION),
            agent: first(AGENT),
            scopes: values(message, SCOPE)
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }

    /// The trailer block: a line per session, the action, the agent when
    /// there is one, a line per scope.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for s in &self.sessions {
            out.push_str(&format!("{SESSION}: {s}\n"));
        }
        if let Some(a) = &self.action {
            out.push_str(&format!("{ACTION}: {a}\n"));
        }
        if let Some(a) = self.agent.as_deref().filter(|a| !a.is_empty()) {
            out.push_str(&format!("{AGENT}: {a}\n"));
        }
        for s in &self.scopes {
            out.push_str(&format!("{SCOPE}: {s}\n"));
        }
        out
    }
}

/// One write a registry commit carried out: a commit of one write carries
/// one, a commit shared by several writers (`bsi: N writes: …`) one per
/// write, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Write {
    /// Its trailers: action, sessions, agent, scopes.
    pub trailers: Registry,
    /// The request of another writer it carried out, if it was one.
    pub request: Option<String>,
    /// Its own summary line (`bsi: open sess-… a/, b.md`), as written: cut
    /// at 100 characters, whole in [`Registry::scopes`].
    pub summary: String,
}

impl Write {
    /// What the write was about: its scopes, whole, when the commit names
    /// them, else its summary after the action and a single session (a
    /// commit of an older bsi, or one bsi did not write).
    pub fn what(&self) -> String {
        if !self.trailers.scopes.is_empty() {
            return self.trailers.scopes.join(", ");
        }
        let Some(action) = self.trailers.action.as_deref() else {
            return self.summary.clone();
        };
        let mut rest = self
            .summary
            .strip_prefix("bsi: ")
            .and_then(|r| r.strip_prefix(action))
            .unwrap_or(&self.summary)
            .trim_start();
        if let [one] = self.trailers.sessions.as_slice() {
            rest = rest.strip_prefix(one.as_str()).unwrap_or(rest).trim_start();
        }
        rest.to_string()
    }
}

/// The writes `message` carries out, one each, in order: each write's
/// trailers are a run of sessions, its action, its agent, its scopes and
/// its request, so a session or an action after an action begins the
/// next. A message without bsi's trailers is one write with no action.
pub fn writes(message: &str) -> Vec<Write> {
    let mut out: Vec<Write> = Vec::new();
    let mut cur = Write::default();
    let key_of = |line: &str| -> Option<(&'static str, String)> {
        let (k, v) = line.split_once(':')?;
        let v = v.trim();
        if v.is_empty() {
            return None;
        }
        [SESSION, ACTION, AGENT, SCOPE, REQUEST]
            .into_iter()
            .find(|key| k.trim().eq_ignore_ascii_case(key))
            .map(|key| (key, v.to_string()))
    };
    for (key, value) in message.lines().filter_map(key_of) {
        let begins = (key == SESSION || key == ACTION) && cur.trailers.action.is_some();
        if begins {
            out.push(std::mem::take(&mut cur));
        }
        let t = &mut cur.trailers;
        match key {
            SESSION if !t.sessions.contains(&value) => t.sessions.push(value),
            ACTION => t.action = Some(value),
            AGENT if t.agent.is_none() => t.agent = Some(value),
            SCOPE => t.scopes.push(value),
            REQUEST if cur.request.is_none() => cur.request = Some(value),
            _ => {}
        }
    }
    out.push(cur);
    // Their summary lines: the subject for one write; the lines under a
    // shared commit's subject, one a write, when they are as many.
    let subject = message.lines().next().unwrap_or("").to_string();
    let lines: Vec<&str> = message
        .split("\n\n")
        .nth(1)
        .map(|p| p.lines().collect())
        .unwrap_or_default();
    let shared = out.len() > 1 && lines.len() == out.len();
    for (i, w) in out.iter_mut().enumerate() {
        w.summary = if shared {
            lines[i].to_string()
        } else {
            subject.clone()
        };
    }
    out
}

/// The lines of `message` that are bsi's own trailers, as written.
pub fn bsi_lines(message: &str) -> Vec<&str> {
    message
        .lines()
        .filter(|l| {
            l.split_once(':').is_some_and(|(k, _)| {
                [SESSION, ACTION, AGENT, SCOPE]
                    .iter()
                    .any(|key| k.trim().eq_ignore_ascii_case(key))
            })
        })
        .collect()
}

/// The values of trailer `key` in `message` (any line `Key: value`,
/// case-insensitive key, outside comment lines).
pub fn values<'m>(message: &'m str, key: &str) -> Vec<&'m str> {
    message
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(key).then_some(v.trim())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Whether `message` carries `key: value`.
pub fn has(message: &str, key: &str, value: &str) -> bool {
    values(message, key).contains(&value)
}

/// The session a user's commit says it was made by: its one `BSI-Session`
/// value (a squash of one session's commits repeats it). `None` when it
/// names none, several sessions, or is bsi's own registry commit (it
/// carries `BSI-Action`). The committer's word, as `BSI_SESSION` is.
pub fn author_session(message: &str) -> Option<&str> {
    if !values(message, ACTION).is_empty() {
        return None;
    }
    let named = values(message, SESSION);
    let first = *named.first()?;
    named.iter().all(|s| *s == first).then_some(first)
}

fn is_trailer_line(line: &str) -> bool {
    match line.split_once(':') {
        Some((k, v)) => {
            !k.is_empty()
                && !v.trim().is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        }
        None => false,
    }
}

/// Adds `key: value` to a commit message as git would: in the last
/// paragraph when that paragraph is already made of trailers, else in a new
/// paragraph after it, and before the comment lines (starting with
/// `comment`) that git shows in the editor. Returns `None` when the message
/// already carries it.
pub fn add(message: &str, key: &str, value: &str, comment: char) -> Option<String> {
    let lines: Vec<&str> = message.lines().collect();
    let is_comment = |l: &str| l.starts_with(comment);
    // Comment lines and the `git commit -v` diff are not part of the message.
    let cut = lines
        .iter()
        .position(|l| l.starts_with(&format!("{comment} ------------------------ >8")))
        .unwrap_or(lines.len());
    let body: Vec<&str> = lines[..cut]
        .iter()
        .copied()
        .filter(|l| !is_comment(l))
        .collect();
    if has(&body.join("\n"), key, value) {
        return None;
    }
    // The last line of the message itself (not a comment, not blank).
    let last = lines[..cut]
        .iter()
        .rposition(|l| !is_comment(l) && !l.trim().is_empty());
    let trailer = format!("{key}: {value}");
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 2);
    match last {
        None => {
            // An empty message: leave the first line to its author.
            out.push(String::new());
            out.push(String::new());
            out.push(trailer);
            out.extend(lines.iter().map(std::string::ToString::to_string));
        }
        Some(i) => {
            let para_start = lines[..=i]
                .iter()
                .rposition(|l| l.trim().is_empty())
                .map_or(0, |p| p + 1);
            let para: Vec<&str> = lines[para_start..=i]
                .iter()
                .copied()
                .filter(|l| !is_comment(l))
                .collect();
            // The subject line alone is never a trailer block.
            let trailers = para_start > 0 && para.iter().all(|l| is_trailer_line(l));
            out.extend(lines[..=i].iter().map(std::string::ToString::to_string));
            if !trailers {
                out.push(String::new());
            }
            out.push(trailer);
            out.extend(lines[i + 1..].iter().map(std::string::ToString::to_string));
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_a_paragraph_or_joins_the_trailer_block() {
        assert_eq!(
            add("Fix notes\n", SESSION, "s1", '#').as_deref(),
            Some("Fix notes\n\nBSI-Session: s1\n")
        );
        assert_eq!(
            add(
                "Fix\n\nbody\n\nSigned-off-by: A <a@x>\n",
                SESSION,
                "s1",
                '#'
            )
            .as_deref(),
            Some("Fix\n\nbody\n\nSigned-off-by: A <a@x>\nBSI-Session: s1\n")
        );
        // Before git's comment lines.
        assert_eq!(
            add("Fix\n\n# Please enter\n# the message\n", SESSION, "s1", '#').as_deref(),
            Some("Fix\n\nBSI-Session: s1\n\n# Please enter\n# the message\n")
        );
        // An empty message keeps its first line free.
        assert_eq!(
            add("\n# Please enter\n", SESSION, "s1", '#').as_deref(),
            Some("\n\nBSI-Session: s1\n\n# Please enter\n")
        );
        // A subject that looks like a trailer stays a subject.
        assert_eq!(
            add("docs: fix\n", SESSION, "s1", '#').as_deref(),
            Some("docs: fix\n\nBSI-Session: s1\n")
        );
    }

    #[test]
    fn registry_trailers_read_back_as_written() {
        let t = Registry {
            sessions: vec!["s1".into(), "s2".into()],
            action: Some("open".into()),
            agent: Some("ana@box".into()),
            scopes: vec!["agents/".into()],
        };
        let text = t.render();
        assert_eq!(
            text,
            "BSI-Session: s1\nBSI-Session: s2\nBSI-Action: open\nBSI-Agent: ana@box\nBSI-Scope: agents/\n"
        );
        let message = format!("bsi: open agents/\n\n{text}");
        assert_eq!(Registry::parse(&message), t);
        assert_eq!(bsi_lines(&message).len(), 5);
        assert_eq!(Registry::parse("a plain commit\n"), Registry::default());
    }

    #[test]
    fn a_shared_commit_reads_back_as_one_write_each() {
        let m = "bsi: 3 writes: open sess-a a/; close sess-b b.md; watchdog stale: c.md\n\n\
                 bsi: open sess-a a/, d.md#Plan: Q1\nbsi: close sess-b b.md\nbsi: watchdog stale: c.md\n\n\
                 BSI-Session: sess-a\nBSI-Action: open\nBSI-Agent: ana\n\
                 BSI-Scope: a/\nBSI-Scope: d.md#Plan: Q1\n\
                 BSI-Session: sess-b\nBSI-Action: close\nBSI-Agent: bo\nBSI-Scope: b.md\n\
                 BSI-Request: 1-2-3\n\
                 BSI-Session: sess-c\nBSI-Session: sess-d\nBSI-Action: watchdog\n";
        let w = writes(m);
        assert_eq!(w.len(), 3, "{w:#?}");
        assert_eq!(w[0].trailers.sessions, ["sess-a"]);
        assert_eq!(w[0].trailers.agent.as_deref(), Some("ana"));
        assert_eq!(w[0].trailers.scopes, ["a/", "d.md#Plan: Q1"]);
        assert_eq!(w[0].what(), "a/, d.md#Plan: Q1");
        assert_eq!(w[0].summary, "bsi: open sess-a a/, d.md#Plan: Q1");
        assert_eq!(w[1].trailers.action.as_deref(), Some("close"));
        assert_eq!(w[1].request.as_deref(), Some("1-2-3"));
        assert_eq!(w[1].trailers.agent.as_deref(), Some("bo"));
        assert_eq!(w[2].trailers.sessions, ["sess-c", "sess-d"]);
        assert_eq!(w[2].trailers.agent, None);
        // No scope trailer (an older bsi): the summary says what.
        assert_eq!(w[2].what(), "stale: c.md");
        // One write, and a commit bsi did not write.
        let one = writes("bsi: open s1 a.md\n\nBSI-Session: s1\nBSI-Action: open\n");
        assert_eq!((one.len(), one[0].what()), (1, "a.md".to_string()));
        let plain = writes("fix by hand\n");
        assert_eq!(
            (plain.len(), plain[0].what()),
            (1, "fix by hand".to_string())
        );
        assert_eq!(plain[0].trailers.action, None);
    }

    #[test]
    fn a_commit_names_its_session_once() {
        assert_eq!(author_session("Fix\n\nBSI-Session: s1\n"), Some("s1"));
        // A squash of two commits of s1 keeps both lines.
        assert_eq!(
            author_session("a\n\nBSI-Session: s1\n\nb\n\nBSI-Session: s1\n"),
            Some("s1")
        );
        assert_eq!(
            author_session("a\n\nBSI-Session: s1\nBSI-Session: s2\n"),
            None
        );
        assert_eq!(
            author_session("bsi: open\n\nBSI-Session: s1\nBSI-Action: open\n"),
            None
        );
        assert_eq!(author_session("plain\n"), None);
    }

    #[test]
    fn once_only() {
        assert_eq!(add("Fix\n\nBSI-Session: s1\n", SESSION, "s1", '#'), None);
        assert_eq!(add("Fix\n\nbsi-session:  s1\n", SESSION, "s1", '#'), None);
        assert!(add("Fix\n\nBSI-Session: s2\n", SESSION, "s1", '#').is_some());
        assert!(has(
            "a\n\nBSI-Session: s1\nBSI-Action: open\n",
            ACTION,
            "open"
        ));
    }
}
