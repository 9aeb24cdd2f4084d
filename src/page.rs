//! The live page of the brain as HTML, for `bsi serve` and `bsi status
//! --html`: the core's [`bsi_core::page::Page`] drawn as a tree of folders,
//! files and sections (`<details>`/`<summary>` and focusable leaves, so the
//! keyboard walks it in order), the queue, the drift and the latest writes.
//! Everything a registry holds that came from people (notes, agent names,
//! headings, paths) is escaped. Pure: a page in, text out.

use chrono::{DateTime, FixedOffset};
use sha1::{Digest, Sha1};

use bsi_core::page::{Hold, Kind, Node, Page, Written};
use bsi_core::scope::Scope;

/// What the page says about where it read the registry.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// The brain's name (its folder).
    pub brain: String,
    /// The remote the registry branch is fetched from, if any.
    pub remote: Option<String>,
    /// When the remote was last read, if it was.
    pub remote_read: Option<DateTime<FixedOffset>>,
    /// What git said when the remote could not be read.
    pub unreachable: Option<String>,
    /// The remote is not asked (`--offline`).
    pub offline: bool,
}

/// How many writes the page lists.
pub const WRITES_SHOWN: usize = 20;

/// `text` safe in HTML text and in a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The line that says when the page was read, and the remote.
pub fn read_line(page: &Page, r: &Reading) -> String {
    let at = |t: DateTime<FixedOffset>| t.with_timezone(page.now.offset()).format("%H:%M:%S");
    let mut s = format!("Read at {}", at(page.now));
    match (&r.remote, r.offline) {
        (None, _) => s.push_str("; no remote: this clone's registry is the truth."),
        (Some(name), true) => s.push_str(&format!("; the remote {name} is not asked (--offline).")),
        (Some(name), false) => {
            match r.remote_read {
                Some(t) => {
                    let ago = (page.now - t).num_seconds().max(0);
                    s.push_str(&format!(
                        "; the remote {name} last read at {} ({ago}s ago)",
                        at(t)
                    ));
                }
                None => s.push_str(&format!("; the remote {name} not read yet")),
            }
            if let Some(why) = &r.unreachable {
                s.push_str(&format!(", and unreachable now: {why}"));
            }
            s.push('.');
        }
    }
    s
}

/// The page's changing part: the tree, the queue, the drift, the writes.
pub fn body(page: &Page) -> String {
    let mut s = String::new();
    let (active, stale) = page.counts;
    s.push_str("<section aria-labelledby=\"h-tree\"><h2 id=\"h-tree\">The brain</h2>\n");
    s.push_str(&format!(
        "<p class=\"counts\">{active} active claim{}, {stale} stale.</p>\n",
        if active == 1 { "" } else { "s" }
    ));
    s.push_str("<ul class=\"tree\">\n");
    node(&mut s, &page.tree, true);
    s.push_str("</ul></section>\n");

    s.push_str("<section aria-labelledby=\"h-queue\"><h2 id=\"h-queue\">Queue</h2>\n");
    if page.queue.is_empty() {
        s.push_str("<p>Nobody waits.</p>\n");
    } else {
        s.push_str("<ol class=\"queue\">\n");
        for r in &page.queue {
            let agent = if r.agent.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"agent\">{}</span>", escape(&r.agent))
            };
            s.push_str(&format!(
                "<li tabindex=\"0\"><span class=\"session\">{}</span>{agent} waits for {} since {}</li>\n",
                escape(&r.session),
                scopes(&r.scopes),
                clock(r.since, page.now),
            ));
        }
        s.push_str("</ol>\n");
    }
    s.push_str("</section>\n");

    s.push_str("<section aria-labelledby=\"h-drift\"><h2 id=\"h-drift\">Drift</h2>\n");
    if page.drift.is_empty() {
        s.push_str("<p>No claimed part was changed by another's commit.</p>\n");
    } else {
        s.push_str("<ul class=\"drift\">\n");
        for d in &page.drift {
            let by = d
                .session
                .as_deref()
                .map(|x| format!(" (session {})", escape(x)))
                .unwrap_or_default();
            s.push_str(&format!(
                "<li tabindex=\"0\"><code>{}</code> changed by commit <code>{}</code>, {}{by}, under the claim of <span class=\"session\">{}</span> on <code>{}</code></li>\n",
                escape(&d.path),
                escape(d.commit.get(..10).unwrap_or(&d.commit)),
                escape(&d.author),
                escape(&d.claim.session),
                escape(&d.claim.scope.to_string()),
            ));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</section>\n");

    s.push_str("<section aria-labelledby=\"h-writes\"><h2 id=\"h-writes\">Latest writes</h2>\n");
    if page.writes.is_empty() {
        s.push_str("<p>No write yet.</p>\n");
    } else {
        s.push_str("<table class=\"writes\"><thead><tr><th>Time</th><th>Action</th><th>Agent</th><th>Session</th><th>Scopes</th><th>Commit</th></tr></thead><tbody>\n");
        for w in page.writes.iter().take(WRITES_SHOWN) {
            write_row(&mut s, w, page.now);
        }
        s.push_str("</tbody></table>\n");
    }
    s.push_str("</section>\n");
    s
}

/// A version of the body: the page redraws when it changes.
pub fn version(body: &str) -> String {
    let digest = Sha1::digest(body.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn clock(t: DateTime<FixedOffset>, now: DateTime<FixedOffset>) -> String {
    let t = t.with_timezone(now.offset());
    if t.date_naive() == now.date_naive() {
        t.format("%H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%d %H:%M").to_string()
    }
}

fn scopes(list: &[Scope]) -> String {
    list.iter()
        .map(|s| format!("<code>{}</code>", escape(&s.to_string())))
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_row(s: &mut String, w: &Written, now: DateTime<FixedOffset>) {
    let t = &w.write.trailers;
    let (action, agent) = match &t.action {
        Some(a) => (escape(a), escape(t.agent.as_deref().unwrap_or("-"))),
        None => (
            "by hand".to_string(),
            escape(w.author.split(" <").next().unwrap_or("")),
        ),
    };
    s.push_str(&format!(
        "<tr><td>{}</td><td>{action}</td><td>{agent}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
        clock(w.time, now),
        escape(&t.sessions.join(" ")),
        escape(&w.write.what()),
        escape(w.commit.get(..10).unwrap_or(&w.commit)),
    ));
}

/// An id for the element of `scope`, stable across redraws.
fn id_of(scope: &Scope) -> String {
    format!("n-{}", version(&scope.to_string()))
}

fn holds(s: &mut String, holds: &[Hold], reserved: bool) {
    if reserved {
        s.push_str(" <span class=\"reserved\">reserved, not written yet</span>");
    }
    for h in holds {
        let c = &h.claim;
        let class = if h.stale {
            "hold stale"
        } else if h.overdue {
            "hold overdue"
        } else {
            "hold"
        };
        s.push_str(&format!(
            " <span class=\"{class}\"><span class=\"session\">{}</span>",
            escape(&c.session)
        ));
        if !c.agent.is_empty() {
            s.push_str(&format!(
                " <span class=\"agent\">{}</span>",
                escape(&c.agent)
            ));
        }
        s.push_str(&format!(" <span class=\"time\">{}</span>", escape(&h.time)));
        if !c.note.is_empty() {
            s.push_str(&format!(" <span class=\"note\">{}</span>", escape(&c.note)));
        }
        s.push_str("</span>");
    }
}

fn node(s: &mut String, n: &Node, root: bool) {
    let id = id_of(&n.scope);
    // A folder ends in `/`; a section is marked `§`.
    let (icon, name) = match n.kind {
        Kind::Dir if root => ("", "The whole brain".to_string()),
        Kind::Dir => ("", format!("{}/", escape(&n.name))),
        Kind::File => ("", escape(&n.name)),
        Kind::Section => (
            "<span class=\"icon\" aria-hidden=\"true\">§</span> ",
            escape(&n.name),
        ),
    };
    let label = format!("{icon}<span class=\"name\">{name}</span>");
    let kind = match n.kind {
        Kind::Dir => "dir",
        Kind::File => "file",
        Kind::Section => "section",
    };
    let held = if n.holds.is_empty() && !n.reserved {
        ""
    } else {
        " held"
    };
    if n.children.is_empty() {
        s.push_str(&format!(
            "<li class=\"{kind}{held}\"><span class=\"leaf\" tabindex=\"0\" id=\"{id}\">{label}"
        ));
        holds(s, &n.holds, n.reserved);
        s.push_str("</span></li>\n");
        return;
    }
    // Open: the root, a held folder, and what holds a held part.
    let open = if root
        || (n.kind == Kind::Dir && !n.holds.is_empty())
        || n.held_within() > n.holds.len()
    {
        " open"
    } else {
        ""
    };
    s.push_str(&format!(
        "<li class=\"{kind}{held}\"><details id=\"{id}\"{open}><summary>{label}"
    ));
    holds(s, &n.holds, n.reserved);
    s.push_str("</summary>\n<ul>\n");
    for c in &n.children {
        node(s, c, false);
    }
    s.push_str("</ul></details></li>\n");
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fff}\
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}\
.read{color:#555;margin:0}.lost{color:#b00020}\
ul.tree,ul.tree ul{list-style:none;padding-left:1.2em;margin:0}ul.tree{padding-left:0}\
summary,.leaf{cursor:default;padding:1px 3px;border-radius:3px;display:inline-block}\
summary{display:list-item}\
summary:focus,.leaf:focus,li[tabindex]:focus{outline:2px solid #0a58ca;outline-offset:1px}\
.hold{background:#e6f4ea;border:1px solid #8bc79b;border-radius:4px;padding:0 5px;margin-left:4px;font-size:.92em}\
.hold.overdue{background:#fff4d6;border-color:#e0b84c}.hold.stale{background:#fde7e9;border-color:#e08a93}\
.reserved{background:#eef0ff;border:1px dashed #7b83d6;border-radius:4px;padding:0 5px;margin-left:4px;font-size:.92em}\
.session{font-family:ui-monospace,monospace}.agent{font-weight:600}.note{font-style:italic;color:#333}\
.time{color:#444}\
table.writes{border-collapse:collapse}table.writes td,table.writes th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}\
table.writes th{border-bottom:1px solid #ccc}";

/// The script of the live page: asks `/state` every two seconds, naming the
/// version it shows, and redraws the body when a new one comes, keeping the folders the reader
/// opened or closed so, and the keyboard where it was.
pub const SCRIPT: &str = r#""use strict";
(function () {
  var version = document.body.getAttribute("data-version");
  var toggled = {};
  // A click on a folder's summary (Enter and Space are clicks too) opens
  // or closes it: what it will be is remembered.
  document.getElementById("page").addEventListener("click", function (e) {
    var summary = e.target.closest ? e.target.closest("summary") : null;
    var d = summary ? summary.parentElement : null;
    if (d && d.id) { toggled[d.id] = !d.open; }
  });
  function poll() {
    fetch("/state?v=" + encodeURIComponent(version), { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        document.getElementById("read").textContent = s.read;
        document.getElementById("lost").textContent = "";
        if (s.version !== version && typeof s.body === "string") {
          var focused = document.activeElement ? document.activeElement.id : "";
          document.getElementById("page").innerHTML = s.body;
          // What the reader opened or closed stays so.
          Object.keys(toggled).forEach(function (id) {
            var d = document.getElementById(id);
            if (d && d.tagName === "DETAILS") { d.open = toggled[id]; }
          });
          if (focused) {
            var f = document.getElementById(focused);
            if (f) { f.focus(); }
          }
          version = s.version;
          document.body.setAttribute("data-version", version);
        }
      })
      .catch(function () {
        document.getElementById("lost").textContent = " The page cannot reach bsi serve; it keeps asking.";
      })
      .then(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 2000);
})();
"#;

/// The whole page: live (it loads [`SCRIPT`] from `/page.js`) or static.
pub fn document(page: &Page, r: &Reading, live: bool) -> String {
    let body = body(page);
    let title = format!("bsi — {}", escape(&r.brain));
    let script = if live {
        "<script src=\"/page.js\" defer></script>\n"
    } else {
        ""
    };
    let how = if live {
        "It updates by itself."
    } else {
        "A copy: it does not update."
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n{script}</head>\n\
         <body data-version=\"{}\">\n<header><h1>{title}</h1>\n\
         <p class=\"read\"><span id=\"read\">{}</span> {how}<span id=\"lost\" class=\"lost\" role=\"status\"></span></p></header>\n\
         <main id=\"page\">\n{body}</main>\n</body></html>\n",
        version(&body),
        escape(&read_line(page, r)),
    )
}

/// What `/state` answers: the read line, the body's version, and the body
/// itself when the page asking has another version.
pub fn state_json(read: &str, version: &str, body: Option<&str>) -> String {
    let mut state = serde_json::json!({ "version": version, "read": read });
    if let Some(body) = body {
        state["body"] = serde_json::Value::String(body.to_string());
    }
    state.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_from_people_is_text() {
        assert_eq!(
            escape(r#"<script>alert('x')</script> & "q""#),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
